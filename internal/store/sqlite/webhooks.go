package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const endpointColumns = `id, org_id, url, event_types, description, enabled, disabled_reason, created_at, updated_at`

func scanEndpoint(row interface{ Scan(...any) error }) (*licentia.WebhookEndpoint, error) {
	var e licentia.WebhookEndpoint
	var types string
	var created, updated int64
	err := row.Scan(&e.ID, &e.OrgID, &e.URL, &types, &e.Description, &e.Enabled, &e.DisabledReason, &created, &updated)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeWebhookEndpointNotFound, "Webhook endpoint")
		}
		return nil, err
	}
	e.EventTypes = store.SplitEventTypes(types)
	e.CreatedAt, e.UpdatedAt = store.FromMillis(created), store.FromMillis(updated)
	return &e, nil
}

func (r reader) WebhookEndpoints(ctx context.Context, orgID string) ([]licentia.WebhookEndpoint, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE org_id = ? ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	defer rows.Close()
	var out []licentia.WebhookEndpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("list webhook endpoints: %w", err)
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

func (r reader) WebhookEndpoint(ctx context.Context, orgID, id string) (*licentia.WebhookEndpoint, error) {
	e, err := scanEndpoint(r.q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read webhook endpoint: %w", err)
	}
	return e, nil
}

const secretColumns = `id, endpoint_id, sealed, master_fingerprint, created_at, replaced_at`

func (r reader) secrets(ctx context.Context, where string, args ...any) ([]licentia.WebhookSecret, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+secretColumns+` FROM webhook_secrets `+where+` ORDER BY created_at DESC, id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list webhook secrets: %w", err)
	}
	defer rows.Close()
	var out []licentia.WebhookSecret
	for rows.Next() {
		var s licentia.WebhookSecret
		var created int64
		var replaced *int64
		if err := rows.Scan(&s.ID, &s.EndpointID, &s.Sealed, &s.MasterFingerprint, &created, &replaced); err != nil {
			return nil, fmt.Errorf("list webhook secrets: %w", err)
		}
		s.CreatedAt, s.ReplacedAt = store.FromMillis(created), store.FromMillisPtr(replaced)
		out = append(out, s)
	}
	return out, rows.Err()
}

func (r reader) WebhookSecrets(ctx context.Context, endpointID string) ([]licentia.WebhookSecret, error) {
	return r.secrets(ctx, `WHERE endpoint_id = ?`, endpointID)
}

func (r reader) AllWebhookSecrets(ctx context.Context) ([]licentia.WebhookSecret, error) {
	return r.secrets(ctx, ``)
}

func (t *tx) CreateWebhookEndpoint(ctx context.Context, e *licentia.WebhookEndpoint, s *licentia.WebhookSecret) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.OrgID, e.URL, store.JoinEventTypes(e.EventTypes), e.Description, e.Enabled, e.DisabledReason,
		store.Millis(e.CreatedAt), store.Millis(e.UpdatedAt))
	if err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	return t.addSecret(ctx, s)
}

func (t *tx) addSecret(ctx context.Context, s *licentia.WebhookSecret) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_secrets (`+secretColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.ID, s.EndpointID, s.Sealed, s.MasterFingerprint, store.Millis(s.CreatedAt), store.MillisPtr(s.ReplacedAt))
	if err != nil {
		return fmt.Errorf("add webhook secret: %w", err)
	}
	return nil
}

func (t *tx) UpdateWebhookEndpoint(ctx context.Context, e *licentia.WebhookEndpoint) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = ?, event_types = ?, description = ?, enabled = ?,
		disabled_reason = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
		e.URL, store.JoinEventTypes(e.EventTypes), e.Description, e.Enabled, e.DisabledReason, store.Millis(e.UpdatedAt), e.OrgID, e.ID)
	if err != nil {
		return fmt.Errorf("update webhook endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeWebhookEndpointNotFound, "Webhook endpoint")
	}
	return nil
}

