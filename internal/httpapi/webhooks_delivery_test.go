package httpapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// newHookEnv is a licence env (desk-app, a key with every key scope) with a
// delivery worker and a receiver.
func newHookEnv(t *testing.T) *licenceEnv {
	t.Helper()
	return licenceEnvOf(t, newTestEnvWith(t, envOptions{webhooks: true}))
}

// runWorker runs one worker step and returns how many deliveries it
// attempted.
func (e *testEnv) runWorker(t *testing.T) int {
	t.Helper()
	n, err := e.worker.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce() error = %v", err)
	}
	return n
}

// lastEvent returns the organization's newest event.
func (e *testEnv) lastEvent(t *testing.T, orgID string) licentia.Event {
	t.Helper()
	evs := e.events(t, orgID)
	if len(evs) == 0 {
		t.Fatalf("no events")
	}
	return evs[len(evs)-1]
}

// verifies reports whether the Standard Webhooks library accepts r with
// secret. The fake clock is far from the library's time.Now, so the
// timestamp's age is not checked here (TestDeliveryRealTime checks it).
func verifies(t *testing.T, secret string, r hookRequest) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("NewWebhook() error = %v", err)
	}
	return wh.VerifyIgnoringTimestamp(r.Body, r.Header) == nil
}

// checkRequest holds a delivery request to the contract's Delivery request
// table: a POST of the event's exact body, its id, the attempt's time and a
// signature for each of secrets, and for no other.
func checkRequest(t *testing.T, r hookRequest, ev licentia.Event, attemptAt time.Time, secrets ...string) {
	t.Helper()
	if r.Method != http.MethodPost {
		t.Errorf("method = %s, want POST", r.Method)
	}
	for name, want := range map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "Licentia-Webhooks/1.0 (" + testBaseURL + ")",
		"webhook-id":        ev.ID,
		"webhook-timestamp": strconv.FormatInt(attemptAt.Unix(), 10),
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if !bytes.Equal(r.Body, ev.Body) {
		t.Errorf("body = %s, want the event's stored body %s", r.Body, ev.Body)
	}
	sigs := strings.Split(r.Header.Get("webhook-signature"), " ")
	if len(sigs) != len(secrets) {
		t.Errorf("webhook-signature has %d entries, want %d: %q", len(sigs), len(secrets), r.Header.Get("webhook-signature"))
	}
	for _, s := range sigs {
		if !strings.HasPrefix(s, "v1,") {
			t.Errorf("signature entry %q, want v1,<base64>", s)
		}
	}
	for _, secret := range secrets {
		if !verifies(t, secret, r) {
			t.Errorf("the Standard Webhooks library refuses the request with secret %s...", secret[:10])
		}
	}
}

