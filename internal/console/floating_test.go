package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
)

// productEdit is the product edit form as a browser posts it: every field,
// with values.
func productEdit(edits map[string]string) url.Values {
	v := url.Values{"name": {"Product desk-app"}, "current_major": {"1"}, "machines_per_seat": {"3"}, "heartbeat_interval_seconds": {""},
		"machine_match": {"exact"}, "transfers_per_30_days": {"0"}, "max_concurrent": {""}, "lease_ttl_seconds": {"900"}, "max_borrow_hours": {"0"}}
	for k, x := range edits {
		v.Set(k, x)
	}
	return v
}

// TestFloatingSettingsInConsole: the product page edits machine_match,
// transfers, max_concurrent, the lease length and borrowing (empty
// max_concurrent: no limit), and refuses values out of range; the licence
// page sets and clears the licence's own max_concurrent and transfers
// (an empty field keeps the value, the box follows the product again),
// and shows its leases in use and transfers of the last 30 days.
func TestFloatingSettingsInConsole(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		e.member(t, e.org.ID, "dev@acme.example", licentia.RoleAdmin)
		c := e.signUp(t, e.org.ID, "dev@acme.example")

		page := c.get(t, "/console/products/desk-app")
		for _, want := range []string{`name="max_concurrent"`, `name="lease_ttl_seconds"`, `name="max_borrow_hours"`, `name="machine_match"`,
			`name="transfers_per_30_days"`, "no limit", "no borrowing"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("product page lacks %q", want)
			}
		}
		a := c.post(t, "/console/products/desk-app", productEdit(map[string]string{"max_concurrent": "0", "lease_ttl_seconds": "30"}))
		wantStatus(t, "edit out of range", a, http.StatusBadRequest)
		for _, want := range []string{"must be an integer from 1 to 100000", "must be an integer from 60 to 86400"} {
			if !strings.Contains(a.body, want) {
				t.Errorf("refused edit lacks %q", want)
			}
		}
		wantSeeOther(t, "edit", c.post(t, "/console/products/desk-app", productEdit(map[string]string{"machine_match": "most",
			"transfers_per_30_days": "2", "max_concurrent": "3", "lease_ttl_seconds": "600", "max_borrow_hours": "72"})),
			"/console/products/desk-app?done=product-updated")
		p, err := e.store.Product(t.Context(), e.org.ID, "desk-app")
		if err != nil {
			t.Fatal(err)
		}
		if p.MachineMatch != licentia.MatchMost || p.TransfersPer30Days != 2 || p.MaxConcurrent == nil || *p.MaxConcurrent != 3 ||
			p.LeaseTTLSeconds != 600 || p.MaxBorrowHours != 72 {
			t.Errorf("edited product = %+v", p)
		}

		lv := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		id, key := lv.Licence.ID, *lv.Key
		change := func(vals url.Values) {
			t.Helper()
			wantSeeOther(t, "change", c.post(t, "/console/licences/"+id+"/change", vals), "/console/licences/"+id+"?done=licence-changed")
		}
		change(url.Values{"max_concurrent": {"1"}, "transfers_per_30_days": {"5"}})
		change(url.Values{"limit_count": {"3"}, "max_concurrent": {""}, "transfers_per_30_days": {""}})
		l, _ := e.store.Licence(t.Context(), e.org.ID, id)
		if l.MaxConcurrent == nil || *l.MaxConcurrent != 1 || l.TransfersPer30Days == nil || *l.TransfersPer30Days != 5 {
			t.Errorf("after a change leaving them empty: max_concurrent %v, transfers %v; want 1 and 5 kept", l.MaxConcurrent, l.TransfersPer30Days)
		}

		e.activate(t, key, "studio-1")
		machine := "studio-1"
		if _, err := e.act.TakeLease(t.Context(), activation.TakeLease{LicenceKey: &key, MachineID: &machine}); err != nil {
			t.Fatalf("TakeLease() error = %v", err)
		}
		page = c.get(t, "/console/licences/"+id)
		for _, want := range []string{"1 in use of 1", "(this licence's own limit)", "0 in the last 30 days of 5 allowed", "<code>studio-1</code>"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("licence page lacks %q", want)
			}
		}

		change(url.Values{"max_concurrent": {""}, "concurrent_follows": {"yes"}, "transfers_per_30_days": {""}, "transfers_follow": {"yes"}})
		l, _ = e.store.Licence(t.Context(), e.org.ID, id)
		if l.MaxConcurrent != nil || l.TransfersPer30Days != nil {
			t.Errorf("after following the product: max_concurrent %v, transfers %v; want both null", l.MaxConcurrent, l.TransfersPer30Days)
		}
		page = c.get(t, "/console/licences/"+id)
		if !strings.Contains(page.body, "1 in use of 3") || !strings.Contains(page.body, "0 in the last 30 days of 2 allowed") {
			t.Errorf("licence page does not show the product's limits")
		}
	})
}
