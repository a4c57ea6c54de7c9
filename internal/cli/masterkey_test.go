package cli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// lockedBuffer collects the service's log while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logLines decodes the service's JSON log.
func logLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// warnings returns the log's WARN lines whose message contains substr.
func warnings(t *testing.T, logs, substr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range logLines(t, logs) {
		if msg, _ := m["msg"].(string); m["level"] == "WARN" && strings.Contains(msg, substr) {
			out = append(out, m)
		}
	}
	return out
}

// newApp builds the service from h's configuration; the test closes it.
func (h *harness) newApp(t *testing.T, logs io.Writer) *cli.App {
	t.Helper()
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, logs))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	t.Cleanup(func() { app.Close() })
	return app
}

// serve starts the service and returns its base URL once it answers
// /healthz. It stops when the test ends.
func (h *harness) serve(t *testing.T, logs io.Writer) (app *cli.App, base string) {
	t.Helper()
	app = h.newApp(t, logs)
	done := make(chan error, 1)
	go func() { done <- app.Run(t.Context()) }()
	// t.Context is cancelled before cleanups run, so Run is returning.
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("Run() error = %v", err)
		}
	})
	base = "http://" + app.Addr()
	poll(t, "the service answers /healthz", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return app, base
}

// call sends a request with an API key and decodes the answer.
func call(t *testing.T, method, url, key string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s error = %v", method, url, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: decode answer: %v", method, url, err)
	}
	return resp.StatusCode, out
}

func errorCode(answer map[string]any) any {
	e, _ := answer["error"].(map[string]any)
	return e["code"]
}

// rawKey returns 32 known bytes, different for each fill.
func rawKey(fill byte) []byte {
	raw := make([]byte, signing.MasterKeySize)
	for i := range raw {
		raw[i] = fill + byte(i)*7
	}
	return raw
}

func masterKey(t *testing.T, raw []byte) *signing.MasterKey {
	t.Helper()
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatalf("NewMasterKey() error = %v", err)
	}
	return m
}

func writeFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkKeyFile fails unless path holds raw with mode 0600.
func checkKeyFile(t *testing.T, path string, raw []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read key file: %v", err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("%s holds %d other bytes, want the expected key", filepath.Base(path), len(got))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode = %v, want 0600", filepath.Base(path), fi.Mode().Perm())
	}
}

func recordedFingerprint(t *testing.T, st store.Store) string {
	t.Helper()
	fp, err := st.Setting(t.Context(), store.SettingMasterKeyFingerprint)
	if err != nil {
		t.Fatalf("Setting() error = %v", err)
	}
	return fp
}

// secretSpellings are the ways a key's bytes could show in a log.
func secretSpellings(raw []byte) []string {
	return []string{
		hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)), base64.StdEncoding.EncodeToString(raw),
		base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(raw), string(raw),
	}
}

