package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newDelivery returns a pending delivery of ev to ep, created and due at
// created.
func newDelivery(ep *licentia.WebhookEndpoint, ev *licentia.Event, created time.Time) *licentia.Delivery {
	return &licentia.Delivery{
		ID: licentia.NewID(), OrgID: ep.OrgID, EndpointID: ep.ID, EventID: ev.ID, EventType: ev.Type,
		Status: licentia.DeliveryPending, NextAttemptAt: ptr(created), CreatedAt: created,
	}
}

// createDeliveries stores deliveries in one call.
func createDeliveries(t *testing.T, s store.Store, ds ...*licentia.Delivery) {
	t.Helper()
	rows := make([]licentia.Delivery, len(ds))
	for i, d := range ds {
		rows[i] = *d
	}
	inTx(t, s, func(tx store.Tx) error { return tx.CreateDeliveries(t.Context(), rows) })
}

// storedDelivery returns d as a store reads it back.
func storedDelivery(d *licentia.Delivery) licentia.Delivery {
	c := *d
	c.CreatedAt, c.LastAttemptAt, c.NextAttemptAt = atMillis(c.CreatedAt), atMillisPtr(c.LastAttemptAt), atMillisPtr(c.NextAttemptAt)
	return c
}

func storedDeliveries(ds ...*licentia.Delivery) []licentia.Delivery {
	out := make([]licentia.Delivery, len(ds))
	for i, d := range ds {
		out[i] = storedDelivery(d)
	}
	return out
}

// claim claims deliveries in a transaction that commits.
func claim(t *testing.T, s store.Store, now, leaseUntil time.Time, limit int) []licentia.Delivery {
	t.Helper()
	var ds []licentia.Delivery
	inTx(t, s, func(tx store.Tx) error {
		var err error
		ds, err = tx.ClaimDeliveries(t.Context(), now, leaseUntil, limit)
		return err
	})
	return ds
}

// finish records attempts in one transaction.
func finish(t *testing.T, s store.Store, ds ...*licentia.Delivery) {
	t.Helper()
	rows := make([]licentia.Delivery, len(ds))
	for i, d := range ds {
		rows[i] = *d
	}
	inTx(t, s, func(tx store.Tx) error { return tx.FinishAttempts(t.Context(), rows) })
}

// readDelivery reads a delivery that must exist.
func readDelivery(t *testing.T, r store.Reader, d *licentia.Delivery) *licentia.Delivery {
	t.Helper()
	got, err := r.Delivery(t.Context(), d.OrgID, d.EndpointID, d.ID)
	if err != nil {
		t.Fatalf("Delivery(%s) error = %v", d.ID, err)
	}
	return got
}

