package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// Millis is how engines without a time type store an instant: milliseconds
// since the Unix epoch, UTC. Answers show milliseconds, so nothing is lost.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis is the inverse of Millis.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// MillisPtr converts an optional time.
func MillisPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

// FromMillisPtr converts an optional stored time.
func FromMillisPtr(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := FromMillis(*ms)
	return &t
}

// JoinScopes is the stored form of a set of scopes.
func JoinScopes(scopes []licentia.Scope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, " ")
}

// SplitScopes is the inverse of JoinScopes.
func SplitScopes(s string) []licentia.Scope {
	var out []licentia.Scope
	for _, f := range strings.Fields(s) {
		out = append(out, licentia.Scope(f))
	}
	return out
}

// JoinEventTypes is the stored form of a list of event types.
func JoinEventTypes(ts []licentia.EventType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, " ")
}

// DeliveriesOf returns a pending delivery of e, due at e.At, to each of
// endpoints that is enabled and subscribed to e's type.
func DeliveriesOf(e *licentia.Event, endpoints []licentia.WebhookEndpoint) []licentia.Delivery {
	var ds []licentia.Delivery
	for i := range endpoints {
		ep := &endpoints[i]
		if !ep.Enabled || !ep.Subscribes(e.Type) {
			continue
		}
		due := e.At
		ds = append(ds, licentia.Delivery{
			ID: licentia.NewID(), OrgID: e.OrgID, EndpointID: ep.ID, EventID: e.ID, EventType: e.Type,
			Status: licentia.DeliveryPending, NextAttemptAt: &due, CreatedAt: e.At,
		})
	}
	return ds
}

// SplitEventTypes is the inverse of JoinEventTypes.
func SplitEventTypes(s string) []licentia.EventType {
	var out []licentia.EventType
	for _, f := range strings.Fields(s) {
		out = append(out, licentia.EventType(f))
	}
	return out
}

// JoinComponents is the stored form of an activation's components: a
// JSON object, "{}" when there are none.
func JoinComponents(c map[string]string) string {
	if len(c) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(c) // a map of strings always encodes
	return string(b)
}

// SplitComponents is the inverse of JoinComponents; nil when none.
func SplitComponents(s string) (map[string]string, error) {
	if s == "{}" || s == "" {
		return nil, nil
	}
	var c map[string]string
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, fmt.Errorf("read components: %w", err)
	}
	return c, nil
}
