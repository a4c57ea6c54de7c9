package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// TestIssueLicenceFields holds every field rule and default of an issue.
// Each accepted licence has its licence.issued event with the answer's
// licence; a refused one writes nothing. The document must refuse what
// the service refuses, except where marked.
func TestIssueLicenceFields(t *testing.T) {
	e := newLicenceEnv(t)
	const (
		countRule = "must be an integer from 1 to 4294967295"
		majorRule = "must be an integer from 1 to 65535"
		timeRule  = "must be an RFC 3339 time with an offset"
		refRule   = "must be 1 to 200 printable ASCII characters"
	)
	chosen := "0f6e2c7a-1b2c-4d3e-8f90-a1b2c3d4e5f6"
	upper := "ABCDEF01-2345-4678-89AB-CDEF01234567"
	email320 := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 251) + ".com"
	for _, tt := range []struct {
		name  string
		edits map[string]any
		// want holds fields of the licence answered; without it the
		// request is refused with issues.
		want           map[string]any
		issues         []string
		documentAllows bool
	}{
		{name: "defaults", want: map[string]any{"limit_kind": "seats", "limit_count": 1.0, "major": 3.0, "expires_at": nil, "trial_ends_at": nil, "state": "active", "external_ref": nil}},
		{name: "limit_kind machines", edits: map[string]any{"limit_kind": "machines"}, want: map[string]any{"limit_kind": "machines"}},
		{name: "limit_kind seats", edits: map[string]any{"limit_kind": "seats"}, want: map[string]any{"limit_kind": "seats"}},
		{name: "limit_kind in upper case", edits: map[string]any{"limit_kind": "Seats"}, issues: []string{"/limit_kind", "must be seats or machines"}},
		{name: "limit_kind null", edits: map[string]any{"limit_kind": nil}, issues: []string{"/limit_kind", "must be a string"}},
		{name: "limit_count 1", edits: map[string]any{"limit_count": 1}, want: map[string]any{"limit_count": 1.0}},
		{name: "limit_count 4294967295", edits: map[string]any{"limit_count": 4294967295}, want: map[string]any{"limit_count": 4294967295.0}},
		{name: "limit_count 0", edits: map[string]any{"limit_count": 0}, issues: []string{"/limit_count", countRule}},
		{name: "limit_count 4294967296", edits: map[string]any{"limit_count": 4294967296}, issues: []string{"/limit_count", countRule}},
		{name: "limit_count 1.5", edits: map[string]any{"limit_count": 1.5}, issues: []string{"/limit_count", "must be an integer"}},
		{name: "limit_count 2.0", edits: map[string]any{"limit_count": json.Number("2.0")}, issues: []string{"/limit_count", "must be an integer"}, documentAllows: true},
		{name: "limit_count as a string", edits: map[string]any{"limit_count": "2"}, issues: []string{"/limit_count", "must be an integer"}},
		{name: "major 1", edits: map[string]any{"major": 1}, want: map[string]any{"major": 1.0}},
		{name: "major 65535", edits: map[string]any{"major": 65535}, want: map[string]any{"major": 65535.0}},
		{name: "major 0", edits: map[string]any{"major": 0}, issues: []string{"/major", majorRule}},
		{name: "major 65536", edits: map[string]any{"major": 65536}, issues: []string{"/major", majorRule}},
		{name: "expires_at in Z", edits: map[string]any{"expires_at": "2026-04-01T10:00:00Z"}, want: map[string]any{"expires_at": "2026-04-01T10:00:00.000Z", "state": "active", "trial_ends_at": nil}},
		{name: "expires_at with an offset", edits: map[string]any{"expires_at": "2026-04-01T11:30:00+01:00"}, want: map[string]any{"expires_at": "2026-04-01T10:30:00.000Z"}},
		{name: "expires_at with a negative offset and nanoseconds", edits: map[string]any{"expires_at": "2026-04-01T05:00:00.123456789-05:00"}, want: map[string]any{"expires_at": "2026-04-01T10:00:00.123Z"}},
		{name: "expires_at 1 ms ahead", edits: map[string]any{"expires_at": "2026-03-02T09:00:00.001Z"}, want: map[string]any{"expires_at": "2026-03-02T09:00:00.001Z", "state": "active"}},
		{name: "expires_at now", edits: map[string]any{"expires_at": "2026-03-02T09:00:00Z"}, issues: []string{"/expires_at", "must be in the future"}, documentAllows: true},
		{name: "expires_at under 1 ms ahead", edits: map[string]any{"expires_at": "2026-03-02T09:00:00.0009Z"}, issues: []string{"/expires_at", "must be in the future"}, documentAllows: true},
		{name: "expires_at now in another zone", edits: map[string]any{"expires_at": "2026-03-02T10:00:00+01:00"}, issues: []string{"/expires_at", "must be in the future"}, documentAllows: true},
		{name: "expires_at past", edits: map[string]any{"expires_at": "2025-03-02T09:00:00Z"}, issues: []string{"/expires_at", "must be in the future"}, documentAllows: true},
		{name: "expires_at without an offset", edits: map[string]any{"expires_at": "2026-04-01T10:00:00"}, issues: []string{"/expires_at", timeRule}},
		{name: "expires_at a date", edits: map[string]any{"expires_at": "2026-04-01"}, issues: []string{"/expires_at", timeRule}},
		{name: "expires_at a number", edits: map[string]any{"expires_at": 1775037600}, issues: []string{"/expires_at", "must be a string"}},
		{name: "trial", edits: map[string]any{"trial": true, "expires_at": "2026-03-16T09:00:00+00:00"}, want: map[string]any{"trial_ends_at": "2026-03-16T09:00:00.000Z", "expires_at": "2026-03-16T09:00:00.000Z", "state": "trial", "status": "active"}},
		{name: "trial false", edits: map[string]any{"trial": false, "expires_at": "2026-03-16T09:00:00Z"}, want: map[string]any{"trial_ends_at": nil, "state": "active"}},
		{name: "trial without expires_at", edits: map[string]any{"trial": true}, issues: []string{"/expires_at", "is required for a trial, which ends with the key"}, documentAllows: true},
		{name: "trial as a string", edits: map[string]any{"trial": "true"}, issues: []string{"/trial", "must be a boolean"}},
		{name: "id chosen", edits: map[string]any{"id": chosen}, want: map[string]any{"id": chosen}},
		{name: "id in upper case is normalised", edits: map[string]any{"id": upper}, want: map[string]any{"id": strings.ToLower(upper)}},
		{name: "id not a UUID", edits: map[string]any{"id": "lic_1"}, issues: []string{"/id", "must be a UUID"}},
		{name: "id without hyphens", edits: map[string]any{"id": strings.ReplaceAll(chosen, "-", "")}, issues: []string{"/id", "must be a UUID"}},
		{name: "external_ref kept exactly", edits: map[string]any{"external_ref": "  Order 42/a~ "}, want: map[string]any{"external_ref": "  Order 42/a~ "}},
		{name: "external_ref of 1 character", edits: map[string]any{"external_ref": "x"}, want: map[string]any{"external_ref": "x"}},
		{name: "external_ref of 200 characters", edits: map[string]any{"external_ref": strings.Repeat("r", 200)}, want: map[string]any{"external_ref": strings.Repeat("r", 200)}},
		{name: "external_ref of 201 characters", edits: map[string]any{"external_ref": strings.Repeat("r", 201)}, issues: []string{"/external_ref", refRule}},
		{name: "empty external_ref", edits: map[string]any{"external_ref": ""}, issues: []string{"/external_ref", refRule}},
		{name: "external_ref with 0x7F", edits: map[string]any{"external_ref": "order\x7f"}, issues: []string{"/external_ref", refRule}},
		{name: "external_ref with a tab", edits: map[string]any{"external_ref": "order\t1"}, issues: []string{"/external_ref", refRule}},
		{name: "external_ref not ASCII", edits: map[string]any{"external_ref": "commande-é"}, issues: []string{"/external_ref", refRule}},
		{name: "email stored as sent", edits: map[string]any{"email": "Ada.Lovelace+desk@Example.COM"}, want: map[string]any{"email": "Ada.Lovelace+desk@Example.COM"}},
		{name: "email of 320 characters", edits: map[string]any{"email": email320}, want: map[string]any{"email": email320}},
		{name: "email of 321 characters", edits: map[string]any{"email": "c" + email320}, issues: []string{"/email", "must be at most 320 characters"}},
		{name: "email without @", edits: map[string]any{"email": "ada.example.com"}, issues: []string{"/email", "must contain exactly one @"}},
		{name: "email with two @", edits: map[string]any{"email": "ada@lab@example.com"}, issues: []string{"/email", "must contain exactly one @"}},
		{name: "email without a local part", edits: map[string]any{"email": "@example.com"}, issues: []string{"/email", "must have a local part before the @"}},
		{name: "email without a dot in the domain", edits: map[string]any{"email": "ada@localhost"}, issues: []string{"/email", "must have a domain with a dot"}},
		{name: "email with a space", edits: map[string]any{"email": "ada lovelace@example.com"}, issues: []string{"/email", "must not contain spaces or control characters"}},
		{name: "empty email", edits: map[string]any{"email": ""}, issues: []string{"/email", "must not be empty"}},
		{name: "email missing", edits: map[string]any{"email": absent}, issues: []string{"/email", "is required"}},
		{name: "product_id missing", edits: map[string]any{"product_id": absent}, issues: []string{"/product_id", "is required"}},
		{name: "product_id in upper case", edits: map[string]any{"product_id": "Desk-app"}, issues: []string{"/product_id", "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen"}},
		{name: "unknown fields", edits: map[string]any{"licence_key": "x", "Email": "b@example.com"}, issues: []string{"/Email", "unknown field", "/licence_key", "unknown field"}},
		{name: "source is not an input", edits: map[string]any{"source": "provider"}, issues: []string{"/source", "unknown field"}},
		{
			name:  "every problem at once",
			edits: map[string]any{"product_id": absent, "email": "nobody", "limit_kind": "users", "limit_count": 0, "major": 70000, "expires_at": "soon", "id": "x", "external_ref": "", "trial": 1, "extra": true},
			issues: []string{
				"/extra", "unknown field", "/product_id", "is required", "/limit_count", countRule,
				"/expires_at", timeRule, "/major", majorRule, "/trial", "must be a boolean", "/email", "must contain exactly one @",
				"/id", "must be a UUID", "/limit_kind", "must be seats or machines", "/external_ref", refRule,
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.events(t, e.org.ID))
			c := issueCall(e.allKey, issueBody(tt.edits))
			if tt.want == nil {
				c.invalid = !tt.documentAllows
				e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
				if !tt.documentAllows {
					e.documentRefuses(t, c)
				}
				if n := len(e.events(t, e.org.ID)); n != before {
					t.Errorf("%d events after a refused issue, want %d", n, before)
				}
				return
			}
			r := e.run(t, scenario{call: c, wantStatus: http.StatusCreated})
			got := r.json(t).(map[string]any)["licence"].(map[string]any)
			for field, want := range tt.want {
				if got[field] != want {
					t.Errorf("%s = %#v, want %#v", field, got[field], want)
				}
			}
			issued := decodeStrict[issuedView](t, r.body)
			evs := e.newEvents(t, e.org.ID, before)
			if len(evs) != 1 {
				t.Fatalf("%d new events, want 1", len(evs))
			}
			checkEvent(t, evs[0], wantEvent{typ: licentia.EventLicenceIssued, at: start, licence: issued.Licence, key: issued.LicenceKey})
			if diff := cmp.Diff(issued.Licence, e.read(t, issued.Licence.ID).Licence); diff != "" {
				t.Errorf("read after issue mismatch (-issued +read):\n%s", diff)
			}
		})
	}
}

