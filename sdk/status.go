package sdk

import (
	"slices"
	"time"
)

// Reason says why the application may not run.
type Reason string

// Reasons, in the order they are judged.
const (
	// ReasonNoLicence: no licence key was entered.
	ReasonNoLicence Reason = "no_licence"
	// ReasonKeyInvalid: the key fails offline verification with this
	// build's public keys. A 422 from the server is unsigned and never
	// sets it: it shows in Status.LastError.
	ReasonKeyInvalid Reason = "licence_key_invalid"
	// ReasonRevoked: a signed verdict says the licence is revoked.
	ReasonRevoked Reason = "revoked"
	// ReasonExpired: a signed verdict says the licence is expired, or its
	// signed expires_at has passed.
	ReasonExpired Reason = "expired"
	// ReasonNotActivated: the key verifies, but this machine never got a
	// signed verdict with a live seat for it; Check keeps trying.
	ReasonNotActivated Reason = "not_activated"
	// ReasonNewerMajor: the licence is for an older major version than
	// this application.
	ReasonNewerMajor Reason = "newer_major"
	// ReasonSeatFreed: with Config.RequireSeat, a signed verdict says this
	// machine's seat was freed.
	ReasonSeatFreed Reason = "seat_freed"
	// ReasonOfflineTooLong: with Config.MaxOffline, the last successful
	// online check is older than the maker allows.
	ReasonOfflineTooLong Reason = "offline_too_long"
)

// Message is a sentence for the customer.
func (r Reason) Message() string {
	switch r {
	case ReasonNoLicence:
		return "Enter a licence key to use the application."
	case ReasonKeyInvalid:
		return "This licence key is not valid for this application."
	case ReasonRevoked:
		return "This licence was revoked."
	case ReasonExpired:
		return "This licence has expired."
	case ReasonNotActivated:
		return "This licence is not activated on this machine yet; it needs to reach the licence server once."
	case ReasonNewerMajor:
		return "This licence is for an earlier version of the application."
	case ReasonSeatFreed:
		return "This machine's seat was freed; activate the licence again."
	case ReasonOfflineTooLong:
		return "The licence could not be checked for too long; connect to the internet."
	}
	return ""
}

// Status is the Client's judgement: may the application run, and on what.
type Status struct {
	// Valid reports whether the application may run.
	Valid bool
	// Reason says why not; empty when Valid.
	Reason Reason
	// LicenceID is the stored key's licence, empty without a key.
	LicenceID string
	// Verdict is the last signed verdict accepted for the key on this
	// machine, nil before the first.
	Verdict *Verdict
	// Seated reports whether that verdict names a live seat of this machine.
	Seated bool
	// Stale is true when the last online attempt failed or the verdict's
	// valid_until has passed. A stale result is still the result: it never
	// locks by itself.
	Stale bool
	// CheckedAt is the last online check that brought a signed verdict.
	CheckedAt time.Time
	// NextCheckAt is the earliest time Check goes online again.
	NextCheckAt time.Time
	// LastError is the error of the last online attempt, nil when it
	// succeeded. After a restart it carries only the message.
	LastError error
	// at is when the status was judged, on the Client's clock.
	at time.Time
}

// Feature reports whether the application may use the feature code,
// offline: the status is valid and its verdict grants code with an expiry,
// if any, not passed at the time the status was judged on the local clock.
// A status judged earlier stays as judged: ask State again for a fresh one.
func (s Status) Feature(code string) bool {
	return s.Valid && s.Verdict != nil && s.Verdict.Feature(code, s.at)
}

// State judges the stored result now, offline. It never sends a request.
func (c *Client) State() Status {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.judge(now)
}

// judge applies the lock-out rules of docs/sdk.md. A network error, a
// timeout, a 5xx, a 429 or any unsigned 4xx (a 403 or 422 without a signed
// verdict behind it, a 404) never reaches here as a lock: those keep the
// last verdict and only make it stale. Called with c.mu held.
func (c *Client) judge(now time.Time) Status {
	st := Status{LicenceID: c.licenceID, CheckedAt: c.rec.CheckedAt, NextCheckAt: c.nextCheck(), LastError: c.lastErr, at: now}
	st.Stale = c.lastErr != nil
	if v := c.verdict; v != nil {
		cp := *v // the caller's to keep; the Client judges its own
		cp.Features = slices.Clone(v.Features)
		st.Verdict, st.Seated = &cp, v.ActivationID != nil
		if until, err := v.ValidUntilTime(); err != nil || now.After(until) {
			st.Stale = true
		}
	}
	st.Reason = c.reason(now)
	st.Valid = st.Reason == ""
	return st
}

func (c *Client) reason(now time.Time) Reason {
	v := c.verdict
	switch {
	case c.rec.LicenceKey == "":
		return ReasonNoLicence
	case !c.keyOK:
		return ReasonKeyInvalid
	case v != nil && v.State == StateRevoked:
		return ReasonRevoked
	case v != nil && v.State == StateExpired:
		return ReasonExpired
	case v == nil || !c.rec.Activated:
		return ReasonNotActivated
	}
	// The licence's own expiry is signed, so it is judged offline: no
	// answer from the server is needed to know it has passed.
	if exp, ok, err := v.ExpiresAtTime(); err == nil && ok && !now.Before(exp) {
		return ReasonExpired
	}
	if c.major > v.Major {
		return ReasonNewerMajor
	}
	if c.requireSeat && v.ActivationID == nil {
		return ReasonSeatFreed
	}
	if c.maxOffline > 0 && now.Sub(c.rec.CheckedAt) > c.maxOffline {
		return ReasonOfflineTooLong
	}
	return ""
}

// nextCheck is the earliest time Check goes online: a day, or the
// product's heartbeat interval when it asks for heartbeats, after the last
// check that brought a signed verdict (at once when there was none), or
// after a failure the end of its backoff; never before a 429's wait ends.
// Called with c.mu held.
func (c *Client) nextCheck() time.Time {
	var t time.Time
	if c.verdict != nil {
		t = c.rec.CheckedAt.Add(c.checkInterval())
	}
	if c.rec.Failures > 0 || c.lastErr != nil {
		t = c.rec.NextAttemptAt
	}
	return later(t, c.rec.RateLimitedUntil)
}

// checkInterval is how long after a successful check the next is due.
// Called with c.mu held.
func (c *Client) checkInterval() time.Duration {
	if hb := time.Duration(c.rec.HeartbeatInterval) * time.Second; hb > 0 && hb < CheckInterval {
		return hb
	}
	return CheckInterval
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
