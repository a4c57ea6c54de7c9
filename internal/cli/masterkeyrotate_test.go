package cli_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// rotationFixture is a database whose products' keys and webhook secrets
// are sealed under a master key in the configured key file.
type rotationFixture struct {
	h    *harness
	st   store.Store
	path string
	raw  []byte
	old  *signing.MasterKey
}

func newRotationFixture(t *testing.T) *rotationFixture {
	t.Helper()
	h := newHarness(t)
	f := &rotationFixture{h: h, path: filepath.Join(h.dir, "master.key"), raw: rawKey(1)}
	f.old = masterKey(t, f.raw)
	writeFile(t, f.path, f.raw)
	h.vars["LICENTIA_MASTER_KEY_FILE"] = f.path
	h.newApp(t, io.Discard).Close() // records the fingerprint
	f.st = h.openStore(t)

	svc := adminService(f.st, f.old)
	orgID := h.org(t, "acme", "studio")["id"].(string)
	createProduct(t, svc, orgID, "photo-editor", "PHOTO")
	createProduct(t, svc, orgID, "notes", "NOTES")
	// photo-editor: a previous, a retired and a current key; notes: a
	// previous and a current key.
	for _, rot := range []struct {
		id   string
		keep bool
	}{{"photo-editor", true}, {"photo-editor", false}, {"notes", true}} {
		if _, err := svc.RotateSigningKey(t.Context(), licentia.OperatorActor, orgID, rot.id, admin.RotateKey{KeepPrevious: &rot.keep}); err != nil {
			t.Fatalf("RotateSigningKey(%s) error = %v", rot.id, err)
		}
	}
	// A webhook endpoint with its current and a replaced secret.
	url := "https://hooks.example.net/licentia"
	e, _, err := svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, orgID,
		admin.CreateWebhookEndpoint{URL: &url, EventTypes: []licentia.EventType{licentia.EventLicenceIssued}})
	if err != nil {
		t.Fatalf("AddWebhookEndpoint() error = %v", err)
	}
	if _, _, err := svc.RotateWebhookSecret(t.Context(), licentia.OperatorActor, orgID, e.ID); err != nil {
		t.Fatalf("RotateWebhookSecret() error = %v", err)
	}
	if n, m := len(f.keys(t)), len(f.secrets(t)); n != 5 || m != 2 {
		t.Fatalf("fixture has %d product keys and %d webhook secrets, want 5 and 2", n, m)
	}
	return f
}

// secrets lists every webhook secret.
func (f *rotationFixture) secrets(t *testing.T) []licentia.WebhookSecret {
	t.Helper()
	ss, err := f.st.AllWebhookSecrets(t.Context())
	if err != nil {
		t.Fatalf("AllWebhookSecrets() error = %v", err)
	}
	return ss
}

// keys lists every product key.
func (f *rotationFixture) keys(t *testing.T) []licentia.ProductKey {
	t.Helper()
	ps, err := f.st.AllProducts(t.Context())
	if err != nil {
		t.Fatalf("AllProducts() error = %v", err)
	}
	var ks []licentia.ProductKey
	for _, p := range ps {
		ks = append(ks, p.Keys...)
	}
	return ks
}

// state is what a rotation may change: the sealed keys and secrets, the
// recorded fingerprint and the files of the data directory.
type state struct {
	Fingerprint string
	Keys        map[string]string // key or secret id -> master fingerprint and sealed bytes
	Files       map[string]string // name -> mode and bytes
}

func (f *rotationFixture) state(t *testing.T) state {
	t.Helper()
	s := state{Fingerprint: recordedFingerprint(t, f.st), Keys: map[string]string{}, Files: map[string]string{}}
	for _, k := range f.keys(t) {
		s.Keys[k.ID] = k.MasterFingerprint + " " + hex.EncodeToString(k.Sealed)
	}
	for _, ws := range f.secrets(t) {
		s.Keys[ws.ID] = ws.MasterFingerprint + " " + hex.EncodeToString(ws.Sealed)
	}
	entries, err := os.ReadDir(f.h.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "licentia.db") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(f.h.dir, e.Name()))
		s.Files[e.Name()] = info.Mode().String() + " " + hex.EncodeToString(b)
	}
	return s
}

