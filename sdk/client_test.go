package sdk_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

// The fixture: one product, one licence, one machine, and a fake server that
// answers the activation routes as the real one does (internal/activation),
// signing with the product's key through sdk.SignVerdict.
const (
	fxProduct   = "photo-editor"
	fxPrefix    = "PHOTO"
	fxLicence   = "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f"
	fxMachine   = "machine-a"
	fxValidity  = 7 * 24 * time.Hour
	fxTrialLead = 24 * time.Hour
)

var fxStart = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

var fxMachineInfo = sdk.Machine{Label: "Ada's laptop", OS: "linux", AppVersion: "3.1.0"}

// testClock is the injected clock; tests move it, never sleep.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeLicence is a licence as the fake server holds it.
type fakeLicence struct {
	state       string // active, trial, revoked, expired
	expiresAt   *time.Time
	trialEndsAt *time.Time
	major       int
	limit       int
}

type fakeServer struct {
	t        *testing.T
	clock    *testClock
	priv     ed25519.PrivateKey
	verifier *sdk.Verifier
	srv      *httptest.Server

	mu       sync.Mutex
	licences map[string]*fakeLicence
	seats    map[string]map[string]string // licence id -> machine id -> activation id
	requests map[string]int               // path -> count
	seq      int
	// intercept, when set, may answer a request in place of the server: a
	// failure, a man in the middle. It reports whether it answered.
	intercept func(w http.ResponseWriter, r *http.Request) bool
	// heartbeat, when not zero, is the heartbeat interval the answers
	// carry beside the verdict, as a product with leases has.
	heartbeat int64
}

func newFakeServer(t *testing.T, clock *testClock) *fakeServer {
	t.Helper()
	priv := seedKey("client/photo/current")
	v, err := sdk.NewVerifier(fxProductOf(priv), sdk.Product{ID: "notes", KeyPrefix: "NOTES", PublicKeys: pubs(seedKey("client/notes"))})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, clock: clock, priv: priv, verifier: v,
		licences: map[string]*fakeLicence{fxLicence: {state: sdk.StateActive, major: 3, limit: 2}},
		seats:    map[string]map[string]string{}, requests: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/activations", f.wrap(f.activate))
	mux.HandleFunc("POST /v1/activations/status", f.wrap(f.status))
	mux.HandleFunc("POST /v1/activations/deactivate", f.wrap(f.deactivate))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func fxProductOf(priv ed25519.PrivateKey) sdk.Product {
	return sdk.Product{ID: fxProduct, KeyPrefix: fxPrefix, PublicKeys: pubs(seedKey("client/photo/previous"), priv)}
}

// product is what the application ships: the product and its public keys.
func (f *fakeServer) product() sdk.Product { return fxProductOf(f.priv) }

// key is the fixture licence's key.
func (f *fakeServer) key(t *testing.T) string {
	return mustSign(t, f.priv, "", fxPrefix, fxProduct, fxLicence)
}

func (f *fakeServer) licence() *fakeLicence {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.licences[fxLicence]
}

func (f *fakeServer) setState(state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.licences[fxLicence].state = state
}

// freeSeat frees a machine's seat, as the maker's admin route does.
func (f *fakeServer) freeSeat(machineID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.seats[fxLicence], machineID)
}

func (f *fakeServer) setIntercept(h func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept = h
}

// count returns the number of requests to path ("" for all).
func (f *fakeServer) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if path != "" {
		return f.requests[path]
	}
	n := 0
	for _, c := range f.requests {
		n += c
	}
	return n
}

type fakeBody struct {
	LicenceKey string `json:"licence_key"`
	MachineID  string `json:"machine_id"`
	Label      string `json:"label"`
	OS         string `json:"os"`
	AppVersion string `json:"app_version"`
}

// wrap counts the request, lets intercept answer, then resolves the key in
// the real server's order: 400, 422 key, 404 licence_not_found.
func (f *fakeServer) wrap(h func(w http.ResponseWriter, b fakeBody, l *fakeLicence) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests[r.URL.Path]++
		intercept := f.intercept
		f.mu.Unlock()
		// Reading the body first lets the server notice a client that goes
		// away, which ends r.Context() for a handler that blocks.
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if intercept != nil && intercept(w, r) {
			return
		}
		var b fakeBody
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil || b.MachineID == "" || b.LicenceKey == "" {
			writeErr(w, 400, sdk.CodeValidationFailed, nil)
			return
		}
		k, err := f.verifier.VerifyLicenceKey(b.LicenceKey)
		switch {
		case errors.Is(err, sdk.ErrLicenceWrongProduct):
			writeErr(w, 422, sdk.CodeLicenceWrongProduct, nil)
			return
		case err != nil:
			writeErr(w, 422, sdk.CodeLicenceKeyInvalid, nil)
			return
		}
		f.mu.Lock()
		l, ok := f.licences[k.LicenceID]
		f.mu.Unlock()
		if !ok {
			writeErr(w, 404, sdk.CodeLicenceNotFound, nil)
			return
		}
		status, answer := h(w, b, l)
		if e, ok := answer.(fakeError); ok {
			writeErr(w, status, e.code, e.details)
			return
		}
		writeJSONAnswer(w, status, answer)
	}
}

