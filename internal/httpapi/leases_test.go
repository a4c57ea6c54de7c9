package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// leaseView is the answer of POST /v1/leases and /renew.
type leaseView struct {
	Lease struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expires_at"`
	} `json:"lease"`
	Verdict string `json:"verdict"`
}

func leaseCall(key, machineID string, edits map[string]any) call {
	b := map[string]any{"licence_key": key, "machine_id": machineID}
	for k, v := range edits {
		b[k] = v
	}
	return call{method: "POST", path: "/v1/leases", body: b}
}

func leaseRefCall(action, key, machineID, leaseID string) call {
	return call{method: "POST", path: "/v1/leases/" + action, body: map[string]any{"licence_key": key, "machine_id": machineID, "lease_id": leaseID}}
}

// newLeaseEnv is an activation env on engine o whose desk-app has the
// given lease settings, with no public rate limit in the way.
func newLeaseEnv(t *testing.T, o envOptions, settings map[string]any) *actEnv {
	t.Helper()
	o.limiter = allowAll{}
	e := newActEnvWith(t, o)
	if settings != nil {
		e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: e.allKey, body: settings}, wantStatus: http.StatusOK})
		e.refreshCatalogue(t)
	}
	return e
}

// takeLease asks for a lease and wants status.
func (e *actEnv) takeLease(t *testing.T, key, machineID string, edits map[string]any, status int) leaseView {
	t.Helper()
	r := e.run(t, scenario{call: leaseCall(key, machineID, edits), wantStatus: status})
	if r.status != status {
		t.FailNow()
	}
	return decodeStrict[leaseView](t, r.body)
}

// leaseVerdict verifies a lease answer's verdict and checks that it names
// the lease and is valid until its end.
func (e *actEnv) leaseVerdict(t *testing.T, lv leaseView) sdk.Verdict {
	t.Helper()
	v := e.verdict(t, "desk-app", lv.Verdict)
	if v.LeaseID == nil || *v.LeaseID != lv.Lease.ID || v.LeaseExpiresAt == nil || *v.LeaseExpiresAt != lv.Lease.ExpiresAt {
		t.Errorf("verdict lease_id %v, lease_expires_at %v; want %s, %s", v.LeaseID, v.LeaseExpiresAt, lv.Lease.ID, lv.Lease.ExpiresAt)
	}
	if v.ValidUntil != lv.Lease.ExpiresAt {
		t.Errorf("verdict valid_until %s, want the lease's end %s", v.ValidUntil, lv.Lease.ExpiresAt)
	}
	return v
}

// TestLeaseLifecycle, on both engines: a machine without a live
// activation is refused 409 activation_required; a lease lasts the
// product's TTL and its verdict names it and ends with it; asking again
// and renewing keep the id and move the end; release answers true, then
// false, and the released lease is not found for a renewal; a revoked
// licence is refused 403.
func TestLeaseLifecycle(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := newLeaseEnv(t, o, map[string]any{"max_concurrent": 2, "lease_ttl_seconds": 120})
		issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_count": 5}))
		key := issued.LicenceKey
		e.run(t, scenario{call: leaseCall(key, "ada-laptop", nil), wantStatus: http.StatusConflict, wantCode: licentia.CodeActivationRequired})

		act := e.takeSeat(t, key, "ada-laptop", http.StatusCreated)
		first := e.takeLease(t, key, "ada-laptop", nil, http.StatusCreated)
		if want := licentia.FormatTime(start.Add(120 * time.Second)); first.Lease.ExpiresAt != want {
			t.Errorf("lease ends %s, want %s (the TTL from now)", first.Lease.ExpiresAt, want)
		}
		if v := e.leaseVerdict(t, first); v.ActivationID == nil || *v.ActivationID != act.Activation.ID || v.State != "active" {
			t.Errorf("verdict activation %v state %s, want %s active", v.ActivationID, v.State, act.Activation.ID)
		}

		e.clock.Advance(30 * time.Second)
		again := e.takeLease(t, key, "ada-laptop", nil, http.StatusOK)
		if again.Lease.ID != first.Lease.ID || again.Lease.ExpiresAt != licentia.FormatTime(e.clock.Now().Add(120*time.Second)) {
			t.Errorf("asking again: lease %+v, want %s renewed to a TTL from now", again.Lease, first.Lease.ID)
		}
		e.leaseVerdict(t, again)

		e.clock.Advance(30 * time.Second)
		r := e.run(t, scenario{call: leaseRefCall("renew", key, "ada-laptop", first.Lease.ID), wantStatus: http.StatusOK})
		renewed := decodeStrict[leaseView](t, r.body)
		if renewed.Lease.ID != first.Lease.ID || renewed.Lease.ExpiresAt != licentia.FormatTime(e.clock.Now().Add(120*time.Second)) {
			t.Errorf("renewed lease %+v, want the same id ending a TTL from now", renewed.Lease)
		}
		e.leaseVerdict(t, renewed)
		e.run(t, scenario{call: leaseRefCall("renew", key, "bob-desktop", first.Lease.ID), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLeaseNotFound})

		for _, want := range []string{`{"released":true}`, `{"released":false}`} {
			e.run(t, scenario{call: leaseRefCall("release", key, "ada-laptop", first.Lease.ID), wantStatus: http.StatusOK, wantBody: want})
		}
		e.run(t, scenario{call: leaseRefCall("renew", key, "ada-laptop", first.Lease.ID), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLeaseNotFound})

		// An ended lease is gone at once: renewing it is refused, taking
		// gives a new one.
		ended := e.takeLease(t, key, "ada-laptop", nil, http.StatusCreated)
		e.clock.Advance(120 * time.Second)
		e.run(t, scenario{call: leaseRefCall("renew", key, "ada-laptop", ended.Lease.ID), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLeaseNotFound})
		fresh := e.takeLease(t, key, "ada-laptop", nil, http.StatusCreated)
		if fresh.Lease.ID == ended.Lease.ID {
			t.Errorf("a lease taken after the last ended has its id %s", ended.Lease.ID)
		}

		e.run(t, scenario{call: call{method: "POST", path: licencePath(issued.Licence.ID, "revoke"), key: e.allKey,
			body: map[string]any{"reason": "refund"}}, wantStatus: http.StatusOK})
		e.run(t, scenario{call: leaseCall(key, "ada-laptop", nil), wantStatus: http.StatusForbidden, wantCode: licentia.CodeLicenceRevoked})
		// A lease in use of a revoked licence is not renewed either.
		for _, id := range []string{ended.Lease.ID, fresh.Lease.ID} {
			e.run(t, scenario{call: leaseRefCall("renew", key, "ada-laptop", id), wantStatus: http.StatusForbidden, wantCode: licentia.CodeLicenceRevoked})
		}
	})
}

