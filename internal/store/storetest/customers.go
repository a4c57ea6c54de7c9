package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testCustomers groups licences by email whatever its case, newest
// activity first, pages and searches by prefix, and never shows another
// organization's licences or an anonymised one.
func testCustomers(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other, theirs := licenceSetup(t, s, "other")
	issued := func(h int) time.Time { return base.Add(-time.Duration(h) * time.Hour) }

	anonymised := newLicence(o.ID, p.ID, "gone@"+licentia.AnonymisedDomain, issued(0))
	anonymised.AnonymisedAt = ptr(issued(0))
	createLicences(t, s,
		newLicence(o.ID, p.ID, "Alice@Example.com", issued(5)),
		newLicence(o.ID, p.ID, "alice@example.com", issued(1)),
		newLicence(o.ID, p.ID, "bob@example.com", issued(3)),
		newLicence(o.ID, p.ID, "alicia@example.org", issued(3)),
		newLicence(o.ID, p.ID, "carol@example.com", issued(9)),
		anonymised,
	)
	// Their newest licence is newer than any of ours and shares an address.
	createLicences(t, s, newLicence(other.ID, theirs.ID, "alice@example.com", issued(0)),
		newLicence(other.ID, theirs.ID, "zed@example.com", issued(0)))

	all := []store.Customer{
		{Email: "alice@example.com", LastIssuedAt: issued(1), Licences: 2},
		{Email: "alicia@example.org", LastIssuedAt: issued(3), Licences: 1},
		{Email: "bob@example.com", LastIssuedAt: issued(3), Licences: 1},
		{Email: "carol@example.com", LastIssuedAt: issued(9), Licences: 1},
	}
	for _, c := range []struct {
		name string
		f    store.CustomerFilter
		want []store.Customer
	}{
		{"all", store.CustomerFilter{Limit: 10}, all},
		{"first page", store.CustomerFilter{Limit: 2}, all[:2]},
		{"second page", store.CustomerFilter{Offset: 2, Limit: 2}, all[2:]},
		{"past the end", store.CustomerFilter{Offset: 4, Limit: 2}, nil},
		{"prefix any case", store.CustomerFilter{Prefix: ptr("ALI"), Limit: 10}, all[:2]},
		{"prefix whole", store.CustomerFilter{Prefix: ptr("alice@example.com"), Limit: 10}, all[:1]},
		{"prefix none", store.CustomerFilter{Prefix: ptr("zed"), Limit: 10}, nil},
		{"prefix not text", store.CustomerFilter{Prefix: ptr("a\x00"), Limit: 10}, nil},
	} {
		got, err := s.Customers(ctx, o.ID, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: customers (-want +got):\n%s", c.name, diff)
		}
	}
	if got, err := s.Customers(ctx, "not-an-id", store.CustomerFilter{Limit: 10}); err != nil || len(got) != 0 {
		t.Errorf("malformed organization id: %v, %v; want none", got, err)
	}
}
