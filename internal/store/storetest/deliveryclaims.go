package storetest

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testClaimDeliveries claims only pending deliveries due at now and not
// leased, earliest first (id breaking ties), at most limit of them; a
// claimed one is not claimed again until its lease has passed.
func testClaimDeliveries(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	due := func(n int, next time.Time) *licentia.Delivery {
		d := newDelivery(ep, ev, base.Add(-time.Hour))
		d.ID, d.NextAttemptAt = seqID(n), ptr(next)
		return d
	}
	early, tieA, tieB := due(5, base.Add(-time.Minute)), due(2, base.Add(-time.Second)), due(1, base.Add(-time.Second))
	atNow, later := due(3, base), due(4, base.Add(time.Minute))
	succeeded, failed, unscheduled := due(6, base.Add(-time.Hour)), due(7, base.Add(-time.Hour)), due(8, base)
	succeeded.Status, failed.Status, unscheduled.NextAttemptAt = licentia.DeliverySucceeded, licentia.DeliveryFailed, nil
	createDeliveries(t, s, later, succeeded, atNow, tieA, failed, early, unscheduled, tieB)

	lease := base.Add(5 * time.Minute)
	for _, tt := range []struct {
		name       string
		now, until time.Time
		limit      int
		want       []*licentia.Delivery
	}{
		{"limit", base, lease, 2, []*licentia.Delivery{early, tieB}},
		{"rest due", base, lease, 10, []*licentia.Delivery{tieA, atNow}},
		{"all leased", base, lease, 10, nil},
		{"later due", base.Add(time.Minute), lease, 10, []*licentia.Delivery{later}},
		{"lease not passed", lease.Add(-time.Millisecond), lease.Add(time.Hour), 10, nil},
		{"lease passed", lease, lease.Add(time.Hour), 10, []*licentia.Delivery{early, tieB, tieA, atNow, later}},
	} {
		got := claim(t, s, tt.now, tt.until, tt.limit)
		if diff := cmp.Diff(storedDeliveries(tt.want...), got, cmpopts.EquateEmpty(), ignoreLease); diff != "" {
			t.Errorf("%s: ClaimDeliveries() mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// testFinishAttempts records attempts: every field is written and the lease
// ends, so a delivery still pending is claimed again at its next attempt.
// One call records several outcomes.
func testFinishAttempts(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	// other is due after the claims below.
	d, other := newDelivery(ep, ev, base), newDelivery(ep, ev, base.Add(time.Hour))
	createDeliveries(t, s, d, other)
	claimed := claim(t, s, base, base.Add(time.Hour), 1)
	if len(claimed) != 1 || claimed[0].ID != d.ID {
		t.Fatalf("ClaimDeliveries() = %+v, want %s", claimed, d.ID)
	}
	zone := time.FixedZone("UTC-3", -3*60*60)
	retry := claimed[0]
	retry.Attempts, retry.LastStatusCode, retry.FailureReason = 1, ptr(503), ptr(licentia.FailureStatus)
	retry.LastResponse = ptr(`{"error":"busy"} ` + strings.Repeat("é", 900))
	retry.LastAttemptAt = ptr(base.Add(time.Second + 1500*time.Microsecond).In(zone))
	retry.NextAttemptAt = ptr(base.Add(time.Minute + time.Microsecond).In(zone))
	finish(t, s, &retry)
	if diff := cmp.Diff(storedDelivery(&retry), *readDelivery(t, s, d), ignoreLease); diff != "" {
		t.Errorf("Delivery() after a failed attempt mismatch (-want +got):\n%s", diff)
	}
	// Before the lease would have passed: FinishAttempts ended it.
	again := claim(t, s, base.Add(time.Minute), base.Add(2*time.Hour), 1)
	if diff := cmp.Diff(storedDeliveries(&retry), again, ignoreLease); diff != "" {
		t.Errorf("ClaimDeliveries() after FinishAttempts mismatch (-want +got):\n%s", diff)
	}

	done := again[0]
	done.Status, done.Attempts, done.NextAttemptAt = licentia.DeliverySucceeded, 2, nil
	done.LastAttemptAt, done.LastStatusCode, done.FailureReason = ptr(base.Add(time.Minute)), ptr(204), nil
	done.LastResponse = ptr("")
	gaveUp := *other
	gaveUp.Status, gaveUp.Attempts, gaveUp.NextAttemptAt = licentia.DeliveryFailed, 1, nil
	gaveUp.LastAttemptAt, gaveUp.LastStatusCode, gaveUp.FailureReason = ptr(base.Add(time.Minute)), nil, ptr(licentia.FailureTimeout)
	gaveUp.LastResponse = nil
	// A delivery deleted meanwhile (with its endpoint or event) leaves
	// nothing to record, and is no error; the others in the call are
	// written.
	vanished := done
	vanished.ID = licentia.NewID()
	finish(t, s, &done, &vanished, &gaveUp)
	for _, want := range []*licentia.Delivery{&done, &gaveUp} {
		if diff := cmp.Diff(storedDelivery(want), *readDelivery(t, s, want), ignoreLease); diff != "" {
			t.Errorf("Delivery() after the last attempt mismatch (-want +got):\n%s", diff)
		}
	}
	if got := claim(t, s, base.Add(24*time.Hour), base.Add(25*time.Hour), 10); len(got) != 0 {
		t.Errorf("ClaimDeliveries() of finished deliveries = %+v, want none", got)
	}
	if _, err := s.Delivery(t.Context(), vanished.OrgID, vanished.EndpointID, vanished.ID); err == nil {
		t.Errorf("Delivery(vanished) error = nil, want it still missing")
	}
	finish(t, s)
}

// testRequeueDelivery makes a failed delivery pending and due at now,
// keeping its history; only the endpoint's own delivery can be requeued.
func testRequeueDelivery(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	ep, other := newEndpoint(o.ID, base), newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	createEndpoint(t, s, other)
	ev := createEvent(t, s, o.ID, base)
	d := newDelivery(ep, ev, base)
	d.Status, d.Attempts, d.NextAttemptAt = licentia.DeliveryFailed, 9, nil
	d.LastAttemptAt, d.LastStatusCode, d.FailureReason = ptr(base.Add(time.Hour)), ptr(500), ptr(licentia.FailureStatus)
	createDeliveries(t, s, d)

	now := base.Add(2*time.Hour + 1500*time.Microsecond)
	inTx(t, s, func(tx store.Tx) error { return tx.RequeueDelivery(ctx, o.ID, ep.ID, d.ID, now) })
	want := storedDelivery(d)
	want.Status, want.NextAttemptAt = licentia.DeliveryPending, ptr(atMillis(now))
	if diff := cmp.Diff(want, *readDelivery(t, s, d), ignoreLease); diff != "" {
		t.Errorf("Delivery() after RequeueDelivery() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]licentia.Delivery{want}, claim(t, s, atMillis(now), now.Add(time.Hour), 10), ignoreLease); diff != "" {
		t.Errorf("ClaimDeliveries() after RequeueDelivery() mismatch (-want +got):\n%s", diff)
	}
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.RequeueDelivery(ctx, o.ID, ep.ID, licentia.NewID(), now) })
	wantCode(t, "RequeueDelivery(missing)", err, licentia.CodeWebhookDeliveryNotFound)
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.RequeueDelivery(ctx, o.ID, other.ID, d.ID, now) })
	wantCode(t, "RequeueDelivery(another endpoint's)", err, licentia.CodeWebhookDeliveryNotFound)
}

// testClaimRace: claimers in separate transactions share the due
// deliveries; each is claimed exactly once.
func testClaimRace(t *testing.T, s store.Store) {
	const racers, limit, total = 8, 5, 20
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	var ds []*licentia.Delivery
	for i := range total {
		ds = append(ds, newDelivery(ep, ev, base.Add(-time.Duration(i%3)*time.Second)))
	}
	createDeliveries(t, s, ds...)
	claimed := make([][]licentia.Delivery, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				var err error
				claimed[i], err = tx.ClaimDeliveries(ctx, base, base.Add(time.Minute), limit)
				return err
			})
		})
	}
	wg.Wait()
	var got []string
	for i, err := range errs {
		if err != nil || len(claimed[i]) > limit {
			t.Errorf("racer %d: claimed %d, error = %v, want at most %d, nil", i, len(claimed[i]), err, limit)
		}
		got = append(got, deliveryIDs(claimed[i])...)
	}
	want := make([]string, total)
	for i, d := range ds {
		want[i] = d.ID
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got, ignoreLease); diff != "" {
		t.Errorf("claimed deliveries, each once (-want +got):\n%s", diff)
	}
}

