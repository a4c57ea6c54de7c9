package httpapi_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

// routeCalls are the three activation routes called with key on machineID.
func routeCalls(key, machineID string) []call {
	return []call{activateCall(activateBody(key, machineID, nil)), statusCall(key, machineID), deactivateCall(key, machineID)}
}

// unchanged is what a refused request must leave as it was: the events of
// the organization, the licence's activations and its audit log.
type unchanged struct {
	events      int
	activations []licentia.Activation
	audit       []licentia.AuditEntry
}

func (e *testEnv) snapshot(t *testing.T, orgID, licenceID string) unchanged {
	t.Helper()
	as, err := e.store.Activations(t.Context(), orgID, licenceID)
	if err != nil {
		t.Fatalf("Activations() error = %v", err)
	}
	audit, err := e.store.LicenceAudit(t.Context(), orgID, licenceID)
	if err != nil {
		t.Fatalf("LicenceAudit() error = %v", err)
	}
	return unchanged{events: len(e.events(t, orgID)), activations: as, audit: audit}
}

func (e *testEnv) wantUnchanged(t *testing.T, orgID, licenceID string, before unchanged) {
	t.Helper()
	if diff := cmp.Diff(before, e.snapshot(t, orgID, licenceID), cmp.AllowUnexported(unchanged{})); diff != "" {
		t.Errorf("a refused request wrote (-before +after):\n%s", diff)
	}
}

// TestActivationRefused: activating a revoked licence answers 403
// licence_revoked and an expired one (on purpose, by its expires_at
// passing, or a trial past its end) 403 licence_expired, for a new machine
// and for one that held a seat; nothing is written, and the status route
// answers a signed verdict of that state.
func TestActivationRefused(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	_, fp := e.shipped(t, "desk-app")
	for _, tt := range []struct {
		name    string
		expires time.Duration // 0: perpetual
		trial   bool
		steps   []string
		lapse   bool // move the clock past expires_at
		code    licentia.Code
		state   string
	}{
		{name: "revoked", steps: []string{"revoke"}, code: licentia.CodeLicenceRevoked, state: "revoked"},
		{name: "revoked trial", expires: 48 * time.Hour, trial: true, steps: []string{"revoke"}, code: licentia.CodeLicenceRevoked, state: "revoked"},
		{name: "expired on purpose", steps: []string{"expire"}, code: licentia.CodeLicenceExpired, state: "expired"},
		{name: "revoked then expired", steps: []string{"revoke", "expire"}, code: licentia.CodeLicenceExpired, state: "expired"},
		{name: "expires_at passed", expires: time.Hour, lapse: true, code: licentia.CodeLicenceExpired, state: "expired"},
		{name: "trial ended", expires: 48 * time.Hour, trial: true, lapse: true, code: licentia.CodeLicenceExpired, state: "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := e.later(time.Minute)
			edits := map[string]any{"limit_kind": "machines", "limit_count": 5, "trial": tt.trial}
			if tt.expires != 0 {
				edits["expires_at"] = licentia.FormatTime(base.Add(tt.expires))
			}
			issued := e.issue(t, e.allKey, issueBody(edits))
			e.takeSeat(t, issued.LicenceKey, "held", http.StatusCreated)
			e.setUp(t, issued.Licence.ID, tt.steps...)
			if tt.lapse {
				e.clock.Set(base.Add(tt.expires))
			}
			now := e.later(time.Second)
			before := e.snapshot(t, e.org.ID, issued.Licence.ID)
			for _, machine := range []string{"new", "held"} {
				e.run(t, scenario{call: activateCall(activateBody(issued.LicenceKey, machine, nil)), wantStatus: http.StatusForbidden, wantCode: tt.code})
			}
			e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)

			lic := e.read(t, issued.Licence.ID)
			held := lic.Activations[0].ID
			e.checkVerdict(t, e.askStatus(t, issued.LicenceKey, "held"), wantVerdict(lic.Licence, "held", &held, tt.state, now, fp))
			e.checkVerdict(t, e.askStatus(t, issued.LicenceKey, "new"), wantVerdict(lic.Licence, "new", nil, tt.state, now, fp))
		})
	}
	t.Run("reinstated", func(t *testing.T) {
		e.later(time.Minute)
		issued := e.issue(t, e.allKey, issueBody(nil))
		e.setUp(t, issued.Licence.ID, "revoke", "reinstate")
		e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
	})
}

