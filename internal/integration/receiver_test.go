package integration

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const (
	// hookHost is the webhook endpoints' host; each process pins it to the
	// receiver's listener for that process (LICENTIA_WEBHOOK_RESOLVE).
	hookHost = "hooks.example.com"
	hookURL  = "https://" + hookHost + "/licentia"
	// holdMax bounds how long the receiver holds an attempt until every
	// process has sent one: well under the 5-second attempt budget, so a
	// held attempt never fails.
	holdMax = 3 * time.Second
)

// receiver is a webhook receiver with one TLS listener per serve process.
// Seen from the receiver, processes differ only by the listener their pin
// leads to, which is how it tells who sent each attempt.
//
// It holds every attempt until each process has sent one (at most holdMax):
// a process whose worker is held cannot claim more, so the others claim
// what is left, and every process takes a share of the deliveries.
type receiver struct {
	caFile string
	delay  time.Duration // extra time each answer takes
	srv    map[string]*httptest.Server

	mu          sync.Mutex
	arrived     map[string][]string // webhook-id -> sender of each attempt
	completed   map[string]int      // webhook-id -> attempts answered
	licences    map[string]string   // licence id -> webhook-id of its licence.issued
	inflight    map[string]int      // sender -> attempts being answered
	interrupted int                 // attempts whose sender went away unanswered
	last        time.Time           // when the last attempt was answered
	seen        map[string]bool
	all         chan struct{} // closed once every sender has sent
}

// newReceiver starts a listener for each sender and writes the CA file
// that makes the processes trust them.
func newReceiver(t *testing.T, delay time.Duration, senders ...string) *receiver {
	t.Helper()
	r := &receiver{
		delay: delay, srv: map[string]*httptest.Server{},
		arrived: map[string][]string{}, completed: map[string]int{}, licences: map[string]string{},
		inflight: map[string]int{}, seen: map[string]bool{}, all: make(chan struct{}),
	}
	for _, s := range senders {
		srv := httptest.NewUnstartedServer(r.handler(s, len(senders)))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		r.srv[s] = srv
	}
	// Every httptest server presents the same certificate, for example.com
	// and *.example.com.
	cert := r.srv[senders[0]].Certificate()
	r.caFile = filepath.Join(t.TempDir(), "receiver-ca.pem")
	if err := os.WriteFile(r.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// settings are the test-only settings that send sender's deliveries to its
// listener.
func (r *receiver) settings(sender string) map[string]string {
	return map[string]string{
		"LICENTIA_WEBHOOK_RESOLVE": hookHost + ":443:" + r.srv[sender].Listener.Addr().String(),
		"LICENTIA_WEBHOOK_CA_FILE": r.caFile,
	}
}

func (r *receiver) handler(sender string, senders int) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		id := req.Header.Get("webhook-id")
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<16))
		r.arrive(sender, id, senders)
		hold := time.NewTimer(holdMax)
		defer hold.Stop()
		select {
		case <-r.all:
		case <-hold.C:
		case <-req.Context().Done():
		}
		select {
		case <-time.After(r.delay):
		case <-req.Context().Done():
		}
		// A sender that went away (killed) never learns the answer: the
		// attempt does not count as received.
		if req.Context().Err() != nil {
			r.leave(sender, "", nil)
			return
		}
		r.leave(sender, id, body)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (r *receiver) arrive(sender, id string, senders int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.arrived[id] = append(r.arrived[id], sender)
	r.inflight[sender]++
	if !r.seen[sender] {
		r.seen[sender] = true
		if len(r.seen) == senders {
			close(r.all)
		}
	}
}

// leave ends an attempt: answered when id is set, else interrupted.
func (r *receiver) leave(sender, id string, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight[sender]--
	if id == "" {
		r.interrupted++
		return
	}
	r.completed[id]++
	r.last = time.Now()
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Licence struct {
				ID string `json:"id"`
			} `json:"licence"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) == nil && ev.Type == "licence.issued" {
		r.licences[ev.Data.Licence.ID] = id
	}
}

// missing lists the licences whose licence.issued was not answered yet.
func (r *receiver) missing(licenceIDs []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range licenceIDs {
		if r.licences[id] == "" {
			out = append(out, id)
		}
	}
	return out
}

// busy reports how many attempts of sender are being answered.
func (r *receiver) busy(sender string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inflight[sender]
}

// record is what the receiver saw.
type record struct {
	arrived     map[string][]string
	completed   map[string]int
	interrupted int
	last        time.Time
}

func (r *receiver) record() record {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := record{arrived: map[string][]string{}, completed: map[string]int{}, interrupted: r.interrupted, last: r.last}
	for k, v := range r.arrived {
		rec.arrived[k] = append([]string(nil), v...)
	}
	for k, v := range r.completed {
		rec.completed[k] = v
	}
	return rec
}

// bySender counts the attempts each sender made.
func (rec record) bySender() map[string]int {
	n := map[string]int{}
	for _, ss := range rec.arrived {
		for _, s := range ss {
			n[s]++
		}
	}
	return n
}