// TestLeaseLimit: with max_concurrent 2 the third machine is refused 409
// concurrency_limit_reached with the limit, the count and the seconds
// until the earliest lease ends; the instant that lease ends, the third
// machine takes its place. A licence's own max_concurrent wins over the
// product's, and null (off) grants leases without a count.
func TestLeaseLimit(t *testing.T) {
	e := newLeaseEnv(t, envOptions{}, map[string]any{"max_concurrent": 2, "lease_ttl_seconds": 300})
	key := e.issue(t, e.allKey, issueBody(map[string]any{"limit_count": 5})).LicenceKey
	for _, m := range []string{"m1", "m2", "m3"} {
		e.takeSeat(t, key, m, http.StatusCreated)
	}
	e.takeLease(t, key, "m1", nil, http.StatusCreated)
	e.clock.Advance(100 * time.Second)
	e.takeLease(t, key, "m2", nil, http.StatusCreated)
	e.clock.Advance(50500 * time.Millisecond)
	e.run(t, scenario{call: leaseCall(key, "m3", nil), wantStatus: http.StatusConflict, wantCode: licentia.CodeConcurrencyLimitReached,
		wantDetails: map[string]any{"limit": float64(2), "in_use": float64(2), "retry_after_seconds": float64(150)}})
	e.clock.Advance(149500 * time.Millisecond) // m1's lease ends now
	e.takeLease(t, key, "m3", nil, http.StatusCreated)
	e.run(t, scenario{call: leaseCall(key, "m1", nil), wantStatus: http.StatusConflict, wantCode: licentia.CodeConcurrencyLimitReached,
		wantDetails: map[string]any{"limit": float64(2), "in_use": float64(2), "retry_after_seconds": float64(100)}})

	own := e.issue(t, e.allKey, issueBody(map[string]any{"limit_count": 5, "max_concurrent": 1}))
	e.takeSeat(t, own.LicenceKey, "m1", http.StatusCreated)
	e.takeSeat(t, own.LicenceKey, "m2", http.StatusCreated)
	e.takeLease(t, own.LicenceKey, "m1", nil, http.StatusCreated)
	e.run(t, scenario{call: leaseCall(own.LicenceKey, "m2", nil), wantStatus: http.StatusConflict, wantCode: licentia.CodeConcurrencyLimitReached,
		wantDetails: map[string]any{"limit": float64(1), "in_use": float64(1), "retry_after_seconds": float64(300)}})

	e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: e.allKey, body: map[string]any{"max_concurrent": nil}},
		wantStatus: http.StatusOK})
	e.refreshCatalogue(t)
	for _, m := range []string{"m1", "m2", "m3"} {
		e.takeLease(t, key, m, nil, map[bool]int{true: http.StatusOK, false: http.StatusCreated}[m != "m1"])
	}
}

