package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
)

// allowAll is a rate limiter that never refuses, so a benchmark measures
// the activation routes rather than the public limit of 30 a minute.
type allowAll struct{}

func (allowAll) Allow(_ context.Context, rule ratelimit.Rule, _ string) (ratelimit.Result, error) {
	return ratelimit.Result{Allowed: true, Limit: rule.Limit, Remaining: rule.Limit, Reset: rule.Window}, nil
}

func (allowAll) Release(context.Context, ratelimit.Rule, string, ratelimit.Result) error { return nil }

// newBenchEnv is an env (SQLite on a file, as served) with desk-app in the
// catalogue and a machines licence of the highest limit, and its key; its
// rate limiter allows every request.
func newBenchEnv(b *testing.B) (*testEnv, string) {
	b.Helper()
	return newDeskEnv(b, envOptions{limiter: allowAll{}})
}

// newDeskEnv is an env made with o, with desk-app in the catalogue and a
// machines licence of the highest limit, and its key.
func newDeskEnv(b testing.TB, o envOptions) (*testEnv, string) {
	b.Helper()
	e := newTestEnvWith(b, o)
	ctx := b.Context()
	_, err := e.admin.CreateProduct(ctx, licentia.OperatorActor, e.org.ID, admin.NewProduct{
		ID: ptr("desk-app"), Name: ptr("Desk"), KeyPrefix: ptr("DESK"), CurrentMajor: ptr[int64](3),
	})
	if err != nil {
		b.Fatalf("CreateProduct() error = %v", err)
	}
	kind := licentia.LimitMachines
	v, err := e.admin.IssueLicence(ctx, licentia.OperatorActor, e.org.ID, admin.NewLicence{
		ProductID: ptr("desk-app"), Email: ptr("ada@example.com"), LimitKind: &kind, LimitCount: ptr[int64](licentia.MaxLimitCount),
	})
	if err != nil {
		b.Fatalf("IssueLicence() error = %v", err)
	}
	if err := e.cat.Refresh(ctx); err != nil {
		b.Fatalf("Catalogue.Refresh() error = %v", err)
	}
	return e, *v.Key
}

// serve sends one request through the whole handler (middleware included)
// and fails unless it answers want.
func serve(b testing.TB, e *testEnv, path string, body []byte, want int) {
	serveAnswer(b, e, path, body, want)
}

// serveAnswer is serve, returning the answer's body.
func serveAnswer(b testing.TB, e *testEnv, path string, body []byte, want int) []byte {
	req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	if w.Code != want {
		b.Fatalf("POST %s status = %d, want %d; body %s", path, w.Code, want, w.Body)
	}
	return w.Body.Bytes()
}

// BenchmarkActivationStatus measures one status check of a machine holding
// a seat: decoding, verifying the licence key against the catalogue, two
// reads, signing a verdict and writing the answer. The clock does not
// move, so last_seen_at is never rewritten.
func BenchmarkActivationStatus(b *testing.B) {
	e, key := newBenchEnv(b)
	serve(b, e, "/v1/activations", mustJSON(b, activateBody(key, "bench-machine", nil)), http.StatusCreated)
	body := mustJSON(b, map[string]any{"licence_key": key, "machine_id": "bench-machine"})
	b.ReportAllocs()
	for b.Loop() {
		serve(b, e, "/v1/activations/status", body, http.StatusOK)
	}
}

// BenchmarkStatus measures BenchmarkActivationStatus's status check with
// metrics off and on, side by side: on, each check is also counted in the
// request counter and latency histogram and in the activations counter.
func BenchmarkStatus(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "metrics=off"
		if on {
			name = "metrics=on"
		}
		b.Run(name, func(b *testing.B) {
			e, key := newDeskEnv(b, envOptions{limiter: allowAll{}, metrics: on})
			serve(b, e, "/v1/activations", mustJSON(b, activateBody(key, "bench-machine", nil)), http.StatusCreated)
			body := mustJSON(b, map[string]any{"licence_key": key, "machine_id": "bench-machine"})
			b.ReportAllocs()
			for b.Loop() {
				serve(b, e, "/v1/activations/status", body, http.StatusOK)
			}
		})
	}
}

// BenchmarkActivate measures one activation taking a new seat: the checks
// of the status route, then a transaction that locks the licence, counts
// its seats and writes the activation, its audit entry and its event.
func BenchmarkActivate(b *testing.B) {
	e, key := newBenchEnv(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Appendf(nil, `{"licence_key":%q,"machine_id":"bench-%d","label":"Ada's laptop","os":"linux","app_version":"3.1.0"}`, key, i)
		serve(b, e, "/v1/activations", body, http.StatusCreated)
	}
}

// BenchmarkActivateRefresh measures an activation of a machine that
// already holds its seat (200): the same transaction, one row rewritten,
// no event.
func BenchmarkActivateRefresh(b *testing.B) {
	e, key := newBenchEnv(b)
	body := mustJSON(b, activateBody(key, "bench-machine", nil))
	serve(b, e, "/v1/activations", body, http.StatusCreated)
	b.ReportAllocs()
	for b.Loop() {
		serve(b, e, "/v1/activations", body, http.StatusOK)
	}
}

func mustJSON(b testing.TB, v any) []byte {
	b.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
