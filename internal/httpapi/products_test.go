package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// productView is the product object of an answer.
type productView struct {
	ID                   string     `json:"id"`
	Name                 string     `json:"name"`
	KeyPrefix            string     `json:"key_prefix"`
	CurrentMajor         int64      `json:"current_major"`
	MachinesPerSeat      int64      `json:"machines_per_seat"`
	LicenceSigningDomain string     `json:"licence_signing_domain"`
	VerdictSigningDomain string     `json:"verdict_signing_domain"`
	PublicKey            string     `json:"public_key"`
	PreviousPublicKeys   []string   `json:"previous_public_keys"`
	SigningKeyStatus     string     `json:"signing_key_status"`
	KeyHistory           []keyEntry `json:"key_history"`
	CreatedAt            string     `json:"created_at"`
	UpdatedAt            string     `json:"updated_at"`
	HeartbeatInterval    *int64     `json:"heartbeat_interval_seconds"`
	MachineMatch         string     `json:"machine_match"`
	Transfers            int64      `json:"transfers_per_30_days"`
	MaxConcurrent        *int64     `json:"max_concurrent"`
	LeaseTTLSeconds      int64      `json:"lease_ttl_seconds"`
	MaxBorrowHours       int64      `json:"max_borrow_hours"`
}

// keyEntry is one entry of a product's key_history.
type keyEntry struct {
	PublicKey   string  `json:"public_key"`
	Fingerprint string  `json:"fingerprint"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	RetiredAt   *string `json:"retired_at"`
}

// product decodes a {"product": {...}} answer, refusing unknown fields.
func (r *resp) product(t *testing.T) productView {
	t.Helper()
	var v struct {
		Product productView `json:"product"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("product answer %s: %v", r.body, err)
	}
	return v.Product
}