// TestMasterKeyGenerated starts the service without a configured key on a
// fresh database: it generates one in the data directory, warns once and
// records its fingerprint; a second start uses it without warning.
func TestMasterKeyGenerated(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.dir, "master.key")
	var logs lockedBuffer
	app := h.newApp(t, &logs)
	app.Close()

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("generated key: %v", err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != signing.MasterKeySize {
		t.Errorf("generated key: mode %v, %d bytes, want 0600 and %d bytes", fi.Mode().Perm(), fi.Size(), signing.MasterKeySize)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fp := masterKey(t, raw).Fingerprint()
	if got := recordedFingerprint(t, h.openStore(t)); got != fp {
		t.Errorf("recorded fingerprint = %q, want %q (the generated key's)", got, fp)
	}

	warned := warnings(t, logs.String(), "generated a master key")
	if len(warned) != 1 {
		t.Fatalf("log has %d warnings about the generated key, want 1:\n%s", len(warned), logs.String())
	}
	if warned[0]["fingerprint"] != fp || warned[0]["path"] != path {
		t.Errorf("warning = %v, want fingerprint %s and path %s", warned[0], fp, path)
	}
	for _, s := range secretSpellings(raw) {
		if strings.Contains(logs.String(), s) {
			t.Errorf("log holds the master key (%q):\n%s", s, logs.String())
		}
	}

	var again lockedBuffer
	h.newApp(t, &again).Close()
	if w := warnings(t, again.String(), "master key"); len(w) != 0 {
		t.Errorf("second start warns %v, want nothing", w)
	}
	checkKeyFile(t, path, raw)
	if got := recordedFingerprint(t, h.openStore(t)); got != fp {
		t.Errorf("recorded fingerprint after a second start = %q, want %q", got, fp)
	}
}

// TestMasterKeyMismatch configures a key other than the one the database
// recorded: the service refuses to start and names both fingerprints.
func TestMasterKeyMismatch(t *testing.T) {
	h := newHarness(t)
	h.newApp(t, io.Discard).Close()
	generated, err := os.ReadFile(filepath.Join(h.dir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	recorded := masterKey(t, generated).Fingerprint()

	other := filepath.Join(h.dir, "other.key")
	writeFile(t, other, rawKey(9))
	h.vars["LICENTIA_MASTER_KEY_FILE"] = other
	otherFP := masterKey(t, rawKey(9)).Fingerprint()

	_, err = cli.NewApp(t.Context(), h.env(io.Discard, io.Discard))
	if err == nil {
		t.Fatal("NewApp() with another key error = nil, want a refusal")
	}
	for _, fp := range []string{recorded, otherFP} {
		if !strings.Contains(err.Error(), fp) {
			t.Errorf("NewApp() error = %q, want it to name fingerprint %s", err, fp)
		}
	}
	r := h.run(t, "serve")
	if r.code == 0 || !strings.Contains(r.stderr, recorded) || !strings.Contains(r.stderr, otherFP) {
		t.Errorf("serve with another key: exit %d, stderr %q, want a failure naming both fingerprints", r.code, r.stderr)
	}
	oneObject(t, r.stderr)
	if got := recordedFingerprint(t, h.openStore(t)); got != recorded {
		t.Errorf("recorded fingerprint = %q, want %q unchanged", got, recorded)
	}
	checkKeyFile(t, filepath.Join(h.dir, "master.key"), generated)
}

// TestMasterKeyMissing configures a key file that does not exist: the
// service starts, and creating a product answers 503.
func TestMasterKeyMissing(t *testing.T) {
	h := newHarness(t)
	missing := filepath.Join(h.dir, "keys", "master.key")
	h.vars["LICENTIA_MASTER_KEY_FILE"] = missing
	var logs lockedBuffer
	_, base := h.serve(t, &logs)

	h.org(t, "acme", "indie")
	key := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "products:write,products:read")["key"].(string)
	status, answer := call(t, "POST", base+"/v1/admin/products", key,
		map[string]any{"id": "photo-editor", "name": "Photo Editor", "key_prefix": "PHOTO", "current_major": 1})
	if status != http.StatusServiceUnavailable || errorCode(answer) != string(licentia.CodeSigningKeysNotConfigured) {
		t.Errorf("POST /v1/admin/products = %d %v, want 503 signing_keys_not_configured", status, answer)
	}
	status, answer = call(t, "GET", base+"/v1/admin/products", key, nil)
	if products, _ := answer["products"].([]any); status != http.StatusOK || len(products) != 0 {
		t.Errorf("GET /v1/admin/products = %d %v, want 200 and no products", status, answer)
	}

	for _, p := range []string{missing, filepath.Join(h.dir, "master.key")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want no key generated", p, err)
		}
	}
	if got := recordedFingerprint(t, h.openStore(t)); got != "" {
		t.Errorf("recorded fingerprint = %q, want none", got)
	}
	if !strings.Contains(logs.String(), "master key unavailable") {
		t.Errorf("log does not say the master key is unavailable:\n%s", logs.String())
	}
}
