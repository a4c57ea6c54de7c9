package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
)

// Operator mistakes: a file, a directory or a master key that a command or
// its configuration names and that is not there. Each answers a code of its
// own (licentia.OperatorCodes) with what to do, as internal_error would send
// the operator to look for a fault where there is a typing error.

// readNamedFile reads the file that name (a flag, or a variable) of
// command gives.
func readNamedFile(command, name, path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, namedFileError(command, name, path, err)
	}
	return raw, nil
}

// checkNamedFile reports a file that name of command gives and that does
// not exist, before the command starts on it.
func checkNamedFile(command, name, path string) error {
	if _, err := os.Stat(path); err != nil {
		return namedFileError(command, name, path, err)
	}
	return nil
}

// namedFileError is the error of reading path, given by name; command is
// "" for a variable that every command reads.
func namedFileError(command, name, path string, err error) error {
	if command != "" {
		name = command + ": " + name
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &licentia.Error{Code: licentia.CodeFileNotFound, Err: err,
			Message: fmt.Sprintf("%s names %s, which does not exist: give the path of an existing file", name, path)}
	}
	return fmt.Errorf("%s %s: %w", name, path, err)
}

// checkDirectory reports a file to be written (the name flag of command)
// in a directory that does not exist: it is not made, as a mistyped path
// would then fill a directory nobody looks at.
func checkDirectory(command, name, file string) error {
	dir := filepath.Dir(file)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return &licentia.Error{Code: licentia.CodeDirectoryNotFound, Err: err,
			Message: fmt.Sprintf("%s: the directory %s of %s %s does not exist: create it (mkdir -p %s) or give a file in an existing directory",
				command, dir, name, file, shellQuote(dir))}
	}
	return nil
}

// openMasterKey reads the configured master key for command, which never
// generates one: a missing key is what a restore or a check most needs to
// hear about.
func openMasterKey(cfg config.Config, command string) (*signing.MasterKey, error) {
	m, err := signing.LoadMasterKey(masterKeyPath(cfg))
	if err != nil {
		return nil, masterKeyError(cfg, command, "", err)
	}
	return m, nil
}

// masterKeyError explains why the master key at the configured path cannot
// be used; sealed, when not "", says what needs it ("the backup was sealed
// with master key 820ef0da6d07aa3a").
func masterKeyError(cfg config.Config, command, sealed string, err error) error {
	path := masterKeyPath(cfg)
	what := command + ": "
	if sealed != "" {
		what += sealed + ", and "
	}
	where := "set LICENTIA_MASTER_KEY_FILE to the key's file (the first serve generates it as master.key in its data directory, data/master.key by default)"
	if cfg.MasterKeyFile != "" {
		where = "LICENTIA_MASTER_KEY_FILE must name the key's file (the first serve generates it as master.key in its data directory, data/master.key by default)"
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &licentia.Error{Code: licentia.CodeMasterKeyNotFound, Err: err,
			Message: fmt.Sprintf("%sthere is no master key at %s: %s", what, path, where)}
	}
	return &licentia.Error{Code: licentia.CodeMasterKeyInvalid, Err: err,
		Message: fmt.Sprintf("%sthe master key at %s cannot be used (%v): LICENTIA_MASTER_KEY_FILE must name a file this user can read, holding the service's 32-byte key", what, path, err)}
}
