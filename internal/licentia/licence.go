package licentia

import (
	"strings"
	"time"
)

// Licence is one product's licence for one customer.
type Licence struct {
	ID              string
	OrgID           string
	ProductID       string
	Email           string
	IssuedAt        time.Time
	ExpiresAt       *time.Time
	LimitKind       LimitKind
	LimitCount      int64
	Major           int64
	Status          Status
	StatusReason    *string
	StatusChangedAt *time.Time
	TrialEndsAt     *time.Time
	Source          Source
	IntegrationID   *string
	ExternalRef     *string
	Provider        ProviderRefs
	// RenewalURL is where the customer renews, from the provider mapping
	// that issued the licence; nil for licences issued otherwise.
	RenewalURL *string
	// SubscriptionEndedAt is when a provider subscription ended; such a
	// licence keeps its place in the plan's count for 30 days.
	SubscriptionEndedAt *time.Time
	AnonymisedAt        *time.Time
	// Replaces is the licence this one took over from when its key was
	// reissued; ReplacedBy the one that took over from this one. Both nil
	// for a licence never reissued.
	Replaces   *string
	ReplacedBy *string
	// Features are the licence's grants, ordered by code; nil when it
	// grants none.
	Features  []FeatureGrant
	CreatedAt time.Time
	UpdatedAt time.Time
	// LiveActivations counts the activations not deactivated, kept in the
	// same transaction as each activation change.
	LiveActivations int64
	// TransfersPer30Days is the licence's own transfer limit; nil follows
	// its product's.
	TransfersPer30Days *int64
	// MaxConcurrent is the licence's own limit of machines in use at once;
	// nil follows its product's.
	MaxConcurrent *int64
}

// TransfersAllowed is how many transfers the licence may make in any 30
// days: its own setting, else its product's.
func (l *Licence) TransfersAllowed(p *Product) int64 {
	if l.TransfersPer30Days != nil {
		return *l.TransfersPer30Days
	}
	return p.TransfersPer30Days
}

// ProviderRefs are a payment provider's ids for the sale.
type ProviderRefs struct {
	OrderID        *string
	SubscriptionID *string
	CustomerID     *string
	CheckoutID     *string
	// OrderNumber is the order's number as the buyer's receipt shows it,
	// where the provider has one apart from its id (Lemon Squeezy's order
	// number, Paddle's invoice number).
	OrderNumber *string
}

// LimitKind says what a licence's limit counts.
type LimitKind string

// Limit kinds.
const (
	LimitSeats    LimitKind = "seats"
	LimitMachines LimitKind = "machines"
)

// Status is a licence's stored status.
type Status string

// Stored statuses.
const (
	StatusActive  Status = "active"
	StatusRevoked Status = "revoked"
	StatusExpired Status = "expired"
)

// State is a licence's derived state.
type State string

// Derived states.
const (
	StateActive  State = "active"
	StateTrial   State = "trial"
	StateExpired State = "expired"
	StateRevoked State = "revoked"
)

// IsInForce reports whether a licence in state s is in force, active or
// trial: its key activates and it takes a place in the plan's count of
// active licences.
func (s State) IsInForce() bool { return s == StateActive || s == StateTrial }

// Source says who issued a licence.
type Source string

// Sources.
const (
	SourceAdmin    Source = "admin"
	SourceProvider Source = "provider"
)

// Term says how long a licence runs.
type Term string

// Terms.
const (
	TermPerpetual    Term = "perpetual"
	TermTerm         Term = "term"
	TermSubscription Term = "subscription"
)

// DerivedState is the licence's derived state at now (see StateOf).
func (l *Licence) DerivedState(now time.Time) State {
	return StateOf(l.Status, l.HasLapsed(now), l.TrialEndsAt != nil && l.TrialEndsAt.After(now))
}

// StateOf is the one place the derived state is decided in Go; the licence
// counters judge their rows by it too, and the engines' SQL mirrors it (see
// store.StateSQL, held to it by one test at the boundaries). Of a licence
// with stored status st, lapsed when its expires_at is at or before the
// time judged, in trial when its trial end is after it:
//   - revoked: stored revoked;
//   - expired: stored expired, or stored active and lapsed;
//   - trial: stored active, not lapsed, in trial;
//   - active: stored active, not lapsed, not in trial.
func StateOf(st Status, lapsed, inTrial bool) State {
	switch {
	case st == StatusRevoked:
		return StateRevoked
	case st == StatusExpired, lapsed:
		return StateExpired
	case inTrial:
		return StateTrial
	}
	return StateActive
}

