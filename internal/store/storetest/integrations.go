package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newIntegration returns a connected integration of orgID whose sealed
// credentials hold a zero byte and invalid UTF-8.
func newIntegration(orgID string, created time.Time) *licentia.Integration {
	return &licentia.Integration{
		ID: licentia.NewID(), OrgID: orgID, Provider: "stripe", Name: "Shop", AccountID: "acct_" + licentia.NewID()[:8],
		Livemode: true, SealedAPIKey: sealedBlob(), SealedWebhookSecret: sealedBlob(), MasterFingerprint: "sha256:master",
		CreatedAt: created,
	}
}

func createIntegrations(t *testing.T, s store.Store, is ...*licentia.Integration) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, i := range is {
			if err := tx.CreateIntegration(t.Context(), i); err != nil {
				return err
			}
		}
		return nil
	})
}

func newMapping(integrationID, providerProductID string, at time.Time) *licentia.Mapping {
	return &licentia.Mapping{
		IntegrationID: integrationID, ProviderProductID: providerProductID, ProductID: "app",
		LimitKind: licentia.LimitSeats, LimitCount: 1, OnRefund: licentia.RefundRevoke,
		OnSubscriptionEnd: licentia.SubscriptionEndExpire, CreatedAt: at, UpdatedAt: at,
	}
}

func putMappings(t *testing.T, s store.Store, ms ...*licentia.Mapping) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, m := range ms {
			if err := tx.PutMapping(t.Context(), m); err != nil {
				return err
			}
		}
		return nil
	})
}

// testIntegrations: integrations read back as written; the list holds the
// connected ones oldest first; a disconnected one is still read by id, and
// disconnecting it again answers integration_not_found; resealing replaces
// both credentials and the fingerprint; setting the webhook secret replaces
// it alone, of a connected integration of the organization only; an empty
// sealed secret (none yet) reads back empty.
func testIntegrations(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	first, second, third := newIntegration(o.ID, base), newIntegration(o.ID, base.Add(time.Second)), newIntegration(o.ID, base.Add(2*time.Second))
	second.Livemode = false
	createIntegrations(t, s, third, first, second)
	at := base.Add(time.Minute)
	inTx(t, s, func(tx store.Tx) error { return tx.DisconnectIntegration(ctx, o.ID, second.ID, at) })
	second.DisconnectedAt = &at

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		list, err := r.Integrations(ctx, o.ID)
		if diff := cmp.Diff([]licentia.Integration{*first, *third}, list); diff != "" || err != nil {
			t.Errorf("Integrations() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		got, err := r.Integration(ctx, o.ID, second.ID)
		if diff := cmp.Diff(second, got); diff != "" || err != nil {
			t.Errorf("Integration(disconnected) mismatch (-want +got), error %v:\n%s", err, diff)
		}
		got, err = r.IntegrationByID(ctx, first.ID)
		if diff := cmp.Diff(first, got); diff != "" || err != nil {
			t.Errorf("IntegrationByID() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		all, err := r.AllIntegrations(ctx)
		if len(all) != 3 || err != nil {
			t.Errorf("AllIntegrations() = %d, %v, want 3 (disconnected included)", len(all), err)
		}
		_, err = r.IntegrationByID(ctx, licentia.NewID())
		wantCode(t, "IntegrationByID(missing)", err, licentia.CodeIntegrationNotFound)
	})

	err := s.InTx(ctx, func(tx store.Tx) error { return tx.DisconnectIntegration(ctx, o.ID, second.ID, at) })
	wantCode(t, "DisconnectIntegration(disconnected)", err, licentia.CodeIntegrationNotFound)

	key, secret := []byte("new\x00key"), []byte("new\xffsecret")
	inTx(t, s, func(tx store.Tx) error { return tx.ResealIntegration(ctx, first.ID, key, secret, "sha256:next") })
	got, err := s.Integration(ctx, o.ID, first.ID)
	if err != nil || string(got.SealedAPIKey) != string(key) || string(got.SealedWebhookSecret) != string(secret) || got.MasterFingerprint != "sha256:next" {
		t.Errorf("after ResealIntegration(): %+v, %v", got, err)
	}
	err = s.InTx(ctx, func(tx store.Tx) error {
		return tx.ResealIntegration(ctx, licentia.NewID(), key, secret, "sha256:next")
	})
	wantCode(t, "ResealIntegration(missing)", err, licentia.CodeIntegrationNotFound)

	none := newIntegration(o.ID, base.Add(3*time.Second))
	none.SealedWebhookSecret = []byte{}
	createIntegrations(t, s, none)
	got, err = s.Integration(ctx, o.ID, none.ID)
	if err != nil || len(got.SealedWebhookSecret) != 0 || string(got.SealedAPIKey) != string(none.SealedAPIKey) {
		t.Errorf("integration without a webhook secret reads %+v, %v", got, err)
	}
	set := []byte("set\x00later\xff")
	inTx(t, s, func(tx store.Tx) error { return tx.SetIntegrationWebhookSecret(ctx, o.ID, none.ID, set) })
	got, err = s.Integration(ctx, o.ID, none.ID)
	if err != nil || string(got.SealedWebhookSecret) != string(set) || string(got.SealedAPIKey) != string(none.SealedAPIKey) ||
		got.MasterFingerprint != none.MasterFingerprint {
		t.Errorf("after SetIntegrationWebhookSecret(): %+v, %v", got, err)
	}
	other := createOrganization(t, s, "other")
	for name, c := range map[string]struct{ org, id string }{
		"another organization's": {other.ID, none.ID},
		"disconnected":           {o.ID, second.ID},
		"missing":                {o.ID, licentia.NewID()},
		"malformed":              {o.ID, "nope"},
	} {
		err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetIntegrationWebhookSecret(ctx, c.org, c.id, []byte("x")) })
		wantCode(t, "SetIntegrationWebhookSecret("+name+")", err, licentia.CodeIntegrationNotFound)
	}
	got, err = s.Integration(ctx, o.ID, none.ID)
	if err != nil || string(got.SealedWebhookSecret) != string(set) {
		t.Errorf("after refused SetIntegrationWebhookSecret(): %+v, %v", got, err)
	}
	got, err = s.Integration(ctx, o.ID, second.ID)
	if err != nil || string(got.SealedWebhookSecret) != string(second.SealedWebhookSecret) {
		t.Errorf("disconnected integration changed: %+v, %v", got, err)
	}
}

