package storetest

import (
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testListFilters tries the list's own filters (order and machine ids, the
// issue window) alone and with a find's, every other filter optional, with
// an organization next door holding the same order and machine ids.
func testListFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p1 := licenceSetup(t, s, "acme")
	p2 := newProduct(o.ID, "acme-two", "ACMETWO")
	createProducts(t, s, p2)
	other, theirProduct := licenceSetup(t, s, "other")
	issued := func(h int) time.Time { return base.Add(-time.Duration(h) * time.Hour) }

	ordered := newLicence(o.ID, p1.ID, "ann@example.com", issued(1))
	ordered.Source, ordered.Provider.OrderID, ordered.Provider.OrderNumber = licentia.SourceProvider, ptr("pi_1"), ptr("1001")
	checkout := newLicence(o.ID, p2.ID, "ben@example.com", issued(2))
	checkout.Source, checkout.Provider.CheckoutID = licentia.SourceProvider, ptr("cs_1")
	subscribed := newLicence(o.ID, p1.ID, "cat@example.com", issued(3))
	subscribed.Source, subscribed.Provider.SubscriptionID, subscribed.Provider.CustomerID = licentia.SourceProvider, ptr("sub_1"), ptr("cus_1")
	machine := newLicence(o.ID, p1.ID, "dan@example.com", issued(4))
	pastMachine := newLicence(o.ID, p2.ID, "eve@example.com", issued(5))
	plain := newLicence(o.ID, p1.ID, "fay@example.com", issued(6))
	all := []*licentia.Licence{ordered, checkout, subscribed, machine, pastMachine, plain}
	createLicences(t, s, all...)
	theirs := newLicence(other.ID, theirProduct.ID, "ann@example.com", issued(1))
	theirs.Provider.OrderID = ptr("pi_2")
	createLicences(t, s, theirs)
	live, past := newActivation(machine, "m-1"), newActivation(pastMachine, "m-2")
	createActivations(t, s, live, past, newActivation(theirs, "m-3"))
	deactivate(t, s, o.ID, past.ID, base)

	type filter = store.LicenceFilter
	cases := []findCase{
		{"no filter", filter{}, all},
		{"order id", filter{OrderID: ptr("pi_1")}, []*licentia.Licence{ordered}},
		{"order number", filter{OrderID: ptr("1001")}, []*licentia.Licence{ordered}},
		{"checkout id", filter{OrderID: ptr("cs_1")}, []*licentia.Licence{checkout}},
		{"subscription id", filter{OrderID: ptr("sub_1")}, []*licentia.Licence{subscribed}},
		{"customer id is no order", filter{OrderID: ptr("cus_1")}, nil},
		{"order id is exact", filter{OrderID: ptr("PI_1")}, nil},
		{"another organization's order", filter{OrderID: ptr("pi_2")}, nil},
		{"live machine", filter{MachineID: ptr("m-1")}, []*licentia.Licence{machine}},
		{"past machine", filter{MachineID: ptr("m-2")}, []*licentia.Licence{pastMachine}},
		{"another organization's machine", filter{MachineID: ptr("m-3")}, nil},
		{"issued_after is inclusive", filter{IssuedAfter: ptr(issued(3))}, []*licentia.Licence{ordered, checkout, subscribed}},
		{"issued_before is exclusive", filter{IssuedBefore: ptr(issued(4))}, []*licentia.Licence{pastMachine, plain}},
		{"issue window", filter{IssuedAfter: ptr(issued(5)), IssuedBefore: ptr(issued(2))}, []*licentia.Licence{subscribed, machine, pastMachine}},
		{"empty window", filter{IssuedAfter: ptr(issued(2)), IssuedBefore: ptr(issued(2))}, nil},
		{"product", filter{ProductID: &p2.ID}, []*licentia.Licence{checkout, pastMachine}},
		{"source", filter{Source: ptr(licentia.SourceProvider)}, []*licentia.Licence{ordered, checkout, subscribed}},
		{"term", filter{Term: ptr(licentia.TermSubscription)}, []*licentia.Licence{subscribed}},
		{"machine and product", filter{MachineID: ptr("m-1"), ProductID: &p2.ID}, nil},
		{"q and window", filter{Q: ptr("e"), IssuedBefore: ptr(issued(4))}, []*licentia.Licence{pastMachine}},
		{"after a position", filter{After: &store.ListPosition{IssuedAt: subscribed.IssuedAt, ID: subscribed.ID}}, []*licentia.Licence{machine, pastMachine, plain}},
		{"after a position, q", filter{Q: ptr("d"), After: &store.ListPosition{IssuedAt: subscribed.IssuedAt, ID: subscribed.ID}}, []*licentia.Licence{machine}},
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, tt := range cases {
			tt.f.Limit = 100
			got, err := r.FindLicences(ctx, o.ID, tt.f, base)
			if diff := gocmp.Diff(newestFirst(tt.want), licenceIDs(got)); diff != "" || err != nil {
				t.Errorf("FindLicences(%s) error = %v, ids mismatch (-want +got):\n%s", tt.name, err, diff)
			}
		}
	})
}

// testListPaging pages through licences by keyset, several issued at the
// same instant, while more are issued between pages: every licence that
// existed at the first page is seen exactly once, in the list's order.
func testListPaging(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	var existing []*licentia.Licence
	for i := range 11 {
		// Pairs share an instant, so ties fall to the id.
		l := newLicence(o.ID, p.ID, "buyer@example.com", base.Add(-time.Duration(i/2)*time.Minute))
		l.ID = seqID(100 + i*7%11)
		existing = append(existing, l)
	}
	createLicences(t, s, existing...)
	want := newestFirst(existing)

	var seen []string
	var after *store.ListPosition
	for page := 0; ; page++ {
		got, err := s.FindLicences(ctx, o.ID, store.LicenceFilter{After: after, Limit: 3}, base)
		if err != nil {
			t.Fatalf("FindLicences(page %d) error = %v", page, err)
		}
		if len(got) == 0 {
			break
		}
		for _, l := range got {
			seen = append(seen, l.ID)
		}
		last := got[len(got)-1]
		after = &store.ListPosition{IssuedAt: last.IssuedAt, ID: last.ID}
		// Licences issued between pages: later than any listed, and one
		// at the very instant of the page's last licence, on either side
		// of its id.
		fresh := newLicence(o.ID, p.ID, "new@example.com", base.Add(time.Duration(page+1)*time.Minute))
		tieLow := newLicence(o.ID, p.ID, "tie@example.com", last.IssuedAt)
		tieLow.ID = seqID(page)
		tieHigh := newLicence(o.ID, p.ID, "tie@example.com", last.IssuedAt)
		tieHigh.ID = seqID(900 + page)
		createLicences(t, s, fresh, tieLow, tieHigh)
		if page > 10 {
			t.Fatalf("paging did not end after %d pages", page)
		}
	}
	var existingSeen []string
	count := map[string]int{}
	for _, id := range seen {
		count[id]++
		if count[id] > 1 {
			t.Errorf("licence %s listed %d times, want once", id, count[id])
		}
		for _, l := range existing {
			if l.ID == id {
				existingSeen = append(existingSeen, id)
			}
		}
	}
	if diff := gocmp.Diff(want, existingSeen); diff != "" {
		t.Errorf("licences existing at the first page, as paged (-want +got):\n%s", diff)
	}
}
