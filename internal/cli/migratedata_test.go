package cli_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestMigrateData moves a database that a running service has filled
// (licences issued and machines activated through the API, a revocation,
// API keys, a console link, an assistant's grant) from SQLite to
// PostgreSQL once the service has stopped, then serves the copy: the same
// API key, licence keys and machines work, new writes succeed, and every
// table holds what the SQLite database held.
func TestMigrateData(t *testing.T) {
	src := newHarness(t)
	keyPath := src.useMasterKey(t, 3)
	// Deliveries go to a closed port: they wait, queued, in the database.
	src.vars["LICENTIA_WEBHOOK_RESOLVE"] = "hooks.example.com:443:127.0.0.1:9"
	src.vars["LICENTIA_BASE_URL"] = "https://licentia.example.org"
	base, stopServe := src.serveStoppable(t)
	src.org(t, "acme", "business")
	key := src.ok(t, "apikey", "create", "--org", "acme",
		"--scopes", "products:read,products:write,licences:read,licences:write,webhooks:write")["key"].(string)
	createHTTP(t, base, key, "desk", "DESK")
	if status, answer := call(t, "POST", base+"/v1/admin/webhooks", key, map[string]any{
		"url": "https://hooks.example.com/licentia", "event_types": licentia.EventTypes}); status != http.StatusCreated {
		t.Fatalf("POST /v1/admin/webhooks = %d %v", status, answer)
	}
	src.ok(t, "member", "login-link", "--org", "acme", "--email", "owner@acme.example")
	src.ok(t, "assistant", "token", "--org", "acme", "--email", "owner@acme.example")

	stop := make(chan struct{})
	c, wg := load(base, key, 2, stop)
	poll(t, "the load has committed licences and activations", func() bool {
		l, a := c.snapshot()
		return len(l) >= 20 && len(a) >= 10
	})
	close(stop)
	wg.Wait()
	if len(c.failures) > 0 {
		t.Fatalf("load failed: %v", c.failures)
	}
	licences, activations := c.snapshot()
	if status, answer := call(t, "POST", base+"/v1/admin/licences/"+licences[0].id+"/revoke", key,
		map[string]any{"reason": "refunded"}); status != http.StatusOK {
		t.Fatalf("revoke = %d %v", status, answer)
	}

	stopServe()
	to := storetest.PostgresURL(t)
	from := src.vars["LICENTIA_DATABASE_URL"]
	r := src.run(t, "migrate-data", "--from", from, "--to", to)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("migrate-data: exit %d, stderr %q, want 0 and nothing off a terminal", r.code, r.stderr)
	}
	summary := oneObject(t, r.stdout)
	m := masterKey(t, rawKey(3))
	tables, _ := summary["tables"].(map[string]any)
	if summary["master_key_fingerprint"] != m.Fingerprint() || jsonInt(t, summary["signing_keys_opened"]) != 1 ||
		summary["from"] != strings.TrimPrefix(from, "sqlite:") || strings.Contains(r.stdout, "password") {
		t.Errorf("migrate-data summary %v, want the fingerprint %s and 1 key opened", summary, m.Fingerprint())
	}
	if n := jsonInt(t, tables["licences"]); n != int64(len(licences)) || jsonInt(t, summary["licences"]) != n {
		t.Errorf("migrate-data copied %d licences, checked %v, want the %d issued", n, summary["licences"], len(licences))
	}

	// Every table holds on PostgreSQL the rows the summary names, and
	// the service's data is all there: not one table is left out.
	pg, err := pgx.Connect(t.Context(), to)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(t.Context())
	for _, name := range []string{"organizations", "members", "api_keys", "webhook_endpoints", "webhook_secrets", "webhook_deliveries", "audit_log", "products", "product_keys",
		"product_names", "licences", "licence_stats", "activations", "events", "login_links", "grants", "assistant_tokens", "settings"} {
		if jsonInt(t, tables[name]) == 0 {
			t.Errorf("migrate-data copied no %s: %v", name, tables)
		}
	}
	var sum int64
	for name, v := range tables {
		var n int64
		if err := pg.QueryRow(t.Context(), `SELECT count(*) FROM `+pgx.Identifier{name}.Sanitize()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != jsonInt(t, v) {
			t.Errorf("PostgreSQL %s holds %d rows, the summary says %v", name, n, v)
		}
		sum += n
	}
	if sum != jsonInt(t, summary["rows"]) {
		t.Errorf("PostgreSQL holds %d rows in all, the summary says %v", sum, summary["rows"])
	}

	// Every licence is the same, field by field, with the same live
	// activations; every activation committed before the move is there.
	dst, err := postgres.Open(t.Context(), to)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	srcStore := src.openStore(t)
	defer srcStore.Close()
	if diff := cmp.Diff(allLicences(t, srcStore), allLicences(t, dst)); diff != "" {
		t.Errorf("licences on PostgreSQL differ from SQLite's (-sqlite +postgres):\n%s", diff)
	}
	org := orgID(t, src, "acme")
	for _, id := range activations {
		want, err := srcStore.Activation(t.Context(), org, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dst.Activation(t.Context(), org, id)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("activation %s on PostgreSQL = %+v, %v, want %+v", id, got, err, want)
		}
	}

	// The copy serves: the API key, every licence key and its machines.
	dstH := newHarness(t)
	dstH.vars["LICENTIA_DATABASE_URL"] = to
	dstH.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	_, pgBase := dstH.serve(t, io.Discard)
	for _, l := range licences {
		readHTTP(t, pgBase, key, l)
	}
	status, answer, err := postJSON(pgBase, "/v1/activations", "", map[string]any{
		"licence_key": licences[1].key, "machine_id": "moved-machine", "label": "Moved", "os": "linux", "app_version": "3.1.0"})
	if err != nil || status != http.StatusCreated || answer["verdict"] == nil {
		t.Errorf("activation on the copy = %d %v %v, want 201 and a verdict", status, answer, err)
	}
	status, answer, err = postJSON(pgBase, "/v1/activations", "", map[string]any{
		"licence_key": licences[0].key, "machine_id": "moved-machine", "label": "Moved", "os": "linux", "app_version": "3.1.0"})
	if e, _ := answer["error"].(map[string]any); err != nil || status != http.StatusForbidden || e["code"] != string(licentia.CodeLicenceRevoked) {
		t.Errorf("activation of the revoked licence on the copy = %d %v %v, want 403 licence_revoked", status, answer, err)
	}
	// New rows take keys after the copied ones (audit and event sequences).
	issueHTTP(t, pgBase, key, "desk")
	if code, rep := runVerify(t, dstH); code != 0 || !rep.OK {
		t.Errorf("verify on the copy after new writes = %d %+v", code, rep)
	}

	// Into a database holding data: refused, naming a table.
	e := src.fail(t, licentia.CodeConflict, "migrate-data", "--from", from, "--to", to)
	if msg, _ := e["message"].(string); !strings.Contains(msg, "already holds data") {
		t.Errorf("migrate-data into a full database: %q, want it to say so", msg)
	}
}

