package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxAnswer bounds how much of a provider's answer is read: the objects the
// service asks for are a few kilobytes.
const maxAnswer = 1 << 20

// API makes the authenticated GET calls of the hand-written adapters
// (Paddle, Lemon Squeezy) and maps their failures to this package's errors.
type API struct {
	// BaseURL is the provider's address without a trailing slash.
	BaseURL string
	// HTTP carries the timeout (Timeout outside tests).
	HTTP *http.Client
	// Header is sent with every call: content negotiation, API version.
	Header http.Header
}

// Get calls GET path with apiKey as a bearer token and decodes a 200 answer
// into into. A 401 is ErrTokenRefused and a 403 ErrPermissionDenied; a 404 is
// notFound when it is set (ErrNoSuchProduct for a product), otherwise, like
// any other answer, a network failure or a timeout, ErrUnavailable. An
// answer holding text that is not valid UTF-8 is ErrUnavailable and
// ErrTextInvalid both, unless ctx carries a TextWatch (see WatchText).
// Errors
// name the path without its query, which may hold an order id, and never
// the key.
func (a API) Get(ctx context.Context, apiKey, path string, notFound error, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.BaseURL+path, nil)
	path, _, _ = strings.Cut(path, "?")
	if err != nil {
		return fmt.Errorf("GET %s: %w: %w", path, ErrUnavailable, err)
	}
	for k, v := range a.Header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w: %w", path, ErrUnavailable, TransportError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("GET %s: %w", path, ErrTokenRefused)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("GET %s: %w", path, ErrPermissionDenied)
	case resp.StatusCode == http.StatusNotFound && notFound != nil:
		return fmt.Errorf("GET %s: %w", path, notFound)
	default:
		return fmt.Errorf("GET %s: %w: status %d", path, ErrUnavailable, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("GET %s: %w: %w", path, ErrUnavailable, TransportError(err))
	}
	// Text that decoding would replace with U+FFFD is read so only under a
	// TextWatch, which the caller then knows of; otherwise the answer is
	// unusable, as a failure of the provider.
	if !IsText(raw) && !noteInvalidText(ctx) {
		return fmt.Errorf("GET %s: %w: %w", path, ErrUnavailable, ErrTextInvalid)
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(into); err != nil {
		return fmt.Errorf("GET %s: %w: undecodable answer: %w", path, ErrUnavailable, err)
	}
	return nil
}

// TransportError drops the request URL from an http.Client error: the URL
// names the provider's order, checkout or customer ids, and errors are
// logged.
func TransportError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
