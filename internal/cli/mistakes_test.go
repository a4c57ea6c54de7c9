package cli_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// TestRestoreAsPrinted restores a backup as README.md prints it: into a
// new data directory, with LICENTIA_MASTER_KEY_FILE naming the key that
// serve generated in the first one. Without the variable the command says
// so, with its own code, and writes nothing.
func TestRestoreAsPrinted(t *testing.T) {
	h := newHarness(t)
	h.serve(t, io.Discard) // generates master.key in the data directory
	h.org(t, "acme", "indie")
	file := filepath.Join(t.TempDir(), "licentia-2026-11-26.db")
	h.ok(t, "backup", "--to", file)

	restored := newHarness(t)
	e := restored.fail(t, licentia.CodeMasterKeyNotFound, "restore", "--from", file)
	msg, _ := e["message"].(string)
	for _, want := range []string{filepath.Join(restored.dir, "master.key"), "LICENTIA_MASTER_KEY_FILE"} {
		if !strings.Contains(msg, want) {
			t.Errorf("restore without the master key: %q, want %q named", msg, want)
		}
	}
	if _, err := os.Stat(filepath.Join(restored.dir, "licentia.db")); err == nil {
		t.Error("a restore without the master key wrote a database")
	}

	restored.vars["LICENTIA_MASTER_KEY_FILE"] = filepath.Join(h.dir, "master.key")
	if got := restored.ok(t, "restore", "--from", file); got["file"] != file {
		t.Errorf("restore with LICENTIA_MASTER_KEY_FILE = %v, want the backup restored", got)
	}
	if code, rep := runVerify(t, restored); code != 0 || !rep.OK {
		t.Errorf("licentia verify on the restored copy: exit %d, %+v, want ok", code, rep)
	}
}

