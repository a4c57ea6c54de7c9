// Package providertest holds loopback fakes of the payment providers' APIs
// and senders that sign webhook requests as each provider does, for tests of
// the adapters and of the routes that use them.
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Outcome is how a fake answers every API call.
type Outcome int

const (
	// OK answers as the provider does for a known key (a request with
	// another key is still refused with 401).
	OK Outcome = iota
	// TokenRefused answers 401.
	TokenRefused
	// PermissionDenied answers 403.
	PermissionDenied
	// NotFound answers 404.
	NotFound
	// ServerError answers 500.
	ServerError
	// Hang never answers; the caller's timeout ends the call.
	Hang
)

// fake is what the three providers' fakes share: one accepted key, a forced
// outcome, the requests seen, and an end to hanging handlers when the test
// ends.
type fake struct {
	mu       sync.Mutex
	key      string
	outcome  Outcome
	requests []string
	keys     []string
	srv      *httptest.Server
	done     chan struct{}
	// errorBody is the provider's error document for a status.
	errorBody func(status int) any
}

func (f *fake) start(t testing.TB, mux *http.ServeMux) {
	t.Helper()
	f.done = make(chan struct{})
	f.srv = httptest.NewServer(f.gate(mux))
	t.Cleanup(func() {
		close(f.done)
		f.srv.Close()
	})
}

// URL is the fake's base address, as LICENTIA_*_API_URL takes it.
func (f *fake) URL() string { return f.srv.URL }

// Key is the API key the fake accepts.
func (f *fake) Key() string { return f.key }

// SetOutcome makes every later API call answer o.
func (f *fake) SetOutcome(o Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.outcome = o
}

// Requests lists the "METHOD /path" of every API call received.
func (f *fake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// Keys lists the key each API call carried (its bearer token), in the
// order of Requests.
func (f *fake) Keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...)
}

// gate records the call, applies the forced outcome and the key check, then
// hands over to the provider's routes.
func (f *fake) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		f.keys = append(f.keys, token)
		outcome := f.outcome
		f.mu.Unlock()
		switch outcome {
		case Hang:
			select {
			case <-r.Context().Done():
			case <-f.done:
			}
			return
		case TokenRefused:
			f.fail(w, http.StatusUnauthorized)
			return
		case PermissionDenied:
			f.fail(w, http.StatusForbidden)
			return
		case NotFound:
			f.fail(w, http.StatusNotFound)
			return
		case ServerError:
			f.fail(w, http.StatusInternalServerError)
			return
		}
		if !bearer || token != f.key {
			f.fail(w, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (f *fake) fail(w http.ResponseWriter, status int) {
	writeJSON(w, status, f.errorBody(status))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func newRequest(ctx context.Context, url string, body []byte, header map[string]string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req, nil
}

// String names the outcome, for test names.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case TokenRefused:
		return "401"
	case PermissionDenied:
		return "403"
	case NotFound:
		return "404"
	case ServerError:
		return "500"
	case Hang:
		return "hang"
	}
	return "unknown"
}
