package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const deliveryColumns = `id, org_id, endpoint_id, event_id, event_type, status, attempts, last_attempt_at, next_attempt_at,
	last_status_code, failure_reason, created_at, last_response`

func deliveryNotFound() error {
	return store.NotFound(licentia.CodeWebhookDeliveryNotFound, "Webhook delivery")
}

func scanDelivery(row pgx.Row) (*licentia.Delivery, error) {
	var d licentia.Delivery
	err := row.Scan(&d.ID, &d.OrgID, &d.EndpointID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &d.LastAttemptAt,
		&d.NextAttemptAt, &d.LastStatusCode, &d.FailureReason, &d.CreatedAt, &d.LastResponse)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, deliveryNotFound()
	}
	if err != nil {
		return nil, err
	}
	d.LastAttemptAt, d.NextAttemptAt, d.CreatedAt = utcPtr(d.LastAttemptAt), utcPtr(d.NextAttemptAt), d.CreatedAt.UTC()
	return &d, nil
}

func (r reader) queryDeliveries(ctx context.Context, query string, args ...any) ([]licentia.Delivery, error) {
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanDelivery)
}

// Deliveries pages with a keyset cursor: the rows after the cursor's
// (created_at, id). A cursor that is not a delivery of this endpoint finds
// nothing, as on SQLite.
func (r reader) Deliveries(ctx context.Context, orgID, endpointID string, after *string, limit int) ([]licentia.Delivery, error) {
	if !isID(orgID) || !isID(endpointID) || (after != nil && !isID(*after)) {
		return nil, nil
	}
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries WHERE org_id = @org AND endpoint_id = @endpoint`
	args := pgx.NamedArgs{"org": orgID, "endpoint": endpointID, "limit": limit}
	if after != nil {
		q += ` AND (created_at, id) < (SELECT created_at, id FROM webhook_deliveries
			WHERE org_id = @org AND endpoint_id = @endpoint AND id = @after)`
		args["after"] = *after
	}
	ds, err := r.queryDeliveries(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT @limit`, args)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return ds, nil
}

func (r reader) Delivery(ctx context.Context, orgID, endpointID, id string) (*licentia.Delivery, error) {
	if !isID(orgID) || !isID(endpointID) || !isID(id) {
		return nil, fmt.Errorf("read delivery: %w", deliveryNotFound())
	}
	d, err := scanDelivery(r.q.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE org_id = $1 AND endpoint_id = $2 AND id = $3`, orgID, endpointID, id))
	if err != nil {
		return nil, fmt.Errorf("read delivery: %w", err)
	}
	return d, nil
}

// Event ids are text (evt_...), so any valid text may be looked up.
func (r reader) Event(ctx context.Context, id string) (*licentia.Event, error) {
	if !isText(id) {
		return nil, fmt.Errorf("read event: %w", store.NotFound(licentia.CodeNotFound, "Event"))
	}
	e, err := scanEvent(r.q.QueryRow(ctx, `SELECT id, org_id, type, licence_id, at, body FROM events WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("read event: %w", store.NotFound(licentia.CodeNotFound, "Event"))
	}
	if err != nil {
		return nil, fmt.Errorf("read event: %w", err)
	}
	return e, nil
}

// CreateDeliveries sends the inserts as one batch, one round trip.
func (t *tx) CreateDeliveries(ctx context.Context, ds []licentia.Delivery) error {
	for _, d := range ds {
		t.tx.later(`INSERT INTO webhook_deliveries (`+deliveryColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			d.ID, d.OrgID, d.EndpointID, d.EventID, string(d.EventType), string(d.Status), d.Attempts, msPtr(d.LastAttemptAt),
			msPtr(d.NextAttemptAt), d.LastStatusCode, d.FailureReason, ms(d.CreatedAt), d.LastResponse)
	}
	return nil
}

