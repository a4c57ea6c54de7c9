package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// providerItem returns the item of a provider licence.
func providerItem(l *licentia.Licence, orderKey, providerProductID string) *store.ProviderItem {
	return &store.ProviderItem{LicenceID: l.ID, OrgID: l.OrgID, IntegrationID: *l.IntegrationID, OrderKey: orderKey,
		ProviderProductID: providerProductID, OnRefund: "revoke", OnSubscriptionEnd: "expire"}
}

// testProviderItems records the order items of provider licences: one
// licence per (integration, order, provider product), found again by order
// id, checkout id or subscription id, in one organization and integration
// only, by licence id.
func testProviderItems(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, pa := licenceSetup(t, s, "acme")
	b, pb := licenceSetup(t, s, "globex")
	refs := licentia.ProviderRefs{OrderID: ptr("pi_1"), CheckoutID: ptr("cs_1"), SubscriptionID: ptr("sub_1")}
	one := providerLicence(a.ID, pa.ID, "buyer@example.com", base, refs)
	two := providerLicence(a.ID, pa.ID, "buyer@example.com", base, refs)
	two.IntegrationID = one.IntegrationID
	// Another integration of the same organization, and another
	// organization, with the same provider ids.
	otherIntegration := providerLicence(a.ID, pa.ID, "buyer@example.com", base, refs)
	otherOrg := providerLicence(b.ID, pb.ID, "buyer@example.com", base, refs)
	otherOrg.IntegrationID = one.IntegrationID
	createLicences(t, s, one, two, otherIntegration, otherOrg)
	itOne, itTwo := providerItem(one, "pi_1", "price_a"), providerItem(two, "pi_1", "price_b")
	itTwo.OnRefund, itTwo.OnSubscriptionEnd = "none", "revoke"
	inTx(t, s, func(tx store.Tx) error {
		for _, it := range []*store.ProviderItem{itOne, itTwo, providerItem(otherIntegration, "pi_1", "price_a")} {
			if err := tx.CreateProviderItem(ctx, it); err != nil {
				return err
			}
		}
		return nil
	})
	// The organization is not part of the key: an integration belongs to
	// one organization.
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateProviderItem(ctx, providerItem(otherOrg, "pi_1", "price_a")) })
	wantCode(t, "CreateProviderItem(same order item)", err, licentia.CodeConflict)

	want := []store.ProviderItem{*itOne, *itTwo}
	if itTwo.LicenceID < itOne.LicenceID {
		want = []store.ProviderItem{*itTwo, *itOne}
	}
	inTx(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			integration, product, orderKey string
			want                           bool
		}{
			{*one.IntegrationID, "price_a", "pi_1", true},
			{*one.IntegrationID, "price_b", "pi_1", true},
			{*one.IntegrationID, "price_c", "pi_1", false},
			{*one.IntegrationID, "price_a", "pi_2", false},
			{*one.IntegrationID, "PRICE_A", "pi_1", false},
			{*otherIntegration.IntegrationID, "price_a", "pi_1", true},
			{*otherIntegration.IntegrationID, "price_b", "pi_1", false},
			{licentia.NewID(), "price_a", "pi_1", false},
		} {
			got, err := tx.ProviderItemIssued(ctx, c.integration, c.orderKey, c.product)
			if err != nil || got != c.want {
				t.Errorf("ProviderItemIssued(%s, %s) = %v, %v; want %v", c.orderKey, c.product, got, err, c.want)
			}
		}
		for _, id := range []string{"pi_1", "cs_1"} {
			got, err := tx.ProviderItemsByOrder(ctx, a.ID, *one.IntegrationID, id)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ProviderItemsByOrder(%s) (-want +got):\n%s", id, diff)
			}
		}
		got, err := tx.ProviderItemsBySubscription(ctx, a.ID, *one.IntegrationID, "sub_1")
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ProviderItemsBySubscription() (-want +got):\n%s", diff)
		}
		for _, c := range []struct{ org, integration, ref string }{
			{b.ID, *one.IntegrationID, "pi_1"},
			{a.ID, *one.IntegrationID, "sub_1"},
			{a.ID, *one.IntegrationID, "PI_1"},
			{a.ID, licentia.NewID(), "pi_1"},
			{"not-an-id", *one.IntegrationID, "pi_1"},
		} {
			got, err := tx.ProviderItemsByOrder(ctx, c.org, c.integration, c.ref)
			if err != nil || len(got) != 0 {
				t.Errorf("ProviderItemsByOrder(%v) = %v, %v; want none", c, got, err)
			}
		}
		for _, c := range []struct{ org, integration, ref string }{
			{b.ID, *one.IntegrationID, "sub_1"},
			{a.ID, *one.IntegrationID, "pi_1"},
			{a.ID, licentia.NewID(), "sub_1"},
		} {
			got, err := tx.ProviderItemsBySubscription(ctx, c.org, c.integration, c.ref)
			if err != nil || len(got) != 0 {
				t.Errorf("ProviderItemsBySubscription(%v) = %v, %v; want none", c, got, err)
			}
		}
		return nil
	})
}