// TestActivationAnonymised: an anonymised licence's key answers 403 with
// its stored status on /v1/activations, a signed verdict of that state on
// /status (its machines were freed, so no activation), and changed false
// on /deactivate; none of them writes anything.
func TestActivationAnonymised(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	_, fp := e.shipped(t, "desk-app")
	for _, tt := range []struct {
		name  string
		steps []string
		code  licentia.Code
		state string
	}{
		{name: "active", code: licentia.CodeLicenceRevoked, state: "revoked"},
		{name: "revoked", steps: []string{"revoke"}, code: licentia.CodeLicenceRevoked, state: "revoked"},
		{name: "expired", steps: []string{"expire"}, code: licentia.CodeLicenceExpired, state: "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.later(time.Minute)
			issued := e.issue(t, e.allKey, issueBody(nil))
			e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
			e.setUp(t, issued.Licence.ID, tt.steps...)
			e.run(t, scenario{call: anonymiseCall(e.allKey, issued.Licence.ID, map[string]any{"confirm": true}), wantStatus: http.StatusOK})
			now := e.later(time.Second)
			before := e.snapshot(t, e.org.ID, issued.Licence.ID)

			for _, machine := range []string{"ada-laptop", "new"} {
				e.run(t, scenario{call: activateCall(activateBody(issued.LicenceKey, machine, nil)), wantStatus: http.StatusForbidden, wantCode: tt.code})
				e.checkVerdict(t, e.askStatus(t, issued.LicenceKey, machine), wantVerdict(e.read(t, issued.Licence.ID).Licence, machine, nil, tt.state, now, fp))
				if e.freeSeat(t, issued.LicenceKey, machine) {
					t.Errorf("deactivate %s on an anonymised licence: changed true, want false", machine)
				}
			}
			e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
		})
	}
}

// TestActivationLicenceNotFound: a genuine key whose licence the service
// does not know (absent, or a licence of another product of this or
// another organization) answers 404 licence_not_found on every route, and
// writes nothing.
func TestActivationLicenceNotFound(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	e.createProduct(t, e.allKey, productBody("note-app", "NOTE", nil))
	other, otherKey := e.otherOrg(t, "beta", "beta-app", "BETA")
	e.refreshCatalogue(t)
	note := e.issue(t, e.allKey, issueBody(map[string]any{"product_id": "note-app"}))
	beta := e.issue(t, otherKey, issueBody(map[string]any{"product_id": "beta-app"}))
	e.takeSeat(t, note.LicenceKey, "ada-laptop", http.StatusCreated)
	e.takeSeat(t, beta.LicenceKey, "ada-laptop", http.StatusCreated)
	for _, tt := range []struct {
		name, key string
	}{
		{"absent licence", e.genuineKey(t, e.org.ID, "desk-app", licentia.NewID())},
		{"licence of another product", e.genuineKey(t, e.org.ID, "desk-app", note.Licence.ID)},
		{"licence of another organization's product", e.genuineKey(t, e.org.ID, "desk-app", beta.Licence.ID)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, beforeBeta := e.snapshot(t, e.org.ID, note.Licence.ID), e.snapshot(t, other.ID, beta.Licence.ID)
			for _, c := range routeCalls(tt.key, "ada-laptop") {
				e.run(t, scenario{call: c, wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound})
			}
			e.wantUnchanged(t, e.org.ID, note.Licence.ID, before)
			e.wantUnchanged(t, other.ID, beta.Licence.ID, beforeBeta)
		})
	}
}

// TestActivationKeyRefused: 422 licence_key_invalid for anything that is
// not a key the service issues (garbage, an edited key, an unknown prefix,
// a key signed by a key the product never had) and 422
// licence_wrong_product for a valid payload behind another product's
// prefix, on every route.
func TestActivationKeyRefused(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	e.createProduct(t, e.allKey, productBody("note-app", "NOTE", nil))
	e.refreshCatalogue(t)
	desk := e.issue(t, e.allKey, issueBody(nil))
	note := e.issue(t, e.allKey, issueBody(map[string]any{"product_id": "note-app"}))
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	forged, err := sdk.SignLicenceKey(stranger, "", "DESK", "desk-app", desk.Licence.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, key string
		code      licentia.Code
	}{
		{"garbage", "not-a-licence-key", licentia.CodeLicenceKeyInvalid},
		{"edited", edited(desk.LicenceKey), licentia.CodeLicenceKeyInvalid},
		{"truncated", desk.LicenceKey[:len(desk.LicenceKey)-1], licentia.CodeLicenceKeyInvalid},
		{"unknown prefix", withPrefix("ZZZZ", desk.LicenceKey), licentia.CodeLicenceKeyInvalid},
		{"signed by a stranger", forged, licentia.CodeLicenceKeyInvalid},
		{"another product's prefix", withPrefix("NOTE", desk.LicenceKey), licentia.CodeLicenceWrongProduct},
		{"another product's payload", withPrefix("DESK", note.LicenceKey), licentia.CodeLicenceWrongProduct},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := e.snapshot(t, e.org.ID, desk.Licence.ID)
			for _, c := range routeCalls(tt.key, "ada-laptop") {
				e.run(t, scenario{call: c, wantStatus: http.StatusUnprocessableEntity, wantCode: tt.code})
			}
			e.wantUnchanged(t, e.org.ID, desk.Licence.ID, before)
		})
	}
}

