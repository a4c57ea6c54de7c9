package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

func masterkeyCommand(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 || args[0] != "rotate" {
		return usageError("masterkey: the subcommand is rotate")
	}
	fs := newFlags("masterkey rotate")
	newFile := fs.String("new-key-file", "", "file holding the new 32-byte master key")
	if rest, err := parseFlags(fs, args[1:]); err != nil {
		return err
	} else if len(rest) > 0 || *newFile == "" {
		return usageError("masterkey rotate: give --new-key-file and nothing else")
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, warnLogger(env.Stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := rotateMasterKey(ctx, cfg, st, *newFile)
	if err != nil {
		return err
	}
	printJSON(env.Stdout, res)
	return nil
}

type rotation struct {
	OldFingerprint string `json:"old_fingerprint"`
	NewFingerprint string `json:"new_fingerprint"`
	Resealed       int    `json:"resealed"`
	KeyFile        string `json:"key_file"`
	PreviousFile   string `json:"previous_key_file"`
}

// rotateMasterKey checks the configured key file against the database,
// re-encrypts every secret under the key in newFile (signing.RotateMasterKey,
// one transaction), and then installs it at the configured key path, keeping
// the old key beside it. Running processes keep the keys they have opened
// and read the new file when they meet a secret sealed under it, so a single
// process needs no restart.
func rotateMasterKey(ctx context.Context, cfg config.Config, st store.Store, newFile string) (*rotation, error) {
	path := masterKeyPath(cfg)
	old, err := openMasterKey(cfg, "masterkey rotate")
	if err != nil {
		return nil, err
	}
	recorded, err := st.Setting(ctx, store.SettingMasterKeyFingerprint)
	if err != nil {
		return nil, err
	}
	if recorded != "" && recorded != old.Fingerprint() {
		return nil, fmt.Errorf("masterkey rotate: %s has fingerprint %s, the database %s", path, old.Fingerprint(), recorded)
	}
	raw, err := readNamedFile("masterkey rotate", "--new-key-file", newFile)
	if err != nil {
		return nil, err
	}
	next, err := signing.NewMasterKey(raw)
	if err != nil {
		return nil, &licentia.Error{Code: licentia.CodeMasterKeyInvalid, Err: err, Message: fmt.Sprintf(
			"masterkey rotate: --new-key-file %s does not hold a master key: %v; make one with head -c 32 /dev/urandom", newFile, err)}
	}
	if next.Fingerprint() == old.Fingerprint() {
		return nil, usageError("masterkey rotate: the new key is the current key: give --new-key-file a new key")
	}
	res := &rotation{OldFingerprint: old.Fingerprint(), NewFingerprint: next.Fingerprint(), KeyFile: path,
		PreviousFile: path + ".previous-" + old.Fingerprint()}
	res.Resealed, err = signing.RotateMasterKey(ctx, st, recorded, old, next,
		signing.Resealers{WebhookSecret: webhooks.ResealSecret, Integration: providers.Reseal})
	if err != nil {
		return nil, fmt.Errorf("masterkey rotate: nothing changed: %w", err)
	}
	oldRaw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := writeKeyFile(res.PreviousFile, oldRaw); err != nil {
		return nil, fmt.Errorf("masterkey rotate: the database uses the new key, but keeping the old one failed: %w", err)
	}
	if err := writeKeyFile(path, raw); err != nil {
		return nil, fmt.Errorf("masterkey rotate: the database uses the new key; install %s at %s by hand: %w", newFile, path, err)
	}
	return res, nil
}

// writeKeyFile writes raw to path with mode 0600 through a temporary file,
// so a reader sees the old key or the new one, never half of either. A
// temporary file left by an earlier attempt is replaced, not reused: its
// mode could be wider. The file is synced before the rename, because the
// database already names the key it holds.
func writeKeyFile(path string, raw []byte) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(raw)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