// QueueDeliveries is one statement held back: the endpoints are read and
// the deliveries inserted by the server, so the transaction waits for no
// answer. Its ids are version 4 UUIDs, as licentia.NewID makes.
func (t *tx) QueueDeliveries(ctx context.Context, e *licentia.Event) error {
	if !isID(e.OrgID) {
		return nil
	}
	t.tx.later(`INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
		SELECT gen_random_uuid(), org_id, id, $2, $3, $4, 0, $5, $5 FROM webhook_endpoints
		WHERE org_id = $1 AND enabled AND $3 = ANY (string_to_array(event_types, ' '))`,
		e.OrgID, e.ID, string(e.Type), string(licentia.DeliveryPending), ms(e.At))
	return nil
}

// ClaimDeliveries is one statement, safe across processes: the subquery
// locks the due rows it picks, skipping rows another claim holds, and the
// UPDATE leases them. A row another claim leased and committed after this
// statement began is re-checked under its lock (READ COMMITTED) and, now
// leased, left out. RETURNING gives rows in no order, so they are sorted
// here, as SQLite's claim returns them.
func (t *tx) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Delivery, error) {
	ds, err := t.queryDeliveries(ctx, `UPDATE webhook_deliveries SET leased_until = $1 WHERE id IN (
		SELECT id FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at <= $2 AND (leased_until IS NULL OR leased_until <= $2)
		ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+deliveryColumns, ms(leaseUntil), ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	lease := ms(leaseUntil)
	for i := range ds {
		ds[i].LeasedUntil = &lease
	}
	slices.SortFunc(ds, func(a, b licentia.Delivery) int {
		return cmp.Or(a.NextAttemptAt.Compare(*b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	return ds, nil
}

// FinishAttempts writes the outcomes and ends the leases, sending every
// update in one batch, one round trip. A delivery deleted meanwhile, with
// its endpoint or its event, is no error: there is nothing left to record.
func (t *tx) FinishAttempts(ctx context.Context, ds []licentia.Delivery) error {
	b := &pgx.Batch{}
	for _, d := range ds {
		if !isID(d.ID) {
			continue
		}
		b.Queue(`UPDATE webhook_deliveries SET status = $1, attempts = $2, last_attempt_at = $3,
			next_attempt_at = $4, last_status_code = $5, failure_reason = $6, last_response = $9, leased_until = NULL
			WHERE id = $7 AND ($8::timestamptz IS NULL OR leased_until = $8)`,
			string(d.Status), d.Attempts, msPtr(d.LastAttemptAt), msPtr(d.NextAttemptAt), d.LastStatusCode, d.FailureReason, d.ID,
			msPtr(d.LeasedUntil), d.LastResponse)
	}
	if b.Len() == 0 {
		return nil
	}
	// The rows are locked now, before the endpoint a failure may turn off
	// (see DeleteWebhookEndpoint's lock order).
	if err := t.tx.execBatch(ctx, b); err != nil {
		return fmt.Errorf("finish attempts: %w", err)
	}
	return nil
}

func (t *tx) RequeueDelivery(ctx context.Context, orgID, endpointID, id string, now time.Time) error {
	if !isID(orgID) || !isID(endpointID) || !isID(id) {
		return fmt.Errorf("requeue delivery: %w", deliveryNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, leased_until = NULL
		WHERE org_id = $2 AND endpoint_id = $3 AND id = $4`, ms(now), orgID, endpointID, id)
	if err != nil {
		return fmt.Errorf("requeue delivery: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("requeue delivery: %w", deliveryNotFound())
	}
	return nil
}

func (r reader) LastDeliverySuccess(ctx context.Context, endpointID string) (*time.Time, error) {
	if !isID(endpointID) {
		return nil, nil
	}
	var last *time.Time
	err := r.q.QueryRow(ctx, `SELECT max(last_attempt_at) FROM webhook_deliveries
		WHERE endpoint_id = $1 AND status = 'succeeded'`, endpointID).Scan(&last)
	if err != nil {
		return nil, fmt.Errorf("last delivery success: %w", err)
	}
	return utcPtr(last), nil
}

// pendingDeliveriesSQL counts through webhook_deliveries_due, the partial
// index of pending deliveries: the count costs the queue's depth, not the
// history of every delivery.
const pendingDeliveriesSQL = `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`

func (r reader) CountPendingDeliveries(ctx context.Context) (int64, error) {
	var n int64
	if err := r.q.QueryRow(ctx, pendingDeliveriesSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending deliveries: %w", err)
	}
	return n, nil
}