// TestActivationRetiredKey: keys signed with a previous signing key keep
// working until that public key is retired, by retire-public-key or by a
// rotation with keep_previous false; then they answer 422
// licence_key_invalid on every route, while the key derived under the
// current signing key works, and verdicts are signed by the current key.
//
// The catalogue is refreshed after each change, as the catalogue job does
// every signing.RefreshInterval: the admin routes do not refresh the
// catalogue of their own process themselves.
func TestActivationRetiredKey(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	refresh := func() {
		e.clock.Advance(signing.RefreshInterval)
		e.refreshCatalogue(t)
	}
	for _, tt := range []struct {
		name   string
		retire func(t *testing.T, oldPublic string)
	}{
		{"retire-public-key", func(t *testing.T, oldPublic string) {
			e.rotate(t, e.allKey, "desk-app", nil)
			refresh()
			e.run(t, scenario{call: retireCall(e.allKey, "desk-app", map[string]any{"public_key": oldPublic}), wantStatus: http.StatusOK})
		}},
		{"rotation with keep_previous false", func(t *testing.T, _ string) {
			e.rotate(t, e.allKey, "desk-app", map[string]any{"keep_previous": false})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 10}))
			oldKey := issued.LicenceKey
			e.takeSeat(t, oldKey, "old-1", http.StatusCreated)
			oldPublic := e.getProduct(t, e.allKey, "desk-app").PublicKey
			tt.retire(t, oldPublic)
			refresh()
			current := e.getProduct(t, e.allKey, "desk-app")
			if current.PublicKey == oldPublic || !slices.ContainsFunc(current.KeyHistory, func(k keyEntry) bool {
				return k.PublicKey == oldPublic && k.Status == "retired"
			}) {
				t.Fatalf("key history %+v: want a new current key and %s retired", current.KeyHistory, oldPublic)
			}
			fp := fingerprint(t, current.PublicKey)
			before := e.snapshot(t, e.org.ID, issued.Licence.ID)
			for _, c := range routeCalls(oldKey, "old-1") {
				e.run(t, scenario{call: c, wantStatus: http.StatusUnprocessableEntity, wantCode: licentia.CodeLicenceKeyInvalid})
			}
			e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)

			read := e.read(t, issued.Licence.ID)
			if read.LicenceKey == nil || *read.LicenceKey == oldKey {
				t.Fatalf("licence_key = %v after the change, want a key under the new signing key", read.LicenceKey)
			}
			got := e.takeSeat(t, *read.LicenceKey, "old-1", http.StatusOK)
			if v := e.verdict(t, "desk-app", got.Verdict); v.KeyFingerprint != fp {
				t.Errorf("verdict key_fingerprint = %s, want the current key's %s", v.KeyFingerprint, fp)
			}
			e.later(time.Minute) // a new window of the public rate limit
		})
	}
	t.Run("previous key still accepted", func(t *testing.T) {
		issued := e.issue(t, e.allKey, issueBody(nil))
		e.rotate(t, e.allKey, "desk-app", map[string]any{"keep_previous": true})
		refresh()
		got := e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
		_, fp := e.shipped(t, "desk-app")
		if v := e.verdict(t, "desk-app", got.Verdict); v.KeyFingerprint != fp {
			t.Errorf("verdict key_fingerprint = %s, want the current key's %s", v.KeyFingerprint, fp)
		}
	})
}