// HasLapsed reports whether the licence's expires_at is at or before t:
// from that instant a stored-active licence is derived expired.
func (l *Licence) HasLapsed(t time.Time) bool { return l.ExpiresAt != nil && !l.ExpiresAt.After(t) }

// Term is subscription when a provider subscription id is set, else term
// when the licence expires, else perpetual.
func (l *Licence) Term() Term {
	switch {
	case l.Provider.SubscriptionID != nil:
		return TermSubscription
	case l.ExpiresAt != nil:
		return TermTerm
	}
	return TermPerpetual
}

// CountsInPlan reports whether the licence takes a place in the plan's count
// of active licences at now: derived active or trial, or a provider
// subscription licence whose subscription ended less than 30 days ago.
func (l *Licence) CountsInPlan(now time.Time) bool {
	if l.DerivedState(now).IsInForce() {
		return true
	}
	return l.SubscriptionEndedAt != nil && now.Sub(*l.SubscriptionEndedAt) < SubscriptionGrace
}

// LiveMachines is the licence's live_machines: its live activations while
// it is in force (active or trial), and none otherwise. A revoked or
// expired licence keeps its activations, which count again once it is
// reinstated.
func (l *Licence) LiveMachines(now time.Time) int64 {
	if !l.DerivedState(now).IsInForce() {
		return 0
	}
	return l.LiveActivations
}

// SubscriptionGrace is how long a subscription licence keeps its place in
// the plan's count after its subscription ends.
const SubscriptionGrace = 30 * 24 * time.Hour

// MachinesAllowed is how many machines may hold a live seat: limit_count for
// a machines licence, limit_count × machines_per_seat for a seats licence.
// Both are at most 2^32-1 and 1000, so the product fits in 64 bits.
func (l *Licence) MachinesAllowed(machinesPerSeat int64) int64 {
	if l.LimitKind == LimitMachines {
		return l.LimitCount
	}
	return l.LimitCount * machinesPerSeat
}

// Licence field limits.
const (
	MaxLimitCount  = 4294967295
	MaxReason      = 500
	MaxExternalRef = 200
	// ReservedReasonPrefix marks reasons written by payment providers; an
	// administration caller may not use it.
	ReservedReasonPrefix = "provider:"
	// AnonymisedDomain replaces an anonymised licence's email domain.
	AnonymisedDomain = "anonymised.invalid"
)

// CheckExternalRef returns why ref is not an external reference, or "": 1 to
// 200 bytes of printable ASCII (0x20 to 0x7E), kept exactly as sent.
func CheckExternalRef(ref string) string {
	if len(ref) < 1 || len(ref) > MaxExternalRef {
		return "must be 1 to 200 printable ASCII characters"
	}
	for i := range len(ref) {
		if ref[i] < 0x20 || ref[i] > 0x7e {
			return "must be 1 to 200 printable ASCII characters"
		}
	}
	return ""
}

// CheckReason returns why a status-change reason is not acceptable, or "".
func CheckReason(reason string) string {
	if n := len([]rune(reason)); n < 1 || n > MaxReason {
		return "must be 1 to 500 characters"
	}
	if HasControl(reason) {
		return "must not contain control characters"
	}
	if strings.HasPrefix(reason, ReservedReasonPrefix) {
		return "must not start with the reserved prefix provider:"
	}
	return ""
}

// Activation is a machine's seat on a licence.
type Activation struct {
	ID            string
	OrgID         string
	LicenceID     string
	MachineID     string
	Label         string
	OS            string
	AppVersion    string
	ActivatedAt   time.Time
	LastSeenAt    time.Time
	DeactivatedAt *time.Time
	// Components are the hashes of the machine's parts the application
	// sent, by component name; empty when it sent none.
	Components map[string]string
	// ReboundAt is when the activation was last moved to a new machine id
	// by its components; nil when never.
	ReboundAt *time.Time
}

// IsLive reports whether the activation holds a seat.
func (a *Activation) IsLive() bool { return a.DeactivatedAt == nil }

// HasControl reports whether s holds a control character (NUL included),
// which no free-text field accepts.
func HasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
}
