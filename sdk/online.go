package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

type activateRequest struct {
	LicenceKey string `json:"licence_key"`
	MachineID  string `json:"machine_id"`
	Machine
	// Components are left out when there are none, as SDKs before them
	// sent.
	Components map[string]string `json:"components,omitempty"`
}

type keyRequest struct {
	LicenceKey string `json:"licence_key"`
	MachineID  string `json:"machine_id"`
}

type activateAnswer struct {
	Activation Activation `json:"activation"`
	Verdict    string     `json:"verdict"`
	Heartbeat  int64      `json:"heartbeat_interval_seconds"`
}

type statusAnswer struct {
	Verdict   string `json:"verdict"`
	Heartbeat int64  `json:"heartbeat_interval_seconds"`
}

type deactivateAnswer struct {
	Changed bool `json:"changed"`
}

// attempt is the outcome of one online exchange about a licence: the
// verdict accepted from it, if any, and the error, if any. A revoked
// licence's activation has both: the 403, and the signed verdict that
// confirms it.
type attempt struct {
	raw        string
	verdict    *Verdict
	activation *Activation
	// heartbeat is the product's heartbeat interval in seconds, from the
	// answer that brought the verdict; 0 when off.
	heartbeat int64
	err       error
}

// Activate takes a seat for licenceKey on this machine; call it when the
// customer enters a key. A key that fails offline verification is refused
// without a request. The stored licence is replaced when the server accepts
// the key, or when there is no valid licence to keep; a key the server
// refuses, or that cannot be checked now, never displaces a working one.
// An error answer is not signed, so a 422 for a key that verifies offline
// fails the activation and is reported, but locks nothing.
//
// Activate is the customer's own action, so it is not held back by the
// backoff of Check, only by a 429's wait. A request the server refused for
// good (400, 403 confirmed by a signed verdict, 422) is not sent again
// unchanged by this Client.
func (c *Client) Activate(ctx context.Context, licenceKey string, m Machine) (*Activation, error) {
	c.op.Lock()
	defer c.op.Unlock()
	k, err := c.verifier.VerifyLicenceKey(licenceKey)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	now := c.now()
	c.mu.Lock()
	if err := c.rateLimited(now); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if r := c.refused; r != nil && r.key == licenceKey && r.machine == m {
		c.mu.Unlock()
		return nil, fmt.Errorf("activate: refused before, not sent again: %w", r.err)
	}
	same := c.keyOK && c.licenceID == k.LicenceID
	adopt := same || !c.judge(now).Valid
	var held *Verdict
	if same {
		held = c.verdict
	}
	c.mu.Unlock()

	a := c.requestActivation(ctx, licenceKey, k.LicenceID, m, held)

	c.mu.Lock()
	defer c.mu.Unlock()
	accepted := a.err == nil && a.verdict.ActivationID != nil && !locks(a.verdict)
	switch {
	case accepted || adopt:
		if !same {
			// A new licence: start its record afresh, keeping only the
			// server's request to wait, which is about this install.
			c.rec = Record{RateLimitedUntil: c.rec.RateLimitedUntil}
			c.verdict, c.lastErr = nil, nil
			c.keyOK, c.licenceID = true, k.LicenceID
		}
		c.rec.LicenceKey, c.rec.Machine = licenceKey, m
		c.note(now, a)
	default:
		c.noteRateLimit(now, a.err)
	}
	if isFinal(a.err) {
		c.refused = &refusal{key: licenceKey, machine: m, err: a.err}
	}
	if err := c.save(); err != nil && a.err == nil {
		return a.activation, err
	}
	if a.err != nil {
		return nil, fmt.Errorf("activate: %w", a.err)
	}
	return a.activation, nil
}

// Check goes online at most once a day (CheckInterval) and never before a
// backoff or a 429's wait ends; otherwise it answers from the stored
// verdict without a request. A machine that has no seat yet (its key was
// entered while the server could not be reached) is activated instead. The
// error is the online attempt's, nil when none was made.
func (c *Client) Check(ctx context.Context) (Status, error) {
	c.op.Lock()
	defer c.op.Unlock()
	now := c.now()
	c.mu.Lock()
	st := c.judge(now)
	key, licenceID, m, held := c.rec.LicenceKey, c.licenceID, c.rec.Machine, c.verdict
	activated := c.verdict != nil && c.rec.Activated
	switch {
	case key == "":
		c.mu.Unlock()
		return st, ErrNoLicence
	case !c.keyOK:
		// A key refused offline would be refused again: no request until
		// the customer enters a key.
		c.mu.Unlock()
		return st, nil
	case now.Before(st.NextCheckAt):
		c.mu.Unlock()
		return st, nil
	}
	c.mu.Unlock()

	var a attempt
	if activated {
		a = c.requestStatus(ctx, key, licenceID, held)
	} else {
		a = c.requestActivation(ctx, key, licenceID, m, held)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.note(now, a)
	err := c.save()
	st = c.judge(now)
	if a.err != nil {
		return st, fmt.Errorf("check: %w", a.err)
	}
	return st, err
}

// Deactivate frees this machine's seat and forgets the stored licence, so
// the customer can move it to another machine. On any error the licence
// stays as it was: the seat is still held.
func (c *Client) Deactivate(ctx context.Context) (changed bool, err error) {
	c.op.Lock()
	defer c.op.Unlock()
	now := c.now()
	c.mu.Lock()
	key := c.rec.LicenceKey
	if key == "" {
		c.mu.Unlock()
		return false, ErrNoLicence
	}
	if err := c.rateLimited(now); err != nil {
		c.mu.Unlock()
		return false, err
	}
	c.mu.Unlock()

	var ans deactivateAnswer
	_, err = c.post(ctx, pathDeactivate, keyRequest{LicenceKey: key, MachineID: c.machineID}, &ans)

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.noteRateLimit(now, err)
		return false, fmt.Errorf("deactivate: %w", err)
	}
	c.load(&Record{RateLimitedUntil: c.rec.RateLimitedUntil})
	c.refused = nil
	return ans.Changed, c.save()
}