// TestActivationProductUnavailable: a product whose signing key this
// process cannot open (another process sealed it with another master key)
// answers 503 product_unavailable on the routes that sign, and writes
// nothing; deactivation signs nothing, so it still frees the seat.
func TestActivationProductUnavailable(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil))
	e.takeSeat(t, issued.LicenceKey, "held", http.StatusCreated)
	other := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: newMasterKey(t)})
	before := e.snapshot(t, e.org.ID, issued.Licence.ID)
	for _, c := range []call{activateCall(activateBody(issued.LicenceKey, "new", nil)), statusCall(issued.LicenceKey, "held"), activateCall(activateBody(issued.LicenceKey, "held", nil))} {
		other.run(t, scenario{call: c, wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeProductUnavailable})
	}
	e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
	if !other.freeSeat(t, issued.LicenceKey, "held") {
		t.Errorf("deactivate where the product cannot sign: changed false, want true")
	}
	if n := e.live(t, issued.Licence.ID); n != 0 {
		t.Errorf("%d live activations after the deactivation, want 0", n)
	}
}

// TestActivationInternalError: a write failing mid-activation answers 500
// internal_error without the cause and leaves nothing written: no seat
// without its event and audit entry.
func TestActivationInternalError(t *testing.T) {
	t.Parallel()
	m := newMasterKey(t)
	e := &actEnv{licenceEnvOf(t, newTestEnvWith(t, envOptions{masterKey: m}))}
	for _, fail := range []string{"AppendAudit", "InsertEvent"} {
		t.Run(fail, func(t *testing.T) {
			broken := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: m,
				wrapStore: func(s store.Store) store.Store { return failingWrites{s, fail} }})
			issued := e.issue(t, e.allKey, issueBody(nil))
			e.refreshCatalogue(t)
			e.takeSeat(t, issued.LicenceKey, "held", http.StatusCreated)
			before := e.snapshot(t, e.org.ID, issued.Licence.ID)
			for _, c := range []call{activateCall(activateBody(issued.LicenceKey, "new", nil)), deactivateCall(issued.LicenceKey, "held")} {
				r := broken.run(t, scenario{call: c, wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal, notWant: []string{"disk", "/var/lib"}})
				if logs := broken.logs.String(); !strings.Contains(logs, r.header.Get("X-Request-Id")) || !strings.Contains(logs, errDiskGone.Error()) {
					t.Errorf("%s %s: no log line with the cause and the request id", c.method, c.path)
				}
			}
			e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
		})
	}
}

// TestActivationOrderOfChecks: 429, then 413, 400, 422, 404, 503, 403 and
// 409: each pair below meets both conditions and the earlier check wins.
func TestActivationOrderOfChecks(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	e.createProduct(t, e.allKey, productBody("note-app", "NOTE", nil))
	e.refreshCatalogue(t)
	full := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	e.takeSeat(t, full.LicenceKey, "held", http.StatusCreated)
	revokedFull := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	e.takeSeat(t, revokedFull.LicenceKey, "held", http.StatusCreated)
	e.setUp(t, revokedFull.Licence.ID, "revoke")
	absent := e.genuineKey(t, e.org.ID, "desk-app", licentia.NewID())
	unavailable := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: newMasterKey(t)})

	bad := func(c call) call { c.invalid = true; return c }
	// The offline route answers every activation refusal in the same order.
	for _, path := range []string{"/v1/activations", "/v1/activations/offline"} {
		t.Run(path, func(t *testing.T) {
			orderOfChecks(t, e, path, bad, full.LicenceKey, revokedFull.LicenceKey, absent, unavailable)
		})
	}
	t.Run("429 before 413", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		e.repeat(t, ratelimitPublic, bad(statusCall("not-a-key", "new")), http.StatusUnprocessableEntity)
		r := e.run(t, scenario{call: bad(call{method: "POST", path: "/v1/activations/status", body: paddedBody("{}", 65537)}),
			wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
		if got := r.header.Get("Retry-After-public"); got != "60" {
			t.Errorf("Retry-After-public = %q, want 60", got)
		}
	})
}

