package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// patchCall is a PATCH of licence id with body.
func patchCall(key, id string, body any) call {
	return call{method: "PATCH", path: licencePath(id, ""), key: key, body: body}
}

// patch changes a licence through the API and wants 200.
func (e *licenceEnv) patch(t *testing.T, id string, body any) changeView {
	t.Helper()
	r := e.run(t, scenario{call: patchCall(e.allKey, id, body), wantStatus: http.StatusOK})
	return decodeStrict[changeView](t, r.body)
}

// TestPatchLicence: each field alone and all together change the licence
// in place, with updated_at, one audit entry naming the new values and one
// licence.updated event whose snapshot is the answer's licence; giving the
// stored values again changes nothing and writes nothing.
func TestPatchLicence(t *testing.T) {
	e := newLicenceEnv(t)
	later := start.Add(90 * 24 * time.Hour)
	for _, tt := range []struct {
		name string
		body map[string]any
		edit func(l *licenceView)
		data map[string]any
	}{
		{"limit_kind", map[string]any{"limit_kind": "machines"},
			func(l *licenceView) { l.LimitKind = "machines" }, map[string]any{"limit_kind": "machines"}},
		{"limit_count", map[string]any{"limit_count": 5},
			func(l *licenceView) { l.LimitCount = 5 }, map[string]any{"limit_count": 5.0}},
		{"expires_at", map[string]any{"expires_at": "2026-05-31T11:00:00.123456+02:00"},
			func(l *licenceView) { l.ExpiresAt = ptr("2026-05-31T09:00:00.123Z") }, map[string]any{"expires_at": "2026-05-31T09:00:00.123Z"}},
		{"major", map[string]any{"major": 4},
			func(l *licenceView) { l.Major = 4 }, map[string]any{"major": 4.0}},
		{"all together", map[string]any{"limit_kind": "machines", "limit_count": 3, "expires_at": licentia.FormatTime(later), "major": 65535},
			func(l *licenceView) {
				l.LimitKind, l.LimitCount, l.ExpiresAt, l.Major = "machines", 3, ptr(licentia.FormatTime(later)), 65535
			},
			map[string]any{"limit_kind": "machines", "limit_count": 3.0, "expires_at": licentia.FormatTime(later), "major": 65535.0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := e.seed(t, admin.NewLicence{}).ID
			before := e.read(t, id)
			events, audit := len(e.events(t, e.org.ID)), len(e.audit(t, id))
			e.clock.Advance(time.Minute)
			got := e.patch(t, id, tt.body)
			want := before.Licence
			tt.edit(&want)
			want.UpdatedAt = licentia.FormatTime(e.clock.Now())
			if diff := cmp.Diff(changeView{Licence: want, Changed: true}, got); diff != "" {
				t.Errorf("PATCH answer mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, e.read(t, id).Licence); diff != "" {
				t.Errorf("read after PATCH mismatch (-want +got):\n%s", diff)
			}
			if before.LicenceKey == nil || *e.read(t, id).LicenceKey != *before.LicenceKey {
				t.Errorf("the licence key changed with a patch")
			}
			tt.data["licence_id"] = id
			lines := e.audit(t, id)
			if len(lines) != audit+1 {
				t.Fatalf("%d audit entries, want %d", len(lines), audit+1)
			}
			wantLine := auditLine{Action: "licence.updated", Actor: e.actor, At: licentia.FormatTime(e.clock.Now()), Data: tt.data}
			if diff := cmp.Diff(wantLine, lines[audit]); diff != "" {
				t.Errorf("audit entry mismatch (-want +got):\n%s", diff)
			}
			evs := e.newEvents(t, e.org.ID, events)
			if len(evs) != 1 {
				t.Fatalf("%d events, want 1", len(evs))
			}
			checkEvent(t, evs[0], wantEvent{typ: licentia.EventLicenceUpdated, at: e.clock.Now(), licence: want, key: *before.LicenceKey})

			// The same values again change nothing and write nothing.
			e.clock.Advance(time.Minute)
			again := e.patch(t, id, tt.body)
			if again.Changed || again.Licence.UpdatedAt != want.UpdatedAt {
				t.Errorf("PATCH with the stored values: changed %v, updated_at %s; want false, %s", again.Changed, again.Licence.UpdatedAt, want.UpdatedAt)
			}
			if n := len(e.events(t, e.org.ID)); n != events+1 {
				t.Errorf("%d events after an empty change, want %d", n, events+1)
			}
			if n := len(e.audit(t, id)); n != audit+1 {
				t.Errorf("%d audit entries after an empty change, want %d", n, audit+1)
			}
		})
	}
}

// TestPatchLicenceExpiry: expires_at null makes a licence perpetual; one in
// the past is taken and the licence is derived expired at once, with
// licence.updated and no licence.expired; a later one makes it active
// again. Counts follow each change.
func TestPatchLicenceExpiry(t *testing.T) {
	e := newLicenceEnv(t)
	soon := start.Add(time.Hour)
	id := e.seed(t, admin.NewLicence{ExpiresAt: &soon}).ID
	e.activate(t, e.org.ID, id, "m1")
	for _, tt := range []struct {
		name      string
		expiresAt any
		wantAt    *string
		state     string
		// active, expired, perpetual, term, live_machines
		counts [5]int64
	}{
		{"null", nil, nil, "active", [5]int64{1, 0, 1, 0, 1}},
		{"in the past", at(-time.Hour), ptr(at(-time.Hour)), "expired", [5]int64{0, 1, 0, 1, 0}},
		{"now", at(0), ptr(at(0)), "expired", [5]int64{0, 1, 0, 1, 0}},
		{"in the future", at(24 * time.Hour), ptr(at(24 * time.Hour)), "active", [5]int64{1, 0, 0, 1, 1}},
		{"null again", nil, nil, "active", [5]int64{1, 0, 1, 0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events := len(e.events(t, e.org.ID))
			got := e.patch(t, id, map[string]any{"expires_at": tt.expiresAt})
			if !got.Changed || !cmp.Equal(got.Licence.ExpiresAt, tt.wantAt) || got.Licence.State != tt.state || got.Licence.Status != "active" {
				t.Errorf("PATCH expires_at %v: changed %v, expires_at %v, state %s, status %s; want true, %v, %s, active",
					tt.expiresAt, got.Changed, orNil(got.Licence.ExpiresAt), got.Licence.State, got.Licence.Status, orNil(tt.wantAt), tt.state)
			}
			evs := e.newEvents(t, e.org.ID, events)
			if len(evs) != 1 || evs[0].Type != licentia.EventLicenceUpdated {
				t.Errorf("events %v, want one licence.updated", evs)
			}
			c := e.counts(t, "").Counts
			if gotCounts := [5]int64{c.Active, c.Expired, c.Perpetual, c.Term, c.LiveMachines}; gotCounts != tt.counts {
				t.Errorf("counts (active, expired, perpetual, term, live_machines) = %v, want %v", gotCounts, tt.counts)
			}
		})
	}
	// The sweeper moving the lapsed licence on keeps the counts.
	e.patch(t, id, map[string]any{"expires_at": at(30 * time.Minute)})
	e.clock.Set(start.Add(time.Hour))
	if _, err := e.admin.SweepLicences(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.patch(t, id, map[string]any{"expires_at": at(2 * time.Hour)})
	if c := e.counts(t, "").Counts; c.Active != 1 || c.Expired != 0 || c.Term != 1 || c.LiveMachines != 1 {
		t.Errorf("counts after a sweep and a later expiry: %+v; want 1 active, 1 term, 1 live machine", c)
	}
}

// orNil is *p, or nil.
func orNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestPatchTrial: on a trial a new expires_at moves trial_ends_at with it,
// into the past too; null answers 409 conflict and changes nothing.
func TestPatchTrial(t *testing.T) {
	e := newLicenceEnv(t)
	end := start.Add(14 * 24 * time.Hour)
	id := e.seed(t, admin.NewLicence{ExpiresAt: &end, Trial: ptr(true)}).ID

	later := at(30 * 24 * time.Hour)
	got := e.patch(t, id, map[string]any{"expires_at": later, "limit_count": 2})
	if orNil(got.Licence.ExpiresAt) != later || orNil(got.Licence.TrialEndsAt) != later || got.Licence.State != "trial" || got.Licence.LimitCount != 2 {
		t.Errorf("extended trial: expires_at %v, trial_ends_at %v, state %s, limit_count %d; want %s, %s, trial, 2",
			orNil(got.Licence.ExpiresAt), orNil(got.Licence.TrialEndsAt), got.Licence.State, got.Licence.LimitCount, later, later)
	}
	lines := e.audit(t, id)
	if data := lines[len(lines)-1].Data; data["trial_ends_at"] != later || data["expires_at"] != later {
		t.Errorf("audit data %v, want expires_at and trial_ends_at %s", data, later)
	}

	before := e.state(t, id)
	e.run(t, scenario{call: patchCall(e.allKey, id, map[string]any{"expires_at": nil}),
		wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})
	e.run(t, scenario{call: patchCall(e.allKey, id, map[string]any{"expires_at": nil, "limit_count": 9}),
		wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})
	if diff := cmp.Diff(before, e.state(t, id)); diff != "" {
		t.Errorf("a refused null changed the trial (-before +after):\n%s", diff)
	}

	past := at(-time.Minute)
	got = e.patch(t, id, map[string]any{"expires_at": past})
	if orNil(got.Licence.TrialEndsAt) != past || got.Licence.State != "expired" {
		t.Errorf("trial ended in the past: trial_ends_at %v, state %s; want %s, expired", orNil(got.Licence.TrialEndsAt), got.Licence.State, past)
	}
	if c := e.counts(t, "").Counts; c.Trial != 0 || c.Expired != 1 {
		t.Errorf("counts after ending the trial: trial %d, expired %d; want 0, 1", c.Trial, c.Expired)
	}
}

// TestPatchLicenceValidation: every problem of a body is reported at once,
// nothing is written, and the path id is checked with the body.
func TestPatchLicenceValidation(t *testing.T) {
	e := newLicenceEnv(t)
	id := e.seed(t, admin.NewLicence{}).ID
	before := e.state(t, id)
	issue := func(path, msg string) map[string]any { return map[string]any{"path": path, "message": msg} }
	issues := func(is ...map[string]any) map[string]any {
		out := make([]any, len(is))
		for i := range is {
			out[i] = is[i]
		}
		return map[string]any{"issues": out}
	}
	for _, tt := range []struct {
		name string
		path string
		body any
		want map[string]any
	}{
		{"empty", id, `{}`, issues(issue("", "give at least one of limit_kind, limit_count, expires_at, major, features, transfers_per_30_days, max_concurrent"))},
		{"unknown field", id, `{"limit_count":2,"email":"eve@example.com"}`, issues(issue("/email", "unknown field"))},
		{"limit_kind", id, `{"limit_kind":"cores"}`, issues(issue("/limit_kind", "must be seats or machines"))},
		{"limit_kind null", id, `{"limit_kind":null}`, issues(issue("/limit_kind", "must be a string"))},
		{"limit_count zero", id, `{"limit_count":0}`, issues(issue("/limit_count", "must be an integer from 1 to 4294967295"))},
		{"limit_count too big", id, `{"limit_count":4294967296}`, issues(issue("/limit_count", "must be an integer from 1 to 4294967295"))},
		{"limit_count fraction", id, `{"limit_count":1.5}`, issues(issue("/limit_count", "must be an integer"))},
		{"limit_count string", id, `{"limit_count":"2"}`, issues(issue("/limit_count", "must be an integer"))},
		{"major", id, `{"major":65536}`, issues(issue("/major", "must be an integer from 1 to 65535"))},
		{"major null", id, `{"major":null}`, issues(issue("/major", "must be an integer"))},
		{"expires_at without offset", id, `{"expires_at":"2027-01-01T00:00:00"}`, issues(issue("/expires_at", "must be an RFC 3339 time with an offset"))},
		{"expires_at number", id, `{"expires_at":1700000000}`, issues(issue("/expires_at", "must be a string"))},
		{"every field wrong", "not-a-uuid", `{"limit_kind":"x","limit_count":0,"expires_at":"soon","major":0}`, issues(
			issue("path.id", "must be a UUID"),
			issue("/limit_count", "must be an integer from 1 to 4294967295"), issue("/expires_at", "must be an RFC 3339 time with an offset"),
			issue("/major", "must be an integer from 1 to 65535"), issue("/limit_kind", "must be seats or machines"))},
		{"not an object", id, `[{"limit_count":2}]`, issues(issue("", "the body must be a JSON object"),
			issue("", "give at least one of limit_kind, limit_count, expires_at, major, features, transfers_per_30_days, max_concurrent"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{call: call{method: "PATCH", path: licencePath(tt.path, ""), key: e.allKey, body: tt.body, invalid: true},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: tt.want})
		})
	}
	// Bodies the strict reading refuses, whatever their wording.
	for _, body := range []string{`{"limit_count":2,"limit_count":3}`, `{"limit_count":2} {}`, `{"limit_count":2`, `null`, strings.Repeat(`[`, 200)} {
		r := e.send(t, call{method: "PATCH", path: licencePath(id, ""), key: e.allKey, body: body, invalid: true})
		if r.status != http.StatusBadRequest || r.apiError(t).Code != licentia.CodeValidationFailed {
			t.Errorf("PATCH %s: status %d, body %s; want 400 validation_failed", body, r.status, r.body)
		}
	}
	if diff := cmp.Diff(before, e.state(t, id)); diff != "" {
		t.Errorf("refused patches changed the licence (-before +after):\n%s", diff)
	}
	e.run(t, scenario{call: call{method: "PATCH", path: licencePath(id, ""), key: e.allKey, body: paddedBody(`{"limit_count":2}`, 65536)}, wantStatus: http.StatusOK})
	e.run(t, scenario{call: call{method: "PATCH", path: licencePath(id, ""), key: e.allKey, body: paddedBody(`{"limit_count":3}`, 65537), invalid: true},
		wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge})
	if got := e.read(t, id).Licence.LimitCount; got != 2 {
		t.Errorf("limit_count = %d after a 413, want 2", got)
	}
}

// TestPatchLicenceRefusals: 401, 403 scope, 404 for an unknown licence and
// another organization's alike (which stays as it was), 409
// licence_anonymised; 404 and 409 come before 402.
func TestPatchLicenceRefusals(t *testing.T) {
	e := newLicenceEnv(t)
	other, otherKey := e.otherOrg(t, "beta", "beta-app", "BETA")
	theirs := e.issue(t, otherKey, issueBody(map[string]any{"product_id": "beta-app"})).Licence
	mine := e.seed(t, admin.NewLicence{}).ID
	anonymised := e.seed(t, admin.NewLicence{}).ID
	if _, err := e.admin.AnonymiseLicence(t.Context(), licentia.OperatorActor, e.org.ID, anonymised, admin.Anonymise{Confirm: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	readOnly := e.key(t, e.org.ID, scopesBut(licentia.ScopeLicencesWrite)...)
	body := map[string]any{"limit_count": 7}
	for _, tt := range []scenario{
		{name: "no key", call: call{method: "PATCH", path: licencePath(mine, ""), body: body, invalid: true}, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized},
		{name: "no scope", call: patchCall(readOnly, mine, body), wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
			wantDetails: map[string]any{"missing": []any{"licences:write"}}},
		{name: "unknown", call: patchCall(e.allKey, someID, body), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound},
		{name: "another organization's", call: patchCall(e.allKey, theirs.ID, body), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound},
		{name: "another organization's, expiry", call: patchCall(e.allKey, theirs.ID, map[string]any{"expires_at": nil}), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound},
		{name: "anonymised", call: patchCall(e.allKey, anonymised, body), wantStatus: http.StatusConflict, wantCode: licentia.CodeLicenceAnonymised},
		{name: "anonymised, expiry", call: patchCall(e.allKey, anonymised, map[string]any{"expires_at": at(time.Hour)}), wantStatus: http.StatusConflict, wantCode: licentia.CodeLicenceAnonymised},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
	if got := e.read(t, mine).Licence.LimitCount; got != 1 {
		t.Errorf("limit_count = %d after refusals, want 1", got)
	}
	l, err := e.store.Licence(t.Context(), other.ID, theirs.ID)
	if err != nil || l.LimitCount != 1 || l.ExpiresAt != nil || !l.UpdatedAt.Equal(start) {
		t.Errorf("another organization's licence after refusals = %+v, %v; want unchanged", l, err)
	}
}

// TestPatchLicencePlanLimit: a change that makes a lapsed licence count
// again on a full plan answers 402 and writes nothing; one that keeps it
// lapsed, or changes only its limit, passes; so does any change of a
// licence that already counts.
func TestPatchLicencePlanLimit(t *testing.T) {
	e := newLicenceEnv(t)
	tiny, key := e.freeOrg(t)
	soon := start.Add(time.Hour)
	lapsed := e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{ExpiresAt: &soon}).ID
	revoked := e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{ExpiresAt: &soon}).ID
	if _, err := e.admin.RevokeLicence(t.Context(), licentia.OperatorActor, tiny.ID, revoked, admin.Reason("set up")); err != nil {
		t.Fatal(err)
	}
	for range 23 {
		e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{})
	}
	e.clock.Set(soon)
	counting := e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{}).ID
	e.seedIn(t, tiny.ID, "tiny-app", admin.NewLicence{})
	events := len(e.events(t, tiny.ID))
	full := map[string]any{"plan": "free", "resource": "active_licences", "limit": 25.0, "count": 25.0}
	for _, body := range []map[string]any{
		{"expires_at": nil},
		{"expires_at": licentia.FormatTime(soon.Add(time.Hour)), "limit_count": 3},
	} {
		e.run(t, scenario{call: patchCall(key, lapsed, body), wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached, wantDetails: full})
	}
	if l, err := e.store.Licence(t.Context(), tiny.ID, lapsed); err != nil || !l.ExpiresAt.Equal(soon) || l.LimitCount != 1 {
		t.Errorf("licence after a 402 = %+v, %v; want as it was", l, err)
	}
	// 404 comes before 402.
	e.run(t, scenario{call: patchCall(key, someID, map[string]any{"expires_at": nil}), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound})
	for _, tt := range []struct {
		name, id, state string
		body            map[string]any
	}{
		{"lapsed, limit only", lapsed, "expired", map[string]any{"limit_count": 4}},
		{"lapsed, still in the past", lapsed, "expired", map[string]any{"expires_at": licentia.FormatTime(soon.Add(-time.Hour))}},
		{"revoked, made perpetual", revoked, "revoked", map[string]any{"expires_at": nil}},
		{"counting, given an expiry", counting, "active", map[string]any{"expires_at": licentia.FormatTime(soon.Add(time.Hour))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeStrict[changeView](t, e.run(t, scenario{call: patchCall(key, tt.id, tt.body), wantStatus: http.StatusOK}).body)
			if !got.Changed || got.Licence.State != tt.state {
				t.Errorf("changed %v, state %s; want true, %s", got.Changed, got.Licence.State, tt.state)
			}
		})
	}
	if n := len(e.events(t, tiny.ID)); n != events+4 {
		t.Errorf("%d events, want %d", n, events+4)
	}
	// With a place freed, the lapsed licence counts again.
	if _, err := e.admin.RevokeLicence(t.Context(), licentia.OperatorActor, tiny.ID, counting, admin.Reason("refund")); err != nil {
		t.Fatal(err)
	}
	got := decodeStrict[changeView](t, e.run(t, scenario{call: patchCall(key, lapsed, map[string]any{"expires_at": nil}), wantStatus: http.StatusOK}).body)
	if got.Licence.State != "active" {
		t.Errorf("lapsed licence made perpetual with a place free: state %s, want active", got.Licence.State)
	}
	e.run(t, scenario{call: patchCall(key, revoked, map[string]any{"expires_at": licentia.FormatTime(soon.Add(time.Hour))}), wantStatus: http.StatusOK})
	if l, err := e.store.Licence(t.Context(), tiny.ID, revoked); err != nil || l.Status != licentia.StatusRevoked {
		t.Errorf("revoked licence after a new expiry = %+v, %v; want still revoked", l, err)
	}
}

// TestPatchLowerLimit: lowering a limit below the live machines evicts
// nobody: they stay live and counted and still check in; a new machine is
// refused with seat_limit_reached until enough leave; raising the limit
// lets it in at once.
func TestPatchLowerLimit(t *testing.T) {
	e := newActEnv(t)
	l := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 3}))
	id, key := l.Licence.ID, l.LicenceKey
	for _, m := range []string{"m1", "m2", "m3"} {
		e.takeSeat(t, key, m, http.StatusCreated)
	}
	got := e.patch(t, id, map[string]any{"limit_count": 1})
	if !got.Changed || got.Licence.LimitCount != 1 {
		t.Fatalf("PATCH limit_count 1: %+v", got)
	}
	read := e.read(t, id)
	for _, a := range read.Activations {
		if a.DeactivatedAt != nil {
			t.Errorf("activation %s was freed by lowering the limit", a.MachineID)
		}
	}
	if len(read.Activations) != 3 {
		t.Errorf("%d activations, want 3", len(read.Activations))
	}
	if c := e.counts(t, "").Counts; c.LiveMachines != 3 {
		t.Errorf("live_machines = %d, want 3", c.LiveMachines)
	}
	for _, m := range []string{"m1", "m2", "m3"} {
		if e.askStatus(t, key, m) == "" {
			t.Errorf("%s got no verdict after the limit was lowered", m)
		}
	}
	e.takeSeat(t, key, "m1", http.StatusOK)
	e.run(t, scenario{call: activateCall(activateBody(key, "m4", nil)), wantStatus: http.StatusConflict, wantCode: licentia.CodeSeatLimitReached,
		wantDetails: map[string]any{"limit": 1.0, "limit_kind": "machines", "active": 3.0}})
	for _, ev := range e.events(t, e.org.ID) {
		if ev.Type == licentia.EventActivationDeactivated {
			t.Errorf("event %s written by lowering a limit", ev.Type)
		}
	}
	e.patch(t, id, map[string]any{"limit_count": 4})
	e.takeSeat(t, key, "m4", http.StatusCreated)
}

