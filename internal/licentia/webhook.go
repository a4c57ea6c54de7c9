package licentia

import "time"

// WebhookEndpoint is a URL on the maker's server and the event types it
// receives. Its secrets are stored apart, sealed under the master key.
type WebhookEndpoint struct {
	ID          string
	OrgID       string
	URL         string
	EventTypes  []EventType
	Description string
	Enabled     bool
	// DisabledReason says why a turned-off endpoint is off; nil while enabled.
	DisabledReason *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Reasons an endpoint is turned off.
const (
	DisabledByMaker    = "disabled_by_maker"
	DisabledByFailures = "consecutive_failures"
)

// Subscribes reports whether the endpoint receives events of type t.
func (e *WebhookEndpoint) Subscribes(t EventType) bool {
	for _, have := range e.EventTypes {
		if have == t {
			return true
		}
	}
	return false
}

// WebhookSecret is one signing secret of an endpoint, sealed at rest. The
// current one has no ReplacedAt; a replaced one still signs for 24 hours.
type WebhookSecret struct {
	ID                string
	EndpointID        string
	Sealed            []byte
	MasterFingerprint string
	CreatedAt         time.Time
	ReplacedAt        *time.Time
}

// SecretOverlap is how long a replaced secret still signs.
const SecretOverlap = 24 * time.Hour

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

// Delivery statuses.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
)

// Delivery failure reasons.
const (
	FailureAddressRefused  = "address_refused"
	FailurePayloadTooLarge = "payload_too_large"
	FailureTimeout         = "timeout"
	FailureConnection      = "connection_failed"
	FailureTLS             = "tls_failed"
	FailureStatus          = "http_status"
	FailureRedirect        = "redirect"
	FailureEndpointOff     = "endpoint_disabled"
)

// Delivery is one attempt series of one event to one endpoint.
type Delivery struct {
	ID             string
	OrgID          string
	EndpointID     string
	EventID        string
	EventType      EventType
	Status         DeliveryStatus
	Attempts       int
	LastAttemptAt  *time.Time
	NextAttemptAt  *time.Time
	LastStatusCode *int
	FailureReason  *string
	CreatedAt      time.Time
	// LastResponse is the start of the receiver's answer to the last
	// attempt (MaxResponseKept bytes at most), nil when none came.
	LastResponse *string
	// LeasedUntil is the lease of a claimed delivery: an attempt's outcome
	// is recorded only while the delivery is still under that lease, so an
	// attempt that outlived it never overwrites a later one's.
	LeasedUntil *time.Time
}

// MaxResponseKept is how much of a receiver's answer a delivery keeps.
const MaxResponseKept = 2048

// MaxWebhookBody is the largest event body ever sent.
const MaxWebhookBody = 65536
