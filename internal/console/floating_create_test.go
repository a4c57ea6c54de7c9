package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// TestFloatingSettingsOnCreate: the product create form and the licence
// issue form take the machine-use settings, posted as a browser posts
// them (every field, some empty); values out of range are refused with
// the field's label; an empty licence field follows the product.
func TestFloatingSettingsOnCreate(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.member(t, e.org.ID, "dev@acme.example", licentia.RoleAdmin)
		c := e.signUp(t, e.org.ID, "dev@acme.example")

		page := c.get(t, "/console/products")
		for _, want := range []string{`name="machine_match"`, `name="transfers_per_30_days"`, `name="max_concurrent"`,
			`name="lease_ttl_seconds"`, `name="max_borrow_hours"`} {
			if !strings.Contains(page.body, want) {
				t.Errorf("product create form lacks %q", want)
			}
		}
		create := url.Values{"id": {"desk-app"}, "name": {"Desk"}, "key_prefix": {"DESK"}, "current_major": {"1"},
			"machines_per_seat": {""}, "heartbeat_interval_seconds": {""}, "licence_signing_domain": {""}, "verdict_signing_domain": {""},
			"machine_match": {"most"}, "transfers_per_30_days": {"101"}, "max_concurrent": {""}, "lease_ttl_seconds": {"900"},
			"max_borrow_hours": {"0"}}
		a := c.post(t, "/console/products", create)
		wantStatus(t, "create out of range", a, http.StatusBadRequest)
		for _, want := range []string{"Transfers in any 30 days: must be an integer from 0 to 100", `value="101"`, `<option value="most" selected>`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("refused create lacks %q:\n%s", want, a.body)
			}
		}
		create.Set("transfers_per_30_days", "2")
		wantSeeOther(t, "create", c.post(t, "/console/products", create), "/console/products/desk-app?done=product-created")
		p, err := e.store.Product(t.Context(), e.org.ID, "desk-app")
		if err != nil {
			t.Fatal(err)
		}
		if p.MachineMatch != licentia.MatchMost || p.TransfersPer30Days != 2 || p.MaxConcurrent != nil || p.LeaseTTLSeconds != 900 || p.MaxBorrowHours != 0 {
			t.Errorf("created product = %+v", p)
		}

		page = c.get(t, "/console/licences")
		for _, want := range []string{`name="max_concurrent"`, `name="transfers_per_30_days"`} {
			if !strings.Contains(page.body, want) {
				t.Errorf("licence issue form lacks %q", want)
			}
		}
		issue := url.Values{"product_id": {"desk-app"}, "email": {"ada@example.com"}, "limit_count": {"1"}, "limit_kind": {"seats"},
			"max_concurrent": {"0"}, "transfers_per_30_days": {""}}
		a = c.post(t, "/console/licences", issue)
		wantStatus(t, "issue out of range", a, http.StatusBadRequest)
		if want := "Machines at once: must be an integer from 1 to 100000"; !strings.Contains(a.body, want) {
			t.Errorf("refused issue lacks %q:\n%s", want, a.body)
		}
		issue.Set("max_concurrent", "3")
		a = c.post(t, "/console/licences", issue)
		m := licencePath.FindStringSubmatch(a.location())
		if m == nil {
			t.Fatalf("issue = %d to %q:\n%s", a.status, a.location(), a.body)
		}
		l, err := e.store.Licence(t.Context(), e.org.ID, m[1])
		if err != nil {
			t.Fatal(err)
		}
		if l.MaxConcurrent == nil || *l.MaxConcurrent != 3 || l.TransfersPer30Days != nil {
			t.Errorf("issued licence: max_concurrent %v, transfers %v; want 3 and null (the product's)", l.MaxConcurrent, l.TransfersPer30Days)
		}
	})
}
