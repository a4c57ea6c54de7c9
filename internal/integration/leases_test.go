package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
)

// lastSeen sets when a live activation was last seen, in the service's
// database: what the clock would show had the machine gone quiet then.
func (s *service) lastSeen(t *testing.T, licenceID, machineID string, at time.Time) {
	t.Helper()
	st, err := postgres.Open(t.Context(), s.env["LICENTIA_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	err = st.InTx(ctx, func(tx store.Tx) error {
		l, err := tx.LicenceByID(ctx, licenceID)
		if err != nil {
			return err
		}
		if _, err := tx.LockLicence(ctx, l.OrgID, l.ID); err != nil {
			return err
		}
		a, err := tx.LiveActivation(ctx, l.OrgID, l.ID, machineID)
		if err != nil {
			return err
		}
		a.LastSeenAt = at
		return tx.TouchActivation(ctx, a)
	})
	if err != nil {
		t.Fatalf("set last seen: %v", err)
	}
}

// raceIn sends n requests made by mk at once, spread over the processes,
// each from an address of its own, and returns their answers.
func raceIn(t *testing.T, ps []*process, n int, mk func(i int) (path string, body map[string]any)) []answer {
	t.Helper()
	answers := make([]answer, n)
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		path, body := mk(i)
		wg.Go(func() {
			<-ready
			answers[i] = ps[i%len(ps)].call(t, "POST", path, "", body, "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1))
		})
	}
	close(ready)
	wg.Wait()
	return answers
}

// TestLastLeaseAcrossProcesses: machines racing through three serve
// processes on one PostgreSQL database for the last place of floating use
// get 201 or 409 concurrency_limit_reached, and exactly one wins.
func TestLastLeaseAcrossProcesses(t *testing.T) {
	s := newService(t)
	proxy := map[string]string{"LICENTIA_TRUSTED_PROXIES": "127.0.0.1/32"}
	ps := []*process{s.start(t, "a", proxy), s.start(t, "b", proxy), s.start(t, "c", proxy)}
	waitReady(t, ps...)
	key := s.newOrg(t, "acme")
	createProduct(t, ps[0], key, "cad-suite", "CAD")
	ps[0].must(t, http.StatusOK, "PATCH", "/v1/admin/products/cad-suite", key, map[string]any{"max_concurrent": 3})
	_, licenceKey := issueLicence(t, ps[0], key, "cad-suite", "studio@example.net")
	const racers = 9
	machine := func(i int) string { return fmt.Sprintf("station-%02d", i) }
	for i := range racers + 2 {
		p := ps[i%len(ps)]
		// Each process finds the product (its catalogue reloads on an
		// unknown key) before the race.
		eventually(t, "activation on "+p.name, 5*time.Second, 100*time.Millisecond, func() bool {
			ans := p.call(t, "POST", "/v1/activations", "", map[string]any{"licence_key": licenceKey, "machine_id": machine(i),
				"label": "Station", "os": "linux", "app_version": "1.0.0"}, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
			return ans.status == http.StatusCreated
		})
	}
	for i := range 2 {
		ps[i].must(t, http.StatusCreated, "POST", "/v1/leases", "", map[string]any{"licence_key": licenceKey, "machine_id": machine(racers + i)})
	}
	answers := raceIn(t, ps, racers, func(i int) (string, map[string]any) {
		return "/v1/leases", map[string]any{"licence_key": licenceKey, "machine_id": machine(i)}
	})
	won := 0
	for i, a := range answers {
		switch {
		case a.status == http.StatusCreated:
			won++
		case a.status != http.StatusConflict || a.code() != "concurrency_limit_reached":
			t.Errorf("racer %d: status %d %v", i, a.status, a.body)
		}
	}
	if won != 1 {
		t.Errorf("%d racers took the last place, want 1", won)
	}
}

// TestRebindAcrossProcesses: machine ids new on a one-machine licence,
// all with the components of its live activation, racing through three
// processes: exactly one rebinds it (200, the same activation), the
// others find the licence full.
func TestRebindAcrossProcesses(t *testing.T) {
	s := newService(t)
	proxy := map[string]string{"LICENTIA_TRUSTED_PROXIES": "127.0.0.1/32"}
	ps := []*process{s.start(t, "a", proxy), s.start(t, "b", proxy), s.start(t, "c", proxy)}
	waitReady(t, ps...)
	key := s.newOrg(t, "acme")
	createProduct(t, ps[0], key, "cad-suite", "CAD")
	ps[0].must(t, http.StatusOK, "PATCH", "/v1/admin/products/cad-suite", key, map[string]any{"machine_match": "most"})
	a := ps[0].must(t, http.StatusCreated, "POST", "/v1/admin/licences", key, map[string]any{
		"product_id": "cad-suite", "email": "studio@example.net", "limit_kind": "machines", "limit_count": 1})
	licenceKey, _ := a.body["licence_key"].(string)
	components := map[string]string{"board": strings.Repeat("a", 64), "disk": strings.Repeat("b", 64), "os_install": strings.Repeat("c", 64)}
	body := func(machineID string) map[string]any {
		return map[string]any{"licence_key": licenceKey, "machine_id": machineID, "label": "Station", "os": "linux",
			"app_version": "1.0.0", "components": components}
	}
	held := ps[0].must(t, http.StatusCreated, "POST", "/v1/activations", "", body("before-upgrade")).object("activation")
	for _, p := range ps[1:] {
		eventually(t, "the product on "+p.name, 5*time.Second, 100*time.Millisecond, func() bool {
			return p.call(t, "POST", "/v1/activations/status", "", map[string]any{"licence_key": licenceKey, "machine_id": "before-upgrade"},
				"X-Forwarded-For", "198.51.100.1").status == http.StatusOK
		})
	}
	s.lastSeen(t, held["licence_id"].(string), "before-upgrade", time.Now().Add(-time.Hour)) // the upgrade comes later
	const racers = 9
	answers := raceIn(t, ps, racers, func(i int) (string, map[string]any) {
		return "/v1/activations", body(fmt.Sprintf("after-upgrade-%d", i))
	})
	rebound := 0
	for i, ans := range answers {
		switch {
		case ans.status == http.StatusOK && ans.object("activation")["id"] == held["id"]:
			rebound++
		case ans.status != http.StatusConflict || ans.code() != "seat_limit_reached":
			t.Errorf("racer %d: status %d %v", i, ans.status, ans.body)
		}
	}
	if rebound != 1 {
		t.Errorf("%d racers rebound the activation, want 1", rebound)
	}
}