// opened returns every key's private part and every secret's bytes, but
// those of skip, opened under m.
func (f *rotationFixture) opened(t *testing.T, m *signing.MasterKey, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range f.keys(t) {
		if slices.Contains(skip, k.ID) {
			continue
		}
		priv, err := signing.OpenProductKey(m, &k)
		if err != nil {
			t.Errorf("OpenProductKey(key %s of %s) error = %v", k.ID, k.ProductID, err)
			continue
		}
		out[k.ID] = hex.EncodeToString(priv)
	}
	for _, ws := range f.secrets(t) {
		if slices.Contains(skip, ws.ID) {
			continue
		}
		raw, err := openSecret(m, ws)
		if err != nil {
			t.Errorf("OpenSecret(secret %s) error = %v", ws.ID, err)
			continue
		}
		out[ws.ID] = hex.EncodeToString(raw)
	}
	return out
}

// openSecret opens a webhook secret's sealed bytes under m, whatever master
// key the row names.
func openSecret(m *signing.MasterKey, ws licentia.WebhookSecret) ([]byte, error) {
	ws.MasterFingerprint = m.Fingerprint()
	return webhooks.OpenSecret(signing.NewKeyring(m), &ws)
}

func TestMasterKeyRotate(t *testing.T) {
	f := newRotationFixture(t)
	before := f.opened(t, f.old)
	newRaw := rawKey(2)
	next := masterKey(t, newRaw)
	newFile := filepath.Join(t.TempDir(), "new.key")
	writeFile(t, newFile, newRaw)

	// A temporary file left by an interrupted rotation, readable by all,
	// is not reused.
	stale := f.path + ".tmp"
	writeFile(t, stale, []byte("stale"))
	if err := os.Chmod(stale, 0o644); err != nil {
		t.Fatal(err)
	}

	got := f.h.ok(t, "masterkey", "rotate", "--new-key-file", newFile)
	previous := f.path + ".previous-" + f.old.Fingerprint()
	want := map[string]any{
		"old_fingerprint": f.old.Fingerprint(), "new_fingerprint": next.Fingerprint(), "resealed": json.Number("7"),
		"key_file": f.path, "previous_key_file": previous,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("masterkey rotate output mismatch (-want +got):\n%s", diff)
	}

	// Every key opens under the new master key, to the same private key,
	// and no longer under the old one.
	if diff := cmp.Diff(before, f.opened(t, next)); diff != "" {
		t.Errorf("keys opened under the new master key mismatch (-want +got):\n%s", diff)
	}
	for _, k := range f.keys(t) {
		if _, err := signing.OpenProductKey(f.old, &k); err == nil {
			t.Errorf("key %s of %s still opens under the old master key", k.ID, k.ProductID)
		}
		if k.MasterFingerprint != next.Fingerprint() {
			t.Errorf("key %s master fingerprint = %s, want %s", k.ID, k.MasterFingerprint, next.Fingerprint())
		}
	}
	for _, ws := range f.secrets(t) {
		if _, err := openSecret(f.old, ws); err == nil {
			t.Errorf("webhook secret %s still opens under the old master key", ws.ID)
		}
		if ws.MasterFingerprint != next.Fingerprint() {
			t.Errorf("webhook secret %s master fingerprint = %s, want %s", ws.ID, ws.MasterFingerprint, next.Fingerprint())
		}
	}
	if fp := recordedFingerprint(t, f.st); fp != next.Fingerprint() {
		t.Errorf("recorded fingerprint = %s, want the new key's %s", fp, next.Fingerprint())
	}
	checkKeyFile(t, f.path, newRaw)
	checkKeyFile(t, previous, f.raw)
	wantFiles := []string{"master.key", "master.key.previous-" + f.old.Fingerprint()}
	files := slices.Sorted(maps.Keys(f.state(t).Files))
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("data directory files mismatch (-want +got):\n%s", diff)
	}

	// A process started with the old key refuses, naming both keys; one
	// started with the configured file runs.
	f.h.vars["LICENTIA_MASTER_KEY_FILE"] = previous
	_, err := cli.NewApp(t.Context(), f.h.env(io.Discard, io.Discard))
	if err == nil || !strings.Contains(err.Error(), f.old.Fingerprint()) || !strings.Contains(err.Error(), next.Fingerprint()) {
		t.Errorf("NewApp() with the old key error = %v, want a refusal naming %s and %s", err, f.old.Fingerprint(), next.Fingerprint())
	}
	f.h.vars["LICENTIA_MASTER_KEY_FILE"] = f.path
	f.h.newApp(t, io.Discard).Close()

	// Rotating again, back to a third key, works from the new one.
	third := filepath.Join(t.TempDir(), "third.key")
	writeFile(t, third, rawKey(3))
	if got := f.h.ok(t, "masterkey", "rotate", "--new-key-file", third); got["old_fingerprint"] != next.Fingerprint() {
		t.Errorf("second rotation old_fingerprint = %v, want %s", got["old_fingerprint"], next.Fingerprint())
	}
	if diff := cmp.Diff(before, f.opened(t, masterKey(t, rawKey(3)))); diff != "" {
		t.Errorf("keys after a second rotation mismatch (-want +got):\n%s", diff)
	}
}

func TestMasterKeyRotateRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		// want is part of the error message.
		want string
		// prepare damages the fixture and returns the new key file.
		prepare func(t *testing.T, f *rotationFixture) string
		// broken names what prepare seals under an unknown master key:
		// the third product key or the first webhook secret.
		broken string
	}{
		{name: "same key", want: "the new key is the current key", prepare: func(t *testing.T, f *rotationFixture) string {
			return keyFile(t, f.raw)
		}},
		{name: "short new key", want: "must be 32 bytes, not 31", prepare: func(t *testing.T, f *rotationFixture) string {
			return keyFile(t, rawKey(2)[:31])
		}},
		{name: "long new key", want: "must be 32 bytes, not 33", prepare: func(t *testing.T, f *rotationFixture) string {
			return keyFile(t, append(rawKey(2), '\n'))
		}},
		{name: "new key file missing", want: "absent.key", prepare: func(t *testing.T, f *rotationFixture) string {
			return filepath.Join(t.TempDir(), "absent.key")
		}},
		{name: "database sealed with another key", want: "has fingerprint", prepare: func(t *testing.T, f *rotationFixture) string {
			err := f.st.InTx(t.Context(), func(tx store.Tx) error {
				return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, masterKey(t, rawKey(7)).Fingerprint())
			})
			if err != nil {
				t.Fatal(err)
			}
			return keyFile(t, rawKey(2))
		}},
		{name: "key sealed under an unknown master key", want: "nothing changed", prepare: func(t *testing.T, f *rotationFixture) string {
			unknown := masterKey(t, rawKey(8))
			k := f.keys(t)[2]
			sealed, err := signing.Reseal(f.old, unknown, &k)
			if err != nil {
				t.Fatal(err)
			}
			err = f.st.InTx(t.Context(), func(tx store.Tx) error {
				return tx.ResealProductKey(t.Context(), k.ID, sealed, unknown.Fingerprint())
			})
			if err != nil {
				t.Fatal(err)
			}
			return keyFile(t, rawKey(2))
		}, broken: "key"},
		{name: "webhook secret sealed under an unknown master key", want: "nothing changed", prepare: func(t *testing.T, f *rotationFixture) string {
			unknown := masterKey(t, rawKey(8))
			ws := f.secrets(t)[0]
			sealed, err := webhooks.ResealSecret(f.old, unknown, &ws)
			if err != nil {
				t.Fatal(err)
			}
			err = f.st.InTx(t.Context(), func(tx store.Tx) error {
				return tx.ResealWebhookSecret(t.Context(), ws.ID, sealed, unknown.Fingerprint())
			})
			if err != nil {
				t.Fatal(err)
			}
			return keyFile(t, rawKey(2))
		}, broken: "secret"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newRotationFixture(t)
			var skip []string
			switch tt.broken {
			case "key":
				skip = append(skip, f.keys(t)[2].ID)
			case "secret":
				skip = append(skip, f.secrets(t)[0].ID)
			}
			before := f.opened(t, f.old, skip...)
			newFile := tt.prepare(t, f)
			was := f.state(t)

			r := f.h.run(t, "masterkey", "rotate", "--new-key-file", newFile)
			if r.code == 0 || r.stdout != "" {
				t.Fatalf("masterkey rotate: exit %d, stdout %q, want a failure", r.code, r.stdout)
			}
			e, _ := oneObject(t, r.stderr)["error"].(map[string]any)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("masterkey rotate: stderr %s, want a message with %q", r.stderr, tt.want)
			}

			if diff := cmp.Diff(was, f.state(t)); diff != "" {
				t.Errorf("a refused rotation changed something (-before +after):\n%s", diff)
			}
			// Every key and secret still opens under the old master key.
			if diff := cmp.Diff(before, f.opened(t, f.old, skip...)); diff != "" {
				t.Errorf("keys opened under the old master key mismatch (-before +after):\n%s", diff)
			}
			if _, err := os.Stat(f.path + ".previous-" + f.old.Fingerprint()); !os.IsNotExist(err) {
				t.Errorf("previous key file: %v, want none", err)
			}
		})
	}
}

