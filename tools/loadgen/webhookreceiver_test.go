package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/licentia/licentia/internal/webhooks"
)

var hookNow = time.Date(2026, 11, 22, 1, 16, 13, 0, time.UTC)

// hookDelivery is a delivery as the service sends it: the body of an
// activation.created event, signed by the service's own signer.
type hookDelivery struct {
	path, id, activation string
	key                  []byte
	changed, sent        time.Time
}

func (d hookDelivery) request() *http.Request {
	body := fmt.Sprintf(`{"type":"activation.created","timestamp":%q,"data":{"activation":{"id":%q},"licence":{"id":"l1"}}}`,
		d.changed.Format("2006-01-02T15:04:05.000Z"), d.activation)
	r := httptest.NewRequest(http.MethodPost, "https://hooks.loadgen.example"+d.path, strings.NewReader(body))
	r.Header.Set("webhook-id", d.id)
	r.Header.Set("webhook-timestamp", strconv.FormatInt(d.sent.Unix(), 10))
	r.Header.Set("webhook-signature", webhooks.Sign([][]byte{d.key}, d.id, d.sent, []byte(body)))
	return r
}

// TestHookLedger: the receiver verifies each delivery's signature, counts
// each endpoint's deliveries by webhook-id whatever order they and the
// answers to the changes come in, and names duplicates, missing
// deliveries, second events for one change and stray requests.
func TestHookLedger(t *testing.T) {
	at := hookNow
	l := newHookLedger(func() time.Time { return at })
	keys := map[string][]byte{"/run/e1": []byte("first endpoint's secret!"), "/run/e2": []byte("second endpoint's secret")}
	for path, key := range keys {
		if err := l.addEndpoint(path, "whsec_"+base64.StdEncoding.EncodeToString(key)); err != nil {
			t.Fatalf("addEndpoint(%s) error = %v", path, err)
		}
	}
	if err := l.addEndpoint("/run/e3", "not a secret"); err == nil {
		t.Errorf("addEndpoint(without whsec_) error = nil, want an error")
	}
	deliver := func(path, id, activation string, latency time.Duration) int {
		t.Helper()
		d := hookDelivery{path: path, id: id, activation: activation, key: keys[path], changed: at.Add(-latency), sent: at}
		w := httptest.NewRecorder()
		l.ServeHTTP(w, d.request())
		return w.Code
	}

	l.expect("activation.created a1")
	// The delivery of a2 reaches e1 before the answer to its change.
	for _, tt := range []struct {
		path, id, activation string
		latency              time.Duration
		want                 int
	}{
		{"/run/e1", "evt_1", "a1", 10 * time.Millisecond, http.StatusNoContent},
		{"/run/e1", "evt_2", "a2", 20 * time.Millisecond, http.StatusNoContent},
		{"/run/e1", "evt_1", "a1", 5 * time.Second, http.StatusNoContent}, // duplicate
		{"/run/e2", "evt_1", "a1", 30 * time.Millisecond, http.StatusNoContent},
		{"/run/e2", "evt_9", "a2", 40 * time.Millisecond, http.StatusNoContent}, // a second event for a2
		{"/run/e2", "evt_3", "a3", 50 * time.Millisecond, http.StatusNoContent}, // a change the run did not make
		{"/old/e1", "evt_4", "a4", 0, http.StatusNoContent},                     // an endpoint of another run
	} {
		if got := deliver(tt.path, tt.id, tt.activation, tt.latency); got != tt.want {
			t.Errorf("%s %s: status %d, want %d", tt.path, tt.id, got, tt.want)
		}
	}
	l.expect("activation.created a2")
	if l.complete() {
		t.Errorf("complete() = true, want false: a2 never reached e2 under its first webhook-id")
	}

	// Signatures: another endpoint's secret, a stale timestamp and a
	// changed body are refused.
	wrongKey := hookDelivery{path: "/run/e2", id: "evt_2", activation: "a2", key: keys["/run/e1"], changed: at, sent: at}
	stale := hookDelivery{path: "/run/e2", id: "evt_2", activation: "a2", key: keys["/run/e2"], changed: at, sent: at.Add(-6 * time.Minute)}
	changed := hookDelivery{path: "/run/e2", id: "evt_2", activation: "a2", key: keys["/run/e2"], changed: at, sent: at}.request()
	changed.Header.Set("webhook-id", "evt_5")
	for name, r := range map[string]*http.Request{"wrong key": wrongKey.request(), "stale": stale.request(), "changed": changed} {
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, w.Code)
		}
	}

	got := l.tally()
	want := hookTally{Expected: 4, Delivered: 3, Missing: 1, Duplicates: 1, Extra: 1, Unknown: 1, BadSig: 3, Foreign: 1,
		Latencies: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 50 * time.Millisecond},
		Last:      at}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b time.Duration) bool { return a < b })); diff != "" {
		t.Errorf("tally() mismatch (-want +got):\n%s", diff)
	}

	if code := deliver("/run/e2", "evt_2", "a2", 60*time.Millisecond); code != http.StatusNoContent {
		t.Errorf("late delivery of a2 to e2: status %d, want 204", code)
	}
	if !l.complete() {
		t.Errorf("complete() = false once every change reached every endpoint, want true")
	}
	if got := l.tally(); got.Delivered != 4 || got.Missing != 0 {
		t.Errorf("tally() = %d delivered, %d missing; want 4, 0", got.Delivered, got.Missing)
	}
}

func TestHookLatencyOf(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- {
		samples = append(samples, time.Duration(i)*time.Millisecond)
	}
	want := HookLatency{P50: 50, P90: 90, P99: 99, Max: 100}
	if diff := cmp.Diff(want, hookLatencyOf(samples)); diff != "" {
		t.Errorf("hookLatencyOf(100..1 ms) mismatch (-want +got):\n%s", diff)
	}
	if got := hookLatencyOf(nil); got != (HookLatency{}) {
		t.Errorf("hookLatencyOf(nil) = %+v, want zero", got)
	}
}
