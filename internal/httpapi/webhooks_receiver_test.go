package httpapi_test

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/webhooks"
)

// Endpoint hosts of the env's receivers. receiverHost is pinned to the TLS
// receiver and silentHost to a listener that accepts connections and never
// says a word. The receiver's certificate covers *.example.com.
const (
	receiverHost = "hooks.example.com"
	silentHost   = "silent.example.com"
)

// Hosts the env's fake resolver answers, neither of them pinned: the dialer
// must look them up and refuse them.
const (
	loopbackHost = "loopback.example.net"
	privateHost  = "private.example.net"
)

// Answers the receiver gives besides plain statuses.
const (
	// hang reads the request and blocks before the status line until the
	// request is done: a receiver that sleeps past the 5 seconds.
	hang = -1
	// trickle answers 200 at once and then keeps the body open until the
	// request is done: only the status code is kept, so it succeeds.
	trickle = -2
)

// hookRequest is a delivery as the receiver saw it.
type hookRequest struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// hookReceiver is a TLS receiver on loopback. It records every request and
// answers each path with the status set by answer (200 by default; a 3xx
// carries a Location).
type hookReceiver struct {
	srv    *httptest.Server
	silent net.Listener
	stop   chan struct{}

	mu      sync.Mutex
	got     []hookRequest
	answers map[string]int
}

func newHookReceiver(t testing.TB) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{stop: make(chan struct{}), answers: map[string]int{}}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc.silent = ln
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	// Cleanups run last first: blocked handlers return before srv.Close
	// waits for them.
	t.Cleanup(func() { close(rc.stop) })
	return rc
}

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, hookRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	status, ok := rc.answers[r.URL.Path]
	rc.mu.Unlock()
	if !ok {
		status = http.StatusOK
	}
	switch {
	case status == hang:
		rc.wait(r)
	case status == trickle:
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "working")
		w.(http.Flusher).Flush()
		rc.wait(r)
	case status >= 300 && status < 400:
		w.Header().Set("Location", "https://"+receiverHost+"/target")
		w.WriteHeader(status)
	default:
		w.WriteHeader(status)
		io.WriteString(w, "answer body nobody reads")
	}
}

func (rc *hookReceiver) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-rc.stop:
	}
}

// answer makes the receiver answer path with status.
func (rc *hookReceiver) answer(path string, status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answers[path] = status
}

// requests returns what reached the receiver so far, oldest first.
func (rc *hookReceiver) requests() []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookRequest(nil), rc.got...)
}

// requestsTo returns the requests that reached path, oldest first.
func (rc *hookReceiver) requestsTo(path string) []hookRequest {
	var out []hookRequest
	for _, r := range rc.requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// client is a delivery client as serve builds one with
// LICENTIA_WEBHOOK_RESOLVE and LICENTIA_WEBHOOK_CA_FILE: receiverHost and
// silentHost pinned, only the receiver's certificate trusted, and a fake
// resolver for every other name, so no test reaches real DNS.
func (rc *hookReceiver) client(t testing.TB) *http.Client {
	t.Helper()
	pins, err := webhooks.ParsePins([]string{
		receiverHost + ":443:" + rc.srv.Listener.Addr().String(),
		silentHost + ":443:" + rc.silent.Addr().String(),
	})
	if err != nil {
		t.Fatalf("ParsePins() error = %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(rc.srv.Certificate())
	d := &webhooks.Dialer{Pins: pins, Resolver: tableResolver{
		loopbackHost: {netip.MustParseAddr("127.0.0.1")},
		privateHost:  {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
	}}
	return webhooks.NewHTTPClient(d, pool, testBaseURL)
}

// tableResolver answers host names from a table; any other name does not
// exist.
type tableResolver map[string][]netip.Addr

func (r tableResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}
