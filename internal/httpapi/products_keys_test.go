package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// retiredKey is the history entry of a key made at created and retired at
// retired; retired is nil for a previous key.
func retiredKey(t *testing.T, pub, status string, created time.Time, retired *time.Time) keyEntry {
	t.Helper()
	k := currentKey(t, pub, created)
	k.Status = status
	if retired != nil {
		s := licentia.FormatTime(*retired)
		k.RetiredAt = &s
	}
	return k
}

// later moves the clock on by d and returns the new time.
func (e *testEnv) later(d time.Duration) time.Time {
	e.clock.Advance(d)
	return e.clock.Now()
}

// rotateCall rotates a product's key with body (nil sends none).
func rotateCall(key, id string, body any) call {
	return call{method: "POST", path: productPath(id, "rotate-signing-key"), key: key, body: body}
}

// retireCall retires a public key of a product.
func retireCall(key, id string, body any) call {
	return call{method: "POST", path: productPath(id, "retire-public-key"), key: key, body: body}
}

// rotate rotates a product's key through the API and returns the product.
func (e *testEnv) rotate(t *testing.T, key, id string, body any) productView {
	t.Helper()
	p := e.run(t, scenario{call: rotateCall(key, id, body), wantStatus: http.StatusOK}).product(t)
	if !publicKeyRE.MatchString(p.PublicKey) {
		t.Errorf("public_key = %q after rotation, want 64 lower-case hexadecimal characters", p.PublicKey)
	}
	return p
}

// TestRotateSigningKey: a new current key each time. By default the old
// public key stays accepted (previous); with keep_previous false it is
// retired at once. Earlier previous keys stay as they were.
func TestRotateSigningKey(t *testing.T) {
	for _, tt := range []struct {
		name string
		body any
		keep bool
	}{
		{"no body", nil, true},
		{"empty object", map[string]any{}, true},
		{"keep_previous true", map[string]any{"keep_previous": true}, true},
		{"keep_previous false", map[string]any{"keep_previous": false}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
			p := e.createProduct(t, key, productBody("desk-app", "DESK", nil))
			e.clock.Advance(time.Minute)
			now := e.clock.Now()
			got := e.rotate(t, key, "desk-app", tt.body)

			want := p
			want.PublicKey = got.PublicKey
			want.KeyHistory = []keyEntry{retiredKey(t, p.PublicKey, "previous", start, nil), currentKey(t, got.PublicKey, now)}
			want.PreviousPublicKeys = []string{p.PublicKey}
			if !tt.keep {
				want.KeyHistory[0] = retiredKey(t, p.PublicKey, "retired", start, &now)
				want.PreviousPublicKeys = []string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rotated product mismatch (-want +got):\n%s", diff)
			}
			if got.PublicKey == p.PublicKey {
				t.Errorf("public_key unchanged by rotation")
			}
		})
	}
}

