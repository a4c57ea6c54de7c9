package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/webhooks"
)

// runSchedule sends every attempt of the queue's deliveries, moving the
// clock past each wait, until none is pending.
func runSchedule(t *testing.T, q *queue, w *webhooks.Worker) {
	t.Helper()
	for range webhooks.MaxAttempts + 1 {
		if _, err := w.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		q.clk.Advance(27 * time.Hour)
	}
}

// An endpoint whose deliveries fail for the whole retry period, with no
// success since, is turned off with consecutive_failures; the change is
// audited with the system as actor, and nothing more is queued to it.
func TestFailingEndpointTurnedOff(t *testing.T) {
	q := newQueue(t)
	ep := q.endpoint(t, "/down")
	q.hooks.status.Store(http.StatusInternalServerError)
	q.emit(t, 1)
	runSchedule(t, q, q.worker(q.st, 10))
	ds := q.deliveries(t, ep)
	if len(ds) != 1 || ds[0].Status != licentia.DeliveryFailed || ds[0].Attempts != webhooks.MaxAttempts {
		t.Fatalf("deliveries = %+v, want one failed after %d attempts", ds, webhooks.MaxAttempts)
	}
	got, err := q.st.WebhookEndpoint(t.Context(), q.org.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != licentia.DisabledByFailures {
		t.Errorf("endpoint enabled %v, disabled_reason %v; want off with %s", got.Enabled, got.DisabledReason, licentia.DisabledByFailures)
	}
	entries, err := q.st.OrganizationAudit(t.Context(), q.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	if last.Action != licentia.AuditWebhookEndpointUpdated || last.Actor.Type != licentia.ActorSystem {
		t.Errorf("last audit entry = %s by %s, want %s by system", last.Action, last.Actor.Type, licentia.AuditWebhookEndpointUpdated)
	}
	q.emit(t, 1)
	if n := len(q.deliveries(t, ep)); n != 1 {
		t.Errorf("%d deliveries after the endpoint was turned off, want still 1", n)
	}
}

// A receiver that refuses one event while others succeed stays on.
func TestEndpointWithSuccessesStaysOn(t *testing.T) {
	q := newQueue(t)
	ep := q.endpoint(t, "/picky")
	w := q.worker(q.st, 10)
	q.hooks.status.Store(http.StatusBadRequest)
	q.emit(t, 1)
	if _, err := w.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	q.hooks.status.Store(http.StatusOK)
	q.emit(t, 1)
	if _, err := w.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	q.hooks.status.Store(http.StatusBadRequest)
	runSchedule(t, q, w)
	got, err := q.st.WebhookEndpoint(t.Context(), q.org.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Enabled {
		t.Errorf("endpoint turned off (%v) although a delivery succeeded after the failing one was created", got.DisabledReason)
	}
}
