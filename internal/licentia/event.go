package licentia

import "time"

// EventType names an outgoing event.
type EventType string

// The contract's event types.
const (
	EventLicenceIssued         EventType = "licence.issued"
	EventLicenceRevoked        EventType = "licence.revoked"
	EventLicenceExpired        EventType = "licence.expired"
	EventLicenceReinstated     EventType = "licence.reinstated"
	EventLicenceAnonymised     EventType = "licence.anonymised"
	EventLicenceTrialConverted EventType = "licence.trial_converted"
	// EventLicenceUpdated reports a change of a licence's limit, expiry or
	// major in place; it is beyond the contract's list.
	EventLicenceUpdated EventType = "licence.updated"
	// EventLicenceReissued reports a licence whose key was reissued: its
	// data holds the old licence and its replacement.
	EventLicenceReissued EventType = "licence.reissued"
	// EventOrderHeld reports a paid order kept unissued (a held order):
	// its data holds the order, not a licence.
	EventOrderHeld             EventType = "order.held"
	EventActivationCreated     EventType = "activation.created"
	EventActivationDeactivated EventType = "activation.deactivated"
	// EventActivationRebound reports a live activation moved to a new
	// machine id whose components match it; its data holds
	// previous_machine_id.
	EventActivationRebound EventType = "activation.rebound"
	// EventEndpointTest is sent when the maker asks for a test event, to
	// that one endpoint only; no endpoint subscribes to it, so it is not
	// in EventTypes.
	EventEndpointTest EventType = "endpoint.test"
)

// EventTypes lists every event type.
var EventTypes = []EventType{
	EventLicenceIssued, EventLicenceRevoked, EventLicenceExpired, EventLicenceReinstated,
	EventLicenceAnonymised, EventLicenceTrialConverted, EventActivationCreated, EventActivationDeactivated,
	EventLicenceUpdated, EventLicenceReissued, EventOrderHeld, EventActivationRebound,
}

// Event is a committed change as webhooks report it. Body is the one-line
// JSON sent on every attempt, byte for byte; it never holds a licence key.
type Event struct {
	ID        string
	OrgID     string
	Type      EventType
	LicenceID *string
	At        time.Time
	Body      []byte
}

// EventRetention is how long events (and their deliveries) are kept.
const EventRetention = 30 * 24 * time.Hour
