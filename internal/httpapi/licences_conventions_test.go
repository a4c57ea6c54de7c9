package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestFindLicencesIsolation: another organization's licences are never
// found, by email, q (prefix, id, reference or key) or external_ref, and
// never counted.
func TestFindLicencesIsolation(t *testing.T) {
	e := newLicenceEnv(t)
	other, otherKey := e.otherOrg(t, "beta", "beta-app", "BETA")
	mine := e.issue(t, e.allKey, issueBody(map[string]any{"external_ref": "order-1"})).Licence.ID
	theirs := e.issue(t, otherKey, issueBody(map[string]any{"product_id": "beta-app", "external_ref": "order-1"}))
	e.activate(t, other.ID, theirs.Licence.ID, "bob-laptop")
	for _, query := range []string{
		q("email", "ada@example.com"),
		q("q", "ada"),
		q("q", "order-1"),
		q("q", theirs.Licence.ID),
		q("q", theirs.LicenceKey),
		q("q", strings.ToLower(theirs.LicenceKey)),
		q("external_ref", "order-1", "product_id", "beta-app"),
		q("email", "ada@example.com", "product_id", "beta-app"),
	} {
		t.Run(query, func(t *testing.T) {
			for _, got := range ids(e.find(t, e.allKey, query)) {
				if got != mine {
					t.Errorf("found %s, want only the caller's %s", got, mine)
				}
			}
		})
	}
	c := e.counts(t, "")
	if c.Counts.All != 1 || c.Counts.LiveMachines != 0 || c.Counts.IssuedSince != 1 {
		t.Errorf("counts %+v include another organization's licences", c.Counts)
	}
}

// failingWrites is a store whose transactions fail at one write (audit or
// event), as when the disk goes mid-change.
type failingWrites struct {
	store.Store
	fail string
}

func (s failingWrites) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(failingTx{tx, s.fail}) })
}

type failingTx struct {
	store.Tx
	fail string
}

func (t failingTx) InsertEvent(ctx context.Context, e *licentia.Event) error {
	if t.fail == "InsertEvent" {
		return errDiskGone
	}
	return t.Tx.InsertEvent(ctx, e)
}

func (t failingTx) AppendAudit(ctx context.Context, e *licentia.AuditEntry) error {
	if t.fail == "AppendAudit" {
		return errDiskGone
	}
	return t.Tx.AppendAudit(ctx, e)
}

// licenceState is everything a licence change may write.
type licenceState struct {
	Read   readView
	Audit  []auditLine
	Events []licentia.Event
	Counts countsView
}

func (e *licenceEnv) state(t *testing.T, id string) licenceState {
	t.Helper()
	return licenceState{Read: e.read(t, id), Audit: e.audit(t, id), Events: e.events(t, e.org.ID), Counts: e.counts(t, "")}
}