// TestDeliveryFanOut: a licence change queues one delivery per enabled
// endpoint of the organization subscribed to its type, in the change's
// transaction; the worker sends each as the contract's Delivery request
// says and records the success.
func TestDeliveryFanOut(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	both := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/both"), licentia.EventLicenceIssued, licentia.EventLicenceRevoked))
	issued := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/issued"), licentia.EventLicenceIssued))
	revoked := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/revoked"), licentia.EventLicenceRevoked))
	off := e.addEndpoint(t, e.allKey, map[string]any{"url": hookURL("/off"), "event_types": []string{"licence.issued"}, "enabled": false})
	_, otherKey := e.otherOrg(t, "globex", "globex-app", "GLBX")
	theirs := e.addEndpoint(t, otherKey, endpointBody(hookURL("/theirs"), licentia.EventLicenceIssued))

	e.clock.Advance(time.Minute)
	l := e.issue(t, e.allKey, issueBody(nil))
	ev := e.lastEvent(t, e.org.ID)
	if ev.Type != licentia.EventLicenceIssued || *ev.LicenceID != l.Licence.ID {
		t.Fatalf("last event = %s of %v, want licence.issued of %s", ev.Type, ev.LicenceID, l.Licence.ID)
	}
	queued := deliveryView{EventID: ev.ID, EventType: "licence.issued", Status: "pending", NextAttemptAt: ptr(at(time.Minute)), CreatedAt: at(time.Minute)}
	for _, ep := range []endpointSecretAnswer{both, issued} {
		page := e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "")
		if len(page.Deliveries) != 1 {
			t.Fatalf("endpoint %s has %d deliveries, want 1", ep.Endpoint.URL, len(page.Deliveries))
		}
		queued.ID = page.Deliveries[0].ID
		if diff := cmp.Diff(queued, page.Deliveries[0]); diff != "" {
			t.Errorf("queued delivery to %s mismatch (-want +got):\n%s", ep.Endpoint.URL, diff)
		}
	}
	for _, ep := range []endpointSecretAnswer{revoked, off} {
		if n := len(e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "").Deliveries); n != 0 {
			t.Errorf("endpoint %s (unsubscribed or off) has %d deliveries, want 0", ep.Endpoint.URL, n)
		}
	}
	if n := len(e.listDeliveries(t, otherKey, theirs.Endpoint.ID, "").Deliveries); n != 0 {
		t.Errorf("another organization's endpoint has %d deliveries of our change, want 0", n)
	}

	e.clock.Advance(3 * time.Second)
	if n := e.runWorker(t); n != 2 {
		t.Fatalf("RunOnce() attempted %d, want 2", n)
	}
	for _, ep := range []endpointSecretAnswer{both, issued} {
		path := strings.TrimPrefix(ep.Endpoint.URL, "https://"+receiverHost)
		got := e.hooks.requestsTo(path)
		if len(got) != 1 {
			t.Fatalf("%s received %d requests, want 1", path, len(got))
		}
		checkRequest(t, got[0], ev, e.clock.Now(), ep.Secret)
		for _, other := range []endpointSecretAnswer{both, issued} {
			if other.Secret != ep.Secret && verifies(t, other.Secret, got[0]) {
				t.Errorf("%s's request verifies with another endpoint's secret", path)
			}
		}
		if err := eventSchemaError(t, ev.Type, got[0].Body); err != nil {
			t.Errorf("delivered body does not match the webhooks section: %v", err)
		}
		d := e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "").Deliveries[0]
		want := deliveryView{ID: d.ID, EventID: ev.ID, EventType: "licence.issued", Status: "succeeded", Attempts: 1,
			LastAttemptAt: ptr(at(time.Minute + 3*time.Second)), LastStatusCode: ptr(200), CreatedAt: at(time.Minute)}
		if diff := cmp.Diff(want, d); diff != "" {
			t.Errorf("delivery to %s after success mismatch (-want +got):\n%s", path, diff)
		}
	}
	if n := len(e.hooks.requests()); n != 2 {
		t.Errorf("receiver got %d requests, want 2", n)
	}
	if n := e.runWorker(t); n != 0 {
		t.Errorf("RunOnce() after success attempted %d, want 0", n)
	}

	// A revoke goes to the endpoints subscribed to licence.revoked only.
	e.change(t, l.Licence.ID, "revoke", "refund")
	rev := e.lastEvent(t, e.org.ID)
	if n := e.runWorker(t); n != 2 {
		t.Fatalf("RunOnce() after the revoke attempted %d, want 2", n)
	}
	checkRequest(t, e.hooks.requestsTo("/both")[1], rev, e.clock.Now(), both.Secret)
	checkRequest(t, e.hooks.requestsTo("/revoked")[0], rev, e.clock.Now(), revoked.Secret)
	if n := len(e.hooks.requestsTo("/issued")); n != 1 {
		t.Errorf("/issued received %d requests, want only the issue", n)
	}

	if logs := e.logs.String(); strings.Contains(logs, both.Secret) || strings.Contains(logs, strings.TrimPrefix(both.Secret, "whsec_")) {
		t.Errorf("logs hold a webhook secret")
	}
}

// failingDeliveries is a store whose transactions queue an event's
// deliveries and then fail, as when the disk goes right after.
type failingDeliveries struct{ store.Store }

func (s failingDeliveries) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(failingDeliveriesTx{tx}) })
}

type failingDeliveriesTx struct{ store.Tx }

func (t failingDeliveriesTx) QueueDeliveries(ctx context.Context, e *licentia.Event) error {
	if err := t.Tx.QueueDeliveries(ctx, e); err != nil {
		return err
	}
	return errDiskGone
}