func keyFile(t *testing.T, raw []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "new.key")
	writeFile(t, p, raw)
	return p
}

func TestMasterKeyRotateUsage(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{
		{"masterkey"},
		{"masterkey", "rotate"},
		{"masterkey", "rotate", "--new-key-file", ""},
		{"masterkey", "rotate", "--new-key-file", "a", "b"},
		{"masterkey", "rotate", "--new-key", "a"},
		{"masterkey", "retire", "--new-key-file", "a"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			h.fail(t, licentia.CodeValidationFailed, args...)
		})
	}
}

// TestMasterKeyRotateWhileServing rotates the master key under a running
// process, which keeps working without a restart: it seals new keys under
// the new master key, read again from the key file, and still signs with
// the keys it opened before.
func TestMasterKeyRotateWhileServing(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.dir, "master.key")
	writeFile(t, path, rawKey(1))
	h.vars["LICENTIA_MASTER_KEY_FILE"] = path
	_, base := h.serve(t, io.Discard)
	h.org(t, "acme", "studio")
	key := h.ok(t, "apikey", "create", "--org", "acme",
		"--scopes", "products:read,products:write,licences:read,licences:write")["key"].(string)

	createHTTP(t, base, key, "photo-editor", "PHOTO")
	if status, answer := call(t, "POST", base+"/v1/admin/products/photo-editor/rotate-signing-key", key, map[string]any{}); status != http.StatusOK {
		t.Fatalf("rotate signing key = %d %v", status, answer)
	}
	earlier := issueHTTP(t, base, key, "photo-editor")

	next := masterKey(t, rawKey(2))
	h.ok(t, "masterkey", "rotate", "--new-key-file", keyFile(t, rawKey(2)))

	createHTTP(t, base, key, "notes", "NOTES")
	st := h.openStore(t)
	p, err := st.Product(t.Context(), orgID(t, h, "acme"), "notes")
	if err != nil {
		t.Fatalf("Product(notes) error = %v", err)
	}
	if k := p.CurrentKey(); k.MasterFingerprint != next.Fingerprint() {
		t.Errorf("new product's key sealed under %s, want the new master key %s", k.MasterFingerprint, next.Fingerprint())
	} else if _, err := signing.OpenProductKey(next, k); err != nil {
		t.Errorf("new product's key does not open under the new master key: %v", err)
	}

	for _, product := range []string{"photo-editor", "notes"} {
		l := issueHTTP(t, base, key, product)
		readHTTP(t, base, key, l)
	}
	readHTTP(t, base, key, earlier)
	for _, product := range []string{"photo-editor", "notes"} {
		status, answer := call(t, "GET", base+"/v1/admin/products/"+product, key, nil)
		if p, _ := answer["product"].(map[string]any); status != http.StatusOK || p["signing_key_status"] != "ok" {
			t.Errorf("GET product %s = %d %v, want signing_key_status ok", product, status, answer)
		}
	}
}

type issued struct{ id, key string }

func createHTTP(t *testing.T, base, key, id, prefix string) {
	t.Helper()
	status, answer := call(t, "POST", base+"/v1/admin/products", key,
		map[string]any{"id": id, "name": id, "key_prefix": prefix, "current_major": 1})
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/admin/products %s = %d %v, want 201", id, status, answer)
	}
}

