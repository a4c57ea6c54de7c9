// Package events writes the records of committed changes: webhook events
// with their one-line JSON bodies, and the snapshots of licences and
// activations as the API shows them. Every event is written through the
// caller's store.Tx, so it commits with its change or not at all.
package events

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Licence is a licence as the API shows it, in answers and in event data.
// It never holds the licence key.
type Licence struct {
	ID              string             `json:"id"`
	ProductID       string             `json:"product_id"`
	Email           string             `json:"email"`
	IssuedAt        string             `json:"issued_at"`
	ExpiresAt       *string            `json:"expires_at"`
	LimitKind       licentia.LimitKind `json:"limit_kind"`
	LimitCount      int64              `json:"limit_count"`
	Major           int64              `json:"major"`
	Status          licentia.Status    `json:"status"`
	State           licentia.State     `json:"state"`
	StatusReason    *string            `json:"status_reason"`
	StatusChangedAt *string            `json:"status_changed_at"`
	TrialEndsAt     *string            `json:"trial_ends_at"`
	Source          licentia.Source    `json:"source"`
	IntegrationID   *string            `json:"integration_id"`
	ExternalRef     *string            `json:"external_ref"`
	Provider        Provider           `json:"provider"`
	RenewalURL      *string            `json:"renewal_url"`
	// Replaces and ReplacedBy link a licence whose key was reissued with
	// its replacement, both ways.
	Replaces     *string `json:"replaces"`
	ReplacedBy   *string `json:"replaced_by"`
	AnonymisedAt *string `json:"anonymised_at"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
	// TransfersPer30Days is null when the licence follows its product's.
	TransfersPer30Days *int64 `json:"transfers_per_30_days"`
	// MaxConcurrent is null when the licence follows its product's.
	MaxConcurrent *int64 `json:"max_concurrent"`
	// Features are the licence's grants, by code; [] when none.
	Features []Grant `json:"features"`
}

// Grant is a feature a licence grants, as the API shows it.
type Grant struct {
	Code      string  `json:"code"`
	ExpiresAt *string `json:"expires_at"`
}

// GrantsOf shows a licence's grants: [] when there are none, never null.
func GrantsOf(gs []licentia.FeatureGrant) []Grant {
	out := make([]Grant, len(gs))
	for i, g := range gs {
		out[i] = Grant{Code: g.Code, ExpiresAt: licentia.FormatTimePtr(g.ExpiresAt)}
	}
	return out
}

// Provider holds a payment provider's ids; every key is always present.
type Provider struct {
	OrderID        *string `json:"order_id"`
	SubscriptionID *string `json:"subscription_id"`
	CustomerID     *string `json:"customer_id"`
	CheckoutID     *string `json:"checkout_id"`
	// OrderNumber is the order's number on the buyer's receipt, where the
	// provider has one apart from its id.
	OrderNumber *string `json:"order_number"`
}

// Activation is an activation as the API shows it.
type Activation struct {
	ID            string  `json:"id"`
	LicenceID     string  `json:"licence_id"`
	MachineID     string  `json:"machine_id"`
	Label         string  `json:"label"`
	OS            string  `json:"os"`
	AppVersion    string  `json:"app_version"`
	ActivatedAt   string  `json:"activated_at"`
	LastSeenAt    string  `json:"last_seen_at"`
	DeactivatedAt *string `json:"deactivated_at"`
	// Components are the names of the machine's components, sorted; never
	// their hashes. [] when the application sent none.
	Components []string `json:"components"`
}

// LicenceOf shows l with its derived state at now.
func LicenceOf(l *licentia.Licence, now time.Time) Licence {
	return Licence{
		ID: l.ID, ProductID: l.ProductID, Email: l.Email, IssuedAt: licentia.FormatTime(l.IssuedAt),
		ExpiresAt: licentia.FormatTimePtr(l.ExpiresAt), LimitKind: l.LimitKind, LimitCount: l.LimitCount, Major: l.Major,
		Status: l.Status, State: l.DerivedState(now), StatusReason: l.StatusReason,
		StatusChangedAt: licentia.FormatTimePtr(l.StatusChangedAt), TrialEndsAt: licentia.FormatTimePtr(l.TrialEndsAt), Source: l.Source,
		IntegrationID: l.IntegrationID, ExternalRef: l.ExternalRef,
		Provider: Provider{OrderID: l.Provider.OrderID, SubscriptionID: l.Provider.SubscriptionID,
			CustomerID: l.Provider.CustomerID, CheckoutID: l.Provider.CheckoutID, OrderNumber: l.Provider.OrderNumber},
		RenewalURL: l.RenewalURL, Replaces: l.Replaces, ReplacedBy: l.ReplacedBy,
		AnonymisedAt: licentia.FormatTimePtr(l.AnonymisedAt), CreatedAt: licentia.FormatTime(l.CreatedAt), UpdatedAt: licentia.FormatTime(l.UpdatedAt),
		Features:           GrantsOf(l.Features),
		TransfersPer30Days: l.TransfersPer30Days, MaxConcurrent: l.MaxConcurrent,
	}
}

// ActivationOf shows a.
func ActivationOf(a *licentia.Activation) Activation {
	return Activation{
		ID: a.ID, LicenceID: a.LicenceID, MachineID: a.MachineID, Label: a.Label, OS: a.OS, AppVersion: a.AppVersion,
		ActivatedAt: licentia.FormatTime(a.ActivatedAt), LastSeenAt: licentia.FormatTime(a.LastSeenAt),
		DeactivatedAt: licentia.FormatTimePtr(a.DeactivatedAt),
		Components:    componentNames(a.Components),
	}
}

// body is the webhook body: type, the time of the change, and the data.
type body struct {
	Type      licentia.EventType `json:"type"`
	Timestamp string             `json:"timestamp"`
	Data      data               `json:"data"`
}

type data struct {
	Activation *Activation `json:"activation,omitempty"`
	Licence    Licence     `json:"licence"`
	// PreviousMachineID is the machine id an activation.rebound moved from.
	PreviousMachineID string `json:"previous_machine_id,omitempty"`
	// Reason says why the service itself freed an activation: transfer.
	Reason string `json:"reason,omitempty"`
	// Replacement is the new licence of licence.reissued.
	Replacement *Licence `json:"replacement,omitempty"`
}

// Write records an event of typ about licence l (and activation a, for the
// activation events) in tx, with snapshots taken at the change time at. The
// body is encoded once and stored, so every attempt sends the same bytes.
func Write(ctx context.Context, tx store.Tx, typ licentia.EventType, at time.Time, l *licentia.Licence, a *licentia.Activation) (*licentia.Event, error) {
	return writeNoted(ctx, tx, typ, at, l, a, Note{})
}

// writeNoted is Write with what the event says beyond its snapshots.
func writeNoted(ctx context.Context, tx store.Tx, typ licentia.EventType, at time.Time, l *licentia.Licence, a *licentia.Activation, n Note) (*licentia.Event, error) {
	b := body{Type: typ, Timestamp: licentia.FormatTime(at),
		Data: data{Licence: LicenceOf(l, at), PreviousMachineID: n.PreviousMachineID, Reason: n.Reason}}
	if a != nil {
		snap := ActivationOf(a)
		b.Data.Activation = &snap
	}
	return write(ctx, tx, l.OrgID, &l.ID, typ, at, b)
}

// WriteReissued records licence.reissued in tx: data.licence is the old
// licence, after the change, and data.replacement the new one, both
// snapshots taken at the change time at. The event belongs to the old
// licence, whose key changed.
func WriteReissued(ctx context.Context, tx store.Tx, at time.Time, old, replacement *licentia.Licence) (*licentia.Event, error) {
	snap := LicenceOf(replacement, at)
	b := body{Type: licentia.EventLicenceReissued, Timestamp: licentia.FormatTime(at),
		Data: data{Licence: LicenceOf(old, at), Replacement: &snap}}
	return write(ctx, tx, old.OrgID, &old.ID, b.Type, at, b)
}

// write encodes b, stores it as an event of typ at at, of the
// organization orgID and about licence licenceID (nil for an event about
// no licence), and queues its deliveries.
func write(ctx context.Context, tx store.Tx, orgID string, licenceID *string, typ licentia.EventType, at time.Time, b any) (*licentia.Event, error) {
	e, err := encode(orgID, licenceID, typ, at, b)
	if err != nil {
		return nil, err
	}
	if err := tx.InsertEvent(ctx, e); err != nil {
		return nil, err
	}
	if err := tx.QueueDeliveries(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// encode makes the event of body b: its one-line JSON, sent byte for byte.
func encode(orgID string, licenceID *string, typ licentia.EventType, at time.Time, b any) (*licentia.Event, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("encode event %s: %w", typ, err)
	}
	return &licentia.Event{
		ID: NewID(), OrgID: orgID, Type: typ, LicenceID: licenceID, At: at,
		Body: bytes.TrimRight(buf.Bytes(), "\n"),
	}, nil
}

// NewID returns an event id: evt_ and 32 lower-case hexadecimal characters.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
}

// Cleanup deletes events older than the retention period, 30 days after
// they happened. Deliveries go with their events.
func Cleanup(ctx context.Context, st store.Store, now time.Time) (int64, error) {
	var n int64
	err := st.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteEventsBefore(ctx, now.Add(-licentia.EventRetention))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clean up events: %w", err)
	}
	return n, nil
}

// componentNames are the names of components, sorted, never nil: an
// activation without components shows [].
func componentNames(c map[string]string) []string {
	return append([]string{}, slices.Sorted(maps.Keys(c))...)
}