// TestDeliveryRollback: a change that rolls back leaves no event and no
// delivery, though its deliveries were queued in its transaction.
func TestDeliveryRollback(t *testing.T) {
	t.Parallel()
	e := licenceEnvOf(t, newTestEnvWith(t, envOptions{webhooks: true, wrapStore: func(s store.Store) store.Store { return failingDeliveries{s} }}))
	ep := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/rb"), licentia.EventLicenceIssued))
	before := len(e.events(t, e.org.ID))
	e.run(t, scenario{call: issueCall(e.allKey, issueBody(nil)), wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal})
	if n := len(e.events(t, e.org.ID)); n != before {
		t.Errorf("%d events after a rolled-back change, want %d", n, before)
	}
	if got := e.find(t, e.allKey, q("email", "ada@example.com")); len(got) != 0 {
		t.Errorf("rolled-back licence stored: %+v", got)
	}
	if got := e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "").Deliveries; len(got) != 0 {
		t.Errorf("deliveries after a rolled-back change: %+v", got)
	}
	if n := e.runWorker(t); n != 0 {
		t.Errorf("RunOnce() attempted %d, want 0", n)
	}
}

// retryWaits are the contract's retry intervals (docs/webhooks.md), each
// allowed to vary by 10%.
var retryWaits = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 24 * time.Hour}

// TestDeliveryRetries: a failing receiver gets nine attempts over about 55
// hours, each with the same id and body bytes, a new timestamp and a valid
// signature; then the delivery is failed, and a manual retry sends it once
// more.
func TestDeliveryRetries(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	e.hooks.answer("/fail", http.StatusInternalServerError)
	ep := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/fail"), licentia.EventLicenceIssued))
	l := e.issue(t, e.allKey, issueBody(nil))
	ev := e.lastEvent(t, e.org.ID)

	var stamps []time.Time
	for attempt := 1; attempt <= 9; attempt++ {
		if n := e.runWorker(t); n != 1 {
			t.Fatalf("attempt %d: RunOnce() attempted %d, want 1", attempt, n)
		}
		stamps = append(stamps, e.clock.Now())
		d := e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "").Deliveries[0]
		if d.Attempts != attempt || d.LastStatusCode == nil || *d.LastStatusCode != 500 || d.FailureReason == nil || *d.FailureReason != "http_status" {
			t.Fatalf("attempt %d: delivery %+v, want %d attempts, last_status_code 500, failure_reason http_status", attempt, d, attempt)
		}
		if *d.LastAttemptAt != licentia.FormatTime(e.clock.Now()) {
			t.Errorf("attempt %d: last_attempt_at = %s, want %s", attempt, *d.LastAttemptAt, licentia.FormatTime(e.clock.Now()))
		}
		if attempt == 9 {
			if d.Status != "failed" || d.NextAttemptAt != nil {
				t.Errorf("after 9 attempts: status %s, next_attempt_at %v; want failed and null", d.Status, d.NextAttemptAt)
			}
			break
		}
		if d.Status != "pending" || d.NextAttemptAt == nil {
			t.Fatalf("attempt %d: status %s, next_attempt_at %v; want pending with a next attempt", attempt, d.Status, d.NextAttemptAt)
		}
		next, err := time.Parse(time.RFC3339Nano, *d.NextAttemptAt)
		if err != nil {
			t.Fatal(err)
		}
		wait, base := next.Sub(e.clock.Now()), retryWaits[attempt-1]
		if wait < base-base/10-time.Millisecond || wait > base+base/10 {
			t.Errorf("attempt %d: next attempt in %v, want %v ± 10%%", attempt, wait, base)
		}
		// Nothing is due a millisecond early.
		e.clock.Set(next.Add(-time.Millisecond))
		if n := e.runWorker(t); n != 0 {
			t.Errorf("attempt %d: RunOnce() before the next attempt was due attempted %d", attempt, n)
		}
		if attempt == 4 {
			// A change to the licence meanwhile does not change what is retried.
			e.change(t, l.Licence.ID, "revoke", "refund")
		}
		e.clock.Set(next)
	}
	if total := stamps[8].Sub(stamps[0]); total < 50*time.Hour || total > 61*time.Hour {
		t.Errorf("nine attempts over %v, want about 55 hours", total)
	}
	got := e.hooks.requestsTo("/fail")
	if len(got) != 9 {
		t.Fatalf("receiver got %d attempts, want 9", len(got))
	}
	for i, r := range got {
		checkRequest(t, r, ev, stamps[i], ep.Secret)
	}
	e.clock.Advance(72 * time.Hour)
	if n := e.runWorker(t); n != 0 {
		t.Errorf("RunOnce() after the last attempt attempted %d, want 0", n)
	}

	// With no success since the delivery was created, spending its retries
	// turned the endpoint off; the maker turns it on again.
	off := e.run(t, scenario{call: call{method: "GET", path: hooksPath(ep.Endpoint.ID), key: e.allKey}, wantStatus: http.StatusOK})
	if !strings.Contains(string(off.body), `"enabled":false`) || !strings.Contains(string(off.body), `"disabled_reason":"consecutive_failures"`) {
		t.Errorf("endpoint after its retries were spent: %s, want off with consecutive_failures", off.body)
	}
	e.run(t, scenario{call: call{method: "PATCH", path: hooksPath(ep.Endpoint.ID), key: e.allKey, body: map[string]any{"enabled": true}}, wantStatus: http.StatusOK})

	// A manual retry sends the failed delivery once more, as it was.
	e.hooks.answer("/fail", http.StatusNoContent)
	d := e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "").Deliveries[0]
	e.run(t, scenario{call: call{method: "POST", path: retryPath(ep.Endpoint.ID, d.ID), key: e.allKey}, wantStatus: http.StatusAccepted})
	if n := e.runWorker(t); n != 1 {
		t.Fatalf("RunOnce() after a manual retry attempted %d, want 1", n)
	}
	got = e.hooks.requestsTo("/fail")
	if len(got) != 10 {
		t.Fatalf("receiver got %d requests, want 10", len(got))
	}
	checkRequest(t, got[9], ev, e.clock.Now(), ep.Secret)
	d = e.listDeliveries(t, e.allKey, ep.Endpoint.ID, "").Deliveries[0]
	if d.Status != "succeeded" || d.Attempts != 10 || *d.LastStatusCode != 204 || d.FailureReason != nil || d.NextAttemptAt != nil {
		t.Errorf("after the manual retry: %+v, want succeeded, 10 attempts, 204, no failure", d)
	}
}