func issueHTTP(t *testing.T, base, key, product string) issued {
	t.Helper()
	status, answer := call(t, "POST", base+"/v1/admin/licences", key,
		map[string]any{"product_id": product, "email": "customer@example.com"})
	lic, _ := answer["licence"].(map[string]any)
	licenceKey, _ := answer["licence_key"].(string)
	if status != http.StatusCreated || lic == nil || licenceKey == "" {
		t.Fatalf("POST /v1/admin/licences for %s = %d %v, want 201 with a key", product, status, answer)
	}
	return issued{id: lic["id"].(string), key: licenceKey}
}

// readHTTP reads a licence, whose key is derived again, and compares it.
func readHTTP(t *testing.T, base, key string, l issued) {
	t.Helper()
	status, answer := call(t, "GET", base+"/v1/admin/licences/"+l.id, key, nil)
	if status != http.StatusOK || answer["licence_key"] != l.key {
		t.Errorf("GET /v1/admin/licences/%s = %d %v, want 200 and key %s", l.id, status, answer, l.key)
	}
}

func adminService(st store.Store, m *signing.MasterKey) *admin.Service {
	return admin.New(admin.Options{Store: st, Clock: clock.System{}, Plans: licentia.DefaultPlans(), Keys: signing.NewKeyring(m), BaseURL: "https://licentia.example.org", Logger: slog.New(slog.DiscardHandler)})
}

func createProduct(t *testing.T, svc *admin.Service, orgID, id, prefix string) {
	t.Helper()
	major := int64(1)
	_, err := svc.CreateProduct(t.Context(), licentia.OperatorActor, orgID,
		admin.NewProduct{ID: &id, Name: &id, KeyPrefix: &prefix, CurrentMajor: &major})
	if err != nil {
		t.Fatalf("CreateProduct(%s) error = %v", id, err)
	}
}

// received is a webhook request as the receiver saw it.
type received struct {
	id, timestamp, signature string
	body                     []byte
}

// TestMasterKeyRotateWhileServingWebhooks rotates the master key under a
// running process that delivers webhooks: it signs deliveries with the
// endpoint's secret before and after, opening it under the new key read
// again from the key file.
func TestMasterKeyRotateWhileServingWebhooks(t *testing.T) {
	var mu sync.Mutex
	var got []received
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body})
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw}))

	h := newHarness(t)
	path := filepath.Join(h.dir, "master.key")
	writeFile(t, path, rawKey(1))
	h.vars["LICENTIA_MASTER_KEY_FILE"] = path
	h.vars["LICENTIA_BASE_URL"] = "https://licentia.example.org"
	// httptest's certificate names example.com.
	h.vars["LICENTIA_WEBHOOK_RESOLVE"] = "example.com:443:" + receiver.Listener.Addr().String()
	h.vars["LICENTIA_WEBHOOK_CA_FILE"] = ca
	_, base := h.serve(t, io.Discard)
	orgID := h.org(t, "acme", "studio")["id"].(string)
	key := h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "products:write,licences:write")["key"].(string)
	createHTTP(t, base, key, "photo-editor", "PHOTO")

	svc := adminService(h.openStore(t), masterKey(t, rawKey(1)))
	url := "https://example.com/licentia"
	_, secret, err := svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, orgID,
		admin.CreateWebhookEndpoint{URL: &url, EventTypes: []licentia.EventType{licentia.EventLicenceIssued}})
	if err != nil {
		t.Fatalf("AddWebhookEndpoint() error = %v", err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret.Reveal(), "whsec_"))
	if err != nil {
		t.Fatalf("secret %s... is not whsec_ and base64: %v", secret.Reveal()[:6], err)
	}

	for i, rotate := range []bool{false, true} {
		if rotate {
			h.ok(t, "masterkey", "rotate", "--new-key-file", keyFile(t, rawKey(2)))
		}
		issueHTTP(t, base, key, "photo-editor")
		poll(t, "the receiver gets the event", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) > i
		})
		mu.Lock()
		r := got[i]
		mu.Unlock()
		ts, err := strconv.ParseInt(r.timestamp, 10, 64)
		if err != nil {
			t.Fatalf("webhook-timestamp %q: %v", r.timestamp, err)
		}
		if want := webhooks.Sign([][]byte{raw}, r.id, time.Unix(ts, 0), r.body); r.signature != want {
			t.Errorf("delivery %d (rotated %v): webhook-signature = %q, want %q", i, rotate, r.signature, want)
		}
	}
}