// requestActivation posts the activation. A 403 licence_revoked or
// licence_expired is an unsigned body that anyone on the path could send,
// so it is checked with the status route: only a signed verdict of a
// revoked or expired licence stands behind it.
func (c *Client) requestActivation(ctx context.Context, key, licenceID string, m Machine, held *Verdict) attempt {
	var ans activateAnswer
	status, err := c.post(ctx, pathActivate, activateRequest{LicenceKey: key, MachineID: c.machineID, Machine: m, Components: c.components}, &ans)
	if err == nil {
		v, err := c.accept(ans.Verdict, licenceID, held)
		if err != nil {
			return attempt{err: fmt.Errorf("activation answer: %w", err)}
		}
		ans.Activation.Created = status == 201
		return attempt{raw: ans.Verdict, verdict: v, activation: &ans.Activation, heartbeat: ans.Heartbeat}
	}
	if !isRevokedOrExpired(err) {
		return attempt{err: err}
	}
	confirm := c.requestStatus(ctx, key, licenceID, held)
	if confirm.err != nil {
		// Not confirmed: keep the last result. The status call's own
		// failure (a 429's wait, say) governs the next attempt.
		return attempt{err: fmt.Errorf("%w (%v): %w", ErrUnconfirmed, err, confirm.err)}
	}
	if !locks(confirm.verdict) {
		// A signed verdict that says the licence is live is a good answer
		// to keep; the 403 it contradicts locks nothing.
		return attempt{raw: confirm.raw, verdict: confirm.verdict, heartbeat: confirm.heartbeat, err: fmt.Errorf("%w: %w", ErrUnconfirmed, err)}
	}
	return attempt{raw: confirm.raw, verdict: confirm.verdict, heartbeat: confirm.heartbeat, err: err}
}

func (c *Client) requestStatus(ctx context.Context, key, licenceID string, held *Verdict) attempt {
	var ans statusAnswer
	if _, err := c.post(ctx, pathStatus, keyRequest{LicenceKey: key, MachineID: c.machineID}, &ans); err != nil {
		return attempt{err: err}
	}
	v, err := c.accept(ans.Verdict, licenceID, held)
	if err != nil {
		return attempt{err: fmt.Errorf("status answer: %w", err)}
	}
	return attempt{raw: ans.Verdict, verdict: v, heartbeat: ans.Heartbeat}
}

// isFinal reports whether err is a refusal the client guidance says not to
// send again unchanged: 400, 422, and a 403 a signed verdict confirmed.
func isFinal(err error) bool {
	e, ok := errors.AsType[*Error](err)
	if !ok || errors.Is(err, ErrUnconfirmed) {
		return false
	}
	return e.Status == http.StatusBadRequest || e.Status == http.StatusForbidden || e.Status == http.StatusUnprocessableEntity
}

// locks reports whether a signed verdict locks the application by itself.
func locks(v *Verdict) bool {
	return v != nil && (v.State == StateRevoked || v.State == StateExpired)
}

// note records an attempt on the stored licence. A signed verdict is kept
// and counts as a successful check whatever else failed; without one, the
// last result stays and is reported stale. Called with c.mu held.
func (c *Client) note(now time.Time, a attempt) {
	if a.verdict != nil {
		c.rec.Verdict, c.verdict, c.rec.HeartbeatInterval = a.raw, a.verdict, max(a.heartbeat, 0)
		c.rec.CheckedAt, c.rec.Failures, c.rec.NextAttemptAt, c.rec.LastError, c.lastErr = now, 0, time.Time{}, "", nil
		if !locks(a.verdict) {
			c.refused = nil // a licence reinstated may be activated again
			c.rec.Activated = c.rec.Activated || a.verdict.ActivationID != nil
		}
		if a.err == nil || !errors.Is(a.err, ErrUnconfirmed) {
			return
		}
	}
	if a.err == nil {
		return
	}
	c.lastErr, c.rec.LastError = a.err, a.err.Error()
	c.noteRateLimit(now, a.err)
	switch classify(a.err) {
	case kindRateLimited:
		// The wait is the server's: no backoff on top of it.
	case kindRefused:
		// The same request would be refused again: wait for the next
		// day's check rather than retry it. An unsigned 422 lands here
		// too: reported, asked again tomorrow, never a lock.
		c.rec.NextAttemptAt = now.Add(CheckInterval)
	default:
		c.rec.Failures++
		c.rec.NextAttemptAt = now.Add(backoff(c.rec.Failures))
	}
}

// noteRateLimit records a 429's wait, which holds every request of this
// install. Called with c.mu held.
func (c *Client) noteRateLimit(now time.Time, err error) {
	if e, ok := errors.AsType[*Error](err); ok && e.RetryAfter > 0 {
		c.rec.RateLimitedUntil = later(c.rec.RateLimitedUntil, now.Add(e.RetryAfter))
	}
}

// rateLimited returns ErrRetryLater while a 429's wait lasts. Called with
// c.mu held.
func (c *Client) rateLimited(now time.Time) error {
	if now.Before(c.rec.RateLimitedUntil) {
		return fmt.Errorf("%w (until %s)", ErrRetryLater, c.rec.RateLimitedUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// save writes the record. Called with c.mu held.
func (c *Client) save() error {
	if err := c.store.Save(&c.rec); err != nil {
		return fmt.Errorf("save licence state: %w", err)
	}
	return nil
}
