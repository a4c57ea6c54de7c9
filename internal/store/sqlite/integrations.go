package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const integrationColumns = `id, org_id, provider, name, account_id, livemode, sealed_api_key, sealed_webhook_secret,
	master_fingerprint, created_at, disconnected_at`

func integrationNotFound() error {
	return store.NotFound(licentia.CodeIntegrationNotFound, "Integration")
}

func scanIntegration(row interface{ Scan(...any) error }) (*licentia.Integration, error) {
	var i licentia.Integration
	var created int64
	var disconnected *int64
	err := row.Scan(&i.ID, &i.OrgID, &i.Provider, &i.Name, &i.AccountID, &i.Livemode, &i.SealedAPIKey,
		&i.SealedWebhookSecret, &i.MasterFingerprint, &created, &disconnected)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, integrationNotFound()
	}
	if err != nil {
		return nil, err
	}
	i.CreatedAt, i.DisconnectedAt = store.FromMillis(created), store.FromMillisPtr(disconnected)
	return &i, nil
}

func (r reader) integrations(ctx context.Context, where string, args ...any) ([]licentia.Integration, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+integrationColumns+` FROM integrations `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	defer rows.Close()
	var out []licentia.Integration
	for rows.Next() {
		i, err := scanIntegration(rows)
		if err != nil {
			return nil, fmt.Errorf("list integrations: %w", err)
		}
		out = append(out, *i)
	}
	return out, rows.Err()
}

func (r reader) Integrations(ctx context.Context, orgID string) ([]licentia.Integration, error) {
	return r.integrations(ctx, `WHERE org_id = ? AND disconnected_at IS NULL`, orgID)
}

func (r reader) AllIntegrations(ctx context.Context) ([]licentia.Integration, error) {
	return r.integrations(ctx, ``)
}

func (r reader) Integration(ctx context.Context, orgID, id string) (*licentia.Integration, error) {
	i, err := scanIntegration(r.q.QueryRowContext(ctx, `SELECT `+integrationColumns+` FROM integrations WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read integration: %w", err)
	}
	return i, nil
}

func (r reader) IntegrationByID(ctx context.Context, id string) (*licentia.Integration, error) {
	i, err := scanIntegration(r.q.QueryRowContext(ctx, `SELECT `+integrationColumns+` FROM integrations WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("read integration: %w", err)
	}
	return i, nil
}

func (t *tx) CreateIntegration(ctx context.Context, i *licentia.Integration) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO integrations (`+integrationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.ID, i.OrgID, i.Provider, i.Name, i.AccountID, i.Livemode, i.SealedAPIKey, i.SealedWebhookSecret,
		i.MasterFingerprint, store.Millis(i.CreatedAt), store.MillisPtr(i.DisconnectedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The integration id is taken.")
	}
	if err != nil {
		return fmt.Errorf("create integration: %w", err)
	}
	return nil
}

func (t *tx) DisconnectIntegration(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE integrations SET disconnected_at = ? WHERE org_id = ? AND id = ? AND disconnected_at IS NULL`,
		store.Millis(at), orgID, id)
	if err != nil {
		return fmt.Errorf("disconnect integration: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("disconnect integration: %w", integrationNotFound())
	}
	return nil
}

func (t *tx) SetIntegrationWebhookSecret(ctx context.Context, orgID, id string, sealedWebhookSecret []byte) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE integrations SET sealed_webhook_secret = ? WHERE org_id = ? AND id = ? AND disconnected_at IS NULL`,
		sealedWebhookSecret, orgID, id)
	if err != nil {
		return fmt.Errorf("set integration webhook secret: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("set integration webhook secret: %w", integrationNotFound())
	}
	return nil
}

func (t *tx) ResealIntegration(ctx context.Context, id string, sealedAPIKey, sealedWebhookSecret []byte, masterFingerprint string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE integrations SET sealed_api_key = ?, sealed_webhook_secret = ?, master_fingerprint = ? WHERE id = ?`,
		sealedAPIKey, sealedWebhookSecret, masterFingerprint, id)
	if err != nil {
		return fmt.Errorf("reseal integration: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("reseal integration: %w", integrationNotFound())
	}
	return nil
}