// allLicences reads every licence of the store, in id order.
func allLicences(t *testing.T, st store.Store) []store.CheckedLicence {
	t.Helper()
	var out []store.CheckedLicence
	err := st.Snapshot(t.Context(), func(r store.Reader) error {
		after := ""
		for {
			page, err := r.LicencesAfter(t.Context(), after, 500)
			if err != nil {
				return err
			}
			out = append(out, page...)
			if len(page) < 500 {
				return nil
			}
			after = page[len(page)-1].ID
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrateDataRefused: nothing is written to PostgreSQL when the move
// cannot be made whole. While serve runs on the database, the move is
// refused, naming it; once serve has stopped, the move is made.
func TestMigrateDataRefused(t *testing.T) {
	src := newHarness(t)
	src.useMasterKey(t, 4)
	base, stopServe := src.serveStoppable(t)
	src.org(t, "acme", "business")
	key := src.ok(t, "apikey", "create", "--org", "acme", "--scopes", "products:write,licences:write")["key"].(string)
	createHTTP(t, base, key, "desk", "DESK")
	issueHTTP(t, base, key, "desk")
	from := src.vars["LICENTIA_DATABASE_URL"]

	for _, tc := range []struct {
		name string
		args []string
		code licentia.Code
		want string
	}{
		{"no --from", []string{"--to", "postgres://localhost/x"}, licentia.CodeValidationFailed, "--from sqlite:PATH"},
		{"--from not SQLite", []string{"--from", "postgres://localhost/x", "--to", "postgres://localhost/y"}, licentia.CodeValidationFailed, "--from sqlite:PATH"},
		{"--to not PostgreSQL", []string{"--from", from, "--to", "sqlite:/tmp/x.db"}, licentia.CodeValidationFailed, "--to postgres://"},
		{"missing source", []string{"--from", "sqlite:" + filepath.Join(t.TempDir(), "absent.db"), "--to", "postgres://localhost/x"},
			licentia.CodeValidationFailed, "absent.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := src.fail(t, tc.code, append([]string{"migrate-data"}, tc.args...)...)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.want) {
				t.Errorf("message %q, want it to hold %q", msg, tc.want)
			}
		})
	}

	t.Run("another master key", func(t *testing.T) {
		to := storetest.PostgresURL(t)
		other := filepath.Join(t.TempDir(), "other.key")
		writeFile(t, other, rawKey(5))
		h := newHarness(t)
		h.vars["LICENTIA_MASTER_KEY_FILE"] = other
		e := h.fail(t, licentia.CodeConflict, "migrate-data", "--from", from, "--to", to)
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, masterKey(t, rawKey(4)).Fingerprint()) || !strings.Contains(msg, masterKey(t, rawKey(5)).Fingerprint()) {
			t.Errorf("message %q, want both fingerprints", msg)
		}
		if n := postgresCount(t, to, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`); n != 0 {
			t.Errorf("PostgreSQL holds %d tables after the refusal, want none", n)
		}
	})

	// Four moves into one database at once, each of its own copy of the
	// database: one copies, the others wait for its tables' locks, then
	// find its rows and write nothing.
	t.Run("at once", func(t *testing.T) {
		to := storetest.PostgresURL(t)
		results := make([]result, 4)
		copies := make([]string, len(results))
		for i := range copies {
			copies[i] = filepath.Join(t.TempDir(), "copy.db")
			src.ok(t, "backup", "--to", copies[i])
		}
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() { results[i] = src.run(t, "migrate-data", "--from", "sqlite:"+copies[i], "--to", to) })
		}
		wg.Wait()
		copied := 0
		for _, r := range results {
			switch {
			case r.code == 0:
				copied++
			case !strings.Contains(r.stderr, `"code":"conflict"`) || !strings.Contains(r.stderr, "already holds data"):
				t.Errorf("a concurrent move: exit %d, stderr %s, want success or conflict", r.code, r.stderr)
			}
		}
		if copied != 1 {
			t.Errorf("%d moves copied, want 1", copied)
		}
		if n := postgresCount(t, to, `SELECT count(*) FROM licences`); n != 1 {
			t.Errorf("PostgreSQL holds %d licences after the concurrent moves, want the 1 copied once", n)
		}
	})

	t.Run("schemas differ", func(t *testing.T) {
		// A copy of the database with a column this version does not know.
		odd := filepath.Join(t.TempDir(), "odd.db")
		src.ok(t, "backup", "--to", odd)
		db, err := sql.Open("sqlite", odd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`ALTER TABLE licences ADD COLUMN colour TEXT`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		to := storetest.PostgresURL(t)
		e := src.fail(t, licentia.CodeInternal, "migrate-data", "--from", "sqlite:"+odd, "--to", to)
		if msg, _ := e["message"].(string); !strings.Contains(msg, "licences.colour") || !strings.Contains(msg, "no data was written") {
			t.Errorf("message %q, want the column named and nothing written", msg)
		}
		if n := postgresCount(t, to, `SELECT count(*) FROM licences`); n != 0 {
			t.Errorf("PostgreSQL holds %d licences after the refusal, want none", n)
		}
	})

	// Writes serve acknowledged after the copy began would be lost: the
	// move is refused before anything is written, naming the process.
	to := storetest.PostgresURL(t)
	e := src.fail(t, licentia.CodeDatabaseInUse, "migrate-data", "--from", from, "--to", to)
	msg, _ := e["message"].(string)
	if !strings.Contains(msg, fmt.Sprintf("serve (pid %d)", os.Getpid())) || !strings.Contains(msg, "Stop it") {
		t.Errorf("migrate-data while serve runs: %q, want serve and its pid named, and to stop it", msg)
	}
	if n := postgresCount(t, to, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`); n != 0 {
		t.Errorf("PostgreSQL holds %d tables after the refusal, want none", n)
	}
	stopServe()
	if r := src.run(t, "migrate-data", "--from", from, "--to", to); r.code != 0 {
		t.Errorf("migrate-data once serve stopped: exit %d, stderr %s", r.code, r.stderr)
	}
	if n := postgresCount(t, to, `SELECT count(*) FROM licences`); n != 1 {
		t.Errorf("PostgreSQL holds %d licences after the move, want 1", n)
	}
}

// serveStoppable starts the service as serve does and returns its base URL
// and a function that stops it as SIGTERM does, letting go of the
// database; the test's end stops it too.
func (h *harness) serveStoppable(t *testing.T) (base string, stop func()) {
	t.Helper()
	app := h.newApp(t, io.Discard)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() error = %v", err)
		}
		if err := app.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	t.Cleanup(stop)
	base = "http://" + app.Addr()
	poll(t, "the service answers /healthz", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base, stop
}

// postgresCount runs a count query on the PostgreSQL database at url.
func postgresCount(t *testing.T, url, query string) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var n int64
	if err := conn.QueryRow(t.Context(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServeRefusedWhileMoving: serve does not start on a database that
// migrate-data is moving, and names it.
func TestServeRefusedWhileMoving(t *testing.T) {
	h := newHarness(t)
	h.ok(t, "migrate")
	lock, err := sqlite.LockExclusive(filepath.Join(h.dir, "licentia.db"), "migrate-data")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	// Should serve start all the same, it fails to listen rather than
	// serving until the test times out.
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:notaport"
	e := h.fail(t, licentia.CodeDatabaseInUse, "serve")
	if msg, _ := e["message"].(string); !strings.Contains(msg, fmt.Sprintf("migrate-data (pid %d)", os.Getpid())) {
		t.Errorf("serve while migrate-data runs: %q, want migrate-data and its pid named", msg)
	}
}