// TestIssueLicenceProductNotFound: an unknown product and another
// organization's answer the same 404 product_not_found; nothing is written.
func TestIssueLicenceProductNotFound(t *testing.T) {
	e := newLicenceEnv(t)
	other, otherKey := e.otherOrg(t, "beta", "beta-app", "BETA")
	var bodies []apiError
	for _, product := range []string{"nope-app", "beta-app"} {
		r := e.run(t, scenario{
			call:       issueCall(e.allKey, issueBody(map[string]any{"product_id": product})),
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound,
		})
		err := r.apiError(t)
		err.RequestID = ""
		bodies = append(bodies, err)
	}
	if diff := cmp.Diff(bodies[0], bodies[1]); diff != "" {
		t.Errorf("another organization's product answers unlike a missing one (-missing +other):\n%s", diff)
	}
	if n := len(e.events(t, e.org.ID)) + len(e.events(t, other.ID)); n != 0 {
		t.Errorf("%d events written, want none", n)
	}
	// The other organization can issue for its own product.
	e.issue(t, otherKey, issueBody(map[string]any{"product_id": "beta-app"}))
}

// TestIssueLicenceIDConflict: a licence id held by anyone answers 409
// conflict every time, in any case, without naming the holder (no
// details, no organization or product in the message).
func TestIssueLicenceIDConflict(t *testing.T) {
	e := newLicenceEnv(t)
	other, otherKey := e.otherOrg(t, "beta", "beta-app", "BETA")
	mine := e.issue(t, e.allKey, issueBody(map[string]any{"id": "11111111-2222-4333-8444-555555555555"})).Licence.ID
	theirs := e.issue(t, otherKey, issueBody(map[string]any{"product_id": "beta-app", "id": "66666666-7777-4888-8999-aaaaaaaaaaaa"})).Licence.ID
	for _, tt := range []struct {
		name, key, product, id string
	}{
		{"own id", e.allKey, "desk-app", mine},
		{"own id again", e.allKey, "desk-app", mine},
		{"own id in upper case", e.allKey, "desk-app", strings.ToUpper(mine)},
		{"another organization's id", e.allKey, "desk-app", theirs},
		{"another organization's id again", e.allKey, "desk-app", theirs},
		{"taken by the caller, from another organization", otherKey, "beta-app", mine},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(t, scenario{
				call:       issueCall(tt.key, issueBody(map[string]any{"product_id": tt.product, "id": tt.id, "external_ref": "fresh-" + tt.name})),
				wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict,
			})
			for _, s := range []string{"acme", "beta", "desk-app", "beta-app", e.org.ID, other.ID} {
				if strings.Contains(r.apiError(t).Message, s) {
					t.Errorf("conflict message %q names %q", r.apiError(t).Message, s)
				}
			}
		})
	}
	if n, m := len(e.events(t, e.org.ID)), len(e.events(t, other.ID)); n != 1 || m != 1 {
		t.Errorf("events: %d and %d, want 1 each", n, m)
	}
}