// TestRotateSigningKeyTwice: a second rotation keeps the earlier previous
// keys; keep_previous false retires only the key it replaces.
func TestRotateSigningKeyTwice(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite, licentia.ScopeProductsRead)
	k1 := e.createProduct(t, key, productBody("desk-app", "DESK", nil)).PublicKey
	t1 := e.later(time.Minute)
	k2 := e.rotate(t, key, "desk-app", nil).PublicKey
	t2 := e.later(time.Minute)
	k3 := e.rotate(t, key, "desk-app", map[string]any{"keep_previous": true})
	if diff := cmp.Diff([]string{k1, k2}, k3.PreviousPublicKeys); diff != "" {
		t.Errorf("previous_public_keys after two rotations mismatch (-want +got):\n%s", diff)
	}
	t3 := e.later(time.Minute)
	got := e.rotate(t, key, "desk-app", map[string]any{"keep_previous": false})
	want := []keyEntry{
		retiredKey(t, k1, "previous", start, nil),
		retiredKey(t, k2, "previous", t1, nil),
		retiredKey(t, k3.PublicKey, "retired", t2, &t3),
		currentKey(t, got.PublicKey, t3),
	}
	if diff := cmp.Diff(want, got.KeyHistory); diff != "" {
		t.Errorf("key_history mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{k1, k2}, got.PreviousPublicKeys); diff != "" {
		t.Errorf("previous_public_keys mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, e.getProduct(t, key, "desk-app")); diff != "" {
		t.Errorf("product read after rotations mismatch (-want +got):\n%s", diff)
	}
}

// TestRotateSigningKeyRefused: body rules; without a master key 503
// signing_keys_not_configured, after 400 and 404.
func TestRotateSigningKeyRefused(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite, licentia.ScopeProductsRead)
	before := e.createProduct(t, key, productBody("desk-app", "DESK", nil))
	for _, tt := range []struct {
		name   string
		body   any
		issues []string
	}{
		{"keep_previous a string", map[string]any{"keep_previous": "false"}, []string{"/keep_previous", "must be a boolean"}},
		{"keep_previous a number", map[string]any{"keep_previous": 0}, []string{"/keep_previous", "must be a boolean"}},
		{"keep_previous null", map[string]any{"keep_previous": nil}, []string{"/keep_previous", "must be a boolean"}},
		{"unknown field", map[string]any{"keep": false}, []string{"/keep", "unknown field"}},
		{"name in another case", map[string]any{"Keep_Previous": false}, []string{"/Keep_Previous", "unknown field"}},
		{"not an object", "[]", []string{"", "the body must be a JSON object"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := rotateCall(key, "desk-app", tt.body)
			c.invalid = true
			e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
			e.documentRefuses(t, c)
		})
	}
	if diff := cmp.Diff(before, e.getProduct(t, key, "desk-app")); diff != "" {
		t.Errorf("refused rotations changed the product (-before +after):\n%s", diff)
	}

	noKeys := newTestEnvWith(t, envOptions{shareStore: e, noMasterKey: true})
	for _, tt := range []scenario{
		{
			name:       "503 without a master key",
			call:       rotateCall(key, "desk-app", nil),
			wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeSigningKeysNotConfigured,
		},
		{
			name:       "404 before 503",
			call:       rotateCall(key, "missing-app", nil),
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound,
		},
		{
			name:       "400 before 503",
			call:       call{method: "POST", path: productPath("desk-app", "rotate-signing-key"), key: key, body: `{"keep_previous":"no"}`, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/keep_previous", "must be a boolean"),
		},
	} {
		t.Run(tt.name, func(t *testing.T) { noKeys.run(t, tt) })
	}
	if a := productAudit(t, e, e.org.ID); len(a) != 1 {
		t.Errorf("audit entries %v, want only the creation", a)
	}
}

// TestRetirePublicKey: a previous key is retired and leaves
// previous_public_keys; the current key is 409 conflict; a key the product
// does not accept (unknown, another product's, already retired) is 404
// public_key_not_found. Hexadecimal is read in either case.
func TestRetirePublicKey(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite, licentia.ScopeProductsRead)
	k1 := e.createProduct(t, key, productBody("desk-app", "DESK", nil)).PublicKey
	t1 := e.later(time.Minute)
	k2 := e.rotate(t, key, "desk-app", nil).PublicKey
	t2 := e.later(time.Minute)
	p := e.rotate(t, key, "desk-app", nil)
	k3 := p.PublicKey
	sibling := e.createProduct(t, key, productBody("desk-two", "DESKB", nil))

	t3 := e.later(time.Minute)
	got := e.run(t, scenario{call: retireCall(key, "desk-app", map[string]any{"public_key": strings.ToUpper(k1)}), wantStatus: http.StatusOK}).product(t)
	want := p
	want.PreviousPublicKeys = []string{k2}
	want.KeyHistory = []keyEntry{
		retiredKey(t, k1, "retired", start, &t3),
		retiredKey(t, k2, "previous", t1, nil),
		currentKey(t, k3, t2),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("product after retiring a previous key mismatch (-want +got):\n%s", diff)
	}

	notFound := licentia.CodePublicKeyNotFound
	for _, tt := range []struct {
		name   string
		pub    string
		status int
		code   licentia.Code
	}{
		{"current key", k3, http.StatusConflict, licentia.CodeConflict},
		{"current key in upper case", strings.ToUpper(k3), http.StatusConflict, licentia.CodeConflict},
		{"already retired", k1, http.StatusNotFound, notFound},
		{"unknown key", strings.Repeat("ab", 32), http.StatusNotFound, notFound},
		{"another product's key", sibling.PublicKey, http.StatusNotFound, notFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{call: retireCall(key, "desk-app", map[string]any{"public_key": tt.pub}), wantStatus: tt.status, wantCode: tt.code})
		})
	}
	t.Run("retired by rotation", func(t *testing.T) {
		old := e.rotate(t, key, "desk-two", map[string]any{"keep_previous": false}).KeyHistory[0]
		e.run(t, scenario{call: retireCall(key, "desk-two", map[string]any{"public_key": old.PublicKey}), wantStatus: http.StatusNotFound, wantCode: notFound})
	})
	t.Run("the last previous key", func(t *testing.T) {
		got := e.run(t, scenario{call: retireCall(key, "desk-app", map[string]any{"public_key": k2}), wantStatus: http.StatusOK}).product(t)
		if len(got.PreviousPublicKeys) != 0 || got.PublicKey != k3 || got.KeyHistory[1].Status != "retired" {
			t.Errorf("after retiring every previous key: previous_public_keys %v, public_key %s, history %v", got.PreviousPublicKeys, got.PublicKey, got.KeyHistory)
		}
	})
}