// TestPatchLicenceDelivered: licence.updated is an event type endpoints may
// subscribe to; it reaches the endpoint that names it, signed, and no
// endpoint that names only the contract's types.
func TestPatchLicenceDelivered(t *testing.T) {
	e := newHookEnv(t)
	updated := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/updated"), licentia.EventLicenceUpdated))
	others := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/others"), licentia.EventLicenceIssued, licentia.EventLicenceRevoked,
		licentia.EventLicenceExpired, licentia.EventLicenceReinstated))
	l := e.issue(t, e.allKey, issueBody(nil))
	e.clock.Advance(time.Minute)
	got := e.patch(t, l.Licence.ID, map[string]any{"limit_count": 4})
	ev := e.lastEvent(t, e.org.ID)
	e.clock.Advance(time.Second)
	if n := e.runWorker(t); n != 2 {
		t.Fatalf("RunOnce() attempted %d, want 2 (the issue to /others, the change to /updated)", n)
	}
	reqs := e.hooks.requestsTo("/updated")
	if len(reqs) != 1 {
		t.Fatalf("/updated received %d requests, want 1", len(reqs))
	}
	if !verifies(t, updated.Secret, reqs[0]) {
		t.Errorf("the licence.updated delivery does not verify with the endpoint's secret")
	}
	body := decodeStrict[eventBody](t, reqs[0].Body)
	if body.Type != "licence.updated" || !cmp.Equal(body.Data.Licence, got.Licence) || string(reqs[0].Body) != string(ev.Body) {
		t.Errorf("delivered body %s, want the event's with the answer's licence", reqs[0].Body)
	}
	for _, r := range e.hooks.requestsTo("/others") {
		if strings.Contains(string(r.Body), "licence.updated") {
			t.Errorf("/others, not subscribed, received %s", r.Body)
		}
	}
	if n := len(e.listDeliveries(t, e.allKey, others.Endpoint.ID, "").Deliveries); n != 1 {
		t.Errorf("/others has %d deliveries, want 1 (the issue)", n)
	}
	// Unknown types are still refused when subscribing.
	e.run(t, scenario{call: call{method: "POST", path: hooksPath(""), key: e.allKey,
		body: map[string]any{"url": hookURL("/x"), "event_types": []string{"licence.changed"}}, invalid: true},
		wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		wantDetails: map[string]any{"issues": []any{map[string]any{"path": "/event_types/0", "message": "must be one of the event types"}}}})
}
