package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testProviderAddons records add-on order items: once per (integration,
// order, provider product); found again by order id, checkout id,
// subscription id and, while not ended, by licence, in one organization
// and integration only; their added codes and end written back.
func testProviderAddons(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, pa := licenceSetup(t, s, "acme")
	b, pb := licenceSetup(t, s, "globex")
	l := providerLicence(a.ID, pa.ID, "buyer@example.com", base, licentia.ProviderRefs{OrderID: ptr("pi_0")})
	other := providerLicence(b.ID, pb.ID, "buyer@example.com", base, licentia.ProviderRefs{OrderID: ptr("pi_0")})
	createLicences(t, s, l, other)
	integ := *l.IntegrationID
	one := &store.ProviderAddon{OrgID: a.ID, IntegrationID: integ, OrderKey: "pi_1", ProviderProductID: "price_pdf",
		OrderID: ptr("pi_1"), CheckoutID: ptr("cs_1"), SubscriptionID: ptr("sub_1"), LicenceID: &l.ID,
		Features: []string{"batch", "export-pdf"}, Added: []string{"export-pdf"}}
	two := &store.ProviderAddon{OrgID: a.ID, IntegrationID: integ, OrderKey: "pi_2", ProviderProductID: "price_pdf",
		OrderID: ptr("pi_2"), SubscriptionID: ptr("sub_1"), LicenceID: &l.ID, Features: []string{"export-pdf"}}
	nothing := &store.ProviderAddon{OrgID: a.ID, IntegrationID: integ, OrderKey: "pi_3", ProviderProductID: "price_pdf",
		OrderID: ptr("pi_3"), Features: []string{"export-pdf"}, EndedAt: ptr(base.Add(time.Minute))}
	theirs := &store.ProviderAddon{OrgID: b.ID, IntegrationID: *other.IntegrationID, OrderKey: "pi_1", ProviderProductID: "price_pdf",
		OrderID: ptr("pi_1"), LicenceID: &other.ID, Features: []string{"export-pdf"}, Added: []string{"export-pdf"}}
	inTx(t, s, func(tx store.Tx) error {
		for _, x := range []*store.ProviderAddon{one, two, nothing, theirs} {
			if err := tx.CreateProviderAddon(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateProviderAddon(ctx, one) })
	wantCode(t, "CreateProviderAddon(again)", err, licentia.CodeConflict)

	inTx(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			orderKey, product string
			want              bool
		}{{"pi_1", "price_pdf", true}, {"pi_1", "price_other", false}, {"pi_9", "price_pdf", false}} {
			got, err := tx.ProviderAddonRecorded(ctx, integ, c.orderKey, c.product)
			if err != nil {
				return err
			}
			if got != c.want {
				t.Errorf("ProviderAddonRecorded(%s, %s) = %v, want %v", c.orderKey, c.product, got, c.want)
			}
		}
		for _, c := range []struct {
			name string
			get  func() ([]store.ProviderAddon, error)
			want []store.ProviderAddon
		}{
			{"by order id", func() ([]store.ProviderAddon, error) { return tx.ProviderAddonsByOrder(ctx, a.ID, integ, "pi_1") }, []store.ProviderAddon{*one}},
			{"by checkout id", func() ([]store.ProviderAddon, error) { return tx.ProviderAddonsByOrder(ctx, a.ID, integ, "cs_1") }, []store.ProviderAddon{*one}},
			{"an order that added nothing", func() ([]store.ProviderAddon, error) { return tx.ProviderAddonsByOrder(ctx, a.ID, integ, "pi_3") },
				[]store.ProviderAddon{*nothing}},
			{"another organization's", func() ([]store.ProviderAddon, error) { return tx.ProviderAddonsByOrder(ctx, b.ID, integ, "pi_1") }, nil},
			{"by subscription", func() ([]store.ProviderAddon, error) {
				return tx.ProviderAddonsBySubscription(ctx, a.ID, integ, "sub_1")
			}, []store.ProviderAddon{*one, *two}},
			{"by licence, not ended", func() ([]store.ProviderAddon, error) { return tx.ProviderAddonsByLicence(ctx, a.ID, l.ID) },
				[]store.ProviderAddon{*one, *two}},
			{"by licence, another organization", func() ([]store.ProviderAddon, error) { return tx.ProviderAddonsByLicence(ctx, b.ID, l.ID) }, nil},
		} {
			got, err := c.get()
			if err != nil {
				return err
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
		return nil
	})

	one.Added, one.EndedAt = []string{"batch", "export-pdf"}, ptr(base.Add(time.Hour))
	inTx(t, s, func(tx store.Tx) error { return tx.UpdateProviderAddon(ctx, one) })
	inTx(t, s, func(tx store.Tx) error {
		got, err := tx.ProviderAddonsByOrder(ctx, a.ID, integ, "pi_1")
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.ProviderAddon{*one}, got); diff != "" {
			t.Errorf("after UpdateProviderAddon (-want +got):\n%s", diff)
		}
		live, err := tx.ProviderAddonsByLicence(ctx, a.ID, l.ID)
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]store.ProviderAddon{*two}, live); diff != "" {
			t.Errorf("by licence after one ended (-want +got):\n%s", diff)
		}
		return nil
	})
}