// TestRetirePublicKeyBody: public_key is required, 64 hexadecimal
// characters; 400 before 404.
func TestRetirePublicKeyBody(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite, licentia.ScopeProductsRead)
	before := e.createProduct(t, key, productBody("desk-app", "DESK", nil))
	const hexRule = "must be 64 hexadecimal characters"
	for _, tt := range []struct {
		name   string
		body   any
		issues []string
	}{
		{"missing", map[string]any{}, []string{"/public_key", "is required"}},
		{"empty body", "", []string{"/public_key", "is required"}},
		{"empty", map[string]any{"public_key": ""}, []string{"/public_key", hexRule}},
		{"62 characters", map[string]any{"public_key": before.PublicKey[:62]}, []string{"/public_key", hexRule}},
		{"66 characters", map[string]any{"public_key": before.PublicKey + "00"}, []string{"/public_key", hexRule}},
		{"63 characters", map[string]any{"public_key": before.PublicKey[:63]}, []string{"/public_key", hexRule}},
		{"not hexadecimal", map[string]any{"public_key": strings.Repeat("zz", 32)}, []string{"/public_key", hexRule}},
		{"with spaces", map[string]any{"public_key": " " + before.PublicKey[:63]}, []string{"/public_key", hexRule}},
		{"base64", map[string]any{"public_key": "q83vEjRWeJASNFZ4kBI0VniQEjRWeJASNFZ4kBI0Vng="}, []string{"/public_key", hexRule}},
		{"not a string", map[string]any{"public_key": 12}, []string{"/public_key", "must be a string"}},
		{"a list", map[string]any{"public_key": []string{before.PublicKey}}, []string{"/public_key", "must be a string"}},
		{"unknown field", map[string]any{"key": before.PublicKey}, []string{"/key", "unknown field", "/public_key", "is required"}},
	} {
		for _, id := range []string{"desk-app", "missing-app"} {
			t.Run(tt.name+"/"+id, func(t *testing.T) {
				c := retireCall(key, id, tt.body)
				c.invalid = true
				e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
				e.documentRefuses(t, c)
			})
		}
	}
	if diff := cmp.Diff(before, e.getProduct(t, key, "desk-app")); diff != "" {
		t.Errorf("refused retirements changed the product (-before +after):\n%s", diff)
	}
}

// TestSigningKeyStatus: signing_key_status says whether the current key can
// be opened by this server: unavailable under another master key or none,
// ok again once a key sealed under this server's master key is current.
func TestSigningKeyStatus(t *testing.T) {
	first := newTestEnv(t)
	key := first.key(t, first.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	p := first.createProduct(t, key, productBody("desk-app", "DESK", nil))
	if p.SigningKeyStatus != "ok" {
		t.Fatalf("signing_key_status = %q on the server that made the key, want ok", p.SigningKeyStatus)
	}
	other := newTestEnvWith(t, envOptions{shareStore: first})
	none := newTestEnvWith(t, envOptions{shareStore: first, noMasterKey: true})
	status := func(t *testing.T, e *testEnv) (one, listed string) {
		t.Helper()
		ps := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/products", key: key}, wantStatus: http.StatusOK}).products(t)
		if len(ps) != 1 {
			t.Fatalf("listed %d products, want 1", len(ps))
		}
		return e.getProduct(t, key, "desk-app").SigningKeyStatus, ps[0].SigningKeyStatus
	}
	for _, tt := range []struct {
		name string
		env  *testEnv
		want string
	}{
		{"same master key", first, "ok"},
		{"another master key", other, "unavailable"},
		{"no master key", none, "unavailable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			one, listed := status(t, tt.env)
			if one != tt.want || listed != tt.want {
				t.Errorf("signing_key_status = %q (read), %q (listed), want %q", one, listed, tt.want)
			}
		})
	}
	t.Run("rotated under another master key", func(t *testing.T) {
		rotated := other.rotate(t, key, "desk-app", nil)
		if rotated.SigningKeyStatus != "ok" {
			t.Errorf("signing_key_status = %q after rotating under this server's key, want ok", rotated.SigningKeyStatus)
		}
		if one, _ := status(t, first); one != "unavailable" {
			t.Errorf("signing_key_status = %q on the first server, want unavailable", one)
		}
		if one, _ := status(t, other); one != "ok" {
			t.Errorf("signing_key_status = %q on the other server, want ok", one)
		}
	})
}