// orderOfChecks runs the activation refusals on path, each answered
// before the next in the contract's order.
func orderOfChecks(t *testing.T, e *actEnv, path string, bad func(call) call, fullKey, revokedKey, absent string, unavailable *testEnv) {
	activate := func(key string, edits map[string]any) call {
		c := activateCall(activateBody(key, "new", edits))
		c.path = path
		return c
	}
	for _, tt := range []struct {
		scenario
		env *testEnv
	}{
		{scenario: scenario{name: "413 before 400", call: bad(call{method: "POST", path: path, body: paddedBody(`{"licence_key":1}`, 65537)}),
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge}},
		{scenario: scenario{name: "400 before 422", call: bad(activate("not-a-key", map[string]any{"machine_id": "no spaces"})),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issues("/machine_id", "must be 1 to 128 of A-Z a-z 0-9 . _ : -")}},
		{scenario: scenario{name: "422 before 404", call: activate(withPrefix("NOTE", absent), nil),
			wantStatus: http.StatusUnprocessableEntity, wantCode: licentia.CodeLicenceWrongProduct}},
		{scenario: scenario{name: "404 before 503", call: activate(absent, nil),
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound}, env: unavailable},
		{scenario: scenario{name: "404 before 503 on status", call: statusCall(absent, "new"),
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound}, env: unavailable},
		{scenario: scenario{name: "503 before 403", call: activate(revokedKey, nil),
			wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeProductUnavailable}, env: unavailable},
		{scenario: scenario{name: "403 before 409", call: activate(revokedKey, nil),
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeLicenceRevoked}},
		{scenario: scenario{name: "409", call: activate(fullKey, nil),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeSeatLimitReached,
			wantDetails: map[string]any{"limit": 1.0, "active": 1.0, "limit_kind": "machines"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := e.testEnv
			if tt.env != nil {
				env = tt.env
			}
			env.run(t, tt.scenario)
		})
	}
}

// ratelimitPublic is the contract's public limit per minute.
const ratelimitPublic = 30

// TestActivationBody: the body rules of each route, every issue reported
// at once; a refused body writes nothing; 65,536 bytes are read and 65,537
// answer 413.
func TestActivationBody(t *testing.T) {
	t.Parallel()
	e := newActEnvWith(t, envOptions{trustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 100}))
	key := issued.LicenceKey
	long := strings.Repeat("m", 129)
	machineMsg := "must be 1 to 128 of A-Z a-z 0-9 . _ : -"
	type bodyCase struct {
		name    string
		body    any
		status  int
		details map[string]any
		// lenient marks a body only the service's strict pre-pass refuses
		// (duplicate names, trailing data); the document cannot say so.
		lenient bool
	}
	// keyCases are the rules of the licence key and machine id, which
	// every route reads; on POST /v1/activations the other fields are
	// sent too, or reported missing, and on the lease renewal and release
	// the lease id.
	keyCases := func(activate, leaseRef bool) []bodyCase {
		with := func(m map[string]any) map[string]any {
			if activate {
				m["label"], m["os"], m["app_version"] = "l", "o", "v"
			}
			if leaseRef {
				m["lease_id"] = someID
			}
			return m
		}
		missing := func(pairs ...string) map[string]any {
			if activate {
				pairs = append(pairs, "/label", "is required", "/os", "is required", "/app_version", "is required")
			}
			if leaseRef {
				pairs = append(pairs, "/lease_id", "is required")
			}
			return issues(pairs...)
		}
		required := []string{"/licence_key", "is required", "/machine_id", "is required"}
		return []bodyCase{
			{name: "no body", status: 400, details: missing(required...)},
			{name: "empty object", body: "{}", status: 400, details: missing(required...)},
			{name: "not an object", body: "[]", status: 400, details: missing(append([]string{"", "the body must be a JSON object"}, required...)...)},
			{name: "null", body: "null", status: 400, details: missing(append([]string{"", "the body must be a JSON object"}, required...)...)},
			{name: "not JSON", body: "{licence_key}", status: 400, details: missing(append([]string{"", "the body is not valid JSON"}, required...)...)},
			{name: "trailing data", body: `{"licence_key":"k","machine_id":"m"} {}`, status: 400, lenient: true,
				details: missing(append([]string{"", "the body holds data after the JSON value"}, required...)...)},
			{name: "duplicate name", body: encodeDup(with(map[string]any{"licence_key": key, "machine_id": "a"})), status: 400, lenient: true,
				details: issues("/machine_id", "duplicate field")},
			{name: "empty key", body: with(map[string]any{"licence_key": "", "machine_id": "m"}), status: 400, details: issues("/licence_key", "must be 1 to 1024 characters")},
			{name: "key too long", body: with(map[string]any{"licence_key": strings.Repeat("K", 1025), "machine_id": "m"}), status: 400, details: issues("/licence_key", "must be 1 to 1024 characters")},
			{name: "key of 1024 characters, more bytes", body: with(map[string]any{"licence_key": strings.Repeat("é", 1024), "machine_id": "m"}), status: 422},
			{name: "key not a string", body: with(map[string]any{"licence_key": 42, "machine_id": "m"}), status: 400, details: issues("/licence_key", "must be a string")},
			{name: "machine id empty", body: with(map[string]any{"licence_key": key, "machine_id": ""}), status: 400, details: issues("/machine_id", machineMsg)},
			{name: "machine id of 129", body: with(map[string]any{"licence_key": key, "machine_id": long}), status: 400, details: issues("/machine_id", machineMsg)},
			{name: "machine id with a space", body: with(map[string]any{"licence_key": key, "machine_id": "ada laptop"}), status: 400, details: issues("/machine_id", machineMsg)},
			{name: "machine id with a slash", body: with(map[string]any{"licence_key": key, "machine_id": "ada/laptop"}), status: 400, details: issues("/machine_id", machineMsg)},
			{name: "machine id not ASCII", body: with(map[string]any{"licence_key": key, "machine_id": "adé"}), status: 400, details: issues("/machine_id", machineMsg)},
			{name: "machine id null", body: with(map[string]any{"licence_key": key, "machine_id": nil}), status: 400, details: issues("/machine_id", "must be a string")},
			{name: "unknown field", body: with(map[string]any{"licence_key": key, "machine_id": "m", "extra": true}), status: 400, details: issues("/extra", "unknown field")},
			{name: "name in another case", body: with(map[string]any{"licence_key": key, "Machine_id": "m"}), status: 400, details: issues("/Machine_id", "unknown field", "/machine_id", "is required")},
		}
	}
	activateCases := []bodyCase{
		{name: "label of 201", body: activateBody(key, "m1", map[string]any{"label": strings.Repeat("l", 201)}), status: 400, details: issues("/label", "must be at most 200 characters")},
		{name: "os of 201", body: activateBody(key, "m1", map[string]any{"os": strings.Repeat("o", 201)}), status: 400, details: issues("/os", "must be at most 200 characters")},
		{name: "app_version of 201", body: activateBody(key, "m1", map[string]any{"app_version": strings.Repeat("v", 201)}), status: 400, details: issues("/app_version", "must be at most 200 characters")},
		{name: "control character", body: activateBody(key, "m1", map[string]any{"label": "Ada\u0007"}), status: 400, details: issues("/label", "must not contain control characters")},
		{name: "label null", body: activateBody(key, "m1", map[string]any{"label": nil}), status: 400, details: issues("/label", "must be a string")},
		{name: "os missing", body: activateBody(key, "m1", map[string]any{"os": absent}), status: 400, details: issues("/os", "is required")},
		{name: "every problem at once", body: activateBody("", long, map[string]any{"label": strings.Repeat("l", 201), "os": 1, "app_version": absent, "extra": 1}), status: 400,
			details: issues("/extra", "unknown field", "/licence_key", "must be 1 to 1024 characters", "/machine_id", machineMsg, "/label", "must be at most 200 characters", "/os", "must be a string", "/app_version", "is required")},
		{name: "machine id of 128", body: activateBody(key, strings.Repeat("m", 128), nil), status: 201},
		{name: "every allowed character", body: activateBody(key, "AZaz09._:-", nil), status: 201},
		{name: "empty label, os and app_version", body: activateBody(key, "m2", map[string]any{"label": "", "os": "", "app_version": ""}), status: 201},
		{name: "200 characters, not bytes", body: activateBody(key, "m3", map[string]any{"label": strings.Repeat("é", 200), "os": strings.Repeat("o", 200), "app_version": strings.Repeat("v", 200)}), status: 201},
	}
	leaseCases := []bodyCase{
		{name: "borrow_hours of 0", body: map[string]any{"licence_key": key, "machine_id": "m", "borrow_hours": 0}, status: 400,
			details: issues("/borrow_hours", "must be an integer from 1 to 720")},
		{name: "borrow_hours of 721", body: map[string]any{"licence_key": key, "machine_id": "m", "borrow_hours": 721}, status: 400,
			details: issues("/borrow_hours", "must be an integer from 1 to 720")},
		{name: "borrow_hours not an integer", body: map[string]any{"licence_key": key, "machine_id": "m", "borrow_hours": 1.5}, status: 400,
			details: issues("/borrow_hours", "must be an integer")},
	}
	for i, route := range publicRoutes {
		takesSeat := route.pattern == "/v1/activations" || route.pattern == "/v1/activations/offline"
		leaseRef := route.pattern == "/v1/leases/renew" || route.pattern == "/v1/leases/release"
		cases := keyCases(takesSeat, leaseRef)
		if takesSeat {
			cases = append(cases, activateCases...)
		}
		if route.pattern == "/v1/leases" {
			cases = append(cases, leaseCases...)
		}
		t.Run(route.pattern, func(t *testing.T) {
			for j, tt := range cases {
				t.Run(tt.name, func(t *testing.T) {
					c := call{method: route.method, path: route.pattern, body: tt.body, invalid: tt.status == 400,
						// A client address per case keeps the public limit out of the way.
						headers: map[string]string{"X-Forwarded-For": netip.AddrFrom4([4]byte{198, 51, byte(i), byte(j)}).String()}}
					before := e.snapshot(t, e.org.ID, issued.Licence.ID)
					status := tt.status
					if status == http.StatusCreated && route.pattern == "/v1/activations/offline" {
						// The same machines took their seats online just
						// before: the offline request refreshes them.
						status = http.StatusOK
					}
					e.run(t, scenario{call: c, wantStatus: status, wantCode: codeOf(tt.status), wantDetails: tt.details})
					if tt.status == 400 && !tt.lenient {
						e.documentRefuses(t, c)
					}
					if tt.status == 400 {
						e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
					}
				})
			}
		})
	}
	t.Run("query parameter", func(t *testing.T) {
		c := statusCall(key, "m1")
		c.path += "?machine_id=m1"
		c.invalid = true
		e.run(t, scenario{call: c, wantStatus: 400, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.machine_id", "unknown parameter")})
	})
	doc := `{"licence_key":"` + key + `","machine_id":"padded","label":"l","os":"o","app_version":"v"}`
	t.Run("65,536 bytes", func(t *testing.T) {
		e.run(t, scenario{call: activateCall(paddedBody(doc, 65536)), wantStatus: http.StatusCreated})
	})
	t.Run("65,537 bytes", func(t *testing.T) {
		for _, route := range publicRoutes {
			e.run(t, scenario{call: call{method: route.method, path: route.pattern, body: paddedBody(doc, 65537), invalid: true},
				wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge})
		}
	})
}

// encodeDup encodes body with its machine_id sent a second time.
func encodeDup(body map[string]any) string {
	raw, _ := json.Marshal(body)
	return string(raw[:len(raw)-1]) + `,"machine_id":"b"}`
}

// codeOf is the code of the failures TestActivationBody expects.
func codeOf(status int) licentia.Code {
	switch status {
	case http.StatusBadRequest:
		return licentia.CodeValidationFailed
	case http.StatusUnprocessableEntity:
		return licentia.CodeLicenceKeyInvalid
	}
	return ""
}

func newActEnvWith(t *testing.T, o envOptions) *actEnv {
	t.Helper()
	e := &actEnv{licenceEnvOf(t, newTestEnvWith(t, o))}
	e.refreshCatalogue(t)
	return e
}

// wantPublicRateHeaders checks the X-RateLimit-*-public headers of an
// answer, and that it carries none of the admin limit's.
func wantPublicRateHeaders(t *testing.T, r *resp, remaining, reset string) {
	t.Helper()
	for name, want := range map[string]string{
		"X-RateLimit-Limit-public":     "30",
		"X-RateLimit-Remaining-public": remaining,
		"X-RateLimit-Reset-public":     reset,
		"X-RateLimit-Limit-admin":      "",
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestActivationRateLimit: 30 requests a minute per client address and
// route, refused ones included; the 31st answers 429 rate_limited with
// Retry-After-public. Another route, another client address and the next
// window are counted apart, and the admin limit is not touched.
func TestActivationRateLimit(t *testing.T) {
	t.Parallel()
	e := newActEnvWith(t, envOptions{trustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	issued := e.issue(t, e.allKey, issueBody(nil))
	from := func(c call, addr string) call {
		c.headers = map[string]string{"X-Forwarded-For": addr}
		return c
	}
	const client = "198.51.100.7"
	status := from(statusCall(issued.LicenceKey, "ada-laptop"), client)

	wantPublicRateHeaders(t, e.run(t, scenario{call: status, wantStatus: http.StatusOK}), "29", "60")
	e.clock.Advance(15 * time.Second)
	wantPublicRateHeaders(t, e.run(t, scenario{call: from(statusCall("not-a-key", "ada-laptop"), client), wantStatus: http.StatusUnprocessableEntity, wantCode: licentia.CodeLicenceKeyInvalid}), "28", "45")
	e.repeat(t, 27, status, http.StatusOK)
	wantPublicRateHeaders(t, e.run(t, scenario{call: status, wantStatus: http.StatusOK}), "0", "45")
	r := e.run(t, scenario{call: status, wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
	wantPublicRateHeaders(t, r, "0", "45")
	if got := r.header.Get("Retry-After-public"); got != "45" {
		t.Errorf("Retry-After-public = %q, want 45", got)
	}
	for _, tt := range []struct {
		name string
		call call
		want int
	}{
		{"another route", from(activateCall(activateBody(issued.LicenceKey, "ada-laptop", nil)), client), http.StatusCreated},
		{"another client address", from(statusCall(issued.LicenceKey, "ada-laptop"), "198.51.100.8"), http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantPublicRateHeaders(t, e.run(t, scenario{call: tt.call, wantStatus: tt.want}), "29", "45")
		})
	}
	t.Run("admin limit apart", func(t *testing.T) {
		r := e.run(t, scenario{call: call{method: "GET", path: licencePath(issued.Licence.ID, ""), key: e.allKey, headers: map[string]string{"X-Forwarded-For": client}}, wantStatus: http.StatusOK})
		if got := r.header.Get("X-RateLimit-Remaining-public"); got != "" {
			t.Errorf("an admin answer carries X-RateLimit-Remaining-public %q", got)
		}
	})
	t.Run("next window", func(t *testing.T) {
		e.clock.Advance(45 * time.Second)
		wantPublicRateHeaders(t, e.run(t, scenario{call: status, wantStatus: http.StatusOK}), "29", "60")
	})
}

// TestActivationValidatorCatchesDrift makes sure the document holds the
// activation routes' answers tightly: each change to a real answer must
// fail validation.
func TestActivationValidatorCatchesDrift(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	activate := activateCall(activateBody(issued.LicenceKey, "ada-laptop", nil))
	created := e.run(t, scenario{call: activate, wantStatus: http.StatusCreated})
	status := statusCall(issued.LicenceKey, "ada-laptop")
	verdict := e.run(t, scenario{call: status, wantStatus: http.StatusOK})
	full := e.run(t, scenario{call: activateCall(activateBody(issued.LicenceKey, "other", nil)), wantStatus: http.StatusConflict})
	d := apiDocument(t)

	id := created.header.Get("X-Request-Id")
	errorBody := func(code, details string) string {
		return `{"error":{"code":"` + code + `","message":"m","request_id":"` + id + `"` + details + `}}`
	}
	edit := func(r *resp, f func(map[string]any)) string {
		var v map[string]any
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatal(err)
		}
		f(v)
		raw, _ := json.Marshal(v)
		return string(raw)
	}
	adminRetry := created.header.Clone()
	adminRetry.Set("Retry-After-admin", "60")
	for _, tt := range []struct {
		name   string
		call   call
		status int
		header http.Header
		body   string
	}{
		{"verdict of another format", status, 200, verdict.header, edit(verdict, func(v map[string]any) { v["verdict"] = "v2.abc.def" })},
		{"verdict as an object", status, 200, verdict.header, edit(verdict, func(v map[string]any) { v["verdict"] = map[string]any{} })},
		{"status answer with a field more", status, 200, verdict.header, edit(verdict, func(v map[string]any) { v["state"] = "active" })},
		{"activation answer without its verdict", activate, 201, created.header, edit(created, func(v map[string]any) { delete(v, "verdict") })},
		{"activation without last_seen_at", activate, 201, created.header, edit(created, func(v map[string]any) { delete(v["activation"].(map[string]any), "last_seen_at") })},
		{"deactivate answer not a boolean", deactivateCall(issued.LicenceKey, "ada-laptop"), 200, created.header, `{"changed":"yes"}`},
		{"status does not answer 409", status, 409, full.header, string(full.body)},
		{"429 with Retry-After-admin only", status, 429, adminRetry, errorBody("rate_limited", "")},
		{"403 with another code", activate, 403, created.header, errorBody("seat_limit_reached", "")},
		{"409 without details", activate, 409, created.header, errorBody("seat_limit_reached", "")},
		{"409 without limit_kind", activate, 409, created.header, edit(full, func(v map[string]any) {
			delete(v["error"].(map[string]any)["details"].(map[string]any), "limit_kind")
		})},
		{"409 with a detail more", activate, 409, created.header, edit(full, func(v map[string]any) {
			v["error"].(map[string]any)["details"].(map[string]any)["licence_id"] = issued.Licence.ID
		})},
		{"422 with licence_not_found", activate, 422, created.header, errorBody("licence_not_found", "")},
		{"404 with details", activate, 404, created.header, errorBody("licence_not_found", `,"details":{}`)},
		{"deactivate does not answer 503", deactivateCall(issued.LicenceKey, "ada-laptop"), 503, created.header, errorBody("product_unavailable", "")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &resp{status: tt.status, header: tt.header, body: []byte(tt.body)}
			if errs := exchangeErrors(t.Context(), d, e.request(t, tt.call, encodeBody(t, tt.call.body)), r, false); len(errs) == 0 {
				t.Errorf("exchangeErrors() = none, want a mismatch for %d %s", tt.status, tt.body)
			}
		})
	}
}
