package activation_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// match sets desk-app's machine_match and lets the catalogue see it.
func (f *fixture) match(t *testing.T, rule licentia.MachineMatch) {
	t.Helper()
	r := string(rule)
	v, err := f.admin.UpdateProduct(t.Context(), licentia.OperatorActor, f.org.ID, "desk-app", admin.ProductPatch{MachineMatch: &r})
	if err != nil {
		t.Fatalf("UpdateProduct(machine_match) error = %v", err)
	}
	if v.Product.MachineMatch != rule {
		t.Fatalf("machine_match = %q, want %q", v.Product.MachineMatch, rule)
	}
	if err := f.cat.Refresh(t.Context()); err != nil {
		t.Fatalf("Catalogue.Refresh() error = %v", err)
	}
}

// parts are four components of a machine seed; changed replaces the hash
// of that many of them, the last first.
func parts(seed string, changed int) map[string]string {
	names := []string{"board", "disk", "os_install", "network"}
	out := map[string]string{}
	for i, n := range names {
		v := seed
		if i >= len(names)-changed {
			v += "-changed"
		}
		out[n] = fmt.Sprintf("%064x", []byte(fmt.Sprintf("%-32.32s", v+n))) // 64 lower-case hex
	}
	return out
}

// activateParts activates machineID with components c.
func activateParts(key, machineID string, c map[string]string) activation.Activate {
	in := activate(key, machine(machineID))
	in.Components = c
	return in
}

// events counts a licence's events of typ and returns the data of the last.
func (f *fixture) eventsOf(t *testing.T, licenceID string, typ licentia.EventType) (int, map[string]any) {
	t.Helper()
	evs, err := f.st.OrganizationEvents(t.Context(), f.org.ID)
	if err != nil {
		t.Fatalf("OrganizationEvents() error = %v", err)
	}
	n, last := 0, map[string]any(nil)
	for _, e := range evs {
		if e.Type != typ || e.LicenceID == nil || *e.LicenceID != licenceID {
			continue
		}
		var b struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(e.Body, &b); err != nil {
			t.Fatalf("event body: %v", err)
		}
		n, last = n+1, b.Data
	}
	return n, last
}

// TestRebindByRule: a new machine id whose components match a live
// activation by the product's rule takes that activation over (200, the
// same id, no new seat, activation.rebound naming the previous machine id);
// below the rule, or under exact, it is a new machine.
func TestRebindByRule(t *testing.T) {
	for _, c := range []struct {
		rule    licentia.MachineMatch
		changed int
		rebinds bool
	}{
		{licentia.MatchExact, 0, false},
		{licentia.MatchMost, 1, true},  // 3 of 4 equal: more than half
		{licentia.MatchMost, 2, false}, // 2 of 4: not more than half
		{licentia.MatchTwo, 2, true},
		{licentia.MatchTwo, 3, false},
		{licentia.MatchAny, 3, true},
		{licentia.MatchAny, 4, false},
	} {
		t.Run(fmt.Sprintf("%s-%d-changed", c.rule, c.changed), func(t *testing.T) {
			f := newFixture(t, engines[0].open(t))
			f.match(t, c.rule)
			id, key := f.issue(t, 2)
			first, err := f.svc.Activate(t.Context(), activateParts(key, "old-id", parts("m", 0)))
			if err != nil {
				t.Fatalf("Activate(old-id) error = %v", err)
			}
			f.clock.Advance(time.Hour) // the upgrade comes later
			res, err := f.svc.Activate(t.Context(), activateParts(key, "new-id", parts("m", c.changed)))
			if err != nil {
				t.Fatalf("Activate(new-id) error = %v", err)
			}
			rebounds, data := f.eventsOf(t, id, licentia.EventActivationRebound)
			live := f.liveMachines(t, id)
			if !c.rebinds {
				if !res.Created || res.Activation.ID == first.Activation.ID || len(live) != 2 || rebounds != 0 {
					t.Errorf("created %v, live %v, %d rebound events; want a new seat and no rebinding", res.Created, live, rebounds)
				}
				return
			}
			if res.Created || res.Activation.ID != first.Activation.ID || res.Activation.MachineID != "new-id" {
				t.Errorf("Activate(new-id) = created %v, activation %s on %s; want 200 with %s rebound",
					res.Created, res.Activation.ID, res.Activation.MachineID, first.Activation.ID)
			}
			if len(live) != 1 || live[0] != "new-id" {
				t.Errorf("live machines %v, want [new-id]", live)
			}
			if rebounds != 1 || data["previous_machine_id"] != "old-id" {
				t.Errorf("%d activation.rebound events, last data %v; want one with previous_machine_id old-id", rebounds, data)
			}
			if res.Verdict == "" {
				t.Error("a rebinding answers no verdict")
			}
		})
	}
}

