package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// setUp brings a licence to a starting point through the operations, as
// the operator; each step is "revoke", "expire" or "reinstate".
func (e *licenceEnv) setUp(t *testing.T, id string, steps ...string) {
	t.Helper()
	ops := map[string]func(context.Context, licentia.Actor, string, string, admin.ChangeStatus) (*admin.Change, error){
		"revoke": e.admin.RevokeLicence, "expire": e.admin.ExpireLicence, "reinstate": e.admin.ReinstateLicence,
	}
	for _, s := range steps {
		if _, err := ops[s](t.Context(), licentia.OperatorActor, e.org.ID, id, admin.Reason("set up")); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestTransitions walks every row of the contract's transitions table for
// revoke, expire and reinstate: the answer, the stored licence, the event
// (with the answer's licence as snapshot) and the audit entry; a request
// that changes nothing writes neither.
func TestTransitions(t *testing.T) {
	e := newLicenceEnv(t)
	const trialEnd, soon = 14 * 24 * time.Hour, time.Hour
	for _, tt := range []struct {
		name string
		// expires is how far ahead the licence expires; 0 for perpetual.
		expires time.Duration
		trial   bool
		steps   []string
		action  string
		// lapse moves the clock past the licence's expiry first.
		lapse     bool
		changed   bool
		status    string
		state     string
		wantEvent licentia.EventType
	}{
		{name: "revoke active", action: "revoke", changed: true, status: "revoked", state: "revoked", wantEvent: licentia.EventLicenceRevoked},
		{name: "revoke trial", expires: trialEnd, trial: true, action: "revoke", changed: true, status: "revoked", state: "revoked", wantEvent: licentia.EventLicenceRevoked},
		{name: "revoke lapsed", expires: soon, lapse: true, action: "revoke", changed: true, status: "revoked", state: "revoked", wantEvent: licentia.EventLicenceRevoked},
		{name: "revoke expired", steps: []string{"expire"}, action: "revoke", changed: true, status: "revoked", state: "revoked", wantEvent: licentia.EventLicenceRevoked},
		{name: "revoke revoked", steps: []string{"revoke"}, action: "revoke", status: "revoked", state: "revoked"},
		{name: "expire active", action: "expire", changed: true, status: "expired", state: "expired", wantEvent: licentia.EventLicenceExpired},
		{name: "expire lapsed", expires: soon, lapse: true, action: "expire", changed: true, status: "expired", state: "expired", wantEvent: licentia.EventLicenceExpired},
		{name: "expire revoked", steps: []string{"revoke"}, action: "expire", changed: true, status: "expired", state: "expired", wantEvent: licentia.EventLicenceExpired},
		{name: "expire expired", steps: []string{"expire"}, action: "expire", status: "expired", state: "expired"},
		{name: "reinstate revoked", steps: []string{"revoke"}, action: "reinstate", changed: true, status: "active", state: "active", wantEvent: licentia.EventLicenceReinstated},
		{name: "reinstate expired", steps: []string{"expire"}, action: "reinstate", changed: true, status: "active", state: "active", wantEvent: licentia.EventLicenceReinstated},
		{name: "reinstate revoked trial", expires: trialEnd, trial: true, steps: []string{"revoke"}, action: "reinstate", changed: true, status: "active", state: "trial", wantEvent: licentia.EventLicenceReinstated},
		{name: "reinstate revoked, lapsed since", expires: soon, steps: []string{"revoke"}, lapse: true, action: "reinstate", changed: true, status: "active", state: "expired", wantEvent: licentia.EventLicenceReinstated},
		{name: "reinstate active", action: "reinstate", status: "active", state: "active"},
		{name: "reinstate lapsed", expires: soon, lapse: true, action: "reinstate", status: "active", state: "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := e.clock.Now()
			in := admin.NewLicence{Trial: &tt.trial}
			if tt.expires != 0 {
				in.ExpiresAt = ptr(base.Add(tt.expires))
			}
			l := e.seed(t, in)
			e.clock.Advance(time.Minute)
			e.setUp(t, l.ID, tt.steps...)
			if tt.lapse {
				e.clock.Set(base.Add(tt.expires + time.Minute))
			} else {
				e.clock.Advance(time.Minute)
			}
			now := e.clock.Now()
			before := e.read(t, l.ID).Licence
			auditBefore := e.audit(t, l.ID)
			events := len(e.events(t, e.org.ID))
			reason := "Reason for " + tt.name

			got := e.change(t, l.ID, tt.action, reason)
			if got.Changed != tt.changed {
				t.Errorf("changed = %v, want %v", got.Changed, tt.changed)
			}
			want := before
			if tt.changed {
				want.Status, want.StatusReason, want.StatusChangedAt, want.UpdatedAt = tt.status, &reason, ptr(licentia.FormatTime(now)), licentia.FormatTime(now)
			}
			want.State = tt.state
			if diff := cmp.Diff(want, got.Licence); diff != "" {
				t.Errorf("licence after %s mismatch (-want +got):\n%s", tt.action, diff)
			}
			if diff := cmp.Diff(got.Licence, e.read(t, l.ID).Licence); diff != "" {
				t.Errorf("read after %s mismatch (-answer +read):\n%s", tt.action, diff)
			}

			evs := e.newEvents(t, e.org.ID, events)
			wantAudit := auditBefore
			if tt.changed {
				if len(evs) != 1 {
					t.Fatalf("%d new events, want 1", len(evs))
				}
				checkEvent(t, evs[0], wantEvent{typ: tt.wantEvent, at: now, licence: got.Licence})
				wantAudit = append(wantAudit, auditLine{Action: "licence." + map[string]string{"revoke": "revoked", "expire": "expired", "reinstate": "reinstated"}[tt.action],
					Actor: e.actor, At: licentia.FormatTime(now),
					Data: map[string]any{"licence_id": l.ID, "from": before.Status, "to": tt.status, "reason": reason}})
			} else if len(evs) != 0 {
				t.Errorf("%d new events for a request that changed nothing, want none", len(evs))
			}
			if diff := cmp.Diff(wantAudit, e.audit(t, l.ID)); diff != "" {
				t.Errorf("audit mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLicenceAudit: the audit log, oldest first, with the key's id as
// actor; requests that change nothing add nothing. audit:read is enough to
// read it.
func TestLicenceAudit(t *testing.T) {
	e := newLicenceEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"external_ref": "order-9"})).Licence
	id := issued.ID
	a := e.activate(t, e.org.ID, id, "machine-1")
	steps := []struct{ action, reason string }{{"revoke", "refund"}, {"revoke", "again"}, {"reinstate", "paid"}, {"reinstate", "again"}, {"expire", "ended"}, {"expire", "again"}}
	for _, s := range steps {
		e.clock.Advance(time.Minute)
		e.change(t, id, s.action, s.reason)
	}
	e.clock.Advance(time.Minute)
	e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/activations/" + a.ID + "/deactivate", key: e.allKey}, wantStatus: http.StatusOK})
	e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/activations/" + a.ID + "/deactivate", key: e.allKey}, wantStatus: http.StatusOK})

	want := []auditLine{
		{"licence.issued", e.actor, at(0), issuedData(issued)},
		{"licence.revoked", e.actor, at(time.Minute), map[string]any{"licence_id": id, "from": "active", "to": "revoked", "reason": "refund"}},
		{"licence.reinstated", e.actor, at(3 * time.Minute), map[string]any{"licence_id": id, "from": "revoked", "to": "active", "reason": "paid"}},
		{"licence.expired", e.actor, at(5 * time.Minute), map[string]any{"licence_id": id, "from": "active", "to": "expired", "reason": "ended"}},
		{"activation.deactivated", e.actor, at(7 * time.Minute), map[string]any{"licence_id": id, "activation_id": a.ID, "machine_id": "machine-1"}},
	}
	if diff := cmp.Diff(want, e.audit(t, id)); diff != "" {
		t.Errorf("audit mismatch (-want +got):\n%s", diff)
	}
	reader := e.key(t, e.org.ID, licentia.ScopeAuditRead)
	e.run(t, scenario{call: call{method: "GET", path: licencePath(id, "audit"), key: reader}, wantStatus: http.StatusOK})
	e.run(t, scenario{call: call{method: "GET", path: licencePath(id, "audit"), key: e.key(t, e.org.ID, licentia.ScopeLicencesRead)},
		wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"audit:read"}}})
}

// TestStatusChangeReason: reason is required, 1 to 500 characters, never
// starting with the reserved prefix provider:; a refused request changes
// nothing.
func TestStatusChangeReason(t *testing.T) {
	e := newLicenceEnv(t)
	const lengthRule = "must be 1 to 500 characters"
	for _, action := range []string{"revoke", "expire", "reinstate"} {
		id := e.seed(t, admin.NewLicence{}).ID
		if action == "reinstate" {
			e.setUp(t, id, "revoke")
		}
		for _, tt := range []struct {
			name   string
			body   any
			issues []string
		}{
			{"empty", map[string]any{"reason": ""}, []string{"/reason", lengthRule}},
			{"501 characters", map[string]any{"reason": strings.Repeat("é", 501)}, []string{"/reason", lengthRule}},
			{"provider: prefix", map[string]any{"reason": "provider:stripe refund"}, []string{"/reason", "must not start with the reserved prefix provider:"}},
			{"provider: alone", map[string]any{"reason": "provider:"}, []string{"/reason", "must not start with the reserved prefix provider:"}},
			{"missing", map[string]any{}, []string{"/reason", "is required"}},
			{"no body", nil, []string{"/reason", "is required"}},
			{"null", map[string]any{"reason": nil}, []string{"/reason", "must be a string"}},
			{"a number", map[string]any{"reason": 42}, []string{"/reason", "must be a string"}},
			{"unknown field", map[string]any{"reason": "x", "notify": true}, []string{"/notify", "unknown field"}},
		} {
			t.Run(action+"/"+tt.name, func(t *testing.T) {
				c := call{method: "POST", path: licencePath(id, action), key: e.allKey, body: tt.body, invalid: true}
				e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
				e.documentRefuses(t, c)
			})
		}
		t.Run(action+"/400 before 404", func(t *testing.T) {
			e.run(t, scenario{call: call{method: "POST", path: licencePath(someID, action), key: e.allKey, body: map[string]any{"reason": "provider:x"}, invalid: true},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/reason", "must not start with the reserved prefix provider:")})
		})
		wantAudit := 1 // the issue
		if action == "reinstate" {
			wantAudit = 2 // and the revocation
		}
		if a := e.audit(t, id); len(a) != wantAudit {
			t.Errorf("audit after refused %ss: %v", action, a)
		}
		for _, reason := range []string{"x", strings.Repeat("é", 500), "Provider: not reserved", " provider:"} {
			t.Run(fmt.Sprintf("%s/accepted %.12q", action, reason), func(t *testing.T) {
				e.setUp(t, id, map[string][]string{"revoke": {"reinstate"}, "expire": {"reinstate"}, "reinstate": {"revoke"}}[action]...)
				if got := e.change(t, id, action, reason); !got.Changed || *got.Licence.StatusReason != reason {
					t.Errorf("%s with reason %q: changed %v, status_reason %v", action, reason, got.Changed, got.Licence.StatusReason)
				}
			})
		}
	}
}

// TestStatusChangeAnonymised: revoke, expire and reinstate of an
// anonymised licence answer 409 licence_anonymised whatever its status,
// and change nothing.
func TestStatusChangeAnonymised(t *testing.T) {
	e := newLicenceEnv(t)
	for _, steps := range [][]string{nil, {"revoke"}, {"expire"}} {
		id := e.seed(t, admin.NewLicence{}).ID
		e.setUp(t, id, steps...)
		if _, err := e.admin.AnonymiseLicence(t.Context(), licentia.OperatorActor, e.org.ID, id, admin.Anonymise{Confirm: new(true)}); err != nil {
			t.Fatal(err)
		}
		before := e.read(t, id)
		events := len(e.events(t, e.org.ID))
		for _, action := range []string{"revoke", "expire", "reinstate"} {
			t.Run(fmt.Sprintf("%v/%s", steps, action), func(t *testing.T) {
				e.run(t, scenario{call: call{method: "POST", path: licencePath(id, action), key: e.allKey, body: map[string]any{"reason": "try"}},
					wantStatus: http.StatusConflict, wantCode: licentia.CodeLicenceAnonymised})
			})
		}
		if diff := cmp.Diff(before, e.read(t, id)); diff != "" {
			t.Errorf("refused changes changed the licence (-before +after):\n%s", diff)
		}
		if n := len(e.events(t, e.org.ID)); n != events {
			t.Errorf("%d events, want %d", n, events)
		}
	}
}

// TestReinstatePlanLimit: reinstating counts like an issue when the result
// is derived active or trial: with the free plan full it answers 402 and
// writes nothing. A licence whose expiry has passed takes no place, so it
// is reinstated on a full plan.
func TestReinstatePlanLimit(t *testing.T) {
	e := newLicenceEnv(t)
	tiny, key := e.freeOrg(t)
	soon := start.Add(time.Hour)
	revoked := e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{}).ID
	lapsing := e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{ExpiresAt: &soon}).ID
	for _, id := range []string{revoked, lapsing} {
		if _, err := e.admin.RevokeLicence(t.Context(), licentia.OperatorActor, tiny.ID, id, admin.Reason("set up")); err != nil {
			t.Fatal(err)
		}
	}
	anonymised := e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{}).ID
	if _, err := e.admin.AnonymiseLicence(t.Context(), licentia.OperatorActor, tiny.ID, anonymised, admin.Anonymise{Confirm: new(true)}); err != nil {
		t.Fatal(err)
	}
	for range 25 {
		e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{})
	}
	events := len(e.events(t, tiny.ID))
	e.run(t, scenario{
		call:       call{method: "POST", path: licencePath(revoked, "reinstate"), key: key, body: map[string]any{"reason": "paid"}},
		wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached,
		wantDetails: map[string]any{"plan": "free", "resource": "active_licences", "limit": 25.0, "count": 25.0},
	})
	if l, err := e.store.Licence(t.Context(), tiny.ID, revoked); err != nil || l.Status != licentia.StatusRevoked {
		t.Errorf("licence after a 402 = %+v, %v; want still revoked", l, err)
	}
	// 404 and 409 come before 402.
	e.run(t, scenario{call: call{method: "POST", path: licencePath(someID, "reinstate"), key: key, body: map[string]any{"reason": "paid"}},
		wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound})
	e.run(t, scenario{call: call{method: "POST", path: licencePath(anonymised, "reinstate"), key: key, body: map[string]any{"reason": "paid"}},
		wantStatus: http.StatusConflict, wantCode: licentia.CodeLicenceAnonymised})

	e.clock.Set(soon)
	r := e.run(t, scenario{call: call{method: "POST", path: licencePath(lapsing, "reinstate"), key: key, body: map[string]any{"reason": "paid"}}, wantStatus: http.StatusOK})
	got := decodeStrict[changeView](t, r.body)
	if !got.Changed || got.Licence.Status != "active" || got.Licence.State != "expired" {
		t.Errorf("reinstating a lapsed licence on a full plan: changed %v, status %s, state %s; want true, active, expired", got.Changed, got.Licence.Status, got.Licence.State)
	}
	if n := len(e.events(t, tiny.ID)); n != events+1 {
		t.Errorf("%d events, want %d (the lapsed reinstatement only)", n, events+1)
	}
}

// TestConcurrentRevokes: of two revokes of one licence at once, exactly one
// changes it; one event is written.
func TestConcurrentRevokes(t *testing.T) {
	e := newLicenceEnv(t)
	for range 5 {
		id := e.seed(t, admin.NewLicence{}).ID
		events := len(e.events(t, e.org.ID))
		answers := e.concurrently(t, 2, func(int) call {
			return call{method: "POST", path: licencePath(id, "revoke"), key: e.allKey, body: map[string]any{"reason": "refund"}}
		})
		changed := 0
		for _, r := range answers {
			if r.status != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", r.status, r.body)
			}
			if decodeStrict[changeView](t, r.body).Changed {
				changed++
			}
		}
		if changed != 1 {
			t.Errorf("%d revokes changed the licence, want exactly 1", changed)
		}
		if n := len(e.events(t, e.org.ID)) - events; n != 1 {
			t.Errorf("%d events, want 1", n)
		}
	}
}