type fakeError struct {
	code    string
	details map[string]any
}

func writeErr(w http.ResponseWriter, status int, code string, details map[string]any) {
	body := map[string]any{"code": code, "message": "fake " + code, "request_id": "req-1"}
	if details != nil {
		body["details"] = details
	}
	writeJSONAnswer(w, status, map[string]any{"error": body})
}

func writeJSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// derived is the licence's derived state now.
func (f *fakeServer) derived(l *fakeLicence) string {
	now := f.clock.Now()
	if l.state == sdk.StateActive || l.state == sdk.StateTrial {
		if l.expiresAt != nil && !now.Before(*l.expiresAt) {
			return sdk.StateExpired
		}
	}
	return l.state
}

func (f *fakeServer) activate(w http.ResponseWriter, b fakeBody, l *fakeLicence) (int, any) {
	switch f.derived(l) {
	case sdk.StateRevoked:
		return 403, fakeError{code: sdk.CodeLicenceRevoked}
	case sdk.StateExpired:
		return 403, fakeError{code: sdk.CodeLicenceExpired}
	}
	f.mu.Lock()
	seats := f.seats[fxLicence]
	if seats == nil {
		seats = map[string]string{}
		f.seats[fxLicence] = seats
	}
	id, held := seats[b.MachineID]
	if !held && len(seats) >= l.limit {
		f.mu.Unlock()
		return 409, fakeError{code: sdk.CodeSeatLimitReached, details: map[string]any{"limit": l.limit, "active": len(seats), "limit_kind": "machines"}}
	}
	if !held {
		f.seq++
		id = fmt.Sprintf("5f0c9a7e-3b1d-4c8e-a2f6-%012d", f.seq)
		seats[b.MachineID] = id
	}
	f.mu.Unlock()
	now := f.clock.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	status := 201
	if held {
		status = 200
	}
	ans := map[string]any{
		"activation": map[string]any{"id": id, "licence_id": fxLicence, "machine_id": b.MachineID, "label": b.Label,
			"os": b.OS, "app_version": b.AppVersion, "activated_at": now, "last_seen_at": now, "deactivated_at": nil},
		"verdict": f.verdict(l, b.MachineID, &id),
	}
	f.withHeartbeat(ans)
	return status, ans
}

// withHeartbeat adds the heartbeat interval to an answer, when set.
func (f *fakeServer) withHeartbeat(ans map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.heartbeat != 0 {
		ans["heartbeat_interval_seconds"] = f.heartbeat
	}
}

func (f *fakeServer) status(w http.ResponseWriter, b fakeBody, l *fakeLicence) (int, any) {
	f.mu.Lock()
	id, held := f.seats[fxLicence][b.MachineID]
	f.mu.Unlock()
	var activationID *string
	if held {
		activationID = &id
	}
	ans := map[string]any{"verdict": f.verdict(l, b.MachineID, activationID)}
	f.withHeartbeat(ans)
	return 200, ans
}

func (f *fakeServer) deactivate(w http.ResponseWriter, b fakeBody, l *fakeLicence) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, held := f.seats[fxLicence][b.MachineID]
	delete(f.seats[fxLicence], b.MachineID)
	return 200, map[string]bool{"changed": held}
}

// verdict signs the licence's state on a machine, valid for fxValidity;
// a trial's never more than a day past the trial's end.
func (f *fakeServer) verdict(l *fakeLicence, machineID string, activationID *string) string {
	f.t.Helper()
	now := f.clock.Now().UTC()
	state := f.derived(l)
	until := now.Add(fxValidity)
	if state == sdk.StateTrial && l.trialEndsAt != nil && until.After(l.trialEndsAt.Add(fxTrialLead)) {
		until = l.trialEndsAt.Add(fxTrialLead)
	}
	v := sdk.Verdict{LicenceID: fxLicence, ProductID: fxProduct, MachineID: machineID, ActivationID: activationID,
		State: state, ExpiresAt: fmtTime(l.expiresAt), TrialEndsAt: fmtTime(l.trialEndsAt), Major: l.major,
		LimitKind: "machines", LimitCount: int64(l.limit), IssuedAt: *fmtTime(&now), ValidUntil: *fmtTime(&until)}
	s, err := sdk.SignVerdict(f.priv, "", v)
	if err != nil {
		f.t.Error(err)
	}
	return s
}

func fmtTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	return &s
}

// clientOpts changes a client's Config from the fixture's.
type clientOpts func(*sdk.Config)

