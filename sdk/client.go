package sdk

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// CheckInterval is how often Check goes online: at most once a day per
// install (contract, Activation routes). Entering a key goes online at once.
const CheckInterval = 24 * time.Hour

// DefaultTimeout bounds each request of the default HTTP client.
const DefaultTimeout = 20 * time.Second

// Config configures a Client.
type Config struct {
	// BaseURL is the licence server, such as https://licensing.example.com;
	// the routes' /v1/... paths are appended.
	BaseURL string
	// HTTPClient sends the requests; nil means one with DefaultTimeout.
	HTTPClient *http.Client
	// Product is the product the application is, with the public keys it
	// accepts for licence keys and verdicts.
	Product Product
	// Major is the application's major version, 1 or more. A licence for an
	// older major does not run it.
	Major int
	// MachineID names the machine the application runs on now, usually
	// MachineID(appSalt). Every verdict, fresh or stored, must name it, so a
	// record copied to another machine does not carry the licence with it.
	MachineID string
	// Components are hashes of this machine's parts, usually
	// Components(Product.ID), sent with each activation so that the server
	// can recognise the machine when its id changes (docs/machines.md).
	// nil sends none.
	Components map[string]string
	// Store keeps the licence key and last verdict between runs.
	Store Store
	// Now is the clock; nil means the system clock.
	Now func() time.Time
	// MaxOffline is the maker's opt-in limit: when it is not zero, the
	// application locks once the last successful online check is older.
	// Zero (the default) never locks for being offline.
	MaxOffline time.Duration
	// RequireSeat is the maker's opt-in: lock when a signed verdict says this
	// machine no longer holds a live seat (freed by the maker or from another
	// machine). By default such a verdict is reported (Status.Seated false)
	// and the application keeps running.
	RequireSeat bool
	// After waits for Heartbeats: it answers a channel that receives once
	// d has passed. nil means time.After; tests inject theirs with Now.
	After func(d time.Duration) <-chan time.Time
}

// Machine describes the machine to the activation route. Its id is
// Config.MachineID.
type Machine struct {
	Label      string `json:"label"`
	OS         string `json:"os"`
	AppVersion string `json:"app_version"`
}

// Activation is the server's record of this machine's seat. Fields may be
// added; unknown ones are ignored. Times are RFC 3339 strings as the server
// sent them: the record is for showing, and a field the SDK cannot read
// must never fail an activation.
type Activation struct {
	ID            string  `json:"id"`
	LicenceID     string  `json:"licence_id"`
	MachineID     string  `json:"machine_id"`
	Label         string  `json:"label"`
	OS            string  `json:"os"`
	AppVersion    string  `json:"app_version"`
	ActivatedAt   string  `json:"activated_at"`
	LastSeenAt    string  `json:"last_seen_at"`
	DeactivatedAt *string `json:"deactivated_at"`
	// Created is true when a seat was taken now (201), false when the
	// machine already held one (200).
	Created bool `json:"-"`
}

// Client activates a licence key on this machine, checks it once a day and
// judges offline whether the application may run. It never locks the
// customer out because the server cannot be reached or fails; see
// docs/sdk.md. It is safe for concurrent use; online operations run one at a
// time.
type Client struct {
	base        string
	http        *http.Client
	product     Product
	verifier    *Verifier
	major       int
	machineID   string
	components  map[string]string
	store       Store
	now         func() time.Time
	after       func(time.Duration) <-chan time.Time
	maxOffline  time.Duration
	requireSeat bool

	op sync.Mutex // held through each online operation

	mu        sync.Mutex // guards what follows
	rec       Record
	licenceID string   // the stored key's licence, when the key verifies offline
	keyOK     bool     // the stored key verifies offline
	verdict   *Verdict // rec.Verdict, verified and about this machine and licence
	lastErr   error
	refused   *refusal
}

// refusal remembers the last activation the server refused for good (400,
// 403 with a signed verdict, 422), so the same request is not sent again.
type refusal struct {
	key     string
	machine Machine
	err     error
}