// TestIssueLicenceExternalRefConflict: external_ref is unique per product,
// matched exactly; a taken one answers 409 conflict with details.licence_id.
// The same reference on another product, or another organization's, is
// another sale.
func TestIssueLicenceExternalRefConflict(t *testing.T) {
	e := newLicenceEnv(t)
	e.createProduct(t, e.allKey, productBody("desk-two", "DESKB", nil))
	_, otherKey := e.otherOrg(t, "beta", "beta-app", "BETA")
	first := e.issue(t, e.allKey, issueBody(map[string]any{"external_ref": "order-1"})).Licence
	for _, tt := range []struct {
		name, key, product, ref string
		conflict                bool
	}{
		{"same product, same reference", e.allKey, "desk-app", "order-1", true},
		{"same product, same reference again", e.allKey, "desk-app", "order-1", true},
		{"same product, other case", e.allKey, "desk-app", "ORDER-1", false},
		{"same product, with a space", e.allKey, "desk-app", "order-1 ", false},
		{"another product", e.allKey, "desk-two", "order-1", false},
		{"another organization", otherKey, "beta-app", "order-1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := issueCall(tt.key, issueBody(map[string]any{"product_id": tt.product, "external_ref": tt.ref}))
			if !tt.conflict {
				got := e.issue(t, tt.key, c.body).Licence
				if got.ExternalRef == nil || *got.ExternalRef != tt.ref {
					t.Errorf("external_ref = %v, want %q", got.ExternalRef, tt.ref)
				}
				return
			}
			e.run(t, scenario{call: c, wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict, wantDetails: map[string]any{"licence_id": first.ID}})
		})
	}
	// Revoking does not free the reference: it still names that sale.
	e.change(t, first.ID, "revoke", "refund")
	e.run(t, scenario{
		call:       issueCall(e.allKey, issueBody(map[string]any{"external_ref": "order-1"})),
		wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict, wantDetails: map[string]any{"licence_id": first.ID},
	})
}

