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

const integrationColumns = `id, org_id, provider, name, account_id, livemode, sealed_api_key, sealed_webhook_secret,
	master_fingerprint, created_at, disconnected_at`

func integrationNotFound() error {
	return store.NotFound(licentia.CodeIntegrationNotFound, "Integration")
}

func scanIntegration(row pgx.Row) (*licentia.Integration, error) {
	var i licentia.Integration
	err := row.Scan(&i.ID, &i.OrgID, &i.Provider, &i.Name, &i.AccountID, &i.Livemode, &i.SealedAPIKey,
		&i.SealedWebhookSecret, &i.MasterFingerprint, &i.CreatedAt, &i.DisconnectedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, integrationNotFound()
	}
	if err != nil {
		return nil, err
	}
	i.CreatedAt, i.DisconnectedAt = i.CreatedAt.UTC(), utcPtr(i.DisconnectedAt)
	return &i, nil
}

func (r reader) integrations(ctx context.Context, where string, args ...any) ([]licentia.Integration, error) {
	rows, err := r.q.Query(ctx, `SELECT `+integrationColumns+` FROM integrations `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	out, err := collect(rows, scanIntegration)
	if err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	return out, nil
}

func (r reader) Integrations(ctx context.Context, orgID string) ([]licentia.Integration, error) {
	if !isID(orgID) {
		return nil, nil
	}
	return r.integrations(ctx, `WHERE org_id = $1 AND disconnected_at IS NULL`, orgID)
}

func (r reader) AllIntegrations(ctx context.Context) ([]licentia.Integration, error) {
	return r.integrations(ctx, ``)
}

func (r reader) Integration(ctx context.Context, orgID, id string) (*licentia.Integration, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read integration: %w", integrationNotFound())
	}
	i, err := scanIntegration(r.q.QueryRow(ctx, `SELECT `+integrationColumns+` FROM integrations WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read integration: %w", err)
	}
	return i, nil
}

func (r reader) IntegrationByID(ctx context.Context, id string) (*licentia.Integration, error) {
	if !isID(id) {
		return nil, fmt.Errorf("read integration: %w", integrationNotFound())
	}
	i, err := scanIntegration(r.q.QueryRow(ctx, `SELECT `+integrationColumns+` FROM integrations WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("read integration: %w", err)
	}
	return i, nil
}

func (t *tx) CreateIntegration(ctx context.Context, i *licentia.Integration) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO integrations (`+integrationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		i.ID, i.OrgID, i.Provider, i.Name, i.AccountID, i.Livemode, i.SealedAPIKey, i.SealedWebhookSecret,
		i.MasterFingerprint, ms(i.CreatedAt), msPtr(i.DisconnectedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The integration id is taken.")
	}
	if err != nil {
		return fmt.Errorf("create integration: %w", err)
	}
	return nil
}

func (t *tx) DisconnectIntegration(ctx context.Context, orgID, id string, at time.Time) error {
	if !isID(orgID) || !isID(id) {
		return fmt.Errorf("disconnect integration: %w", integrationNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE integrations SET disconnected_at = $1 WHERE org_id = $2 AND id = $3 AND disconnected_at IS NULL`,
		ms(at), orgID, id)
	if err != nil {
		return fmt.Errorf("disconnect integration: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("disconnect integration: %w", integrationNotFound())
	}
	return nil
}

func (t *tx) SetIntegrationWebhookSecret(ctx context.Context, orgID, id string, sealedWebhookSecret []byte) error {
	if !isID(orgID) || !isID(id) {
		return fmt.Errorf("set integration webhook secret: %w", integrationNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE integrations SET sealed_webhook_secret = $1 WHERE org_id = $2 AND id = $3 AND disconnected_at IS NULL`,
		sealedWebhookSecret, orgID, id)
	if err != nil {
		return fmt.Errorf("set integration webhook secret: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("set integration webhook secret: %w", integrationNotFound())
	}
	return nil
}

func (t *tx) ResealIntegration(ctx context.Context, id string, sealedAPIKey, sealedWebhookSecret []byte, masterFingerprint string) error {
	if !isID(id) {
		return fmt.Errorf("reseal integration: %w", integrationNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE integrations SET sealed_api_key = $1, sealed_webhook_secret = $2, master_fingerprint = $3 WHERE id = $4`,
		sealedAPIKey, sealedWebhookSecret, masterFingerprint, id)
	if err != nil {
		return fmt.Errorf("reseal integration: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("reseal integration: %w", integrationNotFound())
	}
	return nil
}

const mappingColumns = `m.integration_id, m.provider_product_id, m.product_id, m.limit_kind, m.limit_count, m.key_valid_days,
	m.on_refund, m.on_subscription_end, m.renewal_url, m.send_key_mail, m.created_at, m.updated_at, m.features, m.adds_to`

// mappingFrom joins a mapping to its integration, so every read and delete
// is held to the organization: another organization's integration has no
// mappings.
const mappingFrom = ` FROM integration_mappings m JOIN integrations i ON i.id = m.integration_id WHERE i.org_id = $1 AND m.integration_id = $2`

func mappingNotFound() error { return store.NotFound(licentia.CodeMappingNotFound, "Mapping") }

func scanMapping(row pgx.Row) (*licentia.Mapping, error) {
	var m licentia.Mapping
	var features string
	err := row.Scan(&m.IntegrationID, &m.ProviderProductID, &m.ProductID, &m.LimitKind, &m.LimitCount, &m.KeyValidDays,
		&m.OnRefund, &m.OnSubscriptionEnd, &m.RenewalURL, &m.SendKeyMail, &m.CreatedAt, &m.UpdatedAt, &features, &m.AddsTo)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, mappingNotFound()
	}
	if err != nil {
		return nil, err
	}
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if m.Features, err = store.DecodeCodes(features); err != nil {
		return nil, err
	}
	return &m, nil
}

func (r reader) Mappings(ctx context.Context, orgID, integrationID string) ([]licentia.Mapping, error) {
	if !isID(orgID) || !isID(integrationID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+mappingColumns+mappingFrom+` ORDER BY m.provider_product_id`, orgID, integrationID)
	if err != nil {
		return nil, fmt.Errorf("list mappings: %w", err)
	}
	out, err := collect(rows, scanMapping)
	if err != nil {
		return nil, fmt.Errorf("list mappings: %w", err)
	}
	return out, nil
}

func (r reader) Mapping(ctx context.Context, orgID, integrationID, providerProductID string) (*licentia.Mapping, error) {
	if !isID(orgID) || !isID(integrationID) || !isText(providerProductID) {
		return nil, fmt.Errorf("read mapping: %w", mappingNotFound())
	}
	m, err := scanMapping(r.q.QueryRow(ctx, `SELECT `+mappingColumns+mappingFrom+` AND m.provider_product_id = $3`,
		orgID, integrationID, providerProductID))
	if err != nil {
		return nil, fmt.Errorf("read mapping: %w", err)
	}
	return m, nil
}

func (t *tx) PutMapping(ctx context.Context, m *licentia.Mapping) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO integration_mappings (integration_id, provider_product_id, product_id,
		limit_kind, limit_count, key_valid_days, on_refund, on_subscription_end, renewal_url, send_key_mail, created_at, updated_at,
		features, adds_to)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (integration_id, provider_product_id) DO UPDATE SET product_id = excluded.product_id,
		limit_kind = excluded.limit_kind, limit_count = excluded.limit_count, key_valid_days = excluded.key_valid_days,
		on_refund = excluded.on_refund, on_subscription_end = excluded.on_subscription_end,
		renewal_url = excluded.renewal_url, send_key_mail = excluded.send_key_mail, updated_at = excluded.updated_at,
		features = excluded.features, adds_to = excluded.adds_to`,
		m.IntegrationID, m.ProviderProductID, m.ProductID, m.LimitKind, m.LimitCount, m.KeyValidDays, m.OnRefund,
		m.OnSubscriptionEnd, m.RenewalURL, m.SendKeyMail, ms(m.CreatedAt), ms(m.UpdatedAt),
		store.EncodeCodes(m.Features), m.AddsTo)
	if err != nil {
		return fmt.Errorf("put mapping: %w", err)
	}
	return nil
}

func (t *tx) DeleteMapping(ctx context.Context, orgID, integrationID, providerProductID string) error {
	if !isID(orgID) || !isID(integrationID) || !isText(providerProductID) {
		return fmt.Errorf("delete mapping: %w", mappingNotFound())
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM integration_mappings WHERE integration_id = $1 AND provider_product_id = $2
		AND integration_id IN (SELECT id FROM integrations WHERE org_id = $3)`, integrationID, providerProductID, orgID)
	if err != nil {
		return fmt.Errorf("delete mapping: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("delete mapping: %w", mappingNotFound())
	}
	return nil
}

// RecordProviderEvent inserts with ON CONFLICT DO NOTHING: of two
// transactions recording one event, the second waits for the first and
// then inserts nothing, where a unique violation would abort it.
func (t *tx) RecordProviderEvent(ctx context.Context, integrationID, eventID string, at time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO provider_events (integration_id, event_id, received_at) VALUES ($1, $2, $3)
		ON CONFLICT (integration_id, event_id) DO NOTHING`, integrationID, eventID, ms(at))
	if err != nil {
		return false, fmt.Errorf("record provider event: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