// newClient returns a client of the fake server keeping its record in
// path (a new file when path is "").
func newClient(t *testing.T, f *fakeServer, path string, opts ...clientOpts) *sdk.Client {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "licence.json")
	}
	cfg := sdk.Config{
		BaseURL: f.srv.URL, HTTPClient: f.srv.Client(), Product: f.product(), Major: 3,
		MachineID: fxMachine, Store: sdk.FileStore(path), Now: f.clock.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := sdk.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient() = %v", err)
	}
	return c
}

// fixture is a fake server, its clock, and a client with the licence
// activated on the machine, its record in path.
type fixture struct {
	clock  *testClock
	server *fakeServer
	client *sdk.Client
	path   string
}

func newFixture(t *testing.T, opts ...clientOpts) *fixture {
	t.Helper()
	clock := &testClock{t: fxStart}
	f := newFakeServer(t, clock)
	path := filepath.Join(t.TempDir(), "licence.json")
	return &fixture{clock: clock, server: f, client: newClient(t, f, path, opts...), path: path}
}

func activated(t *testing.T, opts ...clientOpts) *fixture {
	t.Helper()
	fx := newFixture(t, opts...)
	if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); err != nil {
		t.Fatalf("Activate() = %v", err)
	}
	mustValid(t, fx.client.State())
	return fx
}

func mustValid(t *testing.T, st sdk.Status) {
	t.Helper()
	if !st.Valid {
		t.Fatalf("State() Valid = false (reason %q, last error %v), want true", st.Reason, st.LastError)
	}
}

func wantLocked(t *testing.T, st sdk.Status, reason sdk.Reason) {
	t.Helper()
	if st.Valid || st.Reason != reason {
		t.Errorf("State() Valid, Reason = %v, %q, want false, %q", st.Valid, st.Reason, reason)
	}
}

// wantKept checks the never-lock rule: the last verdict is kept, the
// application runs, and the result is reported stale with the error.
func wantKept(t *testing.T, st sdk.Status, last *sdk.Verdict) {
	t.Helper()
	mustValid(t, st)
	if !st.Stale {
		t.Error("State() Stale = false, want true")
	}
	if st.LastError == nil {
		t.Error("State() LastError = nil, want the failed attempt's error")
	}
	if st.Verdict == nil || last == nil || st.Verdict.IssuedAt != last.IssuedAt {
		t.Errorf("State() Verdict = %+v, want the last one kept (%+v)", st.Verdict, last)
	}
}

// errorAnswer is an intercept answering every request with an error body.
func errorAnswer(status int, code string, header map[string]string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		writeErr(w, status, code, nil)
		return true
	}
}

// onPath intercepts only requests to path.
func onPath(path string, h func(http.ResponseWriter, *http.Request) bool) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool { return r.URL.Path == path && h(w, r) }
}

func TestNewClientRefusesBadConfig(t *testing.T) {
	good := sdk.Config{BaseURL: "https://licensing.example.com", Product: sdk.Product{ID: fxProduct, KeyPrefix: fxPrefix,
		PublicKeys: pubs(seedKey("x"))}, Major: 1, MachineID: fxMachine, Store: sdk.FileStore(filepath.Join(t.TempDir(), "l.json"))}
	for _, tt := range []struct {
		name   string
		change func(*sdk.Config)
	}{
		{"no base URL", func(c *sdk.Config) { c.BaseURL = "" }},
		{"base URL without scheme", func(c *sdk.Config) { c.BaseURL = "licensing.example.com" }},
		{"no public key", func(c *sdk.Config) { c.Product.PublicKeys = nil }},
		{"bad prefix", func(c *sdk.Config) { c.Product.KeyPrefix = "photo_" }},
		{"major 0", func(c *sdk.Config) { c.Major = 0 }},
		{"machine id with a space", func(c *sdk.Config) { c.MachineID = "my machine" }},
		{"machine id of 129 characters", func(c *sdk.Config) { c.MachineID = string(make([]byte, 129)) }},
		{"no store", func(c *sdk.Config) { c.Store = nil }},
		{"negative max offline", func(c *sdk.Config) { c.MaxOffline = -time.Hour }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.change(&cfg)
			if _, err := sdk.NewClient(cfg); err == nil {
				t.Error("NewClient() = nil error, want a refusal")
			}
		})
	}
	if _, err := sdk.NewClient(good); err != nil {
		t.Errorf("NewClient(good) = %v", err)
	}
}

func TestNoLicence(t *testing.T) {
	fx := newFixture(t)
	wantLocked(t, fx.client.State(), sdk.ReasonNoLicence)
	if _, err := fx.client.Check(t.Context()); !errors.Is(err, sdk.ErrNoLicence) {
		t.Errorf("Check() = %v, want ErrNoLicence", err)
	}
	if _, err := fx.client.Deactivate(t.Context()); !errors.Is(err, sdk.ErrNoLicence) {
		t.Errorf("Deactivate() = %v, want ErrNoLicence", err)
	}
	if n := fx.server.count(""); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}
