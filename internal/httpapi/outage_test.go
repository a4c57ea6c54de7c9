package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

var errKeysUnreadable = errors.New("database is locked")

// unreadableKeys is a store whose key lookups fail while down is set, as
// during a database outage.
type unreadableKeys struct {
	store.Store
	down *atomic.Bool
}

func (s unreadableKeys) APIKeyByPrefix(ctx context.Context, prefix string) (*licentia.APIKey, error) {
	if s.down.Load() {
		return nil, errKeysUnreadable
	}
	return s.Store.APIKeyByPrefix(ctx, prefix)
}

// TestKeyUnreadable: when the store fails while identifying the caller, an
// administration request answers 500 internal_error, never 429, and counts
// against no rate limit: neither the key's nor the client address's, which
// every key behind that address would otherwise share.
func TestKeyUnreadable(t *testing.T) {
	down := &atomic.Bool{}
	e := newTestEnvWith(t, envOptions{wrapStore: func(s store.Store) store.Store { return unreadableKeys{s, down} }})
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
	org := call{method: "GET", path: "/v1/admin/organization", key: key}
	other := call{method: "GET", path: "/v1/admin/organization", key: e.key(t, e.org.ID, licentia.ScopeOrganizationRead)}

	down.Store(true)
	for _, c := range []call{org, org, other} {
		r := e.run(t, scenario{call: c, wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal,
			notWant: []string{errKeysUnreadable.Error()}})
		if got := r.header.Get("X-RateLimit-Remaining-admin"); got != "" {
			t.Errorf("X-RateLimit-Remaining-admin = %q on a failed identification, want none (nothing counted)", got)
		}
		if logs := e.logs.String(); !strings.Contains(logs, r.header.Get("X-Request-Id")) || !strings.Contains(logs, errKeysUnreadable.Error()) {
			t.Errorf("no log line with the cause and the request id")
		}
	}
	// 300 more, the whole admin limit: none of them is refused 429.
	e.repeat(t, 300, org, http.StatusInternalServerError)

	down.Store(false)
	wantRateHeaders(t, e.run(t, scenario{call: org, wantStatus: http.StatusOK}), "299", "60")
	wantRateHeaders(t, e.run(t, scenario{call: other, wantStatus: http.StatusOK}), "299", "60")
	noKey := call{method: "GET", path: "/v1/admin/organization", invalid: true}
	wantRateHeaders(t, e.run(t, scenario{call: noKey, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized}), "299", "60")
}
