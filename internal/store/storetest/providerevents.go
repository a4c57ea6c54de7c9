package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testProviderEventHistory: what an event did is noted on its row and read
// back newest first, limited; an event never noted reads as unknown; the
// events of another organization's integration are not read, even with
// its id.
func testProviderEventHistory(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, other := createOrganization(t, s, "acme"), createOrganization(t, s, "other")
	mine, theirs := newIntegration(o.ID, base), newIntegration(other.ID, base)
	createIntegrations(t, s, mine, theirs)
	for n := range 5 {
		inTx(t, s, func(tx store.Tx) error {
			id := fmt.Sprintf("evt_%d", n)
			if _, err := tx.RecordProviderEvent(ctx, mine.ID, id, base.Add(time.Duration(n)*time.Minute)); err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			return tx.NoteProviderEvent(ctx, licentia.ProviderEvent{IntegrationID: mine.ID, EventID: id,
				Type: "checkout.session.completed", Outcome: licentia.OutcomeIssued, OrderID: ptr(fmt.Sprintf("pi_%d", n)),
				SubscriptionID: ptr("sub_1")})
		})
	}
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.RecordProviderEvent(ctx, theirs.ID, "evt_theirs", base)
		return err
	})

	got, err := s.ProviderEvents(ctx, o.ID, mine.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []licentia.ProviderEvent{
		{IntegrationID: mine.ID, EventID: "evt_4", Type: "checkout.session.completed", Outcome: licentia.OutcomeIssued,
			OrderID: ptr("pi_4"), SubscriptionID: ptr("sub_1"), ReceivedAt: base.Add(4 * time.Minute)},
		{IntegrationID: mine.ID, EventID: "evt_3", Type: "checkout.session.completed", Outcome: licentia.OutcomeIssued,
			OrderID: ptr("pi_3"), SubscriptionID: ptr("sub_1"), ReceivedAt: base.Add(3 * time.Minute)},
		{IntegrationID: mine.ID, EventID: "evt_2", Type: "checkout.session.completed", Outcome: licentia.OutcomeIssued,
			OrderID: ptr("pi_2"), SubscriptionID: ptr("sub_1"), ReceivedAt: base.Add(2 * time.Minute)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProviderEvents(limit 3) mismatch (-want +got):\n%s", diff)
	}
	all, err := s.ProviderEvents(ctx, o.ID, mine.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("ProviderEvents(limit 50) = %d events, want 5", len(all))
	}
	if oldest := all[4]; oldest.Outcome != licentia.OutcomeUnknown || oldest.Type != "" || oldest.OrderID != nil {
		t.Errorf("an event never noted = %+v, want an unknown outcome, no type, no order", oldest)
	}
	if got, err := s.ProviderEvents(ctx, o.ID, theirs.ID, 50); len(got) != 0 || err != nil {
		t.Errorf("ProviderEvents(another organization's integration) = %d, %v; want none", len(got), err)
	}
	if got, err := s.ProviderEvents(ctx, o.ID, "not-an-id", 50); len(got) != 0 || err != nil {
		t.Errorf("ProviderEvents(malformed id) = %d, %v; want none", len(got), err)
	}
}
