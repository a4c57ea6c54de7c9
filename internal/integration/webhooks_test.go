package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// hooks is a service of two processes, a and b, sending webhooks to one
// receiver, with an organization, an endpoint for every event type and a
// product.
type hooks struct {
	a, b     *process
	rcv      *receiver
	key      string
	endpoint string
}

func newHooks(t *testing.T, delay time.Duration) *hooks {
	t.Helper()
	s := newService(t)
	s.useRedis(t)
	rcv := newReceiver(t, delay, "a", "b")
	h := &hooks{rcv: rcv, a: s.start(t, "a", rcv.settings("a")), b: s.start(t, "b", rcv.settings("b"))}
	waitReady(t, h.a, h.b)
	h.key = s.newOrg(t, "acme")
	ep := h.a.must(t, http.StatusCreated, "POST", "/v1/admin/webhooks", h.key, map[string]any{
		"url": hookURL, "event_types": licentia.EventTypes,
	}).object("webhook_endpoint")
	h.endpoint, _ = ep["id"].(string)
	createProduct(t, h.a, h.key, "photo-editor", "PHOTO")
	return h
}

// issue issues a licence through p and returns its id.
func (h *hooks) issue(t *testing.T, p *process, n int) string {
	t.Helper()
	id, _ := issueLicence(t, p, h.key, "photo-editor", fmt.Sprintf("buyer%03d@example.net", n))
	return id
}

// deliveries lists every delivery of the endpoint, following next_cursor.
func (h *hooks) deliveries(t *testing.T) []map[string]any {
	t.Helper()
	var all []map[string]any
	path := "/v1/admin/webhooks/" + h.endpoint + "/deliveries"
	for {
		ans := h.b.must(t, http.StatusOK, "GET", path, h.key, nil)
		page, _ := ans.body["deliveries"].([]any)
		for _, d := range page {
			m, _ := d.(map[string]any)
			all = append(all, m)
		}
		next, _ := ans.body["next_cursor"].(string)
		if next == "" {
			return all
		}
		path = "/v1/admin/webhooks/" + h.endpoint + "/deliveries?cursor=" + url.QueryEscape(next)
	}
}

// waitSucceeded waits until the service records n deliveries, all
// succeeded (an attempt is recorded just after the receiver answers), and
// returns them.
func (h *hooks) waitSucceeded(t *testing.T, n int) []map[string]any {
	t.Helper()
	var ds []map[string]any
	eventually(t, fmt.Sprintf("%d deliveries recorded as succeeded", n), 15*time.Second, 200*time.Millisecond, func() bool {
		ds = h.deliveries(t)
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if d["status"] != "succeeded" {
				return false
			}
		}
		return true
	})
	return ds
}

// Two processes share the deliveries of one endpoint: each sends some, and
// with no failure injected no event is sent twice.
func TestDeliveriesSharedWithoutDoubleSends(t *testing.T) {
	h := newHooks(t, 0)
	const n = 100
	ids := make([]string, n)
	start := time.Now()
	for i := range n {
		ids[i] = h.issue(t, []*process{h.a, h.b}[i%2], i)
	}
	issuing := time.Since(start)
	eventually(t, "every licence.issued answered", 60*time.Second, 50*time.Millisecond, func() bool {
		return len(h.rcv.missing(ids)) == 0
	})
	rec := h.rcv.record()
	took := rec.last.Sub(start)
	t.Logf("%d licences issued through a and b in %v; every event answered %v after the first issue (%.0f deliveries/s); attempts by process %v",
		n, issuing.Round(time.Millisecond), took.Round(time.Millisecond), n/took.Seconds(), rec.bySender())

	if len(rec.arrived) != n {
		t.Errorf("receiver saw %d webhook-ids, want %d", len(rec.arrived), n)
	}
	for _, id := range sortedKeys(rec.arrived) {
		if senders := rec.arrived[id]; len(senders) != 1 {
			t.Errorf("webhook-id %s sent %d times (by %v), want once", id, len(senders), senders)
		}
	}
	if by := rec.bySender(); by["a"] == 0 || by["b"] == 0 {
		t.Errorf("attempts by process %v, want some from each", by)
	}
	// The service's own record agrees: one attempt each, for the events the
	// receiver saw.
	for _, d := range h.waitSucceeded(t, n) {
		id, _ := d["event_id"].(string)
		if d["attempts"] != 1.0 || rec.completed[id] != 1 {
			t.Errorf("delivery of %s: attempts %v, answered %d times by the receiver, want 1 and 1", id, d["attempts"], rec.completed[id])
		}
	}
}

// A process killed (kill -9) while it sends deliveries loses none: once its
// 15-second lease ends, the deliveries it had claimed are sent again, and
// every event reaches the receiver at least once, well within the minute
// the lease used to be.
func TestDeliveriesSurviveKilledProcess(t *testing.T) {
	// Each answer takes a while, so a's attempts are still in flight when
	// it dies, even on a busy machine that is slow to kill it.
	h := newHooks(t, time.Second)
	// More events than one process has senders (64), issued through both:
	// the receiver holds every attempt until both have sent one, so b can
	// take at most 64 and a is left attempts to have in flight when killed.
	var ids []string
	for i := range 150 {
		ids = append(ids, h.issue(t, []*process{h.a, h.b}[i%2], i))
	}
	eventually(t, "a sending deliveries", 10*time.Second, 5*time.Millisecond, func() bool {
		return h.rcv.busy("a") > 0
	})
	inFlight := h.rcv.busy("a")
	h.a.kill()
	killed := time.Now()
	// The burst goes on through b.
	for range 20 {
		ids = append(ids, h.issue(t, h.b, len(ids)))
	}
	h.a.restart(t)
	waitReady(t, h.a)
	restarted := time.Now()
	// A delivery a had claimed waits for the end of its 15-second lease;
	// the bound leaves room for a slow machine, and is still below the
	// one-minute lease it replaces.
	eventually(t, "every licence.issued answered after a was killed", 40*time.Second, 100*time.Millisecond, func() bool {
		return len(h.rcv.missing(ids)) == 0
	})
	took := time.Since(killed)
	rec := h.rcv.record()
	again := 0
	for _, ss := range rec.arrived {
		again += len(ss) - 1
	}
	t.Logf("a killed with %d attempts in flight; %d attempts interrupted, %d events sent more than once; every event answered %v after the kill, %v after a was ready again; attempts by process %v",
		inFlight, rec.interrupted, again, took.Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond), rec.bySender())
	if rec.interrupted == 0 {
		t.Errorf("no attempt was interrupted: a was not killed mid-delivery")
	}
	for _, d := range h.waitSucceeded(t, len(ids)) {
		if id, _ := d["event_id"].(string); rec.completed[id] == 0 {
			t.Errorf("delivery of %s recorded as succeeded but never answered by the receiver", id)
		}
	}
}