// testMappings: a put creates, a second put replaces every field but
// created_at, nulls survive the round trip, the list is ordered by
// provider_product_id byte for byte, and a delete removes one mapping only.
func testMappings(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	integ, other := newIntegration(o.ID, base), newIntegration(o.ID, base)
	createIntegrations(t, s, integ, other)
	b, a, upper := newMapping(integ.ID, "prod_b", base), newMapping(integ.ID, "prod_a", base), newMapping(integ.ID, "Prod_z", base)
	b.KeyValidDays, b.RenewalURL = ptr(int64(365)), ptr("https://shop.example.com/renew")
	// Features and adds_to are kept, and a replacement takes them away.
	b.Features, b.AddsTo = []string{"batch", "export-pdf"}, &b.ProductID
	putMappings(t, s, b, a, upper, newMapping(other.ID, "prod_a", base))

	later := base.Add(time.Hour)
	replaced := &licentia.Mapping{
		IntegrationID: integ.ID, ProviderProductID: "prod_b", ProductID: "app-pro", LimitKind: licentia.LimitMachines,
		LimitCount: 4294967295, OnRefund: licentia.RefundNone, OnSubscriptionEnd: licentia.SubscriptionEndRevoke,
		Features: []string{"sso"}, CreatedAt: later, UpdatedAt: later,
	}
	putMappings(t, s, replaced)
	replaced.CreatedAt = base

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		list, err := r.Mappings(ctx, o.ID, integ.ID)
		// Upper case sorts before lower case, byte for byte, on both engines.
		if diff := cmp.Diff([]licentia.Mapping{*upper, *a, *replaced}, list); diff != "" || err != nil {
			t.Errorf("Mappings() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		got, err := r.Mapping(ctx, o.ID, integ.ID, "prod_b")
		if diff := cmp.Diff(replaced, got); diff != "" || err != nil {
			t.Errorf("Mapping() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		_, err = r.Mapping(ctx, o.ID, integ.ID, "prod_missing")
		wantCode(t, "Mapping(missing)", err, licentia.CodeMappingNotFound)
	})

	inTx(t, s, func(tx store.Tx) error { return tx.DeleteMapping(ctx, o.ID, integ.ID, "prod_a") })
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteMapping(ctx, o.ID, integ.ID, "prod_a") })
	wantCode(t, "DeleteMapping(deleted)", err, licentia.CodeMappingNotFound)
	if list, err := s.Mappings(ctx, o.ID, integ.ID); len(list) != 2 || err != nil {
		t.Errorf("Mappings() after a delete = %d, %v, want 2", len(list), err)
	}
	if list, err := s.Mappings(ctx, o.ID, other.ID); len(list) != 1 || err != nil {
		t.Errorf("Mappings(other integration) = %d, %v, want its 1 untouched", len(list), err)
	}
}

