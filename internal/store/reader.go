package store

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// Reader holds the reads, available both outside and inside a transaction.
// Every read of an organization's data takes its id right after ctx, and
// another organization's row answers exactly like a missing one.
type Reader interface {
	MailReader
	PortalReader
	HeldOrderReader
	Organization(ctx context.Context, orgID string) (*licentia.Organization, error)
	OrganizationBySlug(ctx context.Context, slug string) (*licentia.Organization, error)
	// APIKeyByPrefix finds a key by its public prefix, in any organization:
	// it is how a caller is identified.
	APIKeyByPrefix(ctx context.Context, prefix string) (*licentia.APIKey, error)
	APIKey(ctx context.Context, orgID, id string) (*licentia.APIKey, error)
	APIKeys(ctx context.Context, orgID string) ([]licentia.APIKey, error)
	// CountLiveAPIKeys counts keys neither revoked nor expired at now.
	CountLiveAPIKeys(ctx context.Context, orgID string, now time.Time) (int64, error)
	// Members lists the team, oldest first.
	Members(ctx context.Context, orgID string) ([]licentia.Member, error)
	// PendingInvitations lists invitations neither accepted, revoked nor
	// expired at now, oldest first.
	PendingInvitations(ctx context.Context, orgID string, now time.Time) ([]licentia.Invitation, error)
	// Member reads one member; another organization's answers
	// member_not_found like a missing one.
	Member(ctx context.Context, orgID, id string) (*licentia.Member, error)
	// MemberByEmail finds an organization's member by address, compared as
	// the members_email index compares (ASCII letters folded); none answers
	// member_not_found.
	MemberByEmail(ctx context.Context, orgID, email string) (*licentia.Member, error)
	// Memberships lists the member records of an address in every
	// organization, by organization name then id.
	Memberships(ctx context.Context, email string) ([]licentia.Membership, error)
	// Invitation reads one invitation, whatever its state; another
	// organization's answers invitation_not_found like a missing one.
	Invitation(ctx context.Context, orgID, id string) (*licentia.Invitation, error)
	// InvitationByToken finds the invitation whose link token hashes to
	// hash, in any organization and whatever its state; none answers
	// not_found.
	InvitationByToken(ctx context.Context, hash []byte) (*licentia.Invitation, error)
	// CountInvitationsSince counts an organization's invitations created
	// at or after since, whatever their state, and those of them to email
	// (compared with ASCII letters folded).
	CountInvitationsSince(ctx context.Context, orgID, email string, since time.Time) (all, toEmail int64, err error)
	// Account reads an account; none answers not_found.
	Account(ctx context.Context, id string) (*licentia.Account, error)
	// AccountByEmail finds an account by address, ASCII letters folded;
	// none answers not_found.
	AccountByEmail(ctx context.Context, email string) (*licentia.Account, error)
	// SessionByToken finds the session whose token hashes to hash; none
	// answers not_found. Expiry is the caller's to check.
	SessionByToken(ctx context.Context, hash []byte) (*licentia.Session, error)
	// LoginLinkByToken finds the login link whose token hashes to hash,
	// used or not; none answers not_found.
	LoginLinkByToken(ctx context.Context, hash []byte) (*licentia.LoginLink, error)
	// AssistantToken finds the token that hashes to hash, with its grant;
	// none answers not_found. Expiry, use and the grant's end are the
	// caller's to check.
	AssistantToken(ctx context.Context, hash []byte) (*licentia.AssistantToken, error)
	// Grants lists a member's grants not revoked, oldest first.
	Grants(ctx context.Context, orgID, memberID string) ([]licentia.Grant, error)
	// OAuthClient reads a registered client; none answers not_found.
	OAuthClient(ctx context.Context, id string) (*licentia.OAuthClient, error)
	// AuthorizationCode finds the code that hashes to hash; none answers
	// not_found. Expiry and use are the caller's to check.
	AuthorizationCode(ctx context.Context, hash []byte) (*licentia.AuthorizationCode, error)
	// OrganizationAudit lists an organization's audit log, oldest first.
	OrganizationAudit(ctx context.Context, orgID string) ([]licentia.AuditEntry, error)
	// Products lists an organization's products with their key history,
	// oldest first.
	Products(ctx context.Context, orgID string) ([]licentia.Product, error)
	// Product reads one; another organization's answers product_not_found.
	Product(ctx context.Context, orgID, id string) (*licentia.Product, error)
	// AllProducts lists every product of every organization, for the
	// catalogue that verifies licence keys.
	AllProducts(ctx context.Context) ([]licentia.Product, error)
	// CountProducts counts an organization's products, and those created at
	// or after since.
	CountProducts(ctx context.Context, orgID string, since time.Time) (all, createdSince int64, err error)
	// ProductNameUse says whether a product id or key prefix is free, held
	// by a product now (of any organization), or was used before.
	ProductNameUse(ctx context.Context, field ProductField, value string) (NameUse, error)
	// Licence reads one licence; another organization's answers
	// licence_not_found like a missing one.
	Licence(ctx context.Context, orgID, id string) (*licentia.Licence, error)
	// LicenceIDTaken reports whether any organization holds licence id.
	LicenceIDTaken(ctx context.Context, id string) (bool, error)
	// LicenceByExternalRef finds the licence of a product with ref, the one
	// in use: licences whose key was reissued (replaced_by set) share their
	// replacement's ref and are left out.
	LicenceByExternalRef(ctx context.Context, orgID, productID, ref string) (*licentia.Licence, error)
	// FindLicences lists matching licences, newest first (issued_at, then
	// id, descending), at most f.Limit.
	FindLicences(ctx context.Context, orgID string, f LicenceFilter, now time.Time) ([]licentia.Licence, error)
	// Customers lists a page of the organization's customers (the
	// distinct lower-cased emails of its licences not anonymised), newest
	// activity first (their newest issued_at), then by email.
	Customers(ctx context.Context, orgID string, f CustomerFilter) ([]Customer, error)
	// CountLicences computes the counts of GET /v1/admin/licences/counts.
	CountLicences(ctx context.Context, orgID string, productID *string, since, now time.Time) (*LicenceCounts, error)
	// CountLicencesWithFeature computes the counts of the licences granting
	// feature, whatever the grant's expiry, from the licences themselves.
	CountLicencesWithFeature(ctx context.Context, orgID string, productID *string, feature string, since, now time.Time) (*LicenceCounts, error)
	// ProductFeatures lists a product's features by code; another
	// organization's product has none.
	ProductFeatures(ctx context.Context, orgID, productID string) ([]licentia.Feature, error)
	// PlanLicenceCount counts the licences taking a place in the plan at now.
	PlanLicenceCount(ctx context.Context, orgID string, now time.Time) (int64, error)
	// LicenceAudit lists a licence's audit entries, oldest first.
	LicenceAudit(ctx context.Context, orgID, licenceID string) ([]licentia.AuditEntry, error)
	// AuditPage lists an organization's audit entries matching q newest
	// first, at most limit, starting after the entry whose id is q.Before
	// when given; an id that is not one of the organization's entries
	// lists none.
	AuditPage(ctx context.Context, orgID string, q AuditQuery, limit int) ([]licentia.AuditEntry, error)
	// AuditByDay counts an organization's audit entries of actions made at
	// or after since, per UTC day and action, oldest day first, then by
	// action. It reads the entries written since the last one made before
	// since, not the whole log; an entry written out of time order with
	// that one may be left out.
	AuditByDay(ctx context.Context, orgID string, actions []string, since time.Time) ([]AuditDay, error)
	// LicenceByID reads a licence of any organization, for the activation
	// routes, where the licence key is the credential.
	LicenceByID(ctx context.Context, id string) (*licentia.Licence, error)
	// LicenceWithSeat reads of a licence of any organization the fields a
	// status check uses (StatusColumns, StatusPart), the others left zero,
	// and in the same query the live seat of a machine on it (nil when it
	// holds none): the status route's one read.
	LicenceWithSeat(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *Seat, error)
	// PurchaseLicences lists the licences, of every organization, whose
	// provider order id, checkout id or order number is orderID, oldest
	// first (issued_at, then id). Anonymised licences, and licences whose
	// key was reissued, are left out: a customer's lookup never finds them.
	PurchaseLicences(ctx context.Context, orderID string) ([]licentia.Licence, error)
	// ExpiredLeases lists, oldest seen first and at most limit, the live
	// activations of products with heartbeat leases not seen for more than
	// twice their product's interval at now.
	ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]Lease, error)
	// LiveActivation finds the live activation of a machine on a licence.
	LiveActivation(ctx context.Context, orgID, licenceID, machineID string) (*licentia.Activation, error)
	// Activation reads one activation; another organization's answers
	// not_found like a missing one.
	Activation(ctx context.Context, orgID, id string) (*licentia.Activation, error)
	// Activations lists a licence's activations, live ones first, then by
	// activation time.
	Activations(ctx context.Context, orgID, licenceID string) ([]licentia.Activation, error)
	// LiveActivations lists a licence's live activations, least recently
	// seen first (then by id).
	LiveActivations(ctx context.Context, orgID, licenceID string) ([]licentia.Activation, error)
	// LeasesInUse lists, at most limit, a licence's leases in use at now
	// (unexpired, of live activations), earliest end first, then by id.
	LeasesInUse(ctx context.Context, orgID, licenceID string, now time.Time, limit int) ([]FloatingLease, error)
	// LeaseUseOf counts a licence's leases in use at now.
	LeaseUseOf(ctx context.Context, orgID, licenceID string, now time.Time) (LeaseUse, error)
	// LeaseOf reads the lease in use at now of a live activation;
	// lease_not_found when it holds none.
	LeaseOf(ctx context.Context, orgID, activationID string, now time.Time) (*FloatingLease, error)
	// CountLeasesInUse counts the leases in use at now, of every
	// organization.
	CountLeasesInUse(ctx context.Context, now time.Time) (int64, error)
	// TransfersSince counts a licence's transfers at or after since.
	TransfersSince(ctx context.Context, orgID, licenceID string, since time.Time) (int64, error)
	// OrganizationEvents lists an organization's events, oldest first.
	OrganizationEvents(ctx context.Context, orgID string) ([]licentia.Event, error)
	// WebhookEndpoints lists an organization's endpoints, oldest first.
	WebhookEndpoints(ctx context.Context, orgID string) ([]licentia.WebhookEndpoint, error)
	// WebhookEndpoint reads one; another organization's answers
	// webhook_endpoint_not_found like a missing one.
	WebhookEndpoint(ctx context.Context, orgID, id string) (*licentia.WebhookEndpoint, error)
	// WebhookSecrets lists an endpoint's secrets, newest first.
	WebhookSecrets(ctx context.Context, endpointID string) ([]licentia.WebhookSecret, error)
	// AllWebhookSecrets lists every secret, for master-key rotation.
	AllWebhookSecrets(ctx context.Context) ([]licentia.WebhookSecret, error)
	// Deliveries lists an endpoint's deliveries newest first (created_at,
	// then id, descending), starting after the cursor delivery when given.
	Deliveries(ctx context.Context, orgID, endpointID string, after *string, limit int) ([]licentia.Delivery, error)
	// Delivery reads one delivery of an endpoint; any other answers
	// webhook_delivery_not_found.
	Delivery(ctx context.Context, orgID, endpointID, id string) (*licentia.Delivery, error)
	// LastDeliverySuccess is when an endpoint last answered 2xx, or nil.
	LastDeliverySuccess(ctx context.Context, endpointID string) (*time.Time, error)
	// CountPendingDeliveries counts the deliveries of every organization
	// waiting to be sent, due now or later: the webhook queue's depth.
	CountPendingDeliveries(ctx context.Context) (int64, error)
	// Event reads an event by id.
	Event(ctx context.Context, id string) (*licentia.Event, error)
	// Setting reads a service-wide setting; a missing one is "" and no error.
	Setting(ctx context.Context, name string) (string, error)
	// Integrations lists an organization's connected integrations, oldest
	// first; disconnected ones are left out.
	Integrations(ctx context.Context, orgID string) ([]licentia.Integration, error)
	// Integration reads one, connected or not; another organization's
	// answers integration_not_found like a missing one.
	Integration(ctx context.Context, orgID, id string) (*licentia.Integration, error)
	// IntegrationByID reads an integration of any organization, connected
	// or not, for the provider webhook route, where the provider's
	// signature is the credential.
	IntegrationByID(ctx context.Context, id string) (*licentia.Integration, error)
	// AllIntegrations lists every integration, disconnected ones included,
	// for master-key rotation.
	AllIntegrations(ctx context.Context) ([]licentia.Integration, error)
	// Mappings lists an integration's mappings ordered by
	// provider_product_id; another organization's integration has none.
	Mappings(ctx context.Context, orgID, integrationID string) ([]licentia.Mapping, error)
	// Mapping reads one; a missing one, or one of another organization's
	// integration, answers mapping_not_found.
	Mapping(ctx context.Context, orgID, integrationID, providerProductID string) (*licentia.Mapping, error)
	// ProviderEvents lists an integration's last limit provider events,
	// newest first; another organization's integration has none.
	ProviderEvents(ctx context.Context, orgID, integrationID string, limit int) ([]licentia.ProviderEvent, error)
	// IdempotencyKey reads a subject's key, expired or not; none answers
	// not_found.
	IdempotencyKey(ctx context.Context, subject, key string) (*IdempotencyKey, error)
	// LicencesAfter lists the licences of every organization in id order,
	// those after the id after ("" from the first), at most limit, each
	// with its live activation rows counted: a page of a full recount.
	LicencesAfter(ctx context.Context, after string, limit int) ([]CheckedLicence, error)
	// LicenceStats lists every licence_stats row whose counts are not both
	// zero.
	LicenceStats(ctx context.Context) ([]StatsRow, error)
	// Orphans lists, for each kind, at most limit rows whose parent row is
	// missing, by id.
	Orphans(ctx context.Context, limit int) ([]Orphan, error)
}

// AuditQuery is a page of the audit log: where it starts and what it
// keeps. Every field is optional; an actor type without an id keeps every
// actor of that type. From is inclusive, To exclusive.
type AuditQuery struct {
	Before    *string
	Action    *string
	ActorType *licentia.ActorType
	ActorID   *string
	From, To  *time.Time
}

// AuditDay is the number of an organization's audit entries of one action
// made on one UTC day, which starts at Day.
type AuditDay struct {
	Day    time.Time
	Action string
	N      int64
}
