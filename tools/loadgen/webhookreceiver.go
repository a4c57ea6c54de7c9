package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// hookLedger is the receiver's bookkeeping. It knows the endpoints (by
// URL path, with their signing keys) and the changes the run made (by
// subject: event type and the id of the activation or licence changed),
// and records every delivery that arrives, in whatever order deliveries
// and the answers to the changes come.
type hookLedger struct {
	mu        sync.Mutex
	keys      map[string][]byte         // endpoint path -> signing key
	arrivals  map[string]map[string]int // endpoint path -> webhook-id -> arrivals
	eventOf   map[string]string         // subject -> webhook-id of its first delivery
	reached   map[string]int            // subject -> endpoints it reached
	expected  map[string]bool           // subjects of the changes made
	satisfied int                       // expected subjects that reached every endpoint
	latencies []time.Duration           // change -> first arrival, per endpoint
	last      time.Time                 // when the last first arrival came
	dupes     int                       // arrivals of a webhook-id an endpoint already had
	extra     int                       // deliveries of a second webhook-id for one subject
	badSig    int
	foreign   int // requests to paths of no endpoint of this run
	conns     int // connections the service opened
	now       func() time.Time
}

func newHookLedger(now func() time.Time) *hookLedger {
	return &hookLedger{keys: map[string][]byte{}, arrivals: map[string]map[string]int{}, eventOf: map[string]string{},
		reached: map[string]int{}, expected: map[string]bool{}, now: now}
}

// addEndpoint registers the endpoint at path with its whsec_ secret.
func (l *hookLedger) addEndpoint(path, secret string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return errors.New("secret is not whsec_ and base64")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys[path] = key
	l.arrivals[path] = map[string]int{}
	return nil
}

// expect records that a change was made whose event is subject.
func (l *hookLedger) expect(subject string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.expected[subject] {
		return
	}
	l.expected[subject] = true
	if l.reached[subject] == len(l.keys) {
		l.satisfied++
	}
}

// hookEvent is what the receiver reads of a body.
type hookEvent struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Activation *struct {
			ID string `json:"id"`
		} `json:"activation"`
		Licence struct {
			ID string `json:"id"`
		} `json:"licence"`
	} `json:"data"`
}

// subject names the change an event reports.
func (e *hookEvent) subject() string {
	if e.Data.Activation != nil {
		return e.Type + " " + e.Data.Activation.ID
	}
	return e.Type + " " + e.Data.Licence.ID
}

// ServeHTTP verifies a delivery's signature, records it and answers 204.
// A bad signature answers 400, which the service retries.
func (l *hookLedger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := l.now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16+1))
	if err != nil {
		return
	}
	l.mu.Lock()
	key, ok := l.keys[r.URL.Path]
	if !ok {
		l.foreign++
	}
	l.mu.Unlock()
	if !ok {
		// An endpoint a failed run left behind: answered, so that the
		// service does not retry it for days, and counted.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	id := r.Header.Get("webhook-id")
	var ev hookEvent
	if !verifyHook(key, id, r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, at) ||
		json.Unmarshal(body, &ev) != nil {
		l.mu.Lock()
		l.badSig++
		l.mu.Unlock()
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	changed, err := time.Parse(time.RFC3339Nano, ev.Timestamp)
	if err != nil {
		changed = at
	}
	l.arrive(r.URL.Path, id, ev.subject(), at.Sub(changed), at)
	w.WriteHeader(http.StatusNoContent)
}

// arrive records a verified delivery of event id about subject at the
// endpoint at path, latency after the change.
func (l *hookLedger) arrive(path, id, subject string, latency time.Duration, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.arrivals[path]
	seen[id]++
	if seen[id] > 1 {
		l.dupes++
		return
	}
	if first, ok := l.eventOf[subject]; ok && first != id {
		// One change, two events: not a duplicate the receiver could
		// recognise by webhook-id.
		l.extra++
		return
	}
	l.eventOf[subject] = id
	l.reached[subject]++
	l.latencies = append(l.latencies, latency)
	l.last = at
	if l.expected[subject] && l.reached[subject] == len(l.keys) {
		l.satisfied++
	}
}

// ConnState counts the connections opened to the receiver: with
// connections kept between attempts, far fewer than deliveries.
func (l *hookLedger) ConnState(_ net.Conn, state http.ConnState) {
	if state != http.StateNew {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns++
}

// complete reports whether every expected change reached every endpoint.
func (l *hookLedger) complete() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.satisfied == len(l.expected)
}

// hookTally is a snapshot of the ledger.
type hookTally struct {
	Expected   int // deliveries the changes should cause
	Delivered  int // expected deliveries that arrived
	Missing    int
	Duplicates int // same webhook-id again at one endpoint
	Extra      int // a second webhook-id for one change
	Unknown    int // events of changes this run did not make
	BadSig     int
	Foreign    int
	Conns      int
	Latencies  []time.Duration
	Last       time.Time
}

func (l *hookLedger) tally() hookTally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := hookTally{Expected: len(l.expected) * len(l.keys), Duplicates: l.dupes, Extra: l.extra,
		BadSig: l.badSig, Foreign: l.foreign, Conns: l.conns, Latencies: append([]time.Duration(nil), l.latencies...), Last: l.last}
	for s := range l.expected {
		t.Delivered += l.reached[s]
	}
	// Only now: a delivery may arrive before the answer to its change.
	for s, n := range l.reached {
		if !l.expected[s] {
			t.Unknown += n
		}
	}
	t.Missing = t.Expected - t.Delivered
	return t
}

// hookTolerance is how far a webhook-timestamp may be from the receiver's
// clock, as Standard Webhooks libraries allow.
const hookTolerance = 5 * time.Minute

// verifyHook checks a Standard Webhooks signature: one of the v1 entries
// must be the HMAC-SHA256 under key of "id.timestamp.body", and the
// timestamp must be near now.
func verifyHook(key []byte, id, timestamp, signatures string, body []byte, now time.Time) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || id == "" {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > hookTolerance || d < -hookTolerance {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, entry := range strings.Fields(signatures) {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}
