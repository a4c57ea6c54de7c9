package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const endpointColumns = `id, org_id, url, event_types, description, enabled, disabled_reason, created_at, updated_at`

func endpointNotFound() error {
	return store.NotFound(licentia.CodeWebhookEndpointNotFound, "Webhook endpoint")
}

func scanEndpoint(row pgx.Row) (*licentia.WebhookEndpoint, error) {
	var e licentia.WebhookEndpoint
	var types string
	err := row.Scan(&e.ID, &e.OrgID, &e.URL, &types, &e.Description, &e.Enabled, &e.DisabledReason, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, endpointNotFound()
	}
	if err != nil {
		return nil, err
	}
	e.EventTypes = store.SplitEventTypes(types)
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return &e, nil
}

func (r reader) WebhookEndpoints(ctx context.Context, orgID string) ([]licentia.WebhookEndpoint, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE org_id = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	out, err := collect(rows, scanEndpoint)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, nil
}

func (r reader) WebhookEndpoint(ctx context.Context, orgID, id string) (*licentia.WebhookEndpoint, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read webhook endpoint: %w", endpointNotFound())
	}
	e, err := scanEndpoint(r.q.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read webhook endpoint: %w", err)
	}
	return e, nil
}

const secretColumns = `id, endpoint_id, sealed, master_fingerprint, created_at, replaced_at`

func scanSecret(row pgx.Row) (*licentia.WebhookSecret, error) {
	var s licentia.WebhookSecret
	if err := row.Scan(&s.ID, &s.EndpointID, &s.Sealed, &s.MasterFingerprint, &s.CreatedAt, &s.ReplacedAt); err != nil {
		return nil, err
	}
	s.CreatedAt, s.ReplacedAt = s.CreatedAt.UTC(), utcPtr(s.ReplacedAt)
	return &s, nil
}

// secrets lists secrets newest first; id breaks ties, descending, as for
// deliveries.
func (r reader) secrets(ctx context.Context, where string, args ...any) ([]licentia.WebhookSecret, error) {
	rows, err := r.q.Query(ctx, `SELECT `+secretColumns+` FROM webhook_secrets `+where+` ORDER BY created_at DESC, id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list webhook secrets: %w", err)
	}
	out, err := collect(rows, scanSecret)
	if err != nil {
		return nil, fmt.Errorf("list webhook secrets: %w", err)
	}
	return out, nil
}

func (r reader) WebhookSecrets(ctx context.Context, endpointID string) ([]licentia.WebhookSecret, error) {
	if !isID(endpointID) {
		return nil, nil
	}
	return r.secrets(ctx, `WHERE endpoint_id = $1`, endpointID)
}

func (r reader) AllWebhookSecrets(ctx context.Context) ([]licentia.WebhookSecret, error) {
	return r.secrets(ctx, ``)
}

func (t *tx) CreateWebhookEndpoint(ctx context.Context, e *licentia.WebhookEndpoint, s *licentia.WebhookSecret) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO webhook_endpoints (`+endpointColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		e.ID, e.OrgID, e.URL, store.JoinEventTypes(e.EventTypes), e.Description, e.Enabled, e.DisabledReason,
		ms(e.CreatedAt), ms(e.UpdatedAt))
	if err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	return t.addSecret(ctx, s)
}

func (t *tx) addSecret(ctx context.Context, s *licentia.WebhookSecret) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO webhook_secrets (`+secretColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		s.ID, s.EndpointID, s.Sealed, s.MasterFingerprint, ms(s.CreatedAt), msPtr(s.ReplacedAt))
	if err != nil {
		return fmt.Errorf("add webhook secret: %w", err)
	}
	return nil
}

func (t *tx) UpdateWebhookEndpoint(ctx context.Context, e *licentia.WebhookEndpoint) error {
	if !isID(e.OrgID) || !isID(e.ID) {
		return fmt.Errorf("update webhook endpoint: %w", endpointNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE webhook_endpoints SET url = $1, event_types = $2, description = $3, enabled = $4,
		disabled_reason = $5, updated_at = $6 WHERE org_id = $7 AND id = $8`,
		e.URL, store.JoinEventTypes(e.EventTypes), e.Description, e.Enabled, e.DisabledReason, ms(e.UpdatedAt), e.OrgID, e.ID)
	if err != nil {
		return fmt.Errorf("update webhook endpoint: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("update webhook endpoint: %w", endpointNotFound())
	}
	return nil
}

// DeleteWebhookEndpoint deletes the endpoint; its secrets and deliveries go
// with it (ON DELETE CASCADE).
func (t *tx) DeleteWebhookEndpoint(ctx context.Context, orgID, id string) error {
	if !isID(orgID) || !isID(id) {
		return fmt.Errorf("delete webhook endpoint: %w", endpointNotFound())
	}
	// Deliveries first, then the endpoint: the worker records an attempt
	// (delivery row) before it turns an endpoint off (endpoint row), and a
	// cascade from the endpoint would lock the two the other way round.
	if _, err := t.tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE org_id = $1 AND endpoint_id = $2`, orgID, id); err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM webhook_endpoints WHERE org_id = $1 AND id = $2`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("delete webhook endpoint: %w", endpointNotFound())
	}
	return nil
}

// ReplaceWebhookSecret first locks the endpoint's row, so two replacements
// of one endpoint run one after the other: at READ COMMITTED the second's
// UPDATE would otherwise not see the secret the first added, and leave two
// current secrets. NO KEY UPDATE does not block deliveries being queued,
// whose foreign key takes only a KEY SHARE lock.
func (t *tx) ReplaceWebhookSecret(ctx context.Context, s *licentia.WebhookSecret, at time.Time) error {
	if !isID(s.EndpointID) {
		return fmt.Errorf("replace webhook secret: %w", endpointNotFound())
	}
	var one int
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`, s.EndpointID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("replace webhook secret: %w", endpointNotFound())
	}
	if err != nil {
		return fmt.Errorf("replace webhook secret: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE webhook_secrets SET replaced_at = $1 WHERE endpoint_id = $2 AND replaced_at IS NULL`,
		ms(at), s.EndpointID); err != nil {
		return fmt.Errorf("replace webhook secret: %w", err)
	}
	return t.addSecret(ctx, s)
}

func (t *tx) ResealWebhookSecret(ctx context.Context, id string, sealed []byte, masterFingerprint string) error {
	notFound := store.NotFound(licentia.CodeNotFound, "Webhook secret")
	if !isID(id) {
		return fmt.Errorf("reseal webhook secret: %w", notFound)
	}
	tag, err := t.tx.Exec(ctx, `UPDATE webhook_secrets SET sealed = $1, master_fingerprint = $2 WHERE id = $3`,
		sealed, masterFingerprint, id)
	if err != nil {
		return fmt.Errorf("reseal webhook secret: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("reseal webhook secret: %w", notFound)
	}
	return nil
}
