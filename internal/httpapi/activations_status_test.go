package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
)

// TestActivationStatusVerdicts: the status route answers 200 with a signed
// verdict for every state (active, trial, revoked, expired, no live seat
// on this machine), naming the machine, the licence, its major and limit,
// its live activation (or null), valid for LICENTIA_VERDICT_VALIDITY and
// signed by the product's current key; a trial's active verdict is never
// valid more than one day past the trial's end. A status check writes no
// event.
func TestActivationStatusVerdicts(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	_, fp := e.shipped(t, "desk-app")
	const day = 24 * time.Hour
	for _, tt := range []struct {
		name string
		// expires is how far ahead the licence expires; 0 for perpetual.
		expires time.Duration
		trial   bool
		edits   map[string]any
		// seat: "held" activates the machine first, "freed" also frees it.
		seat  string
		steps []string
		// lapse moves the clock past expires_at.
		lapse bool
		state string
		// capped: valid until one day past the trial's end, which comes
		// before now + verdictValidity.
		capped bool
	}{
		{name: "active", seat: "held", state: "active"},
		{name: "active, machines licence", edits: map[string]any{"limit_kind": "machines", "limit_count": 4, "major": 2}, seat: "held", state: "active"},
		{name: "active, never activated here", state: "active"},
		{name: "active, seat freed", seat: "freed", state: "active"},
		{name: "term", expires: 30 * day, seat: "held", state: "active"},
		{name: "trial far from its end", expires: 30 * day, trial: true, seat: "held", state: "trial"},
		{name: "trial ending in two days", expires: 2 * day, trial: true, seat: "held", state: "trial", capped: true},
		{name: "trial ending in an hour", expires: time.Hour, trial: true, seat: "held", state: "trial", capped: true},
		{name: "trial, not activated here", expires: 2 * day, trial: true, state: "trial", capped: true},
		{name: "revoked", seat: "held", steps: []string{"revoke"}, state: "revoked"},
		{name: "revoked trial", expires: 2 * day, trial: true, seat: "held", steps: []string{"revoke"}, state: "revoked"},
		{name: "expired on purpose", seat: "held", steps: []string{"expire"}, state: "expired"},
		{name: "expires_at passed", expires: time.Hour, seat: "held", lapse: true, state: "expired"},
		{name: "trial ended", expires: time.Hour, trial: true, seat: "held", lapse: true, state: "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := e.later(time.Minute)
			edits := map[string]any{"trial": tt.trial}
			for k, v := range tt.edits {
				edits[k] = v
			}
			if tt.expires != 0 {
				edits["expires_at"] = licentia.FormatTime(base.Add(tt.expires))
			}
			issued := e.issue(t, e.allKey, issueBody(edits))
			if tt.seat != "" {
				e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
			}
			if tt.seat == "freed" {
				e.freeSeat(t, issued.LicenceKey, "ada-laptop")
			}
			e.setUp(t, issued.Licence.ID, tt.steps...)
			if tt.lapse {
				e.clock.Set(base.Add(tt.expires))
			}
			now := e.later(time.Second)
			lic := e.read(t, issued.Licence.ID)
			var live *string
			if len(lic.Activations) > 0 && lic.Activations[0].DeactivatedAt == nil {
				live = &lic.Activations[0].ID
			}
			if (live != nil) != (tt.seat == "held") {
				t.Fatalf("live activation = %v, want one only when the seat is held", live)
			}
			events := len(e.events(t, e.org.ID))

			want := wantVerdict(lic.Licence, "ada-laptop", live, tt.state, now, fp)
			if tt.capped {
				want.ValidUntil = licentia.FormatTime(base.Add(tt.expires + day))
			}
			e.checkVerdict(t, e.askStatus(t, issued.LicenceKey, "ada-laptop"), want)
			if n := len(e.events(t, e.org.ID)); n != events {
				t.Errorf("%d events after a status check, want %d", n, events)
			}
		})
	}
}

// TestStatusRevocationAtOnce: a revocation takes effect at once on the
// status route, with no time passing; a reinstatement too.
func TestStatusRevocationAtOnce(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil))
	e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
	for _, step := range []struct{ action, state string }{{"", "active"}, {"revoke", "revoked"}, {"reinstate", "active"}, {"expire", "expired"}} {
		if step.action != "" {
			e.change(t, issued.Licence.ID, step.action, "now")
		}
		if v := e.verdict(t, "desk-app", e.askStatus(t, issued.LicenceKey, "ada-laptop")); v.State != step.state || v.ActivationID == nil {
			t.Errorf("after %q: verdict state %s, activation %v; want %s with the machine's seat", step.action, v.State, v.ActivationID, step.state)
		}
	}
}

