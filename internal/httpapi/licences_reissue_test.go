package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

func reissueCall(key, id string, body any) call {
	return call{method: "POST", path: licencePath(id, "reissue"), key: key, body: body}
}

// reissuedBody is the body of licence.reissued.
type reissuedBody struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Licence     licenceView `json:"licence"`
		Replacement licenceView `json:"replacement"`
	} `json:"data"`
}

// TestReissue: a new licence with a new id takes over everything of the
// old one and its live machines, which keep their ids; the old one is
// revoked, reason "reissued: <reason>", and the two name each other; 201
// answers the new licence and key; events licence.reissued (old snapshot
// and replacement) then licence.revoked, no licence.issued; audit entries
// on both; counts as a recount, the plan unchanged; the old key answers
// 403 licence_revoked, the moved machines' status under the new key finds
// their activation, the new key activates; lookup shows only the new
// licence. On both engines.
func TestReissue(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := newLookupEnv(t, o)
		expires := licentia.FormatTime(e.clock.Now().Add(30 * 24 * time.Hour))
		old := e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "Buyer@Example.com", "limit_kind": "machines",
			"limit_count": 3, "expires_at": expires, "trial": true, "major": 2, "external_ref": "sale-7"},
			licentia.ProviderRefs{OrderID: new("pi_7"), CheckoutID: new("cs_7"), CustomerID: new("cus_7"), OrderNumber: new("1007")})
		m1 := e.takeSeat(t, old.LicenceKey, "machine-1", http.StatusCreated)
		m2 := e.takeSeat(t, old.LicenceKey, "machine-2", http.StatusCreated)
		e.takeSeat(t, old.LicenceKey, "machine-3", http.StatusCreated)
		e.freeSeat(t, old.LicenceKey, "machine-3")
		countsBefore := e.counts(t, "")
		planBefore := e.planUsed(t)
		e.clock.Advance(time.Minute)
		eventsBefore := len(e.events(t, e.org.ID))

		r := e.run(t, scenario{call: reissueCall(e.allKey, old.Licence.ID, map[string]any{"reason": "leaked on a forum"}),
			wantStatus: http.StatusCreated})
		got := decodeStrict[issuedView](t, r.body)
		fresh := got.Licence
		now := licentia.FormatTime(e.clock.Now())
		want := old.Licence
		want.ID, want.IssuedAt, want.CreatedAt, want.UpdatedAt, want.Replaces = fresh.ID, now, now, now, &old.Licence.ID
		want.Provider = providerView{OrderID: new("pi_7"), CheckoutID: new("cs_7"), CustomerID: new("cus_7"), OrderNumber: new("1007")}
		if diff := cmp.Diff(want, fresh); diff != "" {
			t.Errorf("new licence mismatch (-want +got):\n%s", diff)
		}
		if fresh.ID == old.Licence.ID || !uuidRE.MatchString(fresh.ID) || !keyRE.MatchString(got.LicenceKey) || got.LicenceKey == old.LicenceKey {
			t.Errorf("new licence %s, key %s: want a new id and a new key", fresh.ID, got.LicenceKey)
		}

		was := e.read(t, old.Licence.ID)
		wantOld := want
		wantOld.ID, wantOld.IssuedAt, wantOld.CreatedAt, wantOld.Replaces, wantOld.ReplacedBy = old.Licence.ID, old.Licence.IssuedAt,
			old.Licence.CreatedAt, nil, &fresh.ID
		wantOld.Status, wantOld.State, wantOld.StatusReason, wantOld.StatusChangedAt = "revoked", "revoked", new("reissued: leaked on a forum"), &now
		if diff := cmp.Diff(wantOld, was.Licence); diff != "" {
			t.Errorf("old licence mismatch (-want +got):\n%s", diff)
		}
		if len(was.Activations) != 1 || was.Activations[0].MachineID != "machine-3" {
			t.Errorf("old licence's activations = %+v, want only the freed machine-3", was.Activations)
		}
		now2 := e.read(t, fresh.ID)
		var moved []string
		for _, a := range now2.Activations {
			moved = append(moved, a.ID)
		}
		if wantIDs := []string{m1.Activation.ID, m2.Activation.ID}; !slices.Equal(slices.Sorted(slices.Values(moved)), slices.Sorted(slices.Values(wantIDs))) {
			t.Errorf("new licence's activations = %v, want %v with their ids", moved, wantIDs)
		}

		evs := e.events(t, e.org.ID)[eventsBefore:]
		var types []licentia.EventType
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		if diff := cmp.Diff([]licentia.EventType{licentia.EventLicenceReissued, licentia.EventLicenceRevoked}, types); diff != "" {
			t.Fatalf("events mismatch (-want +got):\n%s", diff)
		}
		body := decodeStrict[reissuedBody](t, evs[0].Body)
		if diff := cmp.Diff(wantOld, body.Data.Licence); diff != "" {
			t.Errorf("licence.reissued data.licence mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(fresh, body.Data.Replacement); diff != "" {
			t.Errorf("licence.reissued data.replacement mismatch (-want +got):\n%s", diff)
		}
		if *evs[0].LicenceID != old.Licence.ID || *evs[1].LicenceID != old.Licence.ID || strings.Contains(string(evs[0].Body), got.LicenceKey) {
			t.Errorf("events are about %s and %s, want the old licence, never the key", *evs[0].LicenceID, *evs[1].LicenceID)
		}

		oldAudit, newAudit := e.audit(t, old.Licence.ID), e.audit(t, fresh.ID)
		if n := len(oldAudit); n < 2 || oldAudit[n-2].Action != licentia.AuditLicenceReissued || oldAudit[n-1].Action != licentia.AuditLicenceRevoked {
			t.Errorf("old licence's audit ends %+v, want licence.reissued then licence.revoked", oldAudit)
		}
		if len(newAudit) != 1 || newAudit[0].Action != licentia.AuditLicenceReissued || !cmp.Equal(newAudit[0].Actor, e.actor) ||
			newAudit[0].Data["old_licence_id"] != old.Licence.ID || newAudit[0].Data["machines_moved"] != 2.0 {
			t.Errorf("new licence's audit = %+v, want one licence.reissued by the key, from %s with 2 machines", newAudit, old.Licence.ID)
		}

		after := e.counts(t, "")
		wantCounts := countsBefore.Counts
		wantCounts.All++
		wantCounts.Revoked++
		wantCounts.BySource.Admin++
		wantCounts.Term++
		wantCounts.IssuedSince++
		wantCounts.RevokedSince++
		if diff := cmp.Diff(wantCounts, after.Counts); diff != "" {
			t.Errorf("counts mismatch (-want +got):\n%s", diff)
		}
		if got := e.planUsed(t); got != planBefore {
			t.Errorf("plan's active licences = %d, want %d as before", got, planBefore)
		}

		e.run(t, scenario{call: activateCall(activateBody(old.LicenceKey, "machine-9", nil)), wantStatus: http.StatusForbidden,
			wantCode: licentia.CodeLicenceRevoked})
		v := e.verdict(t, "desk-app", e.askStatus(t, got.LicenceKey, "machine-1"))
		if v.LicenceID != fresh.ID || v.ActivationID == nil || *v.ActivationID != m1.Activation.ID || v.State != "trial" {
			t.Errorf("verdict of machine-1 under the new key = %+v, want its activation %s on %s, trial", v, m1.Activation.ID, fresh.ID)
		}
		e.takeSeat(t, got.LicenceKey, "machine-9", http.StatusCreated)

		r = e.run(t, scenario{call: lookupGet("buyer@example.com", "1007", e.client()), wantStatus: http.StatusOK})
		p := decodeStrict[purchaseView](t, r.body)
		if len(p.Purchase.Licences) != 1 || p.Purchase.Licences[0].ID != fresh.ID || p.Purchase.Licences[0].LicenceKey != got.LicenceKey {
			t.Errorf("lookup after the reissue = %+v, want only the new licence", p.Purchase.Licences)
		}
		e.run(t, scenario{call: lookupGetKey("buyer@example.com", old.LicenceKey, e.client()), wantStatus: http.StatusNotFound,
			wantCode: licentia.CodePurchaseNotFound})
		e.run(t, scenario{call: lookupGetKey("buyer@example.com", got.LicenceKey, e.client()), wantStatus: http.StatusOK})
	})
}