// TestDeliverySecretOverlap: after rotate-secret, every attempt for 24
// hours is signed with the new secret and the replaced one; then with the
// new one only.
func TestDeliverySecretOverlap(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	first := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/s"), licentia.EventLicenceIssued, licentia.EventLicenceRevoked, licentia.EventLicenceReinstated))
	id := first.Endpoint.ID
	rotate := func() string {
		r := e.run(t, scenario{call: call{method: "POST", path: hooksPath(id, "rotate-secret"), key: e.allKey}, wantStatus: http.StatusOK})
		return decodeStrict[endpointSecretAnswer](t, r.body).Secret
	}
	deliverOne := func() hookRequest {
		t.Helper()
		if n := e.runWorker(t); n != 1 {
			t.Fatalf("RunOnce() attempted %d, want 1", n)
		}
		got := e.hooks.requestsTo("/s")
		return got[len(got)-1]
	}

	l := e.issue(t, e.allKey, issueBody(nil))
	checkRequest(t, deliverOne(), e.lastEvent(t, e.org.ID), e.clock.Now(), first.Secret)

	e.clock.Advance(time.Hour)
	second := rotate()
	e.clock.Advance(24*time.Hour - time.Millisecond)
	e.change(t, l.Licence.ID, "revoke", "refund")
	r := deliverOne()
	checkRequest(t, r, e.lastEvent(t, e.org.ID), e.clock.Now(), second, first.Secret)

	third := rotate()
	e.clock.Advance(time.Millisecond)
	e.change(t, l.Licence.ID, "reinstate", "paid")
	r = deliverOne()
	checkRequest(t, r, e.lastEvent(t, e.org.ID), e.clock.Now(), third, second)
	if verifies(t, first.Secret, r) {
		t.Errorf("a secret replaced 24 hours ago still signs")
	}

	e.clock.Advance(24 * time.Hour)
	e.change(t, l.Licence.ID, "revoke", "refund again")
	r = deliverOne()
	checkRequest(t, r, e.lastEvent(t, e.org.ID), e.clock.Now(), third)
	if verifies(t, second, r) {
		t.Errorf("a secret replaced 24 hours ago still signs")
	}
}