func (t *tx) DeleteWebhookEndpoint(ctx context.Context, orgID, id string) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE org_id = ? AND id = ?`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeWebhookEndpointNotFound, "Webhook endpoint")
	}
	return nil
}

// ReplaceWebhookSecret answers webhook_endpoint_not_found for a missing
// endpoint rather than failing on the foreign key.
func (t *tx) ReplaceWebhookSecret(ctx context.Context, s *licentia.WebhookSecret, at time.Time) error {
	var one int
	err := t.tx.QueryRowContext(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = ?`, s.EndpointID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("replace webhook secret: %w", store.NotFound(licentia.CodeWebhookEndpointNotFound, "Webhook endpoint"))
	}
	if err != nil {
		return fmt.Errorf("replace webhook secret: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE webhook_secrets SET replaced_at = ? WHERE endpoint_id = ? AND replaced_at IS NULL`,
		store.Millis(at), s.EndpointID); err != nil {
		return fmt.Errorf("replace webhook secret: %w", err)
	}
	return t.addSecret(ctx, s)
}

func (t *tx) ResealWebhookSecret(ctx context.Context, id string, sealed []byte, masterFingerprint string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE webhook_secrets SET sealed = ?, master_fingerprint = ? WHERE id = ?`, sealed, masterFingerprint, id)
	if err != nil {
		return fmt.Errorf("reseal webhook secret: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeNotFound, "Webhook secret")
	}
	return nil
}

const deliveryColumns = `id, org_id, endpoint_id, event_id, event_type, status, attempts, last_attempt_at, next_attempt_at,
	last_status_code, failure_reason, created_at, last_response`

func scanDelivery(row interface{ Scan(...any) error }) (*licentia.Delivery, error) {
	var d licentia.Delivery
	var created int64
	var last, next *int64
	err := row.Scan(&d.ID, &d.OrgID, &d.EndpointID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &last, &next,
		&d.LastStatusCode, &d.FailureReason, &created, &d.LastResponse)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeWebhookDeliveryNotFound, "Webhook delivery")
		}
		return nil, err
	}
	d.LastAttemptAt, d.NextAttemptAt, d.CreatedAt = store.FromMillisPtr(last), store.FromMillisPtr(next), store.FromMillis(created)
	return &d, nil
}

func (r reader) queryDeliveries(ctx context.Context, query string, args ...any) ([]licentia.Delivery, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []licentia.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

func (r reader) Deliveries(ctx context.Context, orgID, endpointID string, after *string, limit int) ([]licentia.Delivery, error) {
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries WHERE org_id = ? AND endpoint_id = ?`
	args := []any{orgID, endpointID}
	if after != nil {
		q += ` AND (created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE org_id = ? AND endpoint_id = ? AND id = ?)`
		args = append(args, orgID, endpointID, *after)
	}
	ds, err := r.queryDeliveries(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return ds, nil
}

func (r reader) Delivery(ctx context.Context, orgID, endpointID, id string) (*licentia.Delivery, error) {
	d, err := scanDelivery(r.q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE org_id = ? AND endpoint_id = ? AND id = ?`, orgID, endpointID, id))
	if err != nil {
		return nil, fmt.Errorf("read delivery: %w", err)
	}
	return d, nil
}

func (r reader) Event(ctx context.Context, id string) (*licentia.Event, error) {
	var e licentia.Event
	var at int64
	var body string
	err := r.q.QueryRowContext(ctx, `SELECT id, org_id, type, licence_id, at, body FROM events WHERE id = ?`, id).
		Scan(&e.ID, &e.OrgID, &e.Type, &e.LicenceID, &at, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.NotFound(licentia.CodeNotFound, "Event")
	}
	if err != nil {
		return nil, fmt.Errorf("read event: %w", err)
	}
	e.At, e.Body = store.FromMillis(at), []byte(body)
	return &e, nil
}

func (t *tx) CreateDeliveries(ctx context.Context, ds []licentia.Delivery) error {
	for _, d := range ds {
		_, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.ID, d.OrgID, d.EndpointID, d.EventID, d.EventType, d.Status, d.Attempts, store.MillisPtr(d.LastAttemptAt),
			store.MillisPtr(d.NextAttemptAt), d.LastStatusCode, d.FailureReason, store.Millis(d.CreatedAt), d.LastResponse)
		if err != nil {
			return fmt.Errorf("create delivery: %w", err)
		}
	}
	return nil
}

func (t *tx) QueueDeliveries(ctx context.Context, e *licentia.Event) error {
	endpoints, err := t.WebhookEndpoints(ctx, e.OrgID)
	if err != nil {
		return err
	}
	return t.CreateDeliveries(ctx, store.DeliveriesOf(e, endpoints))
}

// ClaimDeliveries is one statement, whose text never changes with the
// number claimed. It needs no row locks: SQLite's one writer runs claims
// one after the other. RETURNING gives rows in no set order, so they are
// sorted here.
func (t *tx) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Delivery, error) {
	ds, err := t.queryDeliveries(ctx, `UPDATE webhook_deliveries SET leased_until = ? WHERE id IN (
		SELECT id FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
		ORDER BY next_attempt_at, id LIMIT ?)
		RETURNING `+deliveryColumns, store.Millis(leaseUntil), store.Millis(now), store.Millis(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	lease := store.FromMillis(store.Millis(leaseUntil))
	for i := range ds {
		ds[i].LeasedUntil = &lease
	}
	slices.SortFunc(ds, func(a, b licentia.Delivery) int {
		return cmp.Or(a.NextAttemptAt.Compare(*b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	return ds, nil
}

// FinishAttempts writes each outcome with one statement of a fixed text,
// run once a delivery in the caller's transaction: what costs is the
// commit, and there is one for the lot.
func (t *tx) FinishAttempts(ctx context.Context, ds []licentia.Delivery) error {
	for _, d := range ds {
		_, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, last_attempt_at = ?,
			next_attempt_at = ?, last_status_code = ?, failure_reason = ?, last_response = ?, leased_until = NULL
			WHERE id = ? AND (? IS NULL OR leased_until = ?)`,
			d.Status, d.Attempts, store.MillisPtr(d.LastAttemptAt), store.MillisPtr(d.NextAttemptAt), d.LastStatusCode, d.FailureReason,
			d.LastResponse, d.ID,
			store.MillisPtr(d.LeasedUntil), store.MillisPtr(d.LeasedUntil))
		if err != nil {
			return fmt.Errorf("finish attempt of %s: %w", d.ID, err)
		}
	}
	return nil
}

