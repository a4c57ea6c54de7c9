package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Codes of the activation routes' errors (docs/errors.md). Match on them,
// never on messages.
const (
	CodeValidationFailed    = "validation_failed"
	CodeLicenceRevoked      = "licence_revoked"
	CodeLicenceExpired      = "licence_expired"
	CodeLicenceNotFound     = "licence_not_found"
	CodeSeatLimitReached    = "seat_limit_reached"
	CodeActivationRequired  = "activation_required"
	CodeConcurrencyLimit    = "concurrency_limit_reached"
	CodeLeaseNotFound       = "lease_not_found"
	CodePayloadTooLarge     = "payload_too_large"
	CodeLicenceKeyInvalid   = "licence_key_invalid"
	CodeLicenceWrongProduct = "licence_wrong_product"
	CodeRateLimited         = "rate_limited"
	CodeInternalError       = "internal_error"
	CodeProductUnavailable  = "product_unavailable"
)

// Activation route paths.
const (
	pathActivate   = "/v1/activations"
	pathStatus     = "/v1/activations/status"
	pathDeactivate = "/v1/activations/deactivate"
)

// maxAnswer bounds what is read of an answer: a verdict is at most 16 KB.
const maxAnswer = 1 << 20

// Backoff after a failed attempt (network error, timeout, 5xx): the n-th
// failure in a row waits backoffBase·2^(n-1), at most backoffMax, of which
// a random part is taken (between half and all of it) so that installs
// cut off together do not come back together.
const (
	backoffBase = 5 * time.Minute
	backoffMax  = 6 * time.Hour
)

// retryAfterMax caps a server's Retry-After-public, so a wrong header can
// not silence an install for longer than a day.
const retryAfterMax = 24 * time.Hour

// Error is a refusal by the server, read from the error envelope
// {"error": {"code", "message", "details", "request_id"}}. An answer that is
// not the envelope (a proxy's page) has an empty Code.
type Error struct {
	Status    int
	Code      string
	Message   string
	Details   map[string]any
	RequestID string
	// RetryAfter is a 429's Retry-After-public, zero when absent.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := fmt.Sprintf("licentia: %d", e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Errors the Client returns without a request, or about an answer.
var (
	// ErrNoLicence: no licence key was entered yet.
	ErrNoLicence = errors.New("no licence key entered")
	// ErrRetryLater: a 429 asked to wait and the wait has not passed; no
	// request was sent.
	ErrRetryLater = errors.New("rate limited by the licence server; waiting before the next request")
	// ErrVerdictMismatch: a signed verdict about another machine or another
	// licence, such as one replayed from another install.
	ErrVerdictMismatch = errors.New("verdict is about another machine or licence")
	// ErrVerdictOutdated: a signed verdict older than the one held, such as
	// an old one replayed to undo a revocation.
	ErrVerdictOutdated = errors.New("verdict is older than the one held")
	// ErrBadAnswer: a 2xx answer that is not the route's JSON.
	ErrBadAnswer = errors.New("licence server answer unreadable")
	// ErrUnconfirmed: a 403 licence_revoked or licence_expired came without
	// a signed verdict to back it; error bodies are not signed, so it locks
	// nothing.
	ErrUnconfirmed = errors.New("refusal not confirmed by a signed verdict")
)

type errorEnvelope struct {
	Error struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		Details   map[string]any `json:"details"`
		RequestID string         `json:"request_id"`
	} `json:"error"`
}

// post sends one JSON request and decodes a 2xx answer into out. Any other
// status is an *Error. The licence key travels only in the body, so no
// error returned here carries it.
func (c *Client) post(ctx context.Context, path string, in, out any) (int, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return 0, fmt.Errorf("post %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("post %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("post %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, fmt.Errorf("post %s: read answer: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, answerError(resp, data)
	}
	// Unknown fields are ignored: answers may grow (contract, Versioning).
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("post %s: %w: %v", path, ErrBadAnswer, err)
	}
	return resp.StatusCode, nil
}

func answerError(resp *http.Response, data []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var env errorEnvelope
	if json.Unmarshal(data, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message, e.Details, e.RequestID = env.Error.Code, env.Error.Message, env.Error.Details, env.Error.RequestID
	} else {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After-public"))
	}
	return e
}

// retryAfter reads whole seconds; anything else is zero (then the Client
// backs off as after a failure).
func retryAfter(h string) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(h), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, retryAfterMax)
}

// kind sorts the outcome of a failed attempt by what the Client does next.
type kind int

const (
	// kindTransient: network error, timeout, 5xx, 404 licence_not_found, an
	// unreadable or unacceptable answer. Keep the last result, back off.
	kindTransient kind = iota
	// kindRateLimited: 429 with a Retry-After-public. Keep the last result,
	// send nothing before it passes.
	kindRateLimited
	// kindRefused: 400, 403, 409, 413, 422. The same request would get the
	// same answer: never retried unchanged, and never a lock. A 422 for a
	// key that verifies offline is unsigned, so it cannot tell a retired
	// signing key from a captive portal or a man in the middle: the next
	// day's check asks again.
	kindRefused
)

func classify(err error) kind {
	e, ok := errors.AsType[*Error](err)
	if !ok || errors.Is(err, ErrUnconfirmed) {
		return kindTransient
	}
	switch {
	case e.Status == http.StatusTooManyRequests && e.RetryAfter > 0:
		return kindRateLimited
	case e.Status == http.StatusBadRequest, e.Status == http.StatusForbidden, e.Status == http.StatusConflict,
		e.Status == http.StatusRequestEntityTooLarge, e.Status == http.StatusUnprocessableEntity:
		return kindRefused
	}
	return kindTransient
}

// isRevokedOrExpired reports whether err is the server's 403 refusal of a
// revoked or expired licence.
func isRevokedOrExpired(err error) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Status == http.StatusForbidden && (e.Code == CodeLicenceRevoked || e.Code == CodeLicenceExpired)
}

// backoff is the wait after the n-th failure in a row.
func backoff(n int) time.Duration {
	d := backoffMax
	if n < 20 {
		d = min(backoffBase<<max(n-1, 0), backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}
