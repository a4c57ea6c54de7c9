package postgres_test

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// The worker records an attempt (delivery row) and then turns its endpoint
// off (endpoint row) while a maker deletes the endpoint. Deleting locks the
// deliveries before the endpoint, in the worker's order, so neither waits
// for the other in a cycle and no transaction has to run again.
func TestDeleteEndpointWhileRecording(t *testing.T) {
	ctx := t.Context()
	u, err := url.Parse(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	app := "lockorder_" + strings.ToLower(licentia.NewID()[:8])
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	db, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	var logs syncBuffer
	db.SetLogger(slog.New(slog.NewJSONHandler(&logs, nil)))
	watch, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Close(context.WithoutCancel(ctx)) })

	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	org := &licentia.Organization{ID: licentia.NewID(), Name: "Org", Slug: "org", Plan: licentia.PlanFree, CreatedAt: now}
	ep := &licentia.WebhookEndpoint{ID: licentia.NewID(), OrgID: org.ID, URL: "https://hooks.example.com/",
		EventTypes: []licentia.EventType{licentia.EventLicenceIssued}, Enabled: true, CreatedAt: now, UpdatedAt: now}
	secret := &licentia.WebhookSecret{ID: licentia.NewID(), EndpointID: ep.ID, Sealed: []byte("sealed"),
		MasterFingerprint: "sha256:master", CreatedAt: now}
	ev := &licentia.Event{ID: "evt_0123456789abcdef0123456789abcdef", OrgID: org.ID, Type: licentia.EventLicenceIssued,
		At: now, Body: []byte(`{}`)}
	d := licentia.Delivery{ID: licentia.NewID(), OrgID: org.ID, EndpointID: ep.ID, EventID: ev.ID, EventType: ev.Type,
		Status: licentia.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}
	err = db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrganization(ctx, org); err != nil {
			return err
		}
		if err := tx.CreateWebhookEndpoint(ctx, ep, secret); err != nil {
			return err
		}
		if err := tx.InsertEvent(ctx, ev); err != nil {
			return err
		}
		return tx.CreateDeliveries(ctx, []licentia.Delivery{d})
	})
	if err != nil {
		t.Fatalf("set-up: %v", err)
	}

	deleted := make(chan error, 1)
	var runs atomic.Int32
	err = db.InTx(ctx, func(tx store.Tx) error {
		failed := d
		failed.Status, failed.Attempts, failed.LastAttemptAt = licentia.DeliveryFailed, 1, &now
		if err := tx.FinishAttempts(ctx, []licentia.Delivery{failed}); err != nil {
			return err
		}
		if runs.Add(1) == 1 {
			go func() {
				deleted <- db.InTx(ctx, func(tx store.Tx) error { return tx.DeleteWebhookEndpoint(ctx, org.ID, ep.ID) })
			}()
			waitForLockWait(t, watch, app)
		}
		off := *ep
		reason := licentia.DisabledByFailures
		off.Enabled, off.DisabledReason, off.UpdatedAt = false, &reason, now
		return tx.UpdateWebhookEndpoint(ctx, &off)
	})
	if err != nil {
		t.Fatalf("recording: %v", err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("DeleteWebhookEndpoint() error = %v", err)
	}
	if got := logs.String(); strings.Contains(got, "transaction retried") {
		t.Errorf("log = %q, want no transaction run again", got)
	}
	if _, err := db.WebhookEndpoint(ctx, org.ID, ep.ID); licentia.ErrorCode(err) != licentia.CodeWebhookEndpointNotFound {
		t.Errorf("WebhookEndpoint() after delete error = %v, want webhook_endpoint_not_found", err)
	}
}

// waitForLockWait returns once a connection named app waits for a lock.
func waitForLockWait(t *testing.T, conn *pgx.Conn, app string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
		if err != nil {
			t.Fatalf("watch locks: %v", err)
		}
		if n > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the deletion never waited for a lock")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
