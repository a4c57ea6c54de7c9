package cli_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
)

// postJSON sends a JSON request from any goroutine and returns its answer.
func postJSON(base, path, key string, body any) (int, map[string]any, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest("POST", base+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	err = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, err
}

// committed is what a load has seen committed: licences issued and
// activations made, each recorded once its answer came back.
type committed struct {
	mu          sync.Mutex
	licences    []issued
	activations []string
	failures    []string
}

func (c *committed) snapshot() (licences []issued, activations []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]issued(nil), c.licences...), append([]string(nil), c.activations...)
}

// load issues licences and activates machines on them until stop closes.
func load(base, key string, workers int, stop <-chan struct{}) (*committed, *sync.WaitGroup) {
	c := &committed{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				status, answer, err := postJSON(base, "/v1/admin/licences", key,
					map[string]any{"product_id": "desk", "email": "customer@example.com", "limit_count": 3})
				lic, _ := answer["licence"].(map[string]any)
				if err != nil || status != http.StatusCreated || lic == nil {
					c.mu.Lock()
					c.failures = append(c.failures, fmt.Sprintf("issue: %d %v %v", status, answer, err))
					c.mu.Unlock()
					return
				}
				l := issued{id: lic["id"].(string), key: answer["licence_key"].(string)}
				c.mu.Lock()
				c.licences = append(c.licences, l)
				c.mu.Unlock()
				status, answer, err = postJSON(base, "/v1/activations", "", map[string]any{
					"licence_key": l.key, "machine_id": fmt.Sprintf("machine-%d-%d", w, i),
					"label": "Ada's laptop", "os": "linux", "app_version": "3.1.0"})
				if status == http.StatusTooManyRequests {
					continue
				}
				act, _ := answer["activation"].(map[string]any)
				if err != nil || status != http.StatusCreated || act == nil {
					c.mu.Lock()
					c.failures = append(c.failures, fmt.Sprintf("activate: %d %v %v", status, answer, err))
					c.mu.Unlock()
					return
				}
				c.mu.Lock()
				c.activations = append(c.activations, act["id"].(string))
				c.mu.Unlock()
			}
		})
	}
	return c, &wg
}

// useMasterKey writes the master key rawKey(fill) to a file of its own and
// configures h with it; it returns the file.
func (h *harness) useMasterKey(t *testing.T, fill byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "master.key")
	writeFile(t, path, rawKey(fill))
	h.vars["LICENTIA_MASTER_KEY_FILE"] = path
	return path
}