// testPendingEffects keeps an effect once per (integration, kind, ref);
// taking it returns it once.
func testPendingEffects(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := createOrganization(t, s, "acme")
	b := createOrganization(t, s, "globex")
	integration := licentia.NewID()
	zone := time.FixedZone("UTC+2", 2*3600)
	first := store.PendingEffect{OrgID: a.ID, IntegrationID: integration, Kind: store.PendingRefund, Ref: "pi_1",
		HappenedAt: time.Date(2026, 3, 1, 14, 0, 0, 123_456_789, zone)}
	again := first
	again.HappenedAt = first.HappenedAt.Add(time.Hour)
	end := store.PendingEffect{OrgID: a.ID, IntegrationID: integration, Kind: store.PendingSubscriptionEnd, Ref: "pi_1", HappenedAt: base}
	inTx(t, s, func(tx store.Tx) error {
		for _, e := range []*store.PendingEffect{&first, &again, &end} {
			if err := tx.AddPendingEffect(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	inTx(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			org, integration string
			kind             store.PendingKind
			ref              string
		}{
			{b.ID, integration, store.PendingRefund, "pi_1"},
			{a.ID, licentia.NewID(), store.PendingRefund, "pi_1"},
			{a.ID, integration, store.PendingTrialConversion, "pi_1"},
			{a.ID, integration, store.PendingRefund, "PI_1"},
		} {
			if _, found, err := tx.TakePendingEffect(ctx, c.org, c.integration, c.kind, c.ref); err != nil || found {
				t.Errorf("TakePendingEffect(%v) = %v, %v; want none", c, found, err)
			}
		}
		got, found, err := tx.TakePendingEffect(ctx, a.ID, integration, store.PendingRefund, "pi_1")
		if err != nil || !found {
			t.Fatalf("TakePendingEffect() = %v, %v; want the first effect", found, err)
		}
		want := first
		want.HappenedAt = atMillis(first.HappenedAt)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("TakePendingEffect() (-want +got):\n%s", diff)
		}
		if got.HappenedAt.Location() != time.UTC {
			t.Errorf("HappenedAt in %v, want UTC", got.HappenedAt.Location())
		}
		if _, found, err := tx.TakePendingEffect(ctx, a.ID, integration, store.PendingRefund, "pi_1"); err != nil || found {
			t.Errorf("TakePendingEffect(again) = %v, %v; want none", found, err)
		}
		return nil
	})
	// The subscription end of the same ref stays until taken.
	inTx(t, s, func(tx store.Tx) error {
		_, found, err := tx.TakePendingEffect(ctx, a.ID, integration, store.PendingSubscriptionEnd, "pi_1")
		if err != nil || !found {
			t.Errorf("TakePendingEffect(subscription end) = %v, %v; want it", found, err)
		}
		return nil
	})
}

// testPlanSubscriptionGrace counts a licence whose subscription ended less
// than 30 days before now, not one that ended 30 days before now or
// earlier, and a licence in force once whether or not its subscription
// ended.
func testPlanSubscriptionGrace(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	now := base.Add(60 * 24 * time.Hour)
	ended := func(ago time.Duration, st licentia.Status) *licentia.Licence {
		l := providerLicence(o.ID, p.ID, "buyer@example.com", base, licentia.ProviderRefs{SubscriptionID: ptr("sub_" + licentia.NewID()[:8])})
		l.Status, l.SubscriptionEndedAt = st, ptr(now.Add(-ago))
		return l
	}
	exactly := ended(licentia.SubscriptionGrace, licentia.StatusExpired)
	justInside := ended(licentia.SubscriptionGrace-time.Millisecond, licentia.StatusRevoked)
	recent := ended(time.Hour, licentia.StatusExpired)
	longAgo := ended(31*24*time.Hour, licentia.StatusRevoked)
	inForce := ended(time.Hour, licentia.StatusActive)
	// Ends in the future: a subscription whose end the provider set ahead.
	ahead := ended(-time.Hour, licentia.StatusExpired)
	createLicences(t, s, exactly, justInside, recent, longAgo, inForce, ahead)
	count := func(at time.Time) int64 {
		t.Helper()
		n, err := s.PlanLicenceCount(ctx, o.ID, at)
		if err != nil {
			t.Fatalf("PlanLicenceCount() error = %v", err)
		}
		return n
	}
	// justInside, recent, inForce, ahead.
	if got := count(now); got != 4 {
		t.Errorf("PlanLicenceCount(now) = %d, want 4", got)
	}
	// A millisecond later justInside has ended 30 days ago too.
	if got := count(now.Add(time.Millisecond)); got != 3 {
		t.Errorf("PlanLicenceCount(now + 1ms) = %d, want 3", got)
	}
	// A millisecond earlier exactly ended less than 30 days ago.
	if got := count(now.Add(-time.Millisecond)); got != 5 {
		t.Errorf("PlanLicenceCount(now - 1ms) = %d, want 5", got)
	}
	for _, l := range []*licentia.Licence{exactly, justInside, recent, longAgo, inForce, ahead} {
		if got, want := l.CountsInPlan(now), l != exactly && l != longAgo; got != want {
			t.Errorf("CountsInPlan(%s ago) = %v, want %v", now.Sub(*l.SubscriptionEndedAt), got, want)
		}
	}
}