// testDeliveries lists an endpoint's deliveries newest first, id breaking
// ties, and pages through them with the after cursor: with any page size,
// every delivery comes exactly once, though four share one created_at.
func testDeliveries(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	ep, other := newEndpoint(o.ID, base), newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	createEndpoint(t, s, other)
	ev := createEvent(t, s, o.ID, base)
	zone := time.FixedZone("UTC+9", 9*60*60)
	full := newDelivery(ep, ev, base.Add(-time.Hour+1500*time.Microsecond).In(zone))
	full.Status, full.Attempts, full.LastStatusCode, full.FailureReason = licentia.DeliveryPending, 3, ptr(503), ptr(licentia.FailureStatus)
	full.LastAttemptAt, full.NextAttemptAt = ptr(base.Add(-time.Minute+time.Microsecond).In(zone)), ptr(base.Add(time.Hour+time.Microsecond))
	same := make([]*licentia.Delivery, 4)
	for i, n := range []int{3, 1, 4, 2} {
		same[i] = newDelivery(ep, ev, base)
		same[i].ID = seqID(n)
	}
	oldest, newest := newDelivery(ep, ev, base.Add(-2*time.Hour)), newDelivery(ep, ev, base.Add(time.Hour))
	all := append([]*licentia.Delivery{full, oldest, newest, newDelivery(other, ev, base)}, same...)
	createDeliveries(t, s, all...)
	want := storedDeliveries(newest, same[2], same[0], same[3], same[1], full, oldest)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Deliveries(ctx, o.ID, ep.ID, nil, 100)
		if diff := cmp.Diff(want, got, ignoreLease); diff != "" || err != nil {
			t.Errorf("Deliveries() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		for _, w := range want {
			d, err := r.Delivery(ctx, o.ID, ep.ID, w.ID)
			if diff := cmp.Diff(&w, d, ignoreLease); diff != "" || err != nil {
				t.Errorf("Delivery(%s) error = %v, mismatch (-want +got):\n%s", w.ID, err, diff)
				continue
			}
			wantUTC(t, "Delivery()", &d.CreatedAt, d.LastAttemptAt, d.NextAttemptAt)
		}
		for limit := 1; limit <= 4; limit++ {
			t.Run(fmt.Sprintf("pages of %d", limit), func(t *testing.T) {
				var ids []string
				var after *string
				for range len(want) + 1 {
					page, err := r.Deliveries(ctx, o.ID, ep.ID, after, limit)
					if err != nil || len(page) > limit {
						t.Errorf("Deliveries(after %v) = %d rows, %v, want at most %d", after, len(page), err, limit)
						return
					}
					if len(page) == 0 {
						break
					}
					for _, d := range page {
						ids = append(ids, d.ID)
					}
					after = &page[len(page)-1].ID
				}
				if diff := cmp.Diff(deliveryIDs(want), ids, ignoreLease); diff != "" {
					t.Errorf("paged Deliveries() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// testQueueDeliveries: an event's deliveries go to the endpoints of its
// organization that are enabled and subscribed to its type, and no other;
// each is pending, due when the event happened, with an id of its own.
func testQueueDeliveries(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, stranger := createOrganization(t, s, "acme"), createOrganization(t, s, "globex")
	subscribed, also := newEndpoint(o.ID, base), newEndpoint(o.ID, base.Add(time.Second))
	off := newEndpoint(o.ID, base)
	off.Enabled = false
	elsewhere := newEndpoint(o.ID, base)
	elsewhere.EventTypes = []licentia.EventType{licentia.EventLicenceRevoked, licentia.EventActivationCreated}
	theirs := newEndpoint(stranger.ID, base)
	for _, ep := range []*licentia.WebhookEndpoint{subscribed, also, off, elsewhere, theirs} {
		createEndpoint(t, s, ep)
	}
	at := base.Add(1500 * time.Microsecond)
	ev := createEvent(t, s, o.ID, at)
	inTx(t, s, func(tx store.Tx) error { return tx.QueueDeliveries(ctx, ev) })

	ids := map[string]bool{}
	for _, ep := range []*licentia.WebhookEndpoint{subscribed, also, off, elsewhere, theirs} {
		got, err := s.Deliveries(ctx, ep.OrgID, ep.ID, nil, 10)
		if err != nil {
			t.Fatalf("Deliveries(%s) error = %v", ep.ID, err)
		}
		if ep != subscribed && ep != also {
			if len(got) != 0 {
				t.Errorf("Deliveries() of an endpoint not to receive %s = %+v, want none", ev.Type, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("Deliveries() of a subscribed endpoint = %d, want 1", len(got))
			continue
		}
		d := got[0]
		want := storedDelivery(newDelivery(ep, ev, at))
		want.ID = d.ID
		if diff := cmp.Diff(want, d, ignoreLease); diff != "" {
			t.Errorf("queued delivery mismatch (-want +got):\n%s", diff)
		}
		if id, ok := licentia.ParseUUID(d.ID); !ok || id != d.ID || ids[d.ID] {
			t.Errorf("delivery id %q: want a lower-case UUID of its own", d.ID)
		}
		ids[d.ID] = true
	}

	// An event of another type reaches only the endpoints subscribed to it.
	revoked := &licentia.Event{ID: newEventID(), OrgID: o.ID, Type: licentia.EventLicenceRevoked, At: at, Body: []byte(`{}`)}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.InsertEvent(ctx, revoked); err != nil {
			return err
		}
		return tx.QueueDeliveries(ctx, revoked)
	})
	if got, err := s.Deliveries(ctx, o.ID, elsewhere.ID, nil, 10); err != nil || len(got) != 1 || got[0].EventID != revoked.ID {
		t.Errorf("Deliveries() of the endpoint subscribed to %s = %+v, %v; want its one delivery", revoked.Type, got, err)
	}
}

func deliveryIDs(ds []licentia.Delivery) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// testEventDeliveries reads an event by its id and deletes it: its
// deliveries go with it, another event's stay.
func testEventDeliveries(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	zone := time.FixedZone("UTC+1", 60*60)
	old, kept := createEvent(t, s, o.ID, base.Add(-time.Hour+1500*time.Microsecond).In(zone)), createEvent(t, s, o.ID, base)
	oldDelivery, keptDelivery := newDelivery(ep, old, base.Add(-time.Hour)), newDelivery(ep, kept, base)
	createDeliveries(t, s, oldDelivery, keptDelivery)
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		want := *old
		want.At = atMillis(want.At)
		got, err := r.Event(ctx, old.ID)
		if diff := cmp.Diff(&want, got, ignoreLease); diff != "" || err != nil {
			t.Errorf("Event() error = %v, mismatch (-want +got):\n%s", err, diff)
			return
		}
		wantUTC(t, "Event()", &got.At)
		_, err = r.Event(ctx, newEventID())
		wantCode(t, "Event(missing)", err, licentia.CodeNotFound)
	})

	inTx(t, s, func(tx store.Tx) error {
		n, err := tx.DeleteEventsBefore(ctx, base)
		if n != 1 {
			t.Errorf("DeleteEventsBefore() = %d, want 1", n)
		}
		return err
	})
	_, err := s.Event(ctx, old.ID)
	wantCode(t, "Event(deleted)", err, licentia.CodeNotFound)
	_, err = s.Delivery(ctx, o.ID, ep.ID, oldDelivery.ID)
	wantCode(t, "Delivery(of deleted event)", err, licentia.CodeWebhookDeliveryNotFound)
	got, err := s.Deliveries(ctx, o.ID, ep.ID, nil, 10)
	if diff := cmp.Diff(storedDeliveries(keptDelivery), got, ignoreLease); diff != "" || err != nil {
		t.Errorf("Deliveries() error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	if diff := cmp.Diff(storedDeliveries(keptDelivery), claim(t, s, base, base.Add(time.Minute), 10), ignoreLease); diff != "" {
		t.Errorf("ClaimDeliveries() mismatch (-want +got):\n%s", diff)
	}
}

// ignoreLease leaves the claim's lease out of comparisons: tests of the
// lease check it on its own (StaleLease).
var ignoreLease = cmpopts.IgnoreFields(licentia.Delivery{}, "LeasedUntil")

// testCountPendingDeliveries: the queue's depth counts the pending
// deliveries of every organization, due now, due later or claimed, and
// none that succeeded or failed for good.
func testCountPendingDeliveries(t *testing.T, s store.Store) {
	count := func(t *testing.T, r store.Reader, want int64) {
		t.Helper()
		if got, err := r.CountPendingDeliveries(t.Context()); got != want || err != nil {
			t.Errorf("CountPendingDeliveries() = %d, %v; want %d", got, err, want)
		}
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) { count(t, r, 0) })
	var all []*licentia.Delivery
	for _, slug := range []string{"acme", "globex"} {
		o := createOrganization(t, s, slug)
		ep := newEndpoint(o.ID, base)
		createEndpoint(t, s, ep)
		ev := createEvent(t, s, o.ID, base)
		for range 4 {
			all = append(all, newDelivery(ep, ev, base))
		}
	}
	later := base.Add(time.Hour)
	all[1].NextAttemptAt = &later
	createDeliveries(t, s, all...)
	eachReader(t, s, func(t *testing.T, r store.Reader) { count(t, r, 8) })

	claimed := claim(t, s, base, base.Add(time.Minute), 2)
	if len(claimed) != 2 {
		t.Fatalf("ClaimDeliveries() claimed %d, want 2", len(claimed))
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) { count(t, r, 8) })

	at := base.Add(time.Second)
	ok, failed := claimed[0], claimed[1]
	ok.Status, ok.Attempts, ok.LastAttemptAt, ok.NextAttemptAt = licentia.DeliverySucceeded, 1, &at, nil
	failed.Status, failed.Attempts, failed.LastAttemptAt, failed.NextAttemptAt = licentia.DeliveryFailed, 1, &at, nil
	finish(t, s, &ok, &failed)
	eachReader(t, s, func(t *testing.T, r store.Reader) { count(t, r, 6) })
}

// testLastDeliverySuccess: nil until a delivery succeeds, then the latest
// successful attempt's time; failures do not count.
func testLastDeliverySuccess(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	ok, bad := newDelivery(ep, ev, base), newDelivery(ep, ev, base)
	createDeliveries(t, s, ok, bad)
	if got, err := s.LastDeliverySuccess(t.Context(), ep.ID); got != nil || err != nil {
		t.Fatalf("LastDeliverySuccess() before any success = %v, %v; want nil", got, err)
	}
	at, later := base.Add(time.Minute), base.Add(time.Hour)
	ok.Status, ok.Attempts, ok.LastAttemptAt, ok.NextAttemptAt = licentia.DeliverySucceeded, 1, &at, nil
	bad.Status, bad.Attempts, bad.LastAttemptAt, bad.NextAttemptAt = licentia.DeliveryFailed, 1, &later, nil
	finish(t, s, ok, bad)
	got, err := s.LastDeliverySuccess(t.Context(), ep.ID)
	if err != nil || got == nil || !got.Equal(at) {
		t.Errorf("LastDeliverySuccess() = %v, %v; want %v", got, err, at)
	}
}