// TestBackupWhileServing backs up a database while licences are issued
// and machines activated, restores it into a fresh data directory, and
// finds there every change committed before the backup began.
func TestBackupWhileServing(t *testing.T) {
	h := newHarness(t)
	keyPath := h.useMasterKey(t, 1)
	_, base := h.serve(t, io.Discard)
	h.org(t, "acme", "business")
	key := h.ok(t, "apikey", "create", "--org", "acme",
		"--scopes", "products:read,products:write,licences:read,licences:write")["key"].(string)
	createHTTP(t, base, key, "desk", "DESK")

	stop := make(chan struct{})
	c, wg := load(base, key, 3, stop)
	poll(t, "the load has committed licences and activations", func() bool {
		l, a := c.snapshot()
		return len(l) >= 10 && len(a) >= 5
	})
	licences, activations := c.snapshot()
	file := filepath.Join(t.TempDir(), "licentia.backup")
	summary := h.ok(t, "backup", "--to", file)
	close(stop)
	wg.Wait()
	if len(c.failures) > 0 {
		t.Fatalf("load failed: %v", c.failures)
	}

	m := masterKey(t, rawKey(1))
	if summary["file"] != file || summary["master_key_fingerprint"] != m.Fingerprint() {
		t.Errorf("backup summary %v, want file %s and fingerprint %s", summary, file, m.Fingerprint())
	}
	if n := jsonInt(t, summary["licences"]); n < int64(len(licences)) {
		t.Errorf("backup holds %d licences, want at least the %d committed before it", n, len(licences))
	}
	if jsonInt(t, summary["products"]) != 1 || jsonInt(t, summary["took_ms"]) < 0 {
		t.Errorf("backup summary %v, want 1 product and a duration", summary)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || jsonInt(t, summary["bytes"]) != st.Size() {
		t.Errorf("backup file mode %v size %d, summary %v: want 0600 and the same size", st.Mode().Perm(), st.Size(), summary["bytes"])
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, rawKey(1)) {
		t.Error("the backup holds the master key")
	}

	fresh := newHarness(t)
	fresh.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	fresh.ok(t, "migrate") // a database without data is no obstacle
	got := fresh.ok(t, "restore", "--from", file)
	if got["master_key_fingerprint"] != m.Fingerprint() || got["licences"] != summary["licences"] ||
		jsonInt(t, got["products"]) != 1 || jsonInt(t, got["signing_keys_opened"]) != 1 {
		t.Errorf("restore summary %v, want the backup's fingerprint, %v licences and 1 key opened", got, summary["licences"])
	}
	restoredDB := filepath.Join(fresh.dir, "licentia.db")
	if st, err := os.Stat(restoredDB); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("restored database: %v, %v, want mode 0600", st, err)
	}

	rs := fresh.openStore(t)
	org := orgID(t, fresh, "acme")
	for _, l := range licences {
		if _, err := rs.Licence(t.Context(), org, l.id); err != nil {
			t.Errorf("licence %s committed before the backup: %v", l.id, err)
		}
	}
	for _, id := range activations {
		if _, err := rs.Activation(t.Context(), org, id); err != nil {
			t.Errorf("activation %s committed before the backup: %v", id, err)
		}
	}
	now := time.Now()
	counts, err := rs.CountLicences(t.Context(), org, nil, now, now)
	if err != nil {
		t.Fatal(err)
	}
	if counts.All != jsonInt(t, summary["licences"]) || counts.LiveMachines < int64(len(activations)) {
		t.Errorf("restored counts %+v, want %v licences and at least %d live machines", counts, summary["licences"], len(activations))
	}
	rs.Close()

	// The restored database serves: the API key and licences it holds work.
	_, restoredBase := fresh.serve(t, io.Discard)
	for _, l := range licences[:3] {
		readHTTP(t, restoredBase, key, l)
	}
	fresh.fail(t, licentia.CodeConflict, "restore", "--from", file)

	// A backup whose counters disagree with its licences is restored, and
	// the check says so.
	altered := filepath.Join(t.TempDir(), "altered.backup")
	writeFile(t, altered, raw)
	db, err := sql.Open("sqlite", altered)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE licence_stats SET n = n + 5 WHERE rowid = (SELECT min(rowid) FROM licence_stats)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	third := newHarness(t)
	third.vars["LICENTIA_MASTER_KEY_FILE"] = keyPath
	e := third.fail(t, licentia.CodeInternal, "restore", "--from", altered)
	if msg := e["message"].(string); !strings.Contains(msg, "checks failed") || !strings.Contains(msg, org) {
		t.Errorf("restore of altered counters: %q, want the failed check on organization %s", msg, org)
	}
}

func jsonInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v is not a number", v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestRestoreRefused shows restore refusing what it cannot put in place
// safely, writing nothing.
func TestRestoreRefused(t *testing.T) {
	h := newHarness(t)
	h.useMasterKey(t, 1)
	h.serve(t, io.Discard) // records the master key's fingerprint
	h.org(t, "acme", "studio")
	file := filepath.Join(t.TempDir(), "licentia.backup")
	h.ok(t, "backup", "--to", file)
	db := filepath.Join(h.dir, "licentia.db")

	e := h.fail(t, licentia.CodeConflict, "restore", "--from", file)
	if msg := e["message"].(string); !strings.Contains(msg, db) {
		t.Errorf("restore over data: %q, want the database's path %s", msg, db)
	}

	other := newHarness(t)
	otherKey := filepath.Join(t.TempDir(), "other.key")
	writeFile(t, otherKey, rawKey(9))
	other.vars["LICENTIA_MASTER_KEY_FILE"] = otherKey
	e = other.fail(t, licentia.CodeConflict, "restore", "--from", file)
	msg := e["message"].(string)
	for _, fp := range []string{masterKey(t, rawKey(1)).Fingerprint(), masterKey(t, rawKey(9)).Fingerprint()} {
		if !strings.Contains(msg, fp) {
			t.Errorf("restore with another master key: %q, want fingerprint %s named", msg, fp)
		}
	}

	e = other.fail(t, licentia.CodeFileNotFound, "restore", "--from", filepath.Join(t.TempDir(), "missing"))
	if msg := e["message"].(string); !strings.Contains(msg, "missing") {
		t.Errorf("restore of a missing file: %q, want the file named", msg)
	}
	text := filepath.Join(t.TempDir(), "notes.txt")
	writeFile(t, text, []byte("not a database, though long enough to have a header\n"))
	e = other.fail(t, licentia.CodeValidationFailed, "restore", "--from", text)
	if msg := e["message"].(string); !strings.Contains(msg, "not a SQLite database") {
		t.Errorf("restore of a text file: %q, want it called not a SQLite database", msg)
	}
	if _, err := os.Stat(filepath.Join(other.dir, "licentia.db")); err == nil {
		t.Error("a refused restore wrote a database")
	}
	other.fail(t, licentia.CodeValidationFailed, "restore")
	other.fail(t, licentia.CodeValidationFailed, "backup")
}

// TestBackupPostgres prints the pg_dump and pg_restore commands without
// the password, and runs pg_dump when it is installed; restore refuses a
// database holding data.
func TestBackupPostgres(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_DATABASE_URL"] = "postgres://licentia:s3cret@db.internal:5433/licentia?sslmode=require"
	printed := h.ok(t, "backup")
	cmd, _ := printed["command"].(string)
	want := "PGSSLMODE=require pg_dump --format=custom --file=licentia.dump --host=db.internal --port=5433 --username=licentia --dbname=licentia"
	if cmd != want || printed["ran"] != false || printed["password"] == nil {
		t.Errorf("backup on PostgreSQL = %v, want command %q, not run, and where the password goes", printed, want)
	}
	if strings.Contains(fmt.Sprint(printed), "s3cret") {
		t.Errorf("backup on PostgreSQL printed the password: %v", printed)
	}

	// Without pg_restore here, restore prints a command that fails on a
	// database holding tables rather than replacing them.
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	printed = h.ok(t, "restore", "--from", "/backups/licentia.dump")
	cmd, _ = printed["command"].(string)
	want = "PGSSLMODE=require pg_restore --single-transaction --no-owner --no-privileges --host=db.internal --port=5433 --username=licentia --dbname=licentia /backups/licentia.dump"
	if cmd != want || printed["ran"] != false || printed["password"] == nil || strings.Contains(fmt.Sprint(printed), "s3cret") {
		t.Errorf("restore on PostgreSQL without pg_restore = %v, want command %q, not run, and where the password goes", printed, want)
	}
	t.Setenv("PATH", path)

	h.vars["LICENTIA_DATABASE_URL"] = storetest.PostgresURL(t)
	h.org(t, "acme", "studio")
	file := filepath.Join(t.TempDir(), "licentia.dump")
	ran := h.ok(t, "backup", "--to", file)
	if ran["ran"] != true || ran["file"] != file {
		t.Fatalf("backup --to on PostgreSQL = %v, want pg_dump run", ran)
	}
	if st, err := os.Stat(file); err != nil || st.Size() == 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("pg_dump file: %v %v, want a non-empty file of mode 0600", st, err)
	}
	h.fail(t, licentia.CodeConflict, "restore", "--from", file)
}