// TestStatusLastSeen: a status check refreshes a live activation's
// last_seen_at only when the stored value is older than the activation's
// refresh interval, between 30 and 60 seconds, so it never lags more than
// 60 seconds; and writes neither event nor audit entry.
func TestStatusLastSeen(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil))
	seat := e.takeSeat(t, issued.LicenceKey, "ada-laptop", http.StatusCreated)
	every := activation.RefreshAfter(seat.Activation.ID)
	if every < 30*time.Second || every >= 60*time.Second {
		t.Fatalf("RefreshAfter() = %v, want from 30 s to under 60 s", every)
	}
	activated := e.clock.Now()
	events, audit := len(e.events(t, e.org.ID)), e.audit(t, issued.Licence.ID)
	next := every + time.Millisecond
	for _, tt := range []struct {
		after time.Duration // since the activation
		seen  time.Duration // stored last_seen_at after the check, since the activation
	}{
		{every / 2, 0},
		{every, 0},
		{next, next},
		{next + every/2, next},
		{next + every, next},
		{2 * next, 2 * next},
		{time.Hour, time.Hour},
	} {
		e.clock.Set(activated.Add(tt.after))
		e.askStatus(t, issued.LicenceKey, "ada-laptop")
		got := e.read(t, issued.Licence.ID).Activations[0]
		if want := licentia.FormatTime(activated.Add(tt.seen)); got.LastSeenAt != want {
			t.Errorf("check %v after the activation: last_seen_at = %s, want %s", tt.after, got.LastSeenAt, want)
		}
		if got.ActivatedAt != licentia.FormatTime(activated) {
			t.Errorf("activated_at = %s, want %s unchanged", got.ActivatedAt, licentia.FormatTime(activated))
		}
	}
	if n := len(e.events(t, e.org.ID)); n != events {
		t.Errorf("%d events after status checks, want %d", n, events)
	}
	if diff := cmp.Diff(audit, e.audit(t, issued.Licence.ID)); diff != "" {
		t.Errorf("status checks wrote audit entries (-before +after):\n%s", diff)
	}
}

// TestDeactivate: deactivating frees this machine's seat (changed true,
// activation.deactivated, an audit entry by the application), so another
// machine can take it and live_machines drops; doing it again, or for a
// machine that holds no seat, answers changed false and writes nothing.
func TestDeactivate(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(nil)) // one seat × 3 machines
	key := issued.LicenceKey
	var held activationView
	for i := range 3 {
		a := e.takeSeat(t, key, machineName(i), http.StatusCreated).Activation
		if i == 0 {
			held = a
		}
	}
	e.run(t, scenario{call: activateCall(activateBody(key, "newcomer", nil)), wantStatus: http.StatusConflict, wantCode: licentia.CodeSeatLimitReached,
		wantDetails: map[string]any{"limit": 3.0, "active": 3.0, "limit_kind": "seats"}})
	lic := e.read(t, issued.Licence.ID).Licence
	now := e.later(time.Minute)
	events, audit := len(e.events(t, e.org.ID)), e.audit(t, issued.Licence.ID)

	if !e.freeSeat(t, key, machineName(0)) {
		t.Fatal("deactivate: changed false, want true")
	}
	held.DeactivatedAt = ptr(licentia.FormatTime(now))
	evs := e.newEvents(t, e.org.ID, events)
	if len(evs) != 1 {
		t.Fatalf("%d new events, want activation.deactivated", len(evs))
	}
	checkEvent(t, evs[0], wantEvent{typ: licentia.EventActivationDeactivated, at: now, licence: lic, activation: &held, key: key})
	wantAudit := append(audit, activationAudit("activation.deactivated", now, held))
	if diff := cmp.Diff(wantAudit, e.audit(t, issued.Licence.ID)); diff != "" {
		t.Errorf("audit mismatch (-want +got):\n%s", diff)
	}
	if got := e.read(t, issued.Licence.ID).Activations; len(got) != 3 || !cmp.Equal(got[2], held) {
		t.Errorf("activations = %+v, want the freed one last as %+v", got, held)
	}
	if c := e.counts(t, "").Counts; c.LiveMachines != 2 {
		t.Errorf("live_machines = %d, want 2", c.LiveMachines)
	}
	if v := e.verdict(t, "desk-app", e.askStatus(t, key, machineName(0))); v.ActivationID != nil {
		t.Errorf("verdict after deactivation names activation %s, want null", *v.ActivationID)
	}

	e.clock.Advance(time.Minute)
	events = len(e.events(t, e.org.ID))
	for _, machine := range []string{machineName(0), "never-here"} {
		if e.freeSeat(t, key, machine) {
			t.Errorf("deactivate %s: changed true, want false", machine)
		}
	}
	if n := len(e.events(t, e.org.ID)); n != events {
		t.Errorf("%d events after deactivations that changed nothing, want %d", n, events)
	}
	if diff := cmp.Diff(wantAudit, e.audit(t, issued.Licence.ID)); diff != "" {
		t.Errorf("deactivations that changed nothing wrote audit entries (-want +got):\n%s", diff)
	}
	e.takeSeat(t, key, "newcomer", http.StatusCreated)

	t.Run("revoked licence", func(t *testing.T) {
		e.change(t, issued.Licence.ID, "revoke", "refund")
		if !e.freeSeat(t, key, machineName(1)) {
			t.Errorf("deactivate on a revoked licence: changed false, want true")
		}
	})
}