// TestLicenceWriteFailure: a write failing mid-change (the audit entry or
// the event) answers 500 internal_error without the cause, and leaves no
// partial write: the licence, its machines, its audit log, the events and
// the counts are as before.
func TestLicenceWriteFailure(t *testing.T) {
	for _, fail := range []string{"AppendAudit", "InsertEvent"} {
		t.Run(fail, func(t *testing.T) {
			m := newMasterKey(t)
			e := licenceEnvOf(t, newTestEnvWith(t, envOptions{masterKey: m}))
			broken := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: m,
				wrapStore: func(s store.Store) store.Store { return failingWrites{s, fail} }})
			active := e.issue(t, e.allKey, issueBody(map[string]any{"external_ref": "order-1"})).Licence.ID
			a := e.activate(t, e.org.ID, active, "ada-laptop")
			revoked := e.seed(t, admin.NewLicence{}).ID
			e.setUp(t, revoked, "revoke")
			e.clock.Advance(time.Minute)
			for _, tt := range []struct {
				name, licence string
				call          call
			}{
				{"issue", active, issueCall(e.allKey, issueBody(map[string]any{"id": someID}))},
				{"revoke", active, call{method: "POST", path: licencePath(active, "revoke"), key: e.allKey, body: map[string]any{"reason": "refund"}}},
				{"expire", active, call{method: "POST", path: licencePath(active, "expire"), key: e.allKey, body: map[string]any{"reason": "ended"}}},
				{"reinstate", revoked, call{method: "POST", path: licencePath(revoked, "reinstate"), key: e.allKey, body: map[string]any{"reason": "paid"}}},
				{"anonymise", active, anonymiseCall(e.allKey, active, map[string]any{"confirm": true})},
				{"deactivate", active, call{method: "POST", path: "/v1/admin/activations/" + a.ID + "/deactivate", key: e.allKey}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					before := e.state(t, tt.licence)
					r := broken.run(t, scenario{call: tt.call, wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal, notWant: []string{"disk", "/var/lib"}})
					line := `"request_id":"` + r.header.Get("X-Request-Id") + `"`
					if logs := broken.logs.String(); !strings.Contains(logs, line) || !strings.Contains(logs, errDiskGone.Error()) {
						t.Errorf("no log line with the cause and %s", line)
					}
					if diff := cmp.Diff(before, e.state(t, tt.licence)); diff != "" {
						t.Errorf("a failed %s left a partial write (-before +after):\n%s", tt.name, diff)
					}
				})
			}
			if taken, err := e.store.LicenceIDTaken(t.Context(), someID); err != nil || taken {
				t.Errorf("LicenceIDTaken(%s) = %v, %v after a failed issue", someID, taken, err)
			}
		})
	}
}

// TestDerivedStateBoundary: a licence is expired from the instant of its
// expires_at (at or before now), in answers, finds and counts, with no
// event; a trial ending with its key is expired there too, not trial.
func TestDerivedStateBoundary(t *testing.T) {
	e := newLicenceEnv(t)
	expiry := start.Add(time.Hour)
	term := e.seed(t, admin.NewLicence{ExpiresAt: &expiry}).ID
	trial := e.seed(t, admin.NewLicence{ExpiresAt: &expiry, Trial: ptr(true), Email: ptr("trial@example.com")}).ID
	e.activate(t, e.org.ID, term, "m1")
	events := len(e.events(t, e.org.ID))
	for _, tt := range []struct {
		at                   time.Time
		termState, trialSate string
		active, trial, exp   int64
	}{
		{expiry.Add(-time.Millisecond), "active", "trial", 1, 1, 0},
		{expiry, "expired", "expired", 0, 0, 2},
		{expiry.Add(time.Millisecond), "expired", "expired", 0, 0, 2},
	} {
		t.Run(licentia.FormatTime(tt.at), func(t *testing.T) {
			e.clock.Set(tt.at)
			if got := e.read(t, term).Licence; got.State != tt.termState || got.Status != "active" {
				t.Errorf("term licence: state %s, status %s; want %s, active", got.State, got.Status, tt.termState)
			}
			if got := e.read(t, trial).Licence; got.State != tt.trialSate {
				t.Errorf("trial licence: state %s, want %s", got.State, tt.trialSate)
			}
			if got := ids(e.find(t, e.allKey, q("q", "ada", "state", tt.termState))); !slices.Contains(got, term) {
				t.Errorf("find state=%s = %v, want %s in it", tt.termState, got, term)
			}
			c := e.counts(t, "").Counts
			if c.Active != tt.active || c.Trial != tt.trial || c.Expired != tt.exp || c.LiveMachines != tt.active {
				t.Errorf("counts: active %d, trial %d, expired %d, live_machines %d; want %d, %d, %d, %d",
					c.Active, c.Trial, c.Expired, c.LiveMachines, tt.active, tt.trial, tt.exp, tt.active)
			}
		})
	}
	if n := len(e.events(t, e.org.ID)); n != events {
		t.Errorf("%d events after the expiry passed, want %d (none for it)", n, events)
	}
}

