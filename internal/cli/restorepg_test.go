package cli_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
)

// pgExec runs stmt on a connection of its own to rawURL and returns the
// rows it affected. It does not use t.Context(), which is already
// cancelled when cleanups run.
func pgExec(t *testing.T, rawURL, stmt string, args ...any) int64 {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, stmt, args...)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return tag.RowsAffected()
}

// pgCount runs a count query on rawURL.
func pgCount(t *testing.T, rawURL, query string, args ...any) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(t.Context())
	var n int64
	if err := conn.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// newPostgresDatabase creates an empty database on the server of
// storetest.PostgresURLVar, dropped when the test ends, and returns its
// URL with search_path set to schema, which it does not create.
func newPostgresDatabase(t *testing.T, schema string) string {
	t.Helper()
	raw := os.Getenv(storetest.PostgresURLVar)
	if raw == "" {
		t.Skipf("%s is not set", storetest.PostgresURLVar)
	}
	name := "licentia_restore_" + strings.ToLower(rand.Text())
	pgExec(t, raw, "CREATE DATABASE "+name)
	t.Cleanup(func() { pgExec(t, raw, "DROP DATABASE "+name+" WITH (FORCE)") })
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// schemaTables counts the tables of schema at rawURL.
func schemaTables(t *testing.T, rawURL, schema string) int64 {
	t.Helper()
	return pgCount(t, rawURL, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schema)
}

// TestRestorePostgres backs up a PostgreSQL database with licentia backup
// and restores it with licentia restore into a new database, which then
// passes licentia verify and serves every licence; and it shows restore
// refusing what it cannot put in place safely, writing nothing.
func TestRestorePostgres(t *testing.T) {
	src := storetest.PostgresURL(t)
	if _, err := exec.LookPath("pg_restore"); err != nil {
		t.Fatalf("%s is set but pg_restore is not installed: %v", storetest.PostgresURLVar, err)
	}
	u, err := url.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")

	h := newHarness(t)
	keyPath := h.useMasterKey(t, 1)
	h.vars["LICENTIA_DATABASE_URL"] = src
	h.vars["LICENTIA_BASE_URL"] = "https://licentia.example.org" // webhooks need it
	_, base := h.serve(t, io.Discard)
	h.org(t, "acme", "business")
	key := h.ok(t, "apikey", "create", "--org", "acme",
		"--scopes", "products:read,products:write,licences:read,licences:write,webhooks:read,webhooks:write")["key"].(string)
	createHTTP(t, base, key, "desk", "DESK")
	var licences []issued
	for i := range 5 {
		l := issueHTTP(t, base, key, "desk")
		licences = append(licences, l)
		if i < 3 {
			status, answer, err := postJSON(base, "/v1/activations", "", map[string]any{
				"licence_key": l.key, "machine_id": fmt.Sprintf("machine-%d", i), "label": "Ada's laptop",
				"os": "linux", "app_version": "3.1.0"})
			if err != nil || status != http.StatusCreated {
				t.Fatalf("POST /v1/activations = %d %v %v, want 201", status, answer, err)
			}
		}
	}
	if status, answer, err := postJSON(base, "/v1/admin/webhooks", key, map[string]any{
		"url": "https://hooks.example.com/licentia", "event_types": licentia.EventTypes}); err != nil || status != http.StatusCreated {
		t.Fatalf("POST /v1/admin/webhooks = %d %v %v, want 201", status, answer, err)
	}
	file := filepath.Join(t.TempDir(), "licentia.dump")
	if ran := h.ok(t, "backup", "--to", file); ran["ran"] != true {
		t.Fatalf("backup --to on PostgreSQL = %v, want pg_dump run", ran)
	}
	fingerprint := masterKey(t, rawKey(1)).Fingerprint()

	// A database already migrated, holding no data, is no obstacle.
	restored := newHarness(t)
	restored.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	restored.vars["LICENTIA_DATABASE_URL"] = newPostgresDatabase(t, schema)
	pgExec(t, restored.vars["LICENTIA_DATABASE_URL"], "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	restored.ok(t, "migrate")
	got := restored.ok(t, "restore", "--from", file)
	checked, _ := got["checked"].(map[string]any)
	if got["file"] != file || got["master_key_fingerprint"] != fingerprint || jsonInt(t, got["licences"]) != 5 ||
		jsonInt(t, got["products"]) != 1 || jsonInt(t, got["signing_keys_opened"]) != 1 || got["schema"] != schema ||
		checked == nil || jsonInt(t, checked["webhook_secrets"]) != 1 || jsonInt(t, got["took_ms"]) < 0 {
		t.Errorf("restore summary %v, want the backup's fingerprint, 5 licences, 1 product, 1 key and 1 webhook secret opened", got)
	}
	if db, _ := got["database"].(string); !strings.Contains(db, "licentia_restore_") {
		t.Errorf("restore summary names database %q, want the new one", got["database"])
	}
	if code, rep := runVerify(t, restored); code != 0 || !rep.OK || rep.Checked["licences"] != 5 {
		t.Errorf("licentia verify on the restored database: exit %d, %+v, want 0, ok and 5 licences", code, rep)
	}
	if n := pgCount(t, restored.vars["LICENTIA_DATABASE_URL"], `SELECT count(*) FROM activations`); n != 3 {
		t.Errorf("restored database holds %d activations, want 3", n)
	}
	_, restoredBase := restored.serve(t, io.Discard)
	for _, l := range licences {
		readHTTP(t, restoredBase, key, l)
	}

	// Over data, nothing is restored and nothing changes.
	e := restored.fail(t, licentia.CodeConflict, "restore", "--from", file)
	if msg := e["message"].(string); !strings.Contains(msg, "already holds data") || !strings.Contains(msg, "licences") {
		t.Errorf("restore over data: %q, want the tables holding data named", msg)
	}
	if n := pgCount(t, restored.vars["LICENTIA_DATABASE_URL"], `SELECT count(*) FROM licences`); n != 5 {
		t.Errorf("after a refused restore the database holds %d licences, want the 5 it held", n)
	}

	// Under another master key, nothing is written.
	other := newHarness(t)
	otherKey := filepath.Join(t.TempDir(), "other.key")
	writeFile(t, otherKey, rawKey(9))
	other.vars["LICENTIA_MASTER_KEY_FILE"] = otherKey
	other.vars["LICENTIA_DATABASE_URL"] = newPostgresDatabase(t, schema)
	e = other.fail(t, licentia.CodeConflict, "restore", "--from", file)
	msg := e["message"].(string)
	for _, fp := range []string{fingerprint, masterKey(t, rawKey(9)).Fingerprint()} {
		if !strings.Contains(msg, fp) {
			t.Errorf("restore with another master key: %q, want fingerprint %s named", msg, fp)
		}
	}

	// Without the master key the archive names, nothing is written.
	keyless := newHarness(t)
	keyless.vars["LICENTIA_DATABASE_URL"] = newPostgresDatabase(t, schema)
	e = keyless.fail(t, licentia.CodeMasterKeyNotFound, "restore", "--from", file)
	if msg := e["message"].(string); !strings.Contains(msg, fingerprint) || !strings.Contains(msg, "LICENTIA_MASTER_KEY_FILE") {
		t.Errorf("restore without the master key: %q, want fingerprint %s and LICENTIA_MASTER_KEY_FILE named", msg, fingerprint)
	}
	if n := schemaTables(t, keyless.vars["LICENTIA_DATABASE_URL"], schema); n != 0 {
		t.Errorf("a restore without the master key created %d tables", n)
	}

	// What is not an archive of pg_dump is refused before anything is read.
	for name, content := range map[string][]byte{
		"notes.txt":       []byte("not a dump, though long enough to have a header\n"),
		"licentia.backup": []byte("SQLite format 3\x00 and more"),
	} {
		path := filepath.Join(t.TempDir(), name)
		writeFile(t, path, content)
		e = other.fail(t, licentia.CodeValidationFailed, "restore", "--from", path)
		if msg := e["message"].(string); !strings.Contains(msg, "not a pg_dump archive") {
			t.Errorf("restore of %s: %q, want it called not a pg_dump archive", name, msg)
		}
	}
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.dump")
	writeFile(t, truncated, whole[:len(whole)/2])
	e = other.fail(t, licentia.CodeValidationFailed, "restore", "--from", truncated)
	if msg := e["message"].(string); !strings.Contains(msg, "truncated.dump") || !strings.Contains(msg, "pg_restore") {
		t.Errorf("restore of a truncated archive: %q, want pg_restore's error on the file", msg)
	}
	e = other.fail(t, licentia.CodeFileNotFound, "restore", "--from", filepath.Join(t.TempDir(), "missing.dump"))
	if msg := e["message"].(string); !strings.Contains(msg, "missing.dump") {
		t.Errorf("restore of a missing file: %q, want the file named", msg)
	}
	// Into a schema other than the one dumped, the service would find
	// nothing: refused.
	elsewhere := newHarness(t)
	elsewhere.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	elsewhere.vars["LICENTIA_DATABASE_URL"] = newPostgresDatabase(t, "elsewhere")
	e = elsewhere.fail(t, licentia.CodeValidationFailed, "restore", "--from", file)
	if msg := e["message"].(string); !strings.Contains(msg, "search_path="+schema) {
		t.Errorf("restore into another schema: %q, want search_path=%s suggested", msg, schema)
	}
	// Tables the archive does not have, as a newer release's migrations
	// leave, would outlive the restore: refused.
	newer := newHarness(t)
	newer.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	newer.vars["LICENTIA_DATABASE_URL"] = newPostgresDatabase(t, schema)
	pgExec(t, newer.vars["LICENTIA_DATABASE_URL"], "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	newer.ok(t, "migrate")
	pgExec(t, newer.vars["LICENTIA_DATABASE_URL"], "CREATE TABLE newer_feature (id bigint)")
	e = newer.fail(t, licentia.CodeConflict, "restore", "--from", file)
	if msg := e["message"].(string); !strings.Contains(msg, "newer_feature") {
		t.Errorf("restore over a newer schema: %q, want the table the archive lacks named", msg)
	}
	if n := pgCount(t, newer.vars["LICENTIA_DATABASE_URL"], `SELECT count(*) FROM goose_db_version`); n == 0 {
		t.Error("a refused restore emptied the migrated database")
	}
	for _, hh := range []*harness{other, elsewhere} {
		if n := schemaTables(t, hh.vars["LICENTIA_DATABASE_URL"], schema); n != 0 {
			t.Errorf("a refused restore created %d tables", n)
		}
	}

	// A backup whose counters disagree with its licences is restored, and
	// the check says so.
	if n := pgExec(t, src, `UPDATE licence_stats SET n = n + 5
		WHERE ctid = (SELECT ctid FROM licence_stats WHERE n > 0 LIMIT 1)`); n != 1 {
		t.Fatalf("altered %d counter rows, want 1", n)
	}
	altered := filepath.Join(t.TempDir(), "altered.dump")
	h.ok(t, "backup", "--to", altered)
	third := newHarness(t)
	third.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	third.vars["LICENTIA_DATABASE_URL"] = newPostgresDatabase(t, schema)
	e = third.fail(t, licentia.CodeInternal, "restore", "--from", altered)
	if msg := e["message"].(string); !strings.Contains(msg, "checks failed") || !strings.Contains(msg, "licence_counters") {
		t.Errorf("restore of altered counters: %q, want the failed licence_counters check", msg)
	}
	if n := pgCount(t, third.vars["LICENTIA_DATABASE_URL"], `SELECT count(*) FROM licences`); n != 5 {
		t.Errorf("the restore of altered counters holds %d licences, want 5 in place for inspection", n)
	}
}