func (t *tx) RequeueDelivery(ctx context.Context, orgID, endpointID, id string, now time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, leased_until = NULL
		WHERE org_id = ? AND endpoint_id = ? AND id = ?`, store.Millis(now), orgID, endpointID, id)
	if err != nil {
		return fmt.Errorf("requeue delivery: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeWebhookDeliveryNotFound, "Webhook delivery")
	}
	return nil
}

func (r reader) LastDeliverySuccess(ctx context.Context, endpointID string) (*time.Time, error) {
	var last *int64
	err := r.q.QueryRowContext(ctx, `SELECT max(last_attempt_at) FROM webhook_deliveries
		WHERE endpoint_id = ? AND status = 'succeeded'`, endpointID).Scan(&last)
	if err != nil {
		return nil, fmt.Errorf("last delivery success: %w", err)
	}
	return store.FromMillisPtr(last), nil
}

// pendingDeliveriesSQL counts through webhook_deliveries_due, the partial
// index of pending deliveries, without reading the table: the count costs
// the queue's depth, not the history of every delivery.
const pendingDeliveriesSQL = `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`

func (r reader) CountPendingDeliveries(ctx context.Context) (int64, error) {
	var n int64
	if err := r.q.QueryRowContext(ctx, pendingDeliveriesSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending deliveries: %w", err)
	}
	return n, nil
}