// products decodes a {"products": [...]} answer, refusing unknown fields.
func (r *resp) products(t *testing.T) []productView {
	t.Helper()
	var v struct {
		Products []productView `json:"products"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("products answer %s: %v", r.body, err)
	}
	return v.Products
}

// absentField marks a field productBody leaves out.
type absentField struct{}

var absent absentField

// productBody is a valid creation body for id and prefix with edits
// applied; a field edited to absent is left out.
func productBody(id, prefix string, edits map[string]any) map[string]any {
	b := map[string]any{"id": id, "name": "Product " + id, "key_prefix": prefix, "current_major": 1}
	for k, v := range edits {
		if v == absent {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

// productPath is the path of a product, with an action when not "".
func productPath(id, action string) string {
	if action == "" {
		return "/v1/admin/products/" + id
	}
	return "/v1/admin/products/" + id + "/" + action
}

// createCall is the creation of a product with body.
func createCall(key string, body any) call {
	return call{method: "POST", path: "/v1/admin/products", key: key, body: body}
}

// createProduct creates a product through the API and returns it.
func (e *testEnv) createProduct(t *testing.T, key string, body any) productView {
	t.Helper()
	r := e.run(t, scenario{call: createCall(key, body), wantStatus: http.StatusCreated})
	return r.product(t)
}

// getProduct reads a product through the API.
func (e *testEnv) getProduct(t *testing.T, key, id string) productView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: productPath(id, ""), key: key}, wantStatus: http.StatusOK})
	return r.product(t)
}

// fingerprint is the first 8 bytes of the SHA-256 of a hex public key, in
// hex, computed here rather than by the code under test.
func fingerprint(t *testing.T, pub string) string {
	t.Helper()
	raw, err := hex.DecodeString(pub)
	if err != nil {
		t.Fatalf("public key %q: %v", pub, err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// currentKey is the history entry of a current key made at at.
func currentKey(t *testing.T, pub string, at time.Time) keyEntry {
	t.Helper()
	return keyEntry{PublicKey: pub, Fingerprint: fingerprint(t, pub), Status: "current", CreatedAt: licentia.FormatTime(at)}
}

// issues is the details of a validation_failed answer: path, message pairs.
func issues(pairs ...string) map[string]any {
	var out []any
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, map[string]any{"path": pairs[i], "message": pairs[i+1]})
	}
	return map[string]any{"issues": out}
}

// documentRefuses fails unless openapi.json refuses the request of c too,
// so the document's request schemas say what the code refuses.
func (e *testEnv) documentRefuses(t *testing.T, c call) {
	t.Helper()
	d := apiDocument(t)
	req := e.request(t, c, encodeBody(t, c.body))
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		return // a path the document does not route is refused too
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: requestOptions}
	if openapi3filter.ValidateRequest(t.Context(), in) == nil {
		t.Errorf("openapi.json accepts %s %s with body %s, which the service refuses", c.method, c.path, encodeBody(t, c.body))
	}
}

// deleteProduct removes a product as an operator could; no route does.
func (e *testEnv) deleteProduct(t *testing.T, orgID, id string) {
	t.Helper()
	err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.DeleteProduct(t.Context(), orgID, id) })
	if err != nil {
		t.Fatalf("DeleteProduct(%s) error = %v", id, err)
	}
}

// productCount counts an organization's products in the store.
func (e *testEnv) productCount(t *testing.T, orgID string) int {
	t.Helper()
	ps, err := e.store.Products(t.Context(), orgID)
	if err != nil {
		t.Fatalf("Products() error = %v", err)
	}
	return len(ps)
}

var publicKeyRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestCreateProduct: 201 with the product, its defaults and one current
// key; the answer holds the public key and nothing of the private one.
func TestCreateProduct(t *testing.T) {
	m := newMasterKey(t)
	e := newTestEnvWith(t, envOptions{masterKey: m})
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	r := e.run(t, scenario{
		call:       createCall(key, map[string]any{"id": "desk-app", "name": "Desk", "key_prefix": "DESK", "current_major": 2}),
		wantStatus: http.StatusCreated,
	})
	got := r.product(t)
	if !publicKeyRE.MatchString(got.PublicKey) {
		t.Errorf("public_key = %q, want 64 lower-case hexadecimal characters", got.PublicKey)
	}
	want := productView{
		ID: "desk-app", Name: "Desk", KeyPrefix: "DESK", CurrentMajor: 2, MachinesPerSeat: 3,
		LicenceSigningDomain: "licentia/licence-key/v1", VerdictSigningDomain: "licentia/verdict/v1",
		PublicKey: got.PublicKey, PreviousPublicKeys: []string{}, SigningKeyStatus: "ok",
		KeyHistory: []keyEntry{currentKey(t, got.PublicKey, start)},
		CreatedAt:  "2026-03-02T09:00:00.000Z", UpdatedAt: "2026-03-02T09:00:00.000Z", MachineMatch: "exact", LeaseTTLSeconds: 900,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("created product mismatch (-want +got):\n%s", diff)
	}

	stored, err := e.store.Product(t.Context(), e.org.ID, "desk-app")
	if err != nil || len(stored.Keys) != 1 {
		t.Fatalf("Product() = %v, %v; want one key", stored, err)
	}
	k := stored.Keys[0]
	if hex.EncodeToString(k.PublicKey) != got.PublicKey {
		t.Errorf("stored public key %x, answer %s", k.PublicKey, got.PublicKey)
	}
	if k.MasterFingerprint != m.Fingerprint() {
		t.Errorf("key sealed under master key %s, want %s", k.MasterFingerprint, m.Fingerprint())
	}
	priv, err := signing.OpenProductKey(m, &k)
	if err != nil {
		t.Fatalf("OpenProductKey() error = %v", err)
	}
	for name, secret := range map[string][]byte{"private key": priv, "seed": priv.Seed(), "sealed key": k.Sealed} {
		for _, form := range []string{
			hex.EncodeToString(secret), strings.ToUpper(hex.EncodeToString(secret)),
			base64.RawStdEncoding.EncodeToString(secret), base64.RawURLEncoding.EncodeToString(secret),
		} {
			if strings.Contains(string(r.body), form) {
				t.Errorf("answer holds the %s: %s", name, r.body)
			}
		}
	}
	for _, word := range []string{"private", "sealed", "seed", "secret", "master"} {
		if strings.Contains(string(r.body), word) {
			t.Errorf("answer mentions %q: %s", word, r.body)
		}
	}
	if got := e.getProduct(t, e.key(t, e.org.ID, licentia.ScopeProductsRead), "desk-app"); !cmp.Equal(want, got) {
		t.Errorf("GET after create mismatch (-want +got):\n%s", cmp.Diff(want, got))
	}
}

// TestCreateProductFields holds every field rule of a new product at its
// boundaries. The document must refuse what the service refuses.
func TestCreateProductFields(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	const (
		idRule        = "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen"
		nameRule      = "must be 1 to 200 characters"
		prefixRule    = "must be 2 to 8 of A-Z and 2-9, starting with a letter"
		majorRule     = "must be an integer from 1 to 65535"
		seatRule      = "must be an integer from 1 to 1000"
		heartbeatRule = "must be an integer from 60 to 2592000"
		domainRule    = "must be 1 to 200 printable ASCII characters"
	)
	for i, tt := range []struct {
		name  string
		edits map[string]any
		// want holds fields of the created product; without it the
		// request is refused with issues.
		want   map[string]any
		issues []string
		// documentAllows marks a refusal the document cannot express.
		documentAllows bool
	}{
		{name: "id of 1 character", edits: map[string]any{"id": "a"}, want: map[string]any{"id": "a"}},
		{name: "id of 63 characters", edits: map[string]any{"id": strings.Repeat("b", 63)}, want: map[string]any{"id": strings.Repeat("b", 63)}},
		{name: "id starting with a digit", edits: map[string]any{"id": "9-lives"}, want: map[string]any{"id": "9-lives"}},
		{name: "id ending with a hyphen", edits: map[string]any{"id": "desk-"}, want: map[string]any{"id": "desk-"}},
		{name: "id of 64 characters", edits: map[string]any{"id": strings.Repeat("c", 64)}, issues: []string{"/id", idRule}},
		{name: "id starting with a hyphen", edits: map[string]any{"id": "-desk"}, issues: []string{"/id", idRule}},
		{name: "empty id", edits: map[string]any{"id": ""}, issues: []string{"/id", idRule}},
		{name: "id in upper case", edits: map[string]any{"id": "Desk"}, issues: []string{"/id", idRule}},
		{name: "id with an underscore", edits: map[string]any{"id": "desk_app"}, issues: []string{"/id", idRule}},
		{name: "id with a dot", edits: map[string]any{"id": "desk.app"}, issues: []string{"/id", idRule}},
		{name: "id not a string", edits: map[string]any{"id": 7}, issues: []string{"/id", "must be a string"}},
		{name: "id null", edits: map[string]any{"id": nil}, issues: []string{"/id", "must be a string"}},
		{name: "id missing", edits: map[string]any{"id": absent}, issues: []string{"/id", "is required"}},

		{name: "name of 1 character", edits: map[string]any{"name": "D"}, want: map[string]any{"name": "D"}},
		{name: "name of 200 characters", edits: map[string]any{"name": strings.Repeat("n", 200)}, want: map[string]any{"name": strings.Repeat("n", 200)}},
		{name: "name of 200 non-ASCII characters", edits: map[string]any{"name": strings.Repeat("é", 200)}, want: map[string]any{"name": strings.Repeat("é", 200)}},
		{name: "empty name", edits: map[string]any{"name": ""}, issues: []string{"/name", nameRule}},
		{name: "name of 201 characters", edits: map[string]any{"name": strings.Repeat("n", 201)}, issues: []string{"/name", nameRule}},
		{name: "name of 201 non-ASCII characters", edits: map[string]any{"name": strings.Repeat("é", 201)}, issues: []string{"/name", nameRule}},
		{name: "name missing", edits: map[string]any{"name": absent}, issues: []string{"/name", "is required"}},

		{name: "key_prefix of 2 characters", edits: map[string]any{"key_prefix": "KB"}, want: map[string]any{"key_prefix": "KB"}},
		{name: "key_prefix of 8 characters", edits: map[string]any{"key_prefix": "KEYPRE29"}, want: map[string]any{"key_prefix": "KEYPRE29"}},
		{name: "key_prefix in lower case is upper-cased", edits: map[string]any{"key_prefix": "lowr"}, want: map[string]any{"key_prefix": "LOWR"}},
		{name: "key_prefix in mixed case is upper-cased", edits: map[string]any{"key_prefix": "MiX9"}, want: map[string]any{"key_prefix": "MIX9"}},
		{name: "key_prefix of 1 character", edits: map[string]any{"key_prefix": "K"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix of 9 characters", edits: map[string]any{"key_prefix": "KEYPREFIX"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix with the digit 0", edits: map[string]any{"key_prefix": "KE0"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix with the digit 1", edits: map[string]any{"key_prefix": "KE1"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix starting with a digit", edits: map[string]any{"key_prefix": "2KEY"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix with a hyphen", edits: map[string]any{"key_prefix": "KE-Y"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix with a non-ASCII letter", edits: map[string]any{"key_prefix": "KÉY"}, issues: []string{"/key_prefix", prefixRule}},
		{name: "empty key_prefix", edits: map[string]any{"key_prefix": ""}, issues: []string{"/key_prefix", prefixRule}},
		{name: "key_prefix missing", edits: map[string]any{"key_prefix": absent}, issues: []string{"/key_prefix", "is required"}},

		{name: "current_major 1", edits: map[string]any{"current_major": 1}, want: map[string]any{"current_major": 1.0}},
		{name: "current_major 65535", edits: map[string]any{"current_major": 65535}, want: map[string]any{"current_major": 65535.0}},
		{name: "current_major 0", edits: map[string]any{"current_major": 0}, issues: []string{"/current_major", majorRule}},
		{name: "current_major -1", edits: map[string]any{"current_major": -1}, issues: []string{"/current_major", majorRule}},
		{name: "current_major 65536", edits: map[string]any{"current_major": 65536}, issues: []string{"/current_major", majorRule}},
		{name: "current_major past int64", edits: map[string]any{"current_major": json.Number("99999999999999999999")}, issues: []string{"/current_major", majorRule}},
		{name: "current_major 1.5", edits: map[string]any{"current_major": 1.5}, issues: []string{"/current_major", "must be an integer"}},
		{name: "current_major 1.0", edits: map[string]any{"current_major": json.Number("1.0")}, issues: []string{"/current_major", "must be an integer"}, documentAllows: true},
		{name: "current_major 1e3", edits: map[string]any{"current_major": json.Number("1e3")}, issues: []string{"/current_major", "must be an integer"}, documentAllows: true},
		{name: "current_major as a string", edits: map[string]any{"current_major": "1"}, issues: []string{"/current_major", "must be an integer"}},
		{name: "current_major null", edits: map[string]any{"current_major": nil}, issues: []string{"/current_major", "must be an integer"}},
		{name: "current_major missing", edits: map[string]any{"current_major": absent}, issues: []string{"/current_major", "is required"}},

		{name: "machines_per_seat defaults to 3", want: map[string]any{"machines_per_seat": 3.0}},
		{name: "machines_per_seat 1", edits: map[string]any{"machines_per_seat": 1}, want: map[string]any{"machines_per_seat": 1.0}},
		{name: "machines_per_seat 1000", edits: map[string]any{"machines_per_seat": 1000}, want: map[string]any{"machines_per_seat": 1000.0}},
		{name: "machines_per_seat 0", edits: map[string]any{"machines_per_seat": 0}, issues: []string{"/machines_per_seat", seatRule}},
		{name: "machines_per_seat 1001", edits: map[string]any{"machines_per_seat": 1001}, issues: []string{"/machines_per_seat", seatRule}},
		{name: "machines_per_seat 2.5", edits: map[string]any{"machines_per_seat": 2.5}, issues: []string{"/machines_per_seat", "must be an integer"}},
		{name: "machines_per_seat null", edits: map[string]any{"machines_per_seat": nil}, issues: []string{"/machines_per_seat", "must be an integer"}},

		{name: "heartbeat_interval_seconds defaults to null", want: map[string]any{"heartbeat_interval_seconds": nil}},
		{name: "heartbeat_interval_seconds null", edits: map[string]any{"heartbeat_interval_seconds": nil}, want: map[string]any{"heartbeat_interval_seconds": nil}},
		{name: "heartbeat_interval_seconds 60", edits: map[string]any{"heartbeat_interval_seconds": 60}, want: map[string]any{"heartbeat_interval_seconds": 60.0}},
		{name: "heartbeat_interval_seconds 2592000", edits: map[string]any{"heartbeat_interval_seconds": 2592000}, want: map[string]any{"heartbeat_interval_seconds": 2592000.0}},
		{name: "heartbeat_interval_seconds 59", edits: map[string]any{"heartbeat_interval_seconds": 59}, issues: []string{"/heartbeat_interval_seconds", heartbeatRule}},
		{name: "heartbeat_interval_seconds 2592001", edits: map[string]any{"heartbeat_interval_seconds": 2592001}, issues: []string{"/heartbeat_interval_seconds", heartbeatRule}},
		{name: "heartbeat_interval_seconds past int64", edits: map[string]any{"heartbeat_interval_seconds": json.Number("-99999999999999999999")}, issues: []string{"/heartbeat_interval_seconds", heartbeatRule}},
		{name: "heartbeat_interval_seconds 60.5", edits: map[string]any{"heartbeat_interval_seconds": 60.5}, issues: []string{"/heartbeat_interval_seconds", "must be an integer"}},
		{name: "heartbeat_interval_seconds as a string", edits: map[string]any{"heartbeat_interval_seconds": "60"}, issues: []string{"/heartbeat_interval_seconds", "must be an integer"}},

		{name: "signing domains default", want: map[string]any{"licence_signing_domain": "licentia/licence-key/v1", "verdict_signing_domain": "licentia/verdict/v1"}},
		{
			name:  "signing domains given",
			edits: map[string]any{"licence_signing_domain": "acme/desk/licence/v1", "verdict_signing_domain": "acme desk verdict ~1"},
			want:  map[string]any{"licence_signing_domain": "acme/desk/licence/v1", "verdict_signing_domain": "acme desk verdict ~1"},
		},
		{
			name:  "signing domains of 1 and 200 characters",
			edits: map[string]any{"licence_signing_domain": "L", "verdict_signing_domain": strings.Repeat("v", 200)},
			want:  map[string]any{"licence_signing_domain": "L", "verdict_signing_domain": strings.Repeat("v", 200)},
		},
		{name: "empty licence_signing_domain", edits: map[string]any{"licence_signing_domain": ""}, issues: []string{"/licence_signing_domain", domainRule}},
		{name: "verdict_signing_domain of 201 characters", edits: map[string]any{"verdict_signing_domain": strings.Repeat("v", 201)}, issues: []string{"/verdict_signing_domain", domainRule}},
		{name: "licence_signing_domain not ASCII", edits: map[string]any{"licence_signing_domain": "licentia/licence-clé/v1"}, issues: []string{"/licence_signing_domain", domainRule}},
		{name: "verdict_signing_domain with a control character", edits: map[string]any{"verdict_signing_domain": "acme\tverdict"}, issues: []string{"/verdict_signing_domain", domainRule}},
		{name: "licence_signing_domain null", edits: map[string]any{"licence_signing_domain": nil}, issues: []string{"/licence_signing_domain", "must be a string"}},

		{name: "unknown fields", edits: map[string]any{"private_key": "x", "Name": "Desk"}, issues: []string{"/Name", "unknown field", "/private_key", "unknown field"}},
		{name: "previous_public_keys is not an input", edits: map[string]any{"previous_public_keys": []string{}}, issues: []string{"/previous_public_keys", "unknown field"}},
		{
			name: "every problem at once",
			edits: map[string]any{
				"id": "-x", "name": "", "key_prefix": "1", "current_major": 0, "machines_per_seat": 1001,
				"licence_signing_domain": "", "verdict_signing_domain": "é", "extra": true,
			},
			issues: []string{
				"/extra", "unknown field", "/current_major", majorRule, "/machines_per_seat", seatRule,
				"/id", idRule, "/name", nameRule, "/key_prefix", prefixRule,
				"/licence_signing_domain", domainRule, "/verdict_signing_domain", domainRule,
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A day passes before each case, so the daily cap never counts.
			e.clock.Advance(24 * time.Hour)
			c := createCall(key, productBody(fmt.Sprintf("case-%d", i), fmt.Sprintf("Q%c%c", 'A'+i/24, 'A'+i%24), tt.edits))
			if tt.want == nil {
				c.invalid = true
				e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
				if !tt.documentAllows {
					e.documentRefuses(t, c)
				}
				return
			}
			got := e.run(t, scenario{call: c, wantStatus: http.StatusCreated}).json(t).(map[string]any)["product"].(map[string]any)
			for field, want := range tt.want {
				if got[field] != want {
					t.Errorf("%s = %v, want %v", field, got[field], want)
				}
			}
		})
	}
}

// TestCreateProductBody: the body must be one JSON object with exact,
// unrepeated names; every problem is reported at once.
func TestCreateProductBody(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	required := []string{"/id", "is required", "/name", "is required", "/key_prefix", "is required", "/current_major", "is required"}
	for _, tt := range []struct {
		name   string
		body   string
		issues []string
	}{
		{"empty body", "", required},
		{"empty object", "{}", required},
		{"null", "null", append([]string{"", "the body must be a JSON object"}, required...)},
		{"array", `[{"id":"desk-app"}]`, append([]string{"", "the body must be a JSON object"}, required...)},
		{"not JSON", `{"id":`, append([]string{"", "the body is not valid JSON"}, required...)},
		{"data after the object", `{"id":"desk-app","name":"Desk","key_prefix":"DESK","current_major":1} {}`, append([]string{"", "the body holds data after the JSON value"}, required...)},
		{"duplicate name", `{"id":"desk-app","id":"desk-two","name":"Desk","key_prefix":"DESK","current_major":1}`, []string{"/id", "duplicate field"}},
		{"name in another case", `{"ID":"desk-app","name":"Desk","key_prefix":"DESK","current_major":1}`, []string{"/ID", "unknown field", "/id", "is required"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{
				call:       call{method: "POST", path: "/v1/admin/products", key: key, body: tt.body, invalid: true},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...),
			})
		})
	}
	if n := e.productCount(t, e.org.ID); n != 0 {
		t.Errorf("%d products written, want none", n)
	}
}