// TestLicenceBodySize: 64 KB is 65,536 bytes on every licence route that
// takes a body, and on the one that takes none; one byte more answers 413
// before the body, the path or the licence is looked at.
func TestLicenceBodySize(t *testing.T) {
	e := newLicenceEnv(t)
	id := e.seed(t, admin.NewLicence{}).ID
	a := e.activate(t, e.org.ID, id, "m1")
	e.run(t, scenario{call: issueCall(e.allKey, paddedBody(`{"product_id":"desk-app","email":"ada@example.com"}`, 65536)), wantStatus: http.StatusCreated})
	e.run(t, scenario{call: call{method: "POST", path: licencePath(id, "revoke"), key: e.allKey, body: paddedBody(`{"reason":"refund"}`, 65536)}, wantStatus: http.StatusOK})
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/v1/admin/licences", `{"product_id":"desk-app","email":"ada@example.com"}`},
		{"POST", licencePath(id, "revoke"), `{"reason":"refund"}`},
		{"POST", licencePath(id, "expire"), `{"reason":"ended"}`},
		{"POST", licencePath(id, "reinstate"), `{"reason":"paid"}`},
		{"POST", licencePath(id, "anonymise"), `{"confirm":true}`},
		{"POST", licencePath("not-a-uuid", "anonymise"), `{"confirm":true}`},
		{"POST", "/v1/admin/activations/" + a.ID + "/deactivate", `{}`},
		{"GET", licencePath(id, ""), `{}`},
		{"GET", "/v1/admin/licences?q=ada", `{}`},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			e.run(t, scenario{call: call{method: tt.method, path: tt.path, key: e.allKey, body: paddedBody(tt.body, 65537), invalid: true},
				wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge})
		})
	}
	got := e.read(t, id)
	if got.Licence.Status != "revoked" || got.Licence.AnonymisedAt != nil || got.Activations[0].DeactivatedAt != nil {
		t.Errorf("refused requests changed the licence: %+v", got)
	}
	if n := len(e.events(t, e.org.ID)); n != 3 {
		t.Errorf("%d events, want 3 (two issues and a revocation)", n)
	}
}

// TestLicenceRoutesRateLimit: the licence routes are counted per key and
// route like every administration route; the 301st request answers 429
// with Retry-After-admin, whatever it would have answered.
func TestLicenceRoutesRateLimit(t *testing.T) {
	e := newLicenceEnv(t)
	for _, c := range []call{
		issueCall(e.allKey, issueBody(map[string]any{"product_id": "nope-app"})),
		{method: "POST", path: "/v1/admin/activations/" + someID + "/deactivate", key: e.allKey},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			e.repeat(t, 300, c, http.StatusNotFound)
			wantRateLimited(t, e.testEnv, c, "60")
		})
	}
	e.run(t, scenario{call: call{method: "GET", path: licencePath(someID, ""), key: e.allKey}, wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound})
}

// TestLicenceWrongMethod: no route deletes or replaces a licence (a patch
// changes it in place); known licence paths answer 405 with Allow for
// other methods.
func TestLicenceWrongMethod(t *testing.T) {
	e := newLicenceEnv(t)
	for _, tt := range []struct{ method, path, allow string }{
		{"DELETE", licencePath(someID, ""), "GET, HEAD, PATCH"},
		{"PUT", licencePath(someID, ""), "GET, HEAD, PATCH"},
		{"PUT", "/v1/admin/licences", "GET, HEAD, POST"},
		// counts is also an {id} to the patch route, which refuses it as
		// not a UUID.
		{"POST", "/v1/admin/licences/counts", "GET, HEAD, PATCH"},
		{"GET", licencePath(someID, "revoke"), "POST"},
		{"GET", licencePath(someID, "anonymise"), "POST"},
		{"DELETE", "/v1/admin/activations/" + someID + "/deactivate", "POST"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.run(t, scenario{call: call{method: tt.method, path: tt.path, key: e.allKey, invalid: true}, wantStatus: http.StatusMethodNotAllowed, wantCode: licentia.CodeMethodNotAllowed})
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
	e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/activations/" + someID, key: e.allKey, invalid: true}, wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
}
