package store

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// Tx is one transaction.
type Tx interface {
	Reader
	MailWriter
	PortalWriter
	HeldOrderWriter
	// LockOrganization serialises plan checks on one organization until the
	// transaction ends, so of two requests racing for the last place exactly
	// one wins, across processes.
	LockOrganization(ctx context.Context, orgID string) error
	// CreateOrganization answers conflict when the slug is taken.
	CreateOrganization(ctx context.Context, o *licentia.Organization) error
	CreateMember(ctx context.Context, m *licentia.Member) error
	// CreateInvitation writes an invitation with its token hash and sender;
	// a taken id or token answers conflict.
	CreateInvitation(ctx context.Context, inv *licentia.Invitation) error
	// SetMemberRole changes a member's role; another organization's or a
	// missing member answers member_not_found.
	SetMemberRole(ctx context.Context, orgID, id string, role licentia.Role) error
	// DeleteMember removes a member and its login links; another
	// organization's or a missing member answers member_not_found.
	DeleteMember(ctx context.Context, orgID, id string) error
	// RevokeInvitation sets revoked_at on an invitation neither accepted
	// nor revoked and reports whether it changed; another organization's or
	// a missing one answers invitation_not_found.
	RevokeInvitation(ctx context.Context, orgID, id string, at time.Time) (bool, error)
	// AcceptInvitation sets accepted_at on an invitation neither accepted
	// nor revoked and reports whether it changed, so a link is used once
	// even when two requests race; a missing one answers
	// invitation_not_found.
	AcceptInvitation(ctx context.Context, id string, at time.Time) (bool, error)
	// CreateAccount writes an account; an address that has one answers
	// conflict.
	CreateAccount(ctx context.Context, a *licentia.Account) error
	// SetAccountPassword replaces an account's password hash and
	// updated_at; a missing account answers not_found.
	SetAccountPassword(ctx context.Context, id, passwordHash string, at time.Time) error
	// CreateGrant writes a grant.
	CreateGrant(ctx context.Context, g *licentia.Grant) error
	// CreateAssistantToken writes a token of a grant.
	CreateAssistantToken(ctx context.Context, t *licentia.AssistantToken) error
	// UseAssistantToken sets used_at on an unused token and reports
	// whether it changed, so a refresh token is exchanged once.
	UseAssistantToken(ctx context.Context, hash []byte, at time.Time) (bool, error)
	// RevokeGrant ends a member's grant and reports whether it changed;
	// another member's or organization's answers not_found.
	RevokeGrant(ctx context.Context, orgID, memberID, id string, at time.Time) (bool, error)
	// RevokeMemberGrants ends every grant of a member and reports how
	// many it ended.
	RevokeMemberGrants(ctx context.Context, orgID, memberID string, at time.Time) (int64, error)
	// CreateOAuthClient writes a registered client; a taken id answers
	// conflict.
	CreateOAuthClient(ctx context.Context, c *licentia.OAuthClient) error
	// CreateAuthorizationCode writes a code of a grant; a taken hash
	// answers conflict.
	CreateAuthorizationCode(ctx context.Context, c *licentia.AuthorizationCode) error
	// UseAuthorizationCode sets used_at on an unused code and reports
	// whether it changed, so a code is exchanged once even when two
	// requests race; a missing code changes nothing.
	UseAuthorizationCode(ctx context.Context, hash []byte, at time.Time) (bool, error)
	// DeleteExpiredAuthorizationCodes deletes the codes that expired at or
	// before now, used or not, and reports how many.
	DeleteExpiredAuthorizationCodes(ctx context.Context, now time.Time) (int64, error)
	// CreateLoginLink writes a login link with its token hash; a taken id
	// or token answers conflict.
	CreateLoginLink(ctx context.Context, l *licentia.LoginLink) error
	// UseLoginLink sets used_at on an unused link and reports whether it
	// changed, so a link is used once even when two requests race; a
	// missing one answers not_found.
	UseLoginLink(ctx context.Context, id string, at time.Time) (bool, error)
	// CreateSession writes a session with its token hash; a taken id or
	// token answers conflict.
	CreateSession(ctx context.Context, s *licentia.Session) error
	// TouchSession sets a session's last_seen_at; a missing one answers
	// not_found.
	TouchSession(ctx context.Context, id string, at time.Time) error
	// SetSessionOrganization sets the organization a session looks at; a
	// missing session answers not_found.
	SetSessionOrganization(ctx context.Context, id, orgID string) error
	// DeleteSession ends one session; a missing one is no error.
	DeleteSession(ctx context.Context, id string) error
	// DeleteAccountSessions ends every session of an account and reports
	// how many it ended.
	DeleteAccountSessions(ctx context.Context, accountID string) (int64, error)
	// DeleteStaleSessions deletes sessions last seen before idleBefore or
	// whose absolute end is at or before now, and reports how many.
	DeleteStaleSessions(ctx context.Context, idleBefore, now time.Time) (int64, error)
	CreateAPIKey(ctx context.Context, k *licentia.APIKey) error
	// RevokeAPIKey sets revoked_at on a live key and reports whether it changed.
	RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) (bool, error)
	// NoteAPIKeyUse and NoteGrantUse set last_used_at to at when it is
	// unset or at least licentia.LastUseEvery older, and report whether
	// they wrote: of many requests in a minute, one writes.
	NoteAPIKeyUse(ctx context.Context, id string, at time.Time) (bool, error)
	NoteGrantUse(ctx context.Context, id string, at time.Time) (bool, error)
	AppendAudit(ctx context.Context, e *licentia.AuditEntry) error
	// CreateProduct writes a product with its keys and records its id and
	// prefix as used forever. A taken id or prefix answers conflict.
	CreateProduct(ctx context.Context, p *licentia.Product) error
	// UpdateProduct writes name, current_major, machines_per_seat,
	// heartbeat_interval_seconds and updated_at.
	UpdateProduct(ctx context.Context, p *licentia.Product) error
	// PutProductFeature renames the product's feature of f's code, keeping
	// its created_at, and reports created false; or adds f and reports
	// created true. Past MaxFeatures it answers conflict; a product of
	// another organization answers product_not_found or writes nothing
	// (the caller reads the product first).
	PutProductFeature(ctx context.Context, f *licentia.Feature) (stored *licentia.Feature, created bool, err error)
	// DeleteProductFeature removes a feature; not_found when the product
	// has none of that code, conflict while any licence grants it.
	DeleteProductFeature(ctx context.Context, orgID, productID, code string) error
	AddProductKey(ctx context.Context, k *licentia.ProductKey) error
	// SetProductKeyStatus moves a key to current, previous or retired.
	SetProductKeyStatus(ctx context.Context, productID, keyID string, status licentia.KeyStatus, retiredAt *time.Time) error
	// ResealProductKey replaces a key's sealed private part, for master-key
	// rotation.
	ResealProductKey(ctx context.Context, keyID string, sealed []byte, masterFingerprint string) error
	// LockLicence reads a licence and holds it until the transaction ends,
	// so concurrent changes of one licence run one after the other.
	LockLicence(ctx context.Context, orgID, id string) (*licentia.Licence, error)
	// LockSeat is LockLicence, then what a change of one machine's seat
	// reads next: the machine's live activation on the licence and, when
	// product is true, the licence's product with its keys. PostgreSQL
	// reads the three in one round trip.
	LockSeat(ctx context.Context, orgID, licenceID, machineID string, product bool) (*Locked, error)
	// CreateLicence writes a new licence and counts it. A taken id or an
	// external_ref taken on the product answers conflict.
	CreateLicence(ctx context.Context, l *licentia.Licence) error
	// UpdateLicence writes every changeable field of after (never
	// live_activations; limit_kind, limit_count and major included) and
	// moves its counts from the row the stored licence counted in.
	UpdateLicence(ctx context.Context, after *licentia.Licence) error
	// ReplaceLicence writes a reissue: old's changeable fields, as
	// UpdateLicence (it is revoked and names fresh in replaced_by, giving up
	// its external_ref's place), then fresh, as CreateLicence, then moves
	// old's live activations, keeping their ids, and the provider order
	// items it was issued for to fresh, with their counts, and reports how
	// many activations moved. Freed activations stay with old. A missing
	// old, or one of another organization, answers licence_not_found with
	// nothing written; fresh's taken id answers conflict.
	ReplaceLicence(ctx context.Context, old, fresh *licentia.Licence) (int64, error)
	// RewriteLicenceAudit replaces the data of a licence's audit entries
	// with fn(data), for anonymisation.
	RewriteLicenceAudit(ctx context.Context, orgID, licenceID string, fn func([]byte) []byte) error
	// CreateActivation writes a live activation and counts it on its licence.
	CreateActivation(ctx context.Context, a *licentia.Activation) error
	// TouchActivation writes a live activation's last_seen_at, label, os,
	// app_version, machine_id and components: a refresh, or a rebinding to
	// a new machine id. The caller holds the licence (LockLicence) and has
	// checked that no other live activation holds the machine id.
	TouchActivation(ctx context.Context, a *licentia.Activation) error
	// PutLease writes the lease of l.ActivationID, replacing the one it
	// held before (in use or not). The caller holds the licence.
	PutLease(ctx context.Context, l *FloatingLease) error
	// ReleaseLease ends the lease leaseID of machineID on the licence and
	// reports whether it was in use at now.
	ReleaseLease(ctx context.Context, orgID, licenceID, machineID, leaseID string, now time.Time) (bool, error)
	// SweepLeases deletes, at most limit, leases that hold no place at now
	// (ended, or of a freed activation), and reports how many.
	SweepLeases(ctx context.Context, now time.Time, limit int) (int64, error)
	// RecordTransfer writes a transfer made in this transaction.
	RecordTransfer(ctx context.Context, t *Transfer) error
	// DeactivateActivation frees a live activation and reports whether it
	// changed; another organization's answers not_found.
	DeactivateActivation(ctx context.Context, orgID, id string, at time.Time) (*licentia.Activation, bool, error)
	// AnonymiseActivations erases every activation of a licence (machine id
	// anonymised-<id>, label, os and app_version "anonymised") and frees the
	// live ones.
	AnonymiseActivations(ctx context.Context, orgID, licenceID string, at time.Time) error
	// InsertEvent writes an event.
	InsertEvent(ctx context.Context, e *licentia.Event) error
	// DeleteEventsBefore deletes events that happened before t.
	DeleteEventsBefore(ctx context.Context, t time.Time) (int64, error)
	// SweepLicences moves licences whose expiry passed since the last sweep
	// to their lapsed counters, about batch of them (licences sharing one
	// expiry instant are never split between sweeps), and reports how many it
	// moved; it never moves the watermark past now.
	SweepLicences(ctx context.Context, now time.Time, batch int) (int, error)
	// CreateWebhookEndpoint writes an endpoint with its first secret.
	CreateWebhookEndpoint(ctx context.Context, e *licentia.WebhookEndpoint, secret *licentia.WebhookSecret) error
	// UpdateWebhookEndpoint writes url, event types, description, enabled,
	// disabled_reason and updated_at.
	UpdateWebhookEndpoint(ctx context.Context, e *licentia.WebhookEndpoint) error
	// DeleteWebhookEndpoint removes an endpoint, its secrets and its
	// deliveries, pending ones included.
	DeleteWebhookEndpoint(ctx context.Context, orgID, id string) error
	// ReplaceWebhookSecret marks the current secret replaced at and adds s.
	ReplaceWebhookSecret(ctx context.Context, s *licentia.WebhookSecret, at time.Time) error
	// ResealWebhookSecret replaces a secret's sealed bytes, for master-key
	// rotation.
	ResealWebhookSecret(ctx context.Context, id string, sealed []byte, masterFingerprint string) error
	// CreateDeliveries queues deliveries of an event.
	CreateDeliveries(ctx context.Context, ds []licentia.Delivery) error
	// QueueDeliveries queues a delivery of e, pending and due at e.At, to
	// every endpoint of e's organization that is enabled and subscribed to
	// e's type at this moment.
	QueueDeliveries(ctx context.Context, e *licentia.Event) error
	// ClaimDeliveries leases up to limit pending deliveries due at now, until
	// leaseUntil, so no other process sends them meanwhile.
	ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Delivery, error)
	// FinishAttempts records the outcomes of attempts and ends their
	// leases. A delivery whose lease (LeasedUntil, when set) has passed to
	// another claim, or that was deleted meanwhile, is left as it is.
	FinishAttempts(ctx context.Context, ds []licentia.Delivery) error
	// RequeueDelivery makes a delivery pending and due at now, and ends any
	// lease: an attempt still running then records nothing, and the
	// delivery is sent again.
	RequeueDelivery(ctx context.Context, orgID, endpointID, id string, now time.Time) error
	// DeleteProduct removes a product and its keys; its id and prefix stay
	// used. No route deletes products; operators and tests may.
	DeleteProduct(ctx context.Context, orgID, id string) error
	SetSetting(ctx context.Context, name, value string) error
	// CreateIntegration writes a connected integration.
	CreateIntegration(ctx context.Context, i *licentia.Integration) error
	// DisconnectIntegration sets disconnected_at on a connected integration;
	// a missing, another organization's or an already disconnected one
	// answers integration_not_found.
	DisconnectIntegration(ctx context.Context, orgID, id string, at time.Time) error
	// SetIntegrationWebhookSecret replaces the sealed webhook secret of a
	// connected integration of the organization, sealed under the master
	// key it already names; a missing, another organization's or a
	// disconnected one answers integration_not_found.
	SetIntegrationWebhookSecret(ctx context.Context, orgID, id string, sealedWebhookSecret []byte) error
	// ResealIntegration replaces an integration's sealed credentials, for
	// master-key rotation.
	ResealIntegration(ctx context.Context, id string, sealedAPIKey, sealedWebhookSecret []byte, masterFingerprint string) error
	// PutMapping creates a mapping or replaces every field of the one with
	// its integration and provider product id, keeping its created_at. The
	// caller has checked that the integration is the organization's.
	PutMapping(ctx context.Context, m *licentia.Mapping) error
	// DeleteMapping removes a mapping; a missing one, or one of another
	// organization's integration, answers mapping_not_found.
	DeleteMapping(ctx context.Context, orgID, integrationID, providerProductID string) error
	// RecordProviderEvent records that an integration's provider event was
	// handled and reports whether it was new: false when the event was
	// recorded before, by this transaction or a committed one.
	RecordProviderEvent(ctx context.Context, integrationID, eventID string, at time.Time) (bool, error)
	// NoteProviderEvent writes what a recorded provider event did: its
	// type, outcome, order and subscription (ReceivedAt is not changed).
	NoteProviderEvent(ctx context.Context, e licentia.ProviderEvent) error
	// ProviderItemIssued reports whether an order item already issued its
	// licence.
	ProviderItemIssued(ctx context.Context, integrationID, orderKey, providerProductID string) (bool, error)
	// CreateProviderItem records the order item of a licence written in
	// the same transaction; an item already recorded answers conflict.
	CreateProviderItem(ctx context.Context, it *ProviderItem) error
	// ProviderItemsByOrder lists the items of an integration's licences
	// whose provider order id or checkout id is orderID, by licence id.
	ProviderItemsByOrder(ctx context.Context, orgID, integrationID, orderID string) ([]ProviderItem, error)
	// ProviderItemsBySubscription lists the items of an integration's
	// licences of a provider subscription, by licence id.
	ProviderItemsBySubscription(ctx context.Context, orgID, integrationID, subscriptionID string) ([]ProviderItem, error)
	// CreateProviderAddon records an add-on order item; one recorded
	// before answers conflict.
	CreateProviderAddon(ctx context.Context, a *ProviderAddon) error
	// ProviderAddonRecorded reports whether an add-on order item is
	// recorded.
	ProviderAddonRecorded(ctx context.Context, integrationID, orderKey, providerProductID string) (bool, error)
	// ProviderAddonsByOrder lists an integration's add-on items whose
	// order id or checkout id is orderID, by provider product.
	ProviderAddonsByOrder(ctx context.Context, orgID, integrationID, orderID string) ([]ProviderAddon, error)
	// ProviderAddonsBySubscription lists an integration's add-on items of
	// a subscription, by order key and provider product.
	ProviderAddonsBySubscription(ctx context.Context, orgID, integrationID, subscriptionID string) ([]ProviderAddon, error)
	// ProviderAddonsByLicence lists the add-on items holding features on a
	// licence (not ended), of any integration.
	ProviderAddonsByLicence(ctx context.Context, orgID, licenceID string) ([]ProviderAddon, error)
	// UpdateProviderAddon writes an add-on item's Added and EndedAt.
	UpdateProviderAddon(ctx context.Context, a *ProviderAddon) error
	// AddPendingEffect keeps an effect until its order is issued; one
	// already kept of the same kind and ref stays as it is.
	AddPendingEffect(ctx context.Context, e *PendingEffect) error
	// TakePendingEffect removes and returns the kept effect of a kind and
	// ref; found is false when none is kept.
	TakePendingEffect(ctx context.Context, orgID, integrationID string, kind PendingKind, ref string) (e PendingEffect, found bool, err error)
	// LockSetting reads a setting ("" when missing) and holds it until the
	// transaction ends: shared, others may read it so too but none change
	// it; exclusive, no other transaction reads it with LockSetting or
	// changes it meanwhile. The master-key fingerprint is read so, so that
	// a key sealed under the old master key cannot slip past a rotation.
	LockSetting(ctx context.Context, name string, exclusive bool) (string, error)
	// ClaimIdempotencyKey writes k, or takes over the row of its subject
	// and key when that expired at now, or when it is a claim neither used
	// nor answered whose lease passed (its process stopped). It returns k
	// and true, or the row that stays and false.
	ClaimIdempotencyKey(ctx context.Context, k *IdempotencyKey, now time.Time) (*IdempotencyKey, bool, error)
	// UseIdempotencyKey sets used_at, once, on the claim with token and
	// reports whether the claim is still token's.
	UseIdempotencyKey(ctx context.Context, subject, key, token string, at time.Time) (bool, error)
	// AnswerIdempotencyKey stores the answer of the claim with token and
	// reports whether the claim is still token's.
	AnswerIdempotencyKey(ctx context.Context, subject, key, token string, a IdempotentAnswer) (bool, error)
	// ReleaseIdempotencyKey deletes the claim with token unless it is used
	// or answered, and reports whether it did.
	ReleaseIdempotencyKey(ctx context.Context, subject, key, token string) (bool, error)
	// DeleteExpiredIdempotencyKeys deletes the keys that expired at or
	// before now and reports how many.
	DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error)
}