// TestDeliveryFailures: a redirect is a failure and is not followed; a
// host resolving to a loopback or private address is refused before any
// connection; a turned-off endpoint's pending delivery fails without a
// request; a body over 65,536 bytes is never sent.
func TestDeliveryFailures(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	e.hooks.answer("/moved", http.StatusFound)
	redirect := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/moved"), licentia.EventLicenceIssued)).Endpoint.ID
	loopback := e.addEndpoint(t, e.allKey, endpointBody("https://"+loopbackHost+"/x", licentia.EventLicenceIssued)).Endpoint.ID
	private := e.addEndpoint(t, e.allKey, endpointBody("https://"+privateHost+"/x", licentia.EventLicenceIssued)).Endpoint.ID
	turnedOff := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/off"), licentia.EventLicenceIssued)).Endpoint.ID
	e.issue(t, e.allKey, issueBody(nil))
	e.patchEndpoint(t, e.allKey, turnedOff, map[string]any{"enabled": false})

	if n := e.runWorker(t); n != 4 {
		t.Fatalf("RunOnce() attempted %d, want 4", n)
	}
	for _, tt := range []struct {
		name, id, status, reason string
		code                     *int
	}{
		{"redirect", redirect, "pending", "redirect", ptr(302)},
		{"loopback", loopback, "pending", "address_refused", nil},
		{"private", private, "pending", "address_refused", nil},
		{"turned off", turnedOff, "failed", "endpoint_disabled", nil},
	} {
		d := e.listDeliveries(t, e.allKey, tt.id, "").Deliveries[0]
		if d.Status != tt.status || d.FailureReason == nil || *d.FailureReason != tt.reason || !cmp.Equal(d.LastStatusCode, tt.code) || d.Attempts != 1 {
			t.Errorf("%s: delivery %+v, want %s with failure_reason %s and last_status_code %v", tt.name, d, tt.status, tt.reason, tt.code)
		}
	}
	if got := e.hooks.requestsTo("/moved"); len(got) != 1 {
		t.Errorf("/moved received %d requests, want 1", len(got))
	}
	for _, r := range e.hooks.requests() {
		if r.Path != "/moved" {
			t.Errorf("a request reached %s; only /moved may be reached (redirects are not followed)", r.Path)
		}
	}

	// A turned-off endpoint gets nothing queued; turned on again, it does.
	e.issue(t, e.allKey, issueBody(map[string]any{"email": "bob@example.com"}))
	if n := len(e.listDeliveries(t, e.allKey, turnedOff, "").Deliveries); n != 1 {
		t.Errorf("turned-off endpoint has %d deliveries, want only the one queued before", n)
	}
	e.patchEndpoint(t, e.allKey, turnedOff, map[string]any{"enabled": true})
	e.issue(t, e.allKey, issueBody(map[string]any{"email": "cy@example.com"}))
	if n := len(e.listDeliveries(t, e.allKey, turnedOff, "").Deliveries); n != 2 {
		t.Errorf("endpoint turned on again has %d deliveries, want 2", n)
	}
}

// TestDeliveryPayloadTooLarge: an event of 65,536 bytes is sent; one byte
// more is never sent and its delivery fails with payload_too_large.
func TestDeliveryPayloadTooLarge(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	ep := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/big"), licentia.EventLicenceIssued))
	now := e.clock.Now()
	bodyOf := func(size int) []byte {
		doc := `{"type":"licence.issued","timestamp":"` + licentia.FormatTime(now) + `","data":{"pad":""}}`
		return []byte(strings.Replace(doc, `"pad":""`, `"pad":"`+strings.Repeat("x", size-len(doc))+`"`, 1))
	}
	var ids []string
	for _, size := range []int{65536, 65537} {
		ev := &licentia.Event{ID: "evt_" + strings.ReplaceAll(licentia.NewID(), "-", ""), OrgID: e.org.ID, Type: licentia.EventLicenceIssued, At: now, Body: bodyOf(size)}
		d := licentia.Delivery{ID: licentia.NewID(), OrgID: e.org.ID, EndpointID: ep.Endpoint.ID, EventID: ev.ID, EventType: ev.Type,
			Status: licentia.DeliveryPending, NextAttemptAt: &now, CreatedAt: now}
		err := e.store.InTx(t.Context(), func(tx store.Tx) error {
			if err := tx.InsertEvent(t.Context(), ev); err != nil {
				return err
			}
			return tx.CreateDeliveries(t.Context(), []licentia.Delivery{d})
		})
		if err != nil {
			t.Fatalf("inject event of %d bytes: %v", size, err)
		}
		ids = append(ids, d.ID)
	}
	if n := e.runWorker(t); n != 2 {
		t.Fatalf("RunOnce() attempted %d, want 2", n)
	}
	got := e.hooks.requestsTo("/big")
	if len(got) != 1 || len(got[0].Body) != 65536 {
		t.Fatalf("receiver got %d requests, want one of 65,536 bytes", len(got))
	}
	if !verifies(t, ep.Secret, got[0]) {
		t.Errorf("the 65,536-byte delivery does not verify")
	}
	sent, big := e.delivery(t, e.allKey, ep.Endpoint.ID, ids[0]), e.delivery(t, e.allKey, ep.Endpoint.ID, ids[1])
	if sent.Status != "succeeded" {
		t.Errorf("65,536-byte delivery: %+v, want succeeded", sent)
	}
	if big.Status != "failed" || big.FailureReason == nil || *big.FailureReason != "payload_too_large" || big.LastStatusCode != nil || big.NextAttemptAt != nil {
		t.Errorf("65,537-byte delivery: %+v, want failed with payload_too_large", big)
	}
	e.clock.Advance(60 * time.Hour)
	if n := e.runWorker(t); n != 0 {
		t.Errorf("RunOnce() later attempted %d, want 0", n)
	}
}