// TestOldSDKUnderMost: an application that sends no components is never
// rebound, whatever the rule: under most, a new machine id takes a new seat
// while there is one and is refused when the licence is full, exactly as
// under exact.
func TestOldSDKUnderMost(t *testing.T) {
	f := newFixture(t, engines[0].open(t))
	f.match(t, licentia.MatchMost)
	id, key := f.issue(t, 2)
	for _, m := range []string{"a", "b"} {
		if res, err := f.svc.Activate(t.Context(), activate(key, machine(m))); err != nil || !res.Created {
			t.Fatalf("Activate(%s) = %v, %v; want a new seat", m, res, err)
		}
	}
	_, err := f.svc.Activate(t.Context(), activate(key, machine("c")))
	if licentia.ErrorCode(err) != licentia.CodeSeatLimitReached {
		t.Errorf("Activate(c) on a full licence error = %v, want seat_limit_reached", err)
	}
	// A machine with components does not take over one stored without.
	_, err = f.svc.Activate(t.Context(), activateParts(key, "d", parts("a", 0)))
	if licentia.ErrorCode(err) != licentia.CodeSeatLimitReached {
		t.Errorf("Activate(d with components) error = %v, want seat_limit_reached", err)
	}
	if n, _ := f.eventsOf(t, id, licentia.EventActivationRebound); n != 0 {
		t.Errorf("%d activation.rebound events, want none", n)
	}
}

// TestRebindRace: racers rebinding one activation of a full licence. The
// same new machine id: exactly one rebinding, every racer 200 with the
// activation. Different machine ids with the same components: exactly one
// rebinding; the others find the activation bound to another machine and
// are new machines on a full licence (409). On both engines.
func TestRebindRace(t *testing.T) {
	const racers = 8
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			f.match(t, licentia.MatchMost)
			for _, same := range []bool{true, false} {
				id, key := f.issue(t, 1)
				first, err := f.svc.Activate(t.Context(), activateParts(key, "old-id", parts("m", 0)))
				if err != nil {
					t.Fatalf("Activate(old-id) error = %v", err)
				}
				f.clock.Advance(time.Hour)
				res, errs := race(racers, func(i int) (*activation.Result, error) {
					m := "new-id"
					if !same {
						m = fmt.Sprintf("new-id-%d", i)
					}
					return f.svc.Activate(t.Context(), activateParts(key, m, parts("m", 1)))
				})
				ok := 0
				for i, err := range errs {
					switch {
					case err == nil && !res[i].Created && res[i].Activation.ID == first.Activation.ID:
						ok++
					case err == nil:
						t.Errorf("same %v, racer %d: created %v activation %s; want the rebound one", same, i, res[i].Created, res[i].Activation.ID)
					case same || licentia.ErrorCode(err) != licentia.CodeSeatLimitReached:
						t.Errorf("same %v, racer %d: error = %v", same, i, err)
					}
				}
				if want := map[bool]int{true: racers, false: 1}[same]; ok != want {
					t.Errorf("same %v: %d racers answered 200, want %d", same, ok, want)
				}
				if n, _ := f.eventsOf(t, id, licentia.EventActivationRebound); n != 1 {
					t.Errorf("same %v: %d activation.rebound events, want exactly one", same, n)
				}
				if live := f.liveMachines(t, id); len(live) != 1 || !strings.HasPrefix(live[0], "new-id") {
					t.Errorf("same %v: live machines %v, want one new-id", same, live)
				}
			}
			checkCounters(t, f)
		})
	}
}