// freeOrg is an organization on the free plan (25 active licences) with
// desk-like product tiny-app and a key holding the licence scopes.
func (e *licenceEnv) freeOrg(t *testing.T) (*licentia.Organization, string) {
	t.Helper()
	o := e.createOrg(t, "tiny", licentia.PlanFree)
	key := e.key(t, o.ID, licentia.ScopeProductsWrite, licentia.ScopeLicencesWrite, licentia.ScopeLicencesRead, licentia.ScopeAuditRead)
	e.createProduct(t, key, productBody("tiny-app", "TINY", nil))
	return o, key
}

// TestIssueLicencePlanLimit: the free plan holds 25 active licences. The
// 26th answers 402 with plan, resource, limit and count and writes
// nothing; existing licences keep working. Revoked and lapsed licences
// take no place.
func TestIssueLicencePlanLimit(t *testing.T) {
	e := newLicenceEnv(t)
	tiny, key := e.freeOrg(t)
	var ids []string
	for i := range 25 {
		body := issueBody(map[string]any{"product_id": "tiny-app", "email": fmt.Sprintf("user%d@tiny.example", i)})
		if i == 0 {
			body["expires_at"] = "2026-03-02T10:00:00Z"
		}
		ids = append(ids, e.issue(t, key, body).Licence.ID)
	}
	full := scenario{
		call:       issueCall(key, issueBody(map[string]any{"product_id": "tiny-app", "id": someID})),
		wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached,
		wantDetails: map[string]any{"plan": "free", "resource": "active_licences", "limit": 25.0, "count": 25.0},
	}
	e.run(t, full)
	// 400, 404 and 409 come before 402.
	e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/licences", key: key, body: issueBody(map[string]any{"product_id": "tiny-app", "limit_count": 0}), invalid: true}, wantStatus: http.StatusBadRequest,
		wantCode: licentia.CodeValidationFailed, wantDetails: issues("/limit_count", "must be an integer from 1 to 4294967295")})
	e.run(t, scenario{call: issueCall(key, issueBody(map[string]any{"product_id": "nope-app"})), wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound})
	e.run(t, scenario{call: issueCall(key, issueBody(map[string]any{"product_id": "tiny-app", "id": ids[2]})), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})
	if taken, err := e.store.LicenceIDTaken(t.Context(), someID); err != nil || taken {
		t.Errorf("LicenceIDTaken(%s) = %v, %v after a 402; want nothing written", someID, taken, err)
	}
	if n := len(e.events(t, tiny.ID)); n != 25 {
		t.Errorf("%d events, want the 25 issues only", n)
	}
	e.run(t, scenario{call: call{method: "GET", path: licencePath(ids[3], ""), key: key}, wantStatus: http.StatusOK})

	// A revoked licence frees its place.
	e.run(t, scenario{call: call{method: "POST", path: licencePath(ids[1], "revoke"), key: key, body: map[string]any{"reason": "refund"}}, wantStatus: http.StatusOK})
	e.issue(t, key, issueBody(map[string]any{"product_id": "tiny-app"}))
	e.run(t, full)
	// So does a licence whose expiry passed.
	e.clock.Set(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	e.issue(t, key, issueBody(map[string]any{"product_id": "tiny-app"}))
	e.run(t, full)
}