// TestDeliveryTimeouts: the receiver must answer within 5 seconds, counting
// the connection and the status line. A receiver that holds the status
// line, and one that accepts the connection and never speaks, time out; a
// receiver that sends its status at once and keeps its body open succeeds,
// as the body is never read. This test takes about 5 seconds.
func TestDeliveryTimeouts(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t)
	e.hooks.answer("/hang", hang)
	e.hooks.answer("/trickle", trickle)
	slow := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/hang"), licentia.EventLicenceIssued)).Endpoint.ID
	silent := e.addEndpoint(t, e.allKey, endpointBody("https://"+silentHost+"/x", licentia.EventLicenceIssued)).Endpoint.ID
	trickling := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/trickle"), licentia.EventLicenceIssued)).Endpoint.ID
	e.issue(t, e.allKey, issueBody(nil))

	// The three are attempted at once, so the step lasts one budget.
	if n := e.runWorker(t); n != 3 {
		t.Fatalf("RunOnce() attempted %d, want 3", n)
	}
	for _, tt := range []struct{ name, id string }{{"status line held", slow}, {"never answers", silent}} {
		d := e.listDeliveries(t, e.allKey, tt.id, "").Deliveries[0]
		if d.Status != "pending" || d.FailureReason == nil || *d.FailureReason != "timeout" || d.LastStatusCode != nil || d.NextAttemptAt == nil {
			t.Errorf("%s: delivery %+v, want pending with failure_reason timeout", tt.name, d)
		}
	}
	d := e.listDeliveries(t, e.allKey, trickling, "").Deliveries[0]
	if d.Status != "succeeded" || !cmp.Equal(d.LastStatusCode, ptr(200)) {
		t.Errorf("body held open: delivery %+v, want succeeded with 200", d)
	}
}

// TestDeliveryRealTime: with the real clock, the Standard Webhooks
// library's Verify, which refuses a timestamp more than five minutes away,
// accepts a delivery.
func TestDeliveryRealTime(t *testing.T) {
	t.Parallel()
	e := licenceEnvOf(t, newTestEnvWith(t, envOptions{webhooks: true, clockStart: time.Now()}))
	ep := e.addEndpoint(t, e.allKey, endpointBody(hookURL("/now"), licentia.EventLicenceIssued))
	e.issue(t, e.allKey, issueBody(nil))
	worker := webhooks.NewWorker(webhooks.WorkerOptions{Store: e.store, Clock: clock.System{}, Keys: e.keys,
		Client: e.hooks.client(t), BaseURL: testBaseURL, Logger: slog.New(slog.DiscardHandler)})
	if n, err := worker.RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() = %d, %v; want 1 attempt", n, err)
	}
	got := e.hooks.requestsTo("/now")
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	wh, err := standardwebhooks.NewWebhook(ep.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(got[0].Body, got[0].Header); err != nil {
		t.Errorf("Verify() error = %v", err)
	}
	tampered := bytes.Replace(got[0].Body, []byte("ada@example.com"), []byte("eve@example.com"), 1)
	if err := wh.Verify(tampered, got[0].Header); err == nil {
		t.Errorf("Verify() accepts a changed body")
	}
}