// TestLeaseBorrow: borrowing is refused while the product's
// max_borrow_hours is 0 and past it; a borrowed lease ends borrow_hours
// from now, its verdict verifies offline until then and not after, and a
// renewal never shortens it.
func TestLeaseBorrow(t *testing.T) {
	e := newLeaseEnv(t, envOptions{}, nil)
	key := e.issue(t, e.allKey, issueBody(nil)).LicenceKey
	e.takeSeat(t, key, "laptop", http.StatusCreated)
	e.run(t, scenario{call: leaseCall(key, "laptop", map[string]any{"borrow_hours": 1}), wantStatus: http.StatusBadRequest,
		wantCode: licentia.CodeValidationFailed, wantDetails: issues("/borrow_hours", "borrowing is off for this product")})
	e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: e.allKey, body: map[string]any{"max_borrow_hours": 240}},
		wantStatus: http.StatusOK})
	e.refreshCatalogue(t)
	e.run(t, scenario{call: leaseCall(key, "laptop", map[string]any{"borrow_hours": 241}), wantStatus: http.StatusBadRequest,
		wantCode: licentia.CodeValidationFailed, wantDetails: issues("/borrow_hours", "must be at most 240 for this product")})

	borrowed := e.takeLease(t, key, "laptop", map[string]any{"borrow_hours": 240}, http.StatusCreated)
	end := start.Add(240 * time.Hour)
	if borrowed.Lease.ExpiresAt != licentia.FormatTime(end) {
		t.Errorf("borrowed lease ends %s, want %s", borrowed.Lease.ExpiresAt, licentia.FormatTime(end))
	}
	e.leaseVerdict(t, borrowed)
	p, _ := e.shipped(t, "desk-app")
	for _, c := range []struct {
		at   time.Time
		good bool
	}{{end.Add(-time.Second), true}, {end, true}, {end.Add(time.Millisecond), false}} {
		_, err := sdk.CheckLeaseVerdict(borrowed.Verdict, p, "laptop", c.at)
		if (err == nil) != c.good {
			t.Errorf("offline check of the borrowed verdict at %v: %v, want good %v", c.at, err, c.good)
		}
	}
	r := e.run(t, scenario{call: leaseRefCall("renew", key, "laptop", borrowed.Lease.ID), wantStatus: http.StatusOK})
	if got := decodeStrict[leaseView](t, r.body); got.Lease.ExpiresAt != borrowed.Lease.ExpiresAt {
		t.Errorf("renewing a borrowed lease moved its end to %s, want %s kept", got.Lease.ExpiresAt, borrowed.Lease.ExpiresAt)
	}
}

// TestLeaseOtherOrganization: a lease id of another organization's
// licence is never found with this licence's key, whether it exists or
// not, and the lease is left in use.
func TestLeaseOtherOrganization(t *testing.T) {
	e := newLeaseEnv(t, envOptions{}, map[string]any{"max_concurrent": 1})
	_, otherKey := e.otherOrg(t, "globex", "globex-app", "GLBX")
	e.refreshCatalogue(t)
	theirKey := e.issue(t, otherKey, issueBody(map[string]any{"product_id": "globex-app"})).LicenceKey
	e.takeSeat(t, theirKey, "m1", http.StatusCreated)
	theirs := e.takeLease(t, theirKey, "m1", nil, http.StatusCreated)
	key := e.issue(t, e.allKey, issueBody(nil)).LicenceKey
	e.takeSeat(t, key, "m1", http.StatusCreated)
	for _, id := range []string{theirs.Lease.ID, someID} {
		e.run(t, scenario{call: leaseRefCall("renew", key, "m1", id), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLeaseNotFound})
		e.run(t, scenario{call: leaseRefCall("release", key, "m1", id), wantStatus: http.StatusOK, wantBody: `{"released":false}`})
	}
	e.run(t, scenario{call: leaseRefCall("renew", theirKey, "m1", theirs.Lease.ID), wantStatus: http.StatusOK})
}

// TestLeaseRace, on both engines: machines racing for the last place
// each get 201 or 409 concurrency_limit_reached, and exactly one wins.
func TestLeaseRace(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := newLeaseEnv(t, o, map[string]any{"max_concurrent": 3})
		key := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 20})).LicenceKey
		const racers = 12
		machine := func(i int) string { return "racer-" + string(rune('a'+i)) }
		for i := range racers {
			e.takeSeat(t, key, machine(i), http.StatusCreated)
		}
		e.takeLease(t, key, "racer-a", nil, http.StatusCreated)
		e.takeLease(t, key, "racer-b", nil, http.StatusCreated)
		answers := e.concurrently(t, racers-2, func(i int) call { return leaseCall(key, machine(i+2), nil) })
		won := 0
		for _, r := range answers {
			switch {
			case r.status == http.StatusCreated:
				won++
			case r.status != http.StatusConflict || r.apiError(t).Code != licentia.CodeConcurrencyLimitReached:
				t.Errorf("racer answered %d %s", r.status, r.body)
			}
		}
		if won != 1 {
			t.Errorf("%d racers won the last place, want 1", won)
		}
	})
}