// TestOperatorMistakes: a file, a directory or a master key that a command
// or its configuration names and that is not there answers a code of its
// own and a message saying what to do, never internal_error.
func TestOperatorMistakes(t *testing.T) {
	h := newHarness(t)
	h.serve(t, io.Discard)
	h.org(t, "acme", "indie")
	backupFile := filepath.Join(t.TempDir(), "licentia.backup")
	h.ok(t, "backup", "--to", backupFile)
	id := licentia.NewID()
	keyFile := filepath.Join(t.TempDir(), "stripe.key")
	writeFile(t, keyFile, []byte("sk_test_0000\n"))
	shortKey := filepath.Join(t.TempDir(), "short.key")
	writeFile(t, shortKey, []byte("not 32 bytes\n"))
	missing := filepath.Join(t.TempDir(), "missing")

	for _, tt := range []struct {
		name string
		vars map[string]string // added to h's configuration; "" removes one
		args []string
		code licentia.Code
		want []string // in the message
	}{
		{"restore, no key in the data directory", map[string]string{"LICENTIA_DATA_DIR": missing, "LICENTIA_DATABASE_URL": ""},
			[]string{"restore", "--from", backupFile}, licentia.CodeMasterKeyNotFound,
			[]string{filepath.Join(missing, "master.key"), "LICENTIA_MASTER_KEY_FILE"}},
		{"restore, key file missing", map[string]string{"LICENTIA_DATA_DIR": missing, "LICENTIA_DATABASE_URL": "", "LICENTIA_MASTER_KEY_FILE": missing + ".key"},
			[]string{"restore", "--from", backupFile}, licentia.CodeMasterKeyNotFound, []string{missing + ".key", "LICENTIA_MASTER_KEY_FILE"}},
		{"restore, key file not a key", map[string]string{"LICENTIA_DATA_DIR": missing, "LICENTIA_DATABASE_URL": "", "LICENTIA_MASTER_KEY_FILE": shortKey},
			[]string{"restore", "--from", backupFile}, licentia.CodeMasterKeyInvalid, []string{shortKey, "32 bytes"}},
		{"restore, backup missing", nil, []string{"restore", "--from", missing + ".db"}, licentia.CodeFileNotFound,
			[]string{missing + ".db", "--from"}},
		{"verify, key file missing", map[string]string{"LICENTIA_MASTER_KEY_FILE": missing + ".key"},
			[]string{"verify"}, licentia.CodeMasterKeyNotFound, []string{missing + ".key", "LICENTIA_MASTER_KEY_FILE"}},
		{"verify, key file not a key", map[string]string{"LICENTIA_MASTER_KEY_FILE": shortKey},
			[]string{"verify"}, licentia.CodeMasterKeyInvalid, []string{shortKey}},
		{"backup, directory missing", nil, []string{"backup", "--to", filepath.Join(missing, "licentia.db")},
			licentia.CodeDirectoryNotFound, []string{missing, "mkdir"}},
		{"backup, no database", map[string]string{"LICENTIA_DATA_DIR": missing, "LICENTIA_DATABASE_URL": ""},
			[]string{"backup", "--to", filepath.Join(t.TempDir(), "licentia.db")}, licentia.CodeDatabaseNotFound,
			[]string{filepath.Join(missing, "licentia.db"), "LICENTIA_DATA_DIR"}},
		{"integration connect, API key file missing", nil,
			[]string{"integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop", "--api-key-file", missing},
			licentia.CodeFileNotFound, []string{missing, "--api-key-file"}},
		{"integration connect, webhook secret file missing", nil,
			[]string{"integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop", "--api-key-file", keyFile,
				"--webhook-secret-file", missing}, licentia.CodeFileNotFound, []string{missing, "--webhook-secret-file"}},
		{"integration set-webhook-secret, file missing", nil,
			[]string{"integration", "set-webhook-secret", "--org", "acme", "--webhook-secret-file", missing, id},
			licentia.CodeFileNotFound, []string{missing, "--webhook-secret-file"}},
		{"masterkey rotate, new key file missing", nil, []string{"masterkey", "rotate", "--new-key-file", missing},
			licentia.CodeFileNotFound, []string{missing, "--new-key-file"}},
		{"masterkey rotate, new key file not a key", nil, []string{"masterkey", "rotate", "--new-key-file", shortKey},
			licentia.CodeMasterKeyInvalid, []string{shortKey, "32 bytes", "--new-key-file"}},
		{"masterkey rotate, new key is the current one", nil,
			[]string{"masterkey", "rotate", "--new-key-file", filepath.Join(h.dir, "master.key")},
			licentia.CodeValidationFailed, []string{"current key", "--new-key-file"}},
		{"masterkey rotate, current key missing", map[string]string{"LICENTIA_MASTER_KEY_FILE": missing + ".key"},
			[]string{"masterkey", "rotate", "--new-key-file", keyFile}, licentia.CodeMasterKeyNotFound,
			[]string{missing + ".key", "LICENTIA_MASTER_KEY_FILE"}},
		{"plans file missing", map[string]string{"LICENTIA_PLANS_FILE": missing + ".json"},
			[]string{"apikey", "list", "--org", "acme"}, licentia.CodeFileNotFound, []string{missing + ".json", "LICENTIA_PLANS_FILE"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hh := &harness{dir: h.dir, vars: map[string]string{}}
			for k, v := range h.vars {
				hh.vars[k] = v
			}
			for k, v := range tt.vars {
				hh.vars[k] = v
			}
			e := hh.fail(t, tt.code, tt.args...)
			msg, _ := e["message"].(string)
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q, want %q in it", msg, want)
				}
			}
			if _, err := os.Stat(missing); err == nil {
				t.Fatalf("the command created %s", missing)
			}
		})
	}
}

// TestOperatorCodesDocumented: every operator code is listed in
// docs/errors.md, and none is an HTTP answer's.
func TestOperatorCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	_, operator, ok := strings.Cut(string(doc), "\n## Operator commands\n")
	if !ok {
		t.Fatal("docs/errors.md has no section \"## Operator commands\"")
	}
	for _, c := range licentia.OperatorCodes {
		if !strings.Contains(operator, "| `"+string(c)+"` |") {
			t.Errorf("docs/errors.md, Operator commands: no row for %s", c)
		}
		if slices.Contains(licentia.Codes, c) {
			t.Errorf("%s is both an operator code and an HTTP code", c)
		}
	}
}