// TestCatalinaDay: every machine of 200 licences changes its machine id at
// once, with one component of four changed, under most. Every machine
// rebinds: no seat is lost or added, and the counters equal a recount, on
// both engines.
func TestCatalinaDay(t *testing.T) {
	const licences, perLicence, workers = 200, 2, 16
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			f.match(t, licentia.MatchMost)
			type seatOf struct{ licence, key, machine, activation string }
			var seats []seatOf
			for i := range licences {
				id, key := f.issue(t, perLicence)
				for j := range perLicence {
					m := fmt.Sprintf("mac-%d-%d", i, j)
					res, err := f.svc.Activate(t.Context(), activateParts(key, m, parts(m, 0)))
					if err != nil {
						t.Fatalf("Activate(%s) error = %v", m, err)
					}
					seats = append(seats, seatOf{id, key, m, res.Activation.ID})
				}
			}
			f.clock.Advance(24 * time.Hour) // the upgrade
			before := f.liveCount(t)
			work := make(chan seatOf)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failed []string
			for range workers {
				wg.Go(func() {
					for s := range work {
						res, err := f.svc.Activate(t.Context(), activateParts(s.key, s.machine+"-catalina", parts(s.machine, 1)))
						if err != nil || res.Created || res.Activation.ID != s.activation {
							mu.Lock()
							failed = append(failed, fmt.Sprintf("%s: %v", s.machine, err))
							mu.Unlock()
						}
					}
				})
			}
			for _, s := range seats {
				work <- s
			}
			close(work)
			wg.Wait()
			if len(failed) > 0 {
				t.Errorf("%d machines did not rebind, first %s", len(failed), failed[0])
			}
			if after := f.liveCount(t); after != before || after != licences*perLicence {
				t.Errorf("live machines %d before, %d after; want %d both", before, after, licences*perLicence)
			}
			for _, s := range seats[:10] {
				if live := f.liveMachines(t, s.licence); len(live) != perLicence || !strings.HasSuffix(live[0], "-catalina") {
					t.Errorf("licence %s: live machines %v", s.licence, live)
				}
			}
			checkCounters(t, f)
		})
	}
}

// TestRebindQuiet: an activation rebound in the last five seconds is not
// rebound again (a request coming late in a race finds it just rebound),
// so the full licence refuses the next machine id; past that, it is
// rebound. A first rebinding needs no wait: the new machine id rebinds the
// activation at the instant the old one was seen.
func TestRebindQuiet(t *testing.T) {
	f := newFixture(t, engines[0].open(t))
	f.match(t, licentia.MatchMost)
	id, key := f.issue(t, 1)
	first, err := f.svc.Activate(t.Context(), activateParts(key, "old-id", parts("m", 0)))
	if err != nil {
		t.Fatalf("Activate(old-id) error = %v", err)
	}
	res, err := f.svc.Activate(t.Context(), activateParts(key, "new-id", parts("m", 1)))
	if err != nil || res.Created || res.Activation.ID != first.Activation.ID {
		t.Fatalf("Activate(new-id) at once = %+v, %v; want %s rebound", res, err, first.Activation.ID)
	}
	f.clock.Advance(5 * time.Second)
	_, err = f.svc.Activate(t.Context(), activateParts(key, "third-id", parts("m", 2)))
	if licentia.ErrorCode(err) != licentia.CodeSeatLimitReached {
		t.Fatalf("Activate(third-id) five seconds after the rebinding error = %v, want seat_limit_reached", err)
	}
	f.clock.Advance(time.Millisecond)
	res, err = f.svc.Activate(t.Context(), activateParts(key, "third-id", parts("m", 2)))
	if err != nil || res.Created || res.Activation.ID != first.Activation.ID {
		t.Fatalf("Activate(third-id) past five seconds = %+v, %v; want %s rebound", res, err, first.Activation.ID)
	}
	if live := f.liveMachines(t, id); len(live) != 1 || live[0] != "third-id" {
		t.Errorf("live machines %v, want [third-id]", live)
	}
}