// TestIssueLicenceRace: 8 issues racing for the last place of a free plan:
// exactly one is issued, the others answer 402.
func TestIssueLicenceRace(t *testing.T) {
	e := newLicenceEnv(t)
	tiny, key := e.freeOrg(t)
	for range 24 {
		e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{})
	}
	answers := e.concurrently(t, 8, func(i int) call {
		return issueCall(key, issueBody(map[string]any{"product_id": "tiny-app", "email": fmt.Sprintf("racer%d@tiny.example", i)}))
	})
	won := 0
	for _, r := range answers {
		switch r.status {
		case http.StatusCreated:
			won++
		case http.StatusPaymentRequired:
		default:
			t.Errorf("status %d, want 201 or 402: %s", r.status, r.body)
		}
	}
	if won != 1 {
		t.Errorf("%d issues won the last place, want exactly 1", won)
	}
	if n := len(e.events(t, tiny.ID)); n != 25 {
		t.Errorf("%d events, want 25", n)
	}
}

// concurrently sends the n calls made by mk at once and returns their
// answers; each exchange is then validated against the document.
func (e *testEnv) concurrently(t *testing.T, n int, mk func(i int) call) []*resp {
	t.Helper()
	calls := make([]call, n)
	reqs := make([]*http.Request, n)
	for i := range n {
		calls[i] = mk(i)
		reqs[i] = e.request(t, calls[i], encodeBody(t, calls[i].body))
	}
	answers := make([]*resp, n)
	errs := make([]error, n)
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-ready
			res, err := e.srv.Client().Do(reqs[i])
			if err != nil {
				errs[i] = err
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			answers[i], errs[i] = &resp{status: res.StatusCode, header: res.Header, body: b}, err
		})
	}
	close(ready)
	wg.Wait()
	for i, r := range answers {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		c := calls[i]
		validateExchange(t, e.request(t, c, encodeBody(t, c.body)), r, false)
		checkConventions(t, c, r)
	}
	return answers
}