// testStaleLease: an attempt that outlived its lease, after another worker
// claimed the delivery again, records nothing; the later attempt does, and
// so does another delivery recorded in the same call as the stale one.
func testStaleLease(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	ep := newEndpoint(o.ID, base)
	createEndpoint(t, s, ep)
	ev := createEvent(t, s, o.ID, base)
	d, other := newDelivery(ep, ev, base), newDelivery(ep, ev, base.Add(2*time.Minute))
	createDeliveries(t, s, d, other)
	first := claim(t, s, base, base.Add(time.Minute), 1)
	second := claim(t, s, base.Add(2*time.Minute), base.Add(3*time.Minute), 2)
	if len(first) != 1 || len(second) != 2 || second[0].ID != d.ID {
		t.Fatalf("claims = %d, %d deliveries, want 1 and 2, %s first", len(first), len(second), d.ID)
	}
	late, now, fresh := first[0], second[0], second[1]
	late.Status, late.Attempts, late.FailureReason = licentia.DeliveryFailed, 1, ptr(licentia.FailureTimeout)
	now.Status, now.Attempts, now.LastStatusCode = licentia.DeliverySucceeded, 1, ptr(200)
	fresh.Status, fresh.Attempts, fresh.LastStatusCode, fresh.NextAttemptAt = licentia.DeliverySucceeded, 1, ptr(204), nil
	finish(t, s, &now)
	finish(t, s, &late, &fresh)
	got := readDelivery(t, s, d)
	if got.Status != licentia.DeliverySucceeded || got.FailureReason != nil {
		t.Errorf("after a stale attempt finished late: status %s, reason %v; want succeeded", got.Status, got.FailureReason)
	}
	if got := readDelivery(t, s, other); got.Status != licentia.DeliverySucceeded || !cmp.Equal(got.LastStatusCode, ptr(204)) {
		t.Errorf("delivery recorded with the stale one: status %s, code %v; want succeeded, 204", got.Status, got.LastStatusCode)
	}
}
