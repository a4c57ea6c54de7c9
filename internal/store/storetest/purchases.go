package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// providerLicence returns a provider licence of an order, issued at issued.
func providerLicence(orgID, productID, email string, issued time.Time, refs licentia.ProviderRefs) *licentia.Licence {
	l := newLicence(orgID, productID, email, issued)
	l.Source, l.IntegrationID, l.Provider = licentia.SourceProvider, ptr(licentia.NewID()), refs
	return l
}

// testPurchaseLicences finds an order's licences by order id, checkout id
// or order number, in every organization, oldest first, never an anonymised
// one nor one whose key was reissued, and matches the id exactly.
func testPurchaseLicences(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, pa := licenceSetup(t, s, "acme")
	b, pb := licenceSetup(t, s, "globex")
	order := licentia.ProviderRefs{OrderID: ptr("pi_1"), CheckoutID: ptr("cs_1")}
	later := providerLicence(a.ID, pa.ID, "buyer@example.com", base.Add(2*time.Hour), order)
	first := providerLicence(a.ID, pa.ID, "buyer@example.com", base.Add(time.Hour), order)
	// Two licences issued in the same millisecond, in two organizations:
	// the id orders them.
	sameA := providerLicence(a.ID, pa.ID, "Buyer@Example.com", base.Add(90*time.Minute), licentia.ProviderRefs{OrderID: ptr("pi_1")})
	sameB := providerLicence(b.ID, pb.ID, "other@example.com", base.Add(90*time.Minute), licentia.ProviderRefs{OrderID: ptr("pi_1")})
	byCheckout := providerLicence(b.ID, pb.ID, "buyer@example.com", base, licentia.ProviderRefs{CheckoutID: ptr("pi_1")})
	anonymised := providerLicence(a.ID, pa.ID, "gone@example.com", base, order)
	otherOrder := providerLicence(a.ID, pa.ID, "buyer@example.com", base, licentia.ProviderRefs{OrderID: ptr("pi_2"), CheckoutID: ptr("cs_2")})
	ref := newLicence(a.ID, pa.ID, "buyer@example.com", base)
	ref.ExternalRef = ptr("pi_1")
	// Paddle's invoice number and Lemon Squeezy's order number stand
	// beside the order id; a number equal to another order's id finds both.
	numbered := providerLicence(b.ID, pb.ID, "buyer@example.com", base.Add(time.Minute),
		licentia.ProviderRefs{OrderID: ptr("txn_01h"), OrderNumber: ptr("325-10566")})
	numberedAsID := providerLicence(a.ID, pa.ID, "buyer@example.com", base.Add(3*time.Hour),
		licentia.ProviderRefs{OrderID: ptr("7001"), OrderNumber: ptr("pi_2")})
	// A reissued key: the old licence is replaced, the new one shows.
	replaced := providerLicence(a.ID, pa.ID, "buyer@example.com", base.Add(4*time.Hour), licentia.ProviderRefs{OrderID: ptr("pi_2")})
	replaced.Status, replaced.ReplacedBy = licentia.StatusRevoked, ptr(licentia.NewID())
	createLicences(t, s, later, first, sameA, sameB, byCheckout, anonymised, otherOrder, ref, numbered, numberedAsID, replaced)
	gone := updateLicence(t, s, a.ID, anonymised.ID, func(l *licentia.Licence) {
		l.Email, l.AnonymisedAt = l.ID+"@"+licentia.AnonymisedDomain, ptr(base.Add(3*time.Hour))
	})
	if gone.Provider.OrderID == nil {
		t.Fatal("the anonymised licence lost its order id; the case tests nothing")
	}

	mid := []*licentia.Licence{sameA, sameB}
	if sameB.ID < sameA.ID {
		mid = []*licentia.Licence{sameB, sameA}
	}
	for _, tt := range []struct {
		orderID string
		want    []*licentia.Licence
	}{
		{"pi_1", []*licentia.Licence{byCheckout, first, mid[0], mid[1], later}},
		{"cs_1", []*licentia.Licence{first, later}},
		{"pi_2", []*licentia.Licence{otherOrder, numberedAsID}},
		{"cs_2", []*licentia.Licence{otherOrder}},
		{"325-10566", []*licentia.Licence{numbered}},
		{"txn_01h", []*licentia.Licence{numbered}},
		{"7001", []*licentia.Licence{numberedAsID}},
		{"325-1056", nil},
		{"PI_1", nil},
		{"pi_", nil},
		{"pi_3", nil},
	} {
		var want []licentia.Licence
		for _, l := range tt.want {
			want = append(want, *stored(l))
		}
		t.Run(tt.orderID, func(t *testing.T) {
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				got, err := r.PurchaseLicences(ctx, tt.orderID)
				if err != nil {
					t.Fatalf("PurchaseLicences(%q) error = %v", tt.orderID, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("PurchaseLicences(%q) mismatch (-want +got):\n%s", tt.orderID, diff)
				}
			})
		})
	}
}