// auditLine is an audit entry as compared here.
type auditLine struct {
	Action string
	Actor  licentia.Actor
	At     string
	Data   map[string]any
}

// productAudit returns an organization's product audit entries, oldest
// first.
func productAudit(t *testing.T, e *testEnv, orgID string) []auditLine {
	t.Helper()
	entries, err := e.store.OrganizationAudit(t.Context(), orgID)
	if err != nil {
		t.Fatalf("OrganizationAudit() error = %v", err)
	}
	var out []auditLine
	for _, a := range entries {
		if !strings.HasPrefix(a.Action, "product.") {
			continue
		}
		l := auditLine{Action: a.Action, Actor: a.Actor, At: licentia.FormatTime(a.At)}
		if err := json.Unmarshal(a.Data, &l.Data); err != nil {
			t.Fatalf("audit data %s: %v", a.Data, err)
		}
		out = append(out, l)
	}
	return out
}

// TestProductAudit: every product change writes one audit entry with the
// key's id as actor, in the same transaction; refusals and a patch that
// changes nothing write none.
func TestProductAudit(t *testing.T) {
	e := newTestEnv(t)
	key, rec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "ci", Scopes: []licentia.Scope{licentia.ScopeProductsWrite}})
	actor := licentia.APIKeyActor(rec.ID)
	at := func(d time.Duration) string { return licentia.FormatTime(start.Add(d)) }

	k1 := e.createProduct(t, key, productBody("desk-app", "desk", nil)).PublicKey
	e.clock.Advance(time.Minute)
	e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: key, body: map[string]any{"name": "Desk 2", "machines_per_seat": 3}}, wantStatus: http.StatusOK})
	e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: key, body: map[string]any{"name": "Desk 2"}}, wantStatus: http.StatusOK})
	e.clock.Advance(time.Minute)
	k2 := e.rotate(t, key, "desk-app", nil).PublicKey
	e.clock.Advance(time.Minute)
	e.run(t, scenario{call: retireCall(key, "desk-app", map[string]any{"public_key": strings.ToUpper(k1)}), wantStatus: http.StatusOK})
	e.run(t, scenario{call: retireCall(key, "desk-app", map[string]any{"public_key": k2}), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})
	e.clock.Advance(time.Minute)
	k3 := e.rotate(t, key, "desk-app", map[string]any{"keep_previous": false}).PublicKey
	e.run(t, scenario{call: createCall(key, productBody("desk-app", "DESKB", nil)), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})

	want := []auditLine{
		{"product.created", actor, at(0), map[string]any{"product_id": "desk-app", "key_prefix": "DESK", "public_key": k1}},
		{"product.updated", actor, at(time.Minute), map[string]any{"product_id": "desk-app", "name": "Desk 2"}},
		{"product.signing_key_rotated", actor, at(2 * time.Minute), map[string]any{"product_id": "desk-app", "public_key": k2, "keep_previous": true}},
		{"product.public_key_retired", actor, at(3 * time.Minute), map[string]any{"product_id": "desk-app", "public_key": k1}},
		{"product.signing_key_rotated", actor, at(4 * time.Minute), map[string]any{"product_id": "desk-app", "public_key": k3, "keep_previous": false}},
	}
	if diff := cmp.Diff(want, productAudit(t, e, e.org.ID)); diff != "" {
		t.Errorf("product audit mismatch (-want +got):\n%s", diff)
	}
}
