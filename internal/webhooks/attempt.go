package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// maxDrain is the longest answer body read, and thrown away, so that the
// connection can carry the next attempt; a longer or unsized body closes
// the connection instead.
const maxDrain = 4 << 10

// attempt is a claimed delivery with what sending it needs, read once for
// every delivery of its batch that shares the endpoint or the event.
type attempt struct {
	d  licentia.Delivery
	ep *endpointState
	ev *licentia.Event // nil when the event is gone
	// response is the start of the receiver's answer, once one came.
	response *string
}

// endpointState is an endpoint with its secrets; ep is nil when the
// endpoint is gone.
type endpointState struct {
	ep      *licentia.WebhookEndpoint
	secrets []licentia.WebhookSecret
}

// prepare reads the endpoints, secrets and events of claimed deliveries,
// each once: the deliveries of one event to several endpoints, or of
// several events to one endpoint, are usually claimed together. It reads
// through r, the claim's transaction, so that a batch costs one
// connection from the pool, not one per read. A row that is missing is
// no error (the attempt then fails for good); any other failure to read
// is, and fails the claim, so that a store that is briefly down never
// fails a delivery.
func prepare(ctx context.Context, r store.Reader, ds []licentia.Delivery) ([]attempt, error) {
	endpoints := map[[2]string]*endpointState{}
	evs := map[string]*licentia.Event{}
	out := make([]attempt, len(ds))
	for i, d := range ds {
		key := [2]string{d.OrgID, d.EndpointID}
		ep, ok := endpoints[key]
		if !ok {
			var err error
			if ep, err = readEndpoint(ctx, r, d.OrgID, d.EndpointID); err != nil {
				return nil, err
			}
			endpoints[key] = ep
		}
		ev, ok := evs[d.EventID]
		if !ok {
			var err error
			ev, err = r.Event(ctx, d.EventID)
			if err != nil && !isNotFound(err) {
				return nil, err
			}
			evs[d.EventID] = ev
		}
		out[i] = attempt{d: d, ep: ep, ev: ev}
	}
	return out, nil
}

func readEndpoint(ctx context.Context, r store.Reader, orgID, id string) (*endpointState, error) {
	ep, err := r.WebhookEndpoint(ctx, orgID, id)
	switch {
	case isNotFound(err):
		return &endpointState{}, nil
	case err != nil:
		return nil, err
	case !ep.Enabled:
		return &endpointState{ep: ep}, nil
	}
	secrets, err := r.WebhookSecrets(ctx, id)
	if err != nil {
		return nil, err
	}
	return &endpointState{ep: ep, secrets: secrets}, nil
}

func failure(reason string, final bool) (*int, *string, bool) { return nil, &reason, final }

// attempt sends the delivery once, within budget. It returns the status
// code (when one came), the failure reason (nil on success) and whether
// the failure is final: a body over 64 KB is never sent, and a delivery of
// a removed or turned-off endpoint, or of an event deleted meanwhile, is
// not tried again.
func (w *Worker) attempt(ctx context.Context, a *attempt, budget time.Duration) (*int, *string, bool) {
	switch {
	case a.ep.ep == nil || !a.ep.ep.Enabled || a.ev == nil:
		return failure(licentia.FailureEndpointOff, true)
	case len(a.ev.Body) > licentia.MaxWebhookBody:
		return failure(licentia.FailurePayloadTooLarge, true)
	}
	ep, ev := a.ep.ep, a.ev
	now := w.clock.Now()
	sig, err := w.signature(a.ep.secrets, ev, now)
	if err != nil {
		w.log.Error("webhook secret unavailable", "webhook_endpoint_id", ep.ID, "error", err.Error())
		return failure(licentia.FailureConnection, false)
	}
	actx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, ep.URL, bytes.NewReader(ev.Body))
	if err != nil {
		return failure(licentia.FailureConnection, false)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.userAgent)
	req.Header.Set("webhook-id", ev.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := w.client.Do(req)
	if err != nil {
		return failure(classify(err), false)
	}
	// The status code and the answer's first 2 KB are kept, for the
	// endpoint's page. The rest of a short answer body is read and thrown
	// away so that the connection can be kept for the next attempt; any
	// other is left unread, and the connection closed with it.
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, licentia.MaxResponseKept))
	text := keptText(kept)
	a.response = &text
	if resp.ContentLength > 0 && resp.ContentLength <= maxDrain {
		io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return &code, nil, false
	case code >= 300 && code < 400:
		reason := licentia.FailureRedirect
		return &code, &reason, false
	}
	reason := licentia.FailureStatus
	return &code, &reason, false
}

// keptText is an answer's start as text both engines store: bytes that
// are not UTF-8 (a character cut at the 2 KB mark among them) and NUL
// become U+FFFD, and the result is cut back to MaxResponseKept bytes.
func keptText(b []byte) string {
	s := strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", "\uFFFD"), "\uFFFD")
	for len(s) > licentia.MaxResponseKept {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// isNotFound reports whether err says a row is missing: the store answers
// a contract code for that, and anything else is a failure to read.
func isNotFound(err error) bool {
	e, ok := errors.AsType[*licentia.Error](err)
	return ok && (e.Code == licentia.CodeWebhookEndpointNotFound || e.Code == licentia.CodeNotFound)
}

// signature signs the event with the endpoint's current secret and every
// secret replaced in the last 24 hours.
func (w *Worker) signature(all []licentia.WebhookSecret, ev *licentia.Event, now time.Time) (string, error) {
	var keys [][]byte
	for _, s := range SigningSecrets(all, now) {
		raw, err := OpenSecret(w.keys, &s)
		if err != nil {
			return "", err
		}
		keys = append(keys, raw)
	}
	if len(keys) == 0 {
		return "", errors.New("the endpoint has no secret")
	}
	return Sign(keys, ev.ID, now, ev.Body), nil
}

// classify names why a request failed.
func classify(err error) string {
	var tlsErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.Is(err, ErrAddressRefused):
		return licentia.FailureAddressRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return licentia.FailureTimeout
	case errors.As(err, &tlsErr):
		return licentia.FailureTLS
	}
	return licentia.FailureConnection
}
