package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// generatedKeyName is the master key serve generates in the data directory
// when none is configured.
const generatedKeyName = "master.key"

// masterKeyPath is the configured key file, or the generated one.
func masterKeyPath(cfg config.Config) string {
	if cfg.MasterKeyFile != "" {
		return cfg.MasterKeyFile
	}
	return filepath.Join(cfg.DataDir, generatedKeyName)
}

// loadMasterKey finds the master key and checks it against the fingerprint
// the database records:
//   - no key file configured and no fingerprint recorded: generate a key in
//     the data directory (mode 0600), warn once, and record it;
//   - a key whose fingerprint differs from the recorded one: refuse to
//     start, as it would seal secrets nobody else can open;
//   - no key to be found: start without one; product creation and rotation
//     answer 503 signing_keys_not_configured.
func loadMasterKey(ctx context.Context, cfg config.Config, st store.Store, log *slog.Logger) (*signing.MasterKey, error) {
	recorded, err := st.Setting(ctx, store.SettingMasterKeyFingerprint)
	if err != nil {
		return nil, err
	}
	path := masterKeyPath(cfg)
	m, err := signing.LoadMasterKey(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && cfg.MasterKeyFile == "" && recorded == "":
		if m, err = signing.GenerateMasterKeyFile(path); err != nil {
			return nil, err
		}
		log.Warn("generated a master key; back it up, and set LICENTIA_MASTER_KEY_FILE to share it between processes",
			"path", path, "fingerprint", m.Fingerprint())
	case err != nil:
		log.Error("master key unavailable: products cannot be created or rotated, webhooks are off", "path", path, "error", err.Error())
		return nil, nil
	}
	if recorded != "" && recorded != m.Fingerprint() {
		return nil, fmt.Errorf("master key %s has fingerprint %s but the database was sealed with %s: use the same key file as the other processes",
			path, m.Fingerprint(), recorded)
	}
	if recorded == "" {
		err := st.InTx(ctx, func(tx store.Tx) error {
			return tx.SetSetting(ctx, store.SettingMasterKeyFingerprint, m.Fingerprint())
		})
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}