// testIntegrationIsolation asks, as one organization, for another's
// integration and mappings through every method that takes an
// organization: each answers exactly as for an id that does not exist, and
// changes nothing.
func testIntegrationIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine, other := createOrganization(t, s, "mine"), createOrganization(t, s, "other")
	my, theirs := newIntegration(mine.ID, base), newIntegration(other.ID, base)
	createIntegrations(t, s, my, theirs)
	putMappings(t, s, newMapping(my.ID, "prod_a", base), newMapping(theirs.ID, "prod_a", base))
	missing := licentia.NewID()

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		_, want := r.Integration(ctx, mine.ID, missing)
		wantCode(t, "Integration(missing)", want, licentia.CodeIntegrationNotFound)
		_, err := r.Integration(ctx, mine.ID, theirs.ID)
		wantSame(t, "Integration(theirs)", err, want)
		_, want = r.Mapping(ctx, mine.ID, missing, "prod_a")
		wantCode(t, "Mapping(missing)", want, licentia.CodeMappingNotFound)
		_, err = r.Mapping(ctx, mine.ID, theirs.ID, "prod_a")
		wantSame(t, "Mapping(theirs)", err, want)
		for _, id := range []string{missing, theirs.ID, "not-a-uuid", "\xff"} {
			if list, err := r.Mappings(ctx, mine.ID, id); len(list) != 0 || err != nil {
				t.Errorf("Mappings(%q) = %d, %v, want none", id, len(list), err)
			}
			_, err := r.Integration(ctx, mine.ID, id)
			wantCode(t, "Integration(bad)", err, licentia.CodeIntegrationNotFound)
		}
		if list, err := r.Integrations(ctx, mine.ID); len(list) != 1 || list[0].ID != my.ID || err != nil {
			t.Errorf("Integrations() = %+v, %v, want mine only", list, err)
		}
	})

	wantDisconnect := disconnect(t, s, mine.ID, missing)
	err := disconnect(t, s, mine.ID, theirs.ID)
	wantSame(t, "DisconnectIntegration(theirs)", err, wantDisconnect)
	wantDelete := s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteMapping(ctx, mine.ID, missing, "prod_a") })
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteMapping(ctx, mine.ID, theirs.ID, "prod_a") })
	wantSame(t, "DeleteMapping(theirs)", err, wantDelete)
	if got, err := s.Integration(ctx, other.ID, theirs.ID); err != nil || got.DisconnectedAt != nil {
		t.Errorf("their integration after my disconnect: %+v, %v, want connected", got, err)
	}
	if list, err := s.Mappings(ctx, other.ID, theirs.ID); len(list) != 1 || err != nil {
		t.Errorf("their mappings after my delete = %d, %v, want 1", len(list), err)
	}
}

func disconnect(t *testing.T, s store.Store, orgID, id string) error {
	t.Helper()
	return s.InTx(t.Context(), func(tx store.Tx) error { return tx.DisconnectIntegration(t.Context(), orgID, id, base) })
}

// testProviderEvents: an event is new once per integration; the same id
// at another integration is new there; of transactions racing to record
// one event, exactly one finds it new, and the others are not failed.
func testProviderEvents(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	one, two := newIntegration(o.ID, base), newIntegration(o.ID, base)
	createIntegrations(t, s, one, two)
	record := func(integrationID, eventID string) bool {
		t.Helper()
		var isNew bool
		inTx(t, s, func(tx store.Tx) error {
			var err error
			isNew, err = tx.RecordProviderEvent(ctx, integrationID, eventID, base)
			return err
		})
		return isNew
	}
	for _, tt := range []struct {
		name, integration, event string
		want                     bool
	}{
		{"first", one.ID, "evt_1", true},
		{"repeat", one.ID, "evt_1", false},
		{"other integration", two.ID, "evt_1", true},
		{"other event", one.ID, "evt_2", true},
	} {
		if got := record(tt.integration, tt.event); got != tt.want {
			t.Errorf("%s: RecordProviderEvent(%s) = %v, want %v", tt.name, tt.event, got, tt.want)
		}
	}
	// Recorded in a transaction that rolls back, the event stays new.
	err := s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.RecordProviderEvent(ctx, one.ID, "evt_rolled_back", base); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx() error = %v, want %v", err, errRollback)
	}
	if !record(one.ID, "evt_rolled_back") {
		t.Error("RecordProviderEvent() after a rollback = false, want true")
	}

	won := race(t, func() (isNew bool, err error) {
		err = s.InTx(ctx, func(tx store.Tx) error {
			isNew, err = tx.RecordProviderEvent(ctx, one.ID, "evt_race", base)
			return err
		})
		return isNew, err
	})
	if won != 1 {
		t.Errorf("racers finding the event new = %d, want exactly 1", won)
	}
}