const mappingColumns = `m.integration_id, m.provider_product_id, m.product_id, m.limit_kind, m.limit_count, m.key_valid_days,
	m.on_refund, m.on_subscription_end, m.renewal_url, m.send_key_mail, m.created_at, m.updated_at, m.features, m.adds_to`

// mappingFrom joins a mapping to its integration, so every read and delete
// is held to the organization: another organization's integration has no
// mappings.
const mappingFrom = ` FROM integration_mappings m JOIN integrations i ON i.id = m.integration_id WHERE i.org_id = ? AND m.integration_id = ?`

func mappingNotFound() error { return store.NotFound(licentia.CodeMappingNotFound, "Mapping") }

func scanMapping(row interface{ Scan(...any) error }) (*licentia.Mapping, error) {
	var m licentia.Mapping
	var created, updated int64
	var features string
	err := row.Scan(&m.IntegrationID, &m.ProviderProductID, &m.ProductID, &m.LimitKind, &m.LimitCount, &m.KeyValidDays,
		&m.OnRefund, &m.OnSubscriptionEnd, &m.RenewalURL, &m.SendKeyMail, &created, &updated, &features, &m.AddsTo)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mappingNotFound()
	}
	if err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = store.FromMillis(created), store.FromMillis(updated)
	if m.Features, err = store.DecodeCodes(features); err != nil {
		return nil, err
	}
	return &m, nil
}

func (r reader) Mappings(ctx context.Context, orgID, integrationID string) ([]licentia.Mapping, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+mappingColumns+mappingFrom+` ORDER BY m.provider_product_id`, orgID, integrationID)
	if err != nil {
		return nil, fmt.Errorf("list mappings: %w", err)
	}
	defer rows.Close()
	var out []licentia.Mapping
	for rows.Next() {
		m, err := scanMapping(rows)
		if err != nil {
			return nil, fmt.Errorf("list mappings: %w", err)
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

func (r reader) Mapping(ctx context.Context, orgID, integrationID, providerProductID string) (*licentia.Mapping, error) {
	m, err := scanMapping(r.q.QueryRowContext(ctx, `SELECT `+mappingColumns+mappingFrom+` AND m.provider_product_id = ?`,
		orgID, integrationID, providerProductID))
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	return m, nil
}

func (t *tx) PutMapping(ctx context.Context, m *licentia.Mapping) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO integration_mappings (integration_id, provider_product_id, product_id,
		limit_kind, limit_count, key_valid_days, on_refund, on_subscription_end, renewal_url, send_key_mail, created_at, updated_at,
		features, adds_to)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (integration_id, provider_product_id) DO UPDATE SET product_id = excluded.product_id,
		limit_kind = excluded.limit_kind, limit_count = excluded.limit_count, key_valid_days = excluded.key_valid_days,
		on_refund = excluded.on_refund, on_subscription_end = excluded.on_subscription_end,
		renewal_url = excluded.renewal_url, send_key_mail = excluded.send_key_mail, updated_at = excluded.updated_at,
		features = excluded.features, adds_to = excluded.adds_to`,
		m.IntegrationID, m.ProviderProductID, m.ProductID, m.LimitKind, m.LimitCount, m.KeyValidDays, m.OnRefund,
		m.OnSubscriptionEnd, m.RenewalURL, m.SendKeyMail, store.Millis(m.CreatedAt), store.Millis(m.UpdatedAt),
		store.EncodeCodes(m.Features), m.AddsTo)
	if err != nil {
		return fmt.Errorf("put mapping: %w", err)
	}
	return nil
}

func (t *tx) DeleteMapping(ctx context.Context, orgID, integrationID, providerProductID string) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM integration_mappings WHERE integration_id = ? AND provider_product_id = ?
		AND integration_id IN (SELECT id FROM integrations WHERE org_id = ?)`, integrationID, providerProductID, orgID)
	if err != nil {
		return fmt.Errorf("delete mapping: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("delete mapping: %w", mappingNotFound())
	}
	return nil
}

func (t *tx) RecordProviderEvent(ctx context.Context, integrationID, eventID string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO provider_events (integration_id, event_id, received_at) VALUES (?, ?, ?)
		ON CONFLICT (integration_id, event_id) DO NOTHING`, integrationID, eventID, store.Millis(at))
	if err != nil {
		return false, fmt.Errorf("record provider event: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