// TestIssueLicenceProductUnavailable: a product whose signing key this
// server cannot open (sealed under another master key) answers 503
// product_unavailable on issue and read, after 400, 404 and 409, and
// writes nothing.
func TestIssueLicenceProductUnavailable(t *testing.T) {
	e := newLicenceEnv(t)
	held := e.issue(t, e.allKey, issueBody(map[string]any{"external_ref": "order-1"})).Licence
	other := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: newMasterKey(t)})
	unavailable := licentia.CodeProductUnavailable
	for _, tt := range []scenario{
		{name: "issue", call: issueCall(e.allKey, issueBody(map[string]any{"id": someID})), wantStatus: http.StatusServiceUnavailable, wantCode: unavailable},
		{name: "read", call: call{method: "GET", path: licencePath(held.ID, ""), key: e.allKey}, wantStatus: http.StatusServiceUnavailable, wantCode: unavailable},
		{name: "400 before 503", call: call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: `{"product_id":"desk-app"}`, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/email", "is required")},
		{name: "404 before 503", call: issueCall(e.allKey, issueBody(map[string]any{"product_id": "nope-app"})), wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "409 id before 503", call: issueCall(e.allKey, issueBody(map[string]any{"id": held.ID})), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict},
		{name: "409 external_ref before 503", call: issueCall(e.allKey, issueBody(map[string]any{"external_ref": "order-1"})),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict, wantDetails: map[string]any{"licence_id": held.ID}},
	} {
		t.Run(tt.name, func(t *testing.T) { other.run(t, tt) })
	}
	if taken, err := e.store.LicenceIDTaken(t.Context(), someID); err != nil || taken {
		t.Errorf("LicenceIDTaken(%s) = %v, %v after a 503; want nothing written", someID, taken, err)
	}
	if n := len(e.events(t, e.org.ID)); n != 1 {
		t.Errorf("%d events, want the first issue only", n)
	}
	if a := e.audit(t, held.ID); len(a) != 1 {
		t.Errorf("audit %v, want the issue only", a)
	}
	// The server holding the master key still serves it.
	e.read(t, held.ID)
}