// NewClient checks cfg and loads the stored record. A stored verdict that
// no longer verifies, or names another machine, is set aside: the next
// Check activates again.
func NewClient(cfg Config) (*Client, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("sdk client: %w", err)
	}
	v, err := NewVerifier(cfg.Product)
	if err != nil {
		return nil, fmt.Errorf("sdk client: %w", err)
	}
	c := &Client{
		base: strings.TrimRight(cfg.BaseURL, "/"), http: cfg.HTTPClient, product: cfg.Product, verifier: v,
		major: cfg.Major, machineID: cfg.MachineID, components: cfg.Components, store: cfg.Store, now: cfg.Now, after: cfg.After,
		maxOffline: cfg.MaxOffline, requireSeat: cfg.RequireSeat,
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: DefaultTimeout}
	}
	if c.after == nil {
		c.after = time.After
	}
	if c.now == nil {
		c.now = time.Now // the system clock, passed as a value: tests inject theirs
	}
	rec, err := cfg.Store.Load()
	switch {
	case errors.Is(err, ErrNoRecord):
		rec = &Record{}
	case err != nil:
		return nil, fmt.Errorf("sdk client: %w", err)
	}
	c.load(rec)
	return c, nil
}

func (cfg *Config) check() error {
	var problems []string
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		problems = append(problems, "BaseURL must be an http or https URL")
	}
	if cfg.Product.ID == "" || len(cfg.Product.PublicKeys) == 0 {
		problems = append(problems, "Product needs an id and at least one public key")
	}
	if cfg.Major < 1 {
		problems = append(problems, "Major must be 1 or more")
	}
	if !isMachineID(cfg.MachineID) {
		problems = append(problems, "MachineID must be 1 to 128 of A-Z a-z 0-9 . _ : -")
	}
	if cfg.Store == nil {
		problems = append(problems, "Store is required")
	}
	if cfg.MaxOffline < 0 {
		problems = append(problems, "MaxOffline must not be negative")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// load takes rec as the state, judging what it holds against this product
// and machine. Called with c.mu held or before c is shared.
func (c *Client) load(rec *Record) {
	c.rec, c.verdict, c.keyOK, c.licenceID, c.lastErr = *rec, nil, false, "", nil
	if rec.LastError != "" {
		c.lastErr = errors.New(rec.LastError)
	}
	if rec.LicenceKey == "" {
		return
	}
	if k, err := c.verifier.VerifyLicenceKey(rec.LicenceKey); err == nil {
		c.keyOK, c.licenceID = true, k.LicenceID
	}
	if rec.Verdict == "" || !c.keyOK {
		return
	}
	v, err := c.accept(rec.Verdict, c.licenceID, nil)
	if err != nil {
		// Edited, copied from another machine, or signed by a key this build
		// no longer accepts: not a result to keep. The seat, if any, is
		// still held, so activating again gets it back (200).
		c.rec.Verdict, c.rec.Activated = "", false
		c.lastErr = fmt.Errorf("stored verdict set aside: %w", err)
		return
	}
	c.verdict = v
}

// accept verifies a verdict: signed by a key of the product, for this
// product (VerifyVerdict), this machine and licenceID, and not older than
// held, so an old verdict replayed cannot undo a newer one.
func (c *Client) accept(s, licenceID string, held *Verdict) (*Verdict, error) {
	v, err := VerifyVerdict(s, c.product)
	if err != nil {
		return nil, err
	}
	if v.MachineID != c.machineID || v.LicenceID != licenceID {
		return nil, ErrVerdictMismatch
	}
	issued, err := time.Parse(time.RFC3339Nano, v.IssuedAt)
	if err != nil {
		return nil, ErrVerdictInvalid
	}
	if held != nil {
		if prev, err := time.Parse(time.RFC3339Nano, held.IssuedAt); err == nil && issued.Before(prev) {
			return nil, ErrVerdictOutdated
		}
	}
	return v, nil
}

func isMachineID(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
