package licentia

import (
	"encoding/json"
	"time"
)

// ActorType says who made a change.
type ActorType string

// Actor types.
const (
	ActorAPIKey      ActorType = "api_key"
	ActorOperator    ActorType = "operator"
	ActorApplication ActorType = "application"
	ActorSystem      ActorType = "system"
	ActorMember      ActorType = "member"
	ActorProvider    ActorType = "provider"
	// ActorCustomer is a customer acting on their purchase from the
	// console's customer page; it has no id.
	ActorCustomer ActorType = "customer"
)

// Actor is who made a change: the type and, where there is one, its id.
type Actor struct {
	Type ActorType `json:"type"`
	ID   *string   `json:"id"`
}

// APIKeyActor returns the actor for a change made with API key id.
func APIKeyActor(id string) Actor { return Actor{Type: ActorAPIKey, ID: &id} }

// MemberActor returns the actor for a change made by member id, in the
// console or through an AI assistant.
func MemberActor(id string) Actor { return Actor{Type: ActorMember, ID: &id} }

// CustomerActor is the actor of the console's customer page.
var CustomerActor = Actor{Type: ActorCustomer}

// OperatorActor is the actor of operator commands.
var OperatorActor = Actor{Type: ActorOperator}

// AuditEntry is one line of an organization's or a licence's audit log,
// written in the same transaction as the change it records.
type AuditEntry struct {
	ID        string
	OrgID     string
	LicenceID *string
	Action    string
	Actor     Actor
	At        time.Time
	Data      json.RawMessage
}

// Audit actions: the action of every audit entry, in the contract's
// spelling. A new kind of change gets its constant here, so the log's
// vocabulary has one list.
const (
	AuditOrganizationCreated = "organization.created"
	AuditMemberAdded         = "member.added"
	AuditMemberRoleChanged   = "member.role_changed"
	AuditMemberRemoved       = "member.removed"
	// AuditMemberLoginLinkCreated records a setup link made for a member;
	// AuditMemberPasswordSet records one used.
	AuditMemberLoginLinkCreated = "member.login_link_created"
	AuditMemberPasswordSet      = "member.password_set"
	AuditInvitationCreated      = "invitation.created"
	// AuditGrantCreated and AuditGrantRevoked record a member letting an
	// AI assistant act as them, and ending it.
	AuditGrantCreated      = "grant.created"
	AuditGrantRevoked      = "grant.revoked"
	AuditInvitationRevoked = "invitation.revoked"

	AuditAPIKeyCreated = "api_key.created"
	AuditAPIKeyRevoked = "api_key.revoked"

	AuditProductCreated           = "product.created"
	AuditProductUpdated           = "product.updated"
	AuditProductSigningKeyRotated = "product.signing_key_rotated"
	AuditProductPublicKeyRetired  = "product.public_key_retired"
	// AuditProductFeatureSaved records a feature added to a product's
	// catalogue or renamed; AuditProductFeatureDeleted one taken out.
	AuditProductFeatureSaved   = "product.feature_saved"
	AuditProductFeatureDeleted = "product.feature_deleted"

	AuditLicenceIssued     = "licence.issued"
	AuditLicenceRevoked    = "licence.revoked"
	AuditLicenceExpired    = "licence.expired"
	AuditLicenceReinstated = "licence.reinstated"
	AuditLicenceAnonymised = "licence.anonymised"
	// AuditLicenceTrialConverted records a trial paid for.
	AuditLicenceTrialConverted = "licence.trial_converted"
	// AuditLicenceUpdated records a change of limit, expiry or major.
	AuditLicenceUpdated = "licence.updated"
	// AuditLicenceReissued records a reissued key, in the logs of both
	// the old licence and its replacement.
	AuditLicenceReissued = "licence.reissued"
	// AuditLicenceKeyMailed records a key mail queued for the licence; it
	// never holds the address.
	AuditLicenceKeyMailed = "licence.key_mailed"

	AuditActivationCreated     = "activation.created"
	AuditActivationDeactivated = "activation.deactivated"
	// AuditActivationRenamed records a machine's label changed by hand
	// (the customer portal); no event goes with it.
	AuditActivationRenamed = "activation.renamed"
	// AuditActivationRebound records a live activation moved to a new
	// machine id by its components.
	AuditActivationRebound = "activation.rebound"

	AuditWebhookEndpointCreated = "webhook_endpoint.created"
	// AuditWebhookEndpointUpdated records a change of an endpoint, by the
	// maker or by the service turning a failing endpoint off.
	AuditWebhookEndpointUpdated       = "webhook_endpoint.updated"
	AuditWebhookEndpointDeleted       = "webhook_endpoint.deleted"
	AuditWebhookEndpointSecretRotated = "webhook_endpoint.secret_rotated"
	AuditWebhookDeliveryRetried       = "webhook_delivery.retried"
	AuditWebhookEndpointTested        = "webhook_endpoint.tested"

	AuditIntegrationConnected    = "integration.connected"
	AuditIntegrationDisconnected = "integration.disconnected"
	// AuditIntegrationWebhookSecretSet records a new webhook secret of an
	// integration; the secret is never in the audit data.
	AuditIntegrationWebhookSecretSet = "integration.webhook_secret_set"
	AuditMappingSaved                = "mapping.saved"
	AuditMappingDeleted              = "mapping.deleted"
	// AuditOrderHeld, AuditOrderReleased and AuditOrderDropped record a
	// paid order kept unissued, then issued with corrections or dropped;
	// they never hold the buyer's address.
	AuditOrderHeld     = "order.held"
	AuditOrderReleased = "order.released"
	AuditOrderDropped  = "order.dropped"

	// AuditBrandingUpdated records a change of what customers see of the
	// organization.
	AuditBrandingUpdated = "organization.branding_updated"
)

// AuditActions lists every audit action, for the log's filter.
var AuditActions = []string{
	AuditOrganizationCreated, AuditMemberAdded, AuditMemberRoleChanged, AuditMemberRemoved,
	AuditMemberLoginLinkCreated, AuditMemberPasswordSet, AuditInvitationCreated, AuditInvitationRevoked,
	AuditGrantCreated, AuditGrantRevoked, AuditAPIKeyCreated, AuditAPIKeyRevoked,
	AuditProductCreated, AuditProductUpdated, AuditProductSigningKeyRotated, AuditProductPublicKeyRetired,
	AuditLicenceIssued, AuditLicenceRevoked, AuditLicenceExpired, AuditLicenceReinstated, AuditLicenceAnonymised,
	AuditLicenceTrialConverted, AuditLicenceUpdated, AuditLicenceReissued, AuditLicenceKeyMailed,
	AuditActivationCreated, AuditActivationDeactivated, AuditActivationRenamed,
	AuditWebhookEndpointCreated, AuditWebhookEndpointUpdated, AuditWebhookEndpointDeleted,
	AuditWebhookEndpointSecretRotated, AuditWebhookDeliveryRetried, AuditWebhookEndpointTested,
	AuditIntegrationConnected, AuditIntegrationDisconnected, AuditIntegrationWebhookSecretSet,
	AuditMappingSaved, AuditMappingDeleted, AuditBrandingUpdated,
}