// planUsed is the organization's count of active licences, as the plan
// sees it.
func (e *testEnv) planUsed(t *testing.T) int64 {
	t.Helper()
	us, err := e.admin.PlanUsage(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		if u.Resource == "active_licences" {
			return u.Used
		}
	}
	t.Fatal("no active_licences in the plan's usage")
	return 0
}

// TestReissueRefused: 409 conflict for a revoked, expired, lapsed,
// anonymised or already reissued licence, with nothing changed; 404 for
// another organization's licence and a missing one; 400 for the body and
// the path; 403 without licences:write; 401 without a key.
func TestReissueRefused(t *testing.T) {
	e := newLicenceEnv(t)
	revoked, expired, anonymised := e.seed(t, admin.NewLicence{}), e.seed(t, admin.NewLicence{}), e.seed(t, admin.NewLicence{})
	lapsing := e.seed(t, admin.NewLicence{ExpiresAt: new(e.clock.Now().Add(time.Hour))})
	reissued := e.seed(t, admin.NewLicence{})
	e.setUp(t, revoked.ID, "revoke")
	e.setUp(t, expired.ID, "expire")
	e.run(t, scenario{call: anonymiseCall(e.allKey, anonymised.ID, map[string]any{"confirm": true}), wantStatus: http.StatusOK})
	e.run(t, scenario{call: reissueCall(e.allKey, reissued.ID, map[string]any{"reason": "leaked"}), wantStatus: http.StatusCreated})
	e.clock.Advance(2 * time.Hour)
	other, otherKey := e.otherOrg(t, "globex", "globex-app", "GLBX")
	theirs := e.seedIn(t, other.ID, "globex-app", admin.NewLicence{})
	reader := e.key(t, e.org.ID, licentia.ScopeLicencesRead)
	live := e.seed(t, admin.NewLicence{})
	ok := map[string]any{"reason": "leaked"}

	for _, tt := range []scenario{
		{name: "revoked", call: reissueCall(e.allKey, revoked.ID, ok), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict},
		{name: "expired", call: reissueCall(e.allKey, expired.ID, ok), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict},
		{name: "lapsed", call: reissueCall(e.allKey, lapsing.ID, ok), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict},
		{name: "anonymised", call: reissueCall(e.allKey, anonymised.ID, ok), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict},
		{name: "reissued already", call: reissueCall(e.allKey, reissued.ID, ok), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict},
		{name: "another organization's", call: reissueCall(e.allKey, theirs.ID, ok), wantStatus: http.StatusNotFound,
			wantCode: licentia.CodeLicenceNotFound},
		{name: "missing", call: reissueCall(e.allKey, licentia.NewID(), ok), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound},
		{name: "no reason", call: reissueCall(e.allKey, live.ID, map[string]any{}), wantStatus: http.StatusBadRequest,
			wantCode: licentia.CodeValidationFailed, wantDetails: issues("/reason", "is required")},
		{name: "empty reason", call: reissueCall(e.allKey, live.ID, map[string]any{"reason": ""}), wantStatus: http.StatusBadRequest,
			wantCode: licentia.CodeValidationFailed, wantDetails: issues("/reason", "must be 1 to 500 characters")},
		{name: "reason too long", call: reissueCall(e.allKey, live.ID, map[string]any{"reason": strings.Repeat("é", 501)}),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/reason", "must be 1 to 500 characters")},
		{name: "reserved prefix", call: reissueCall(e.allKey, live.ID, map[string]any{"reason": "provider:stripe:refund"}),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issues("/reason", "must not start with the reserved prefix provider:")},
		{name: "unknown field", call: reissueCall(e.allKey, live.ID, map[string]any{"reason": "x", "email": "a@b.co"}),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/email", "unknown field")},
		{name: "bad id", call: reissueCall(e.allKey, "not-a-uuid", ok), wantStatus: http.StatusBadRequest,
			wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.id", "must be a UUID")},
		{name: "read-only key", call: reissueCall(reader, live.ID, ok), wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
			wantDetails: map[string]any{"missing": []any{"licences:write"}}},
		{name: "no key", call: reissueCall("", live.ID, ok), wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized},
		{name: "their key, our licence", call: reissueCall(otherKey, live.ID, ok), wantStatus: http.StatusNotFound,
			wantCode: licentia.CodeLicenceNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.invalid = tt.wantStatus == http.StatusBadRequest || tt.wantStatus == http.StatusUnauthorized
			id := strings.TrimSuffix(strings.TrimPrefix(tt.call.path, "/v1/admin/licences/"), "/reissue")
			var before licenceState
			if uuidRE.MatchString(id) && tt.wantStatus != http.StatusNotFound {
				before = e.state(t, id)
			}
			e.run(t, tt)
			if before.Read.Licence.ID != "" {
				if diff := cmp.Diff(before, e.state(t, id)); diff != "" {
					t.Errorf("a refused reissue changed the licence (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// TestReissueFullPlan: a reissue on a plan with every place taken answers
// 201, not 402, and leaves the count where it was.
func TestReissueFullPlan(t *testing.T) {
	e := newLicenceEnv(t)
	tiny, key := e.freeOrg(t)
	limit := licentia.DefaultPlans()[licentia.PlanFree].ActiveLicences
	var last *licentia.Licence
	for range limit {
		last = e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{})
	}
	e.run(t, scenario{call: issueCall(key, map[string]any{"product_id": "tiny-app", "email": "a@example.com"}),
		wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached,
		wantDetails: map[string]any{"plan": "free", "limit": float64(limit), "resource": "active_licences", "count": float64(limit)}})
	e.run(t, scenario{call: reissueCall(key, last.ID, map[string]any{"reason": "leaked"}), wantStatus: http.StatusCreated})
	n, err := e.store.PlanLicenceCount(t.Context(), tiny.ID, e.clock.Now())
	if err != nil || n != limit {
		t.Errorf("PlanLicenceCount() = %d, %v, want %d", n, err, limit)
	}
}

// TestReissueIdempotent: the same Idempotency-Key replays the first
// answer, byte for byte, and reissues once.
func TestReissueIdempotent(t *testing.T) {
	e := newLicenceEnv(t)
	l := e.seed(t, admin.NewLicence{})
	body := `{"reason":"leaked"}`
	first := e.raw(t, "POST", licencePath(l.ID, "reissue"), e.allKey, "reissue-1", body)
	again := e.raw(t, "POST", licencePath(l.ID, "reissue"), e.allKey, "reissue-1", body)
	if first.status != http.StatusCreated || again.status != http.StatusCreated || string(first.body) != string(again.body) {
		t.Fatalf("answers %d %s and %d %s, want the same 201 twice", first.status, first.body, again.status, again.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("Idempotent-Replayed = %q, want true", again.header.Get("Idempotent-Replayed"))
	}
	var reissued []string
	for _, ev := range e.events(t, e.org.ID) {
		if ev.Type == licentia.EventLicenceReissued {
			reissued = append(reissued, ev.ID)
		}
	}
	if len(reissued) != 1 {
		t.Errorf("licence.reissued events = %d, want 1", len(reissued))
	}
	var v issuedView
	if err := json.Unmarshal(first.body, &v); err != nil || v.Licence.Replaces == nil || *v.Licence.Replaces != l.ID {
		t.Errorf("answer %s, want the licence replacing %s", first.body, l.ID)
	}
}

// TestReissuedEventSubscribable: an endpoint may subscribe to
// licence.reissued alone; a reissue then queues it that event only, not
// the licence.revoked that follows.
func TestReissuedEventSubscribable(t *testing.T) {
	e := newLicenceEnv(t)
	r := e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/webhooks", key: e.allKey,
		body: map[string]any{"url": "https://hooks.example.com/licentia", "event_types": []string{"licence.reissued"}}},
		wantStatus: http.StatusCreated})
	var added struct {
		Endpoint struct {
			ID string `json:"id"`
		} `json:"webhook_endpoint"`
	}
	if err := json.Unmarshal(r.body, &added); err != nil {
		t.Fatal(err)
	}
	l := e.seed(t, admin.NewLicence{})
	e.run(t, scenario{call: reissueCall(e.allKey, l.ID, map[string]any{"reason": "leaked"}), wantStatus: http.StatusCreated})
	ds, err := e.store.Deliveries(t.Context(), e.org.ID, added.Endpoint.ID, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].EventType != licentia.EventLicenceReissued {
		t.Errorf("deliveries = %+v, want one of licence.reissued", ds)
	}
}