// TestLeaseMetrics: the leases in use are a gauge read on each scrape,
// and the lease routes' answers, refusals included, are counted by route
// and result.
func TestLeaseMetrics(t *testing.T) {
	e := newLeaseEnv(t, envOptions{metrics: true}, map[string]any{"max_concurrent": 1, "lease_ttl_seconds": 60})
	key := e.issue(t, e.allKey, issueBody(map[string]any{"limit_count": 2})).LicenceKey
	e.takeSeat(t, key, "m1", http.StatusCreated)
	e.takeSeat(t, key, "m2", http.StatusCreated)
	held := e.takeLease(t, key, "m1", nil, http.StatusCreated)
	e.run(t, scenario{call: leaseCall(key, "m2", nil), wantStatus: http.StatusConflict, wantCode: licentia.CodeConcurrencyLimitReached,
		wantDetails: map[string]any{"limit": float64(1), "in_use": float64(1), "retry_after_seconds": float64(60)}})
	e.run(t, scenario{call: leaseRefCall("renew", key, "m1", held.Lease.ID), wantStatus: http.StatusOK})
	e.run(t, scenario{call: leaseRefCall("release", key, "m2", held.Lease.ID), wantStatus: http.StatusOK})
	gauge := func(want string) {
		t.Helper()
		err := testutil.GatherAndCompare(e.metrics.Gatherer(), strings.NewReader(`
# HELP licentia_leases_in_use Leases of floating use in use (unexpired, of live activations), of every licence. Read from the database on each scrape.
# TYPE licentia_leases_in_use gauge
licentia_leases_in_use `+want+"\n"), "licentia_leases_in_use")
		if err != nil {
			t.Error(err)
		}
	}
	gauge("1")
	err := testutil.GatherAndCompare(e.metrics.Gatherer(), strings.NewReader(`
# HELP licentia_activations_total Answers of the activation routes, by route (activate, activate_offline, status, deactivate, lease, lease_renew, lease_release) and result (ok or the error code).
# TYPE licentia_activations_total counter
licentia_activations_total{result="concurrency_limit_reached",route="lease"} 1
licentia_activations_total{result="ok",route="activate"} 2
licentia_activations_total{result="ok",route="lease"} 1
licentia_activations_total{result="ok",route="lease_release"} 1
licentia_activations_total{result="ok",route="lease_renew"} 1
`), "licentia_activations_total")
	if err != nil {
		t.Error(err)
	}
	e.clock.Advance(time.Minute) // the lease ends: it stops counting at once
	gauge("0")
}

// TestLeaseConcurrentRenewAndRelease, on both engines: renewals of one
// lease at once all answer 200 with its id, and releases of it at once
// release it exactly once; a machine asking for a lease many times at
// once holds one.
func TestLeaseConcurrentRenewAndRelease(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := newLeaseEnv(t, o, map[string]any{"max_concurrent": 5})
		key := e.issue(t, e.allKey, issueBody(nil)).LicenceKey
		e.takeSeat(t, key, "m1", http.StatusCreated)
		const n = 8
		taken := e.concurrently(t, n, func(int) call { return leaseCall(key, "m1", nil) })
		ids := map[string]bool{}
		created := 0
		for _, r := range taken {
			if r.status == http.StatusCreated {
				created++
			}
			ids[decodeStrict[leaseView](t, r.body).Lease.ID] = true
		}
		if created != 1 || len(ids) != 1 {
			t.Fatalf("%d takes at once: %d created, %d lease ids; want 1 and 1", n, created, len(ids))
		}
		var id string
		for id = range ids {
		}
		for _, r := range e.concurrently(t, n, func(int) call { return leaseRefCall("renew", key, "m1", id) }) {
			if r.status != http.StatusOK || decodeStrict[leaseView](t, r.body).Lease.ID != id {
				t.Errorf("renewal at once: %d %s", r.status, r.body)
			}
		}
		released := 0
		for _, r := range e.concurrently(t, n, func(int) call { return leaseRefCall("release", key, "m1", id) }) {
			if r.status == http.StatusOK && decodeStrict[struct {
				Released bool `json:"released"`
			}](t, r.body).Released {
				released++
			}
		}
		if released != 1 {
			t.Errorf("%d releases at once released %d times, want 1", n, released)
		}
	})
}
