package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/web"
)

// Idempotency-Key: how long a key replays its first answer, and the
// longest key.
const (
	idempotencyWindow = 24 * time.Hour
	maxIdempotencyKey = 255
)

// writes are the methods whose requests a key makes idempotent; reads are
// so already, and ignore the header.
var writes = map[string]bool{http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true, http.MethodDelete: true}

// replayedHeaders are the answer's header fields a replay repeats; the
// others (request id, rate-limit headers) describe the request being
// answered, not the first one.
var replayedHeaders = []string{"Content-Type", "Location"}

// claimLease is how long a claim without an answer keeps its key from
// other requests: past it, the request is taken to have died with its
// process. It outlasts any request's work, which middleware's deadline bounds.
func (s *Server) claimLease() time.Duration {
	return max(time.Minute, 2*s.timeout, 2*WriteTimeout)
}

// idempotent runs h as the handler of a write that may carry an
// Idempotency-Key. Without the header it just runs h. With it, the first
// request of the caller's key runs h and stores its answer; a later one
// replays that answer, or is refused when it differs from the first or the
// first is still running.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, h handlerFunc) error {
	values, sent := r.Header[http.CanonicalHeaderKey("Idempotency-Key")]
	if !sent || !writes[r.Method] {
		return h(w, r)
	}
	if len(values) != 1 || !validIdempotencyKey(values[0]) {
		return &licentia.Error{
			Code:    licentia.CodeValidationFailed,
			Message: "The request is not valid.",
			Details: map[string]any{"issues": []licentia.Issue{{Path: "header.Idempotency-Key",
				Message: "must be one value of 1 to 255 printable ASCII characters"}}},
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return web.ErrTooLarge
		}
		return web.UnfinishedBody(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))

	now := s.clock.Now().UTC()
	token, err := newToken()
	if err != nil {
		return err
	}
	want := &store.IdempotencyKey{Subject: callerOf(r).RateSubject(), Key: values[0],
		RequestHash: requestHash(r, raw), Token: token, CreatedAt: now,
		ExpiresAt: now.Add(idempotencyWindow), LeaseUntil: now.Add(s.claimLease())}
	// A claim of this key that this server could not settle when its
	// request ended is settled first, so that the retry it was waiting
	// for is not refused.
	s.settleNow(r.Context(), want.Subject, want.Key)
	var held *store.IdempotencyKey
	var claimed bool
	err = s.store.InTx(r.Context(), func(tx store.Tx) error {
		held, claimed, err = tx.ClaimIdempotencyKey(r.Context(), want, now)
		return err
	})
	if err != nil {
		return err
	}
	if !claimed {
		return replay(r.Context(), w, held, want.RequestHash)
	}

	// The key is used in the transaction of every change the request makes,
	// so a change never commits without it: should the process stop before
	// the answer is stored, a retry finds the key used and changes nothing.
	lost := false
	ctx := store.WithCommitHook(r.Context(), func(ctx context.Context, tx store.Tx) error {
		ok, err := tx.UseIdempotencyKey(ctx, want.Subject, want.Key, want.Token, s.clock.Now().UTC())
		if err == nil && !ok {
			lost = true
			return errKeyInUse()
		}
		return err
	})
	rec := &recorder{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			s.settle(r, want, nil)
			panic(p)
		}
	}()
	if err := h(rec, r.WithContext(ctx)); err != nil {
		s.writeError(rec, r, err)
	}
	if !lost {
		s.settle(r, want, rec)
	}
	return nil
}

// settle stores the answer rec recorded for the claim k, or releases k
// when the answer is one a retry should not get: a server error (nil rec:
// a panic), or 429. A released key that was used stays used: its change
// committed, and a retry must not make it again. When the database fails
// meanwhile, the claim is kept to be settled again (see unsettled).
func (s *Server) settle(r *http.Request, k *store.IdempotencyKey, rec *recorder) {
	var a *store.IdempotentAnswer
	if rec != nil {
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		if status < 500 && status != http.StatusTooManyRequests {
			a = &store.IdempotentAnswer{Status: status, Headers: recordedHeaders(rec.Header()), Body: rec.body}
		}
	}
	// The request's own deadline may have passed; its claim must still
	// be settled.
	err := s.writeSettlement(context.WithoutCancel(r.Context()), k, a)
	if err == nil {
		return
	}
	kept := s.unsettled.add(k, a, s.clock.Now())
	s.log.ErrorContext(r.Context(), "idempotency key not settled", "request_id", requestID(r.Context()),
		"error", err.Error(), "retried", kept)
}

// writeSettlement stores the answer a of the claim k, or releases k when a
// is nil, within the database timeout.
func (s *Server) writeSettlement(ctx context.Context, k *store.IdempotencyKey, a *store.IdempotentAnswer) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if a != nil {
			_, err = tx.AnswerIdempotencyKey(ctx, k.Subject, k.Key, k.Token, *a)
		} else {
			_, err = tx.ReleaseIdempotencyKey(ctx, k.Subject, k.Key, k.Token)
		}
		return err
	})
}

// replay answers a request whose key is held: the first answer when the
// request is the same, else the refusal.
func replay(ctx context.Context, w http.ResponseWriter, held *store.IdempotencyKey, hash []byte) error {
	if string(held.RequestHash) != string(hash) {
		return licentia.Errorf(licentia.CodeIdempotencyKeyReused,
			"The Idempotency-Key was used with another method, path or body.")
	}
	if held.Answer == nil {
		return errKeyInUse()
	}
	var headers map[string]string
	if err := json.Unmarshal(held.Answer.Headers, &headers); err != nil {
		return err
	}
	for name, v := range headers {
		w.Header().Set(name, v)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(held.Answer.Status)
	w.Write(withRequestID(held.Answer.Body, requestID(ctx)))
	return nil
}

// withRequestID returns an error body with its request_id replaced by id,
// so that a replayed error, like any other, names the request it answers
// (X-Request-Id); any other body is returned as it is. Request ids hold no
// character JSON escapes, so the replacement leaves the rest byte for byte.
func withRequestID(body []byte, id string) []byte {
	var e errorBody
	if json.Unmarshal(body, &e) != nil || e.Error.RequestID == "" {
		return body
	}
	return bytes.Replace(body, []byte(`"request_id":"`+e.Error.RequestID+`"`), []byte(`"request_id":"`+id+`"`), 1)
}

func errKeyInUse() error {
	return licentia.Errorf(licentia.CodeIdempotencyKeyInUse,
		"A request with this Idempotency-Key is running, or made its change without an answer stored; retry later.")
}

// validIdempotencyKey reports whether v is 1 to 255 printable ASCII
// characters.
func validIdempotencyKey(v string) bool {
	if len(v) < 1 || len(v) > maxIdempotencyKey {
		return false
	}
	for i := range len(v) {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestHash is the SHA-256 of what makes two requests the same: method,
// path with query, and body.
func requestHash(r *http.Request, body []byte) []byte {
	h := sha256.New()
	io.WriteString(h, r.Method+"\n"+r.URL.RequestURI()+"\n")
	h.Write(body)
	return h.Sum(nil)
}

func recordedHeaders(h http.Header) []byte {
	m := map[string]string{}
	for _, name := range replayedHeaders {
		if v := h.Get(name); v != "" {
			m[name] = v
		}
	}
	b, _ := json.Marshal(m)
	return b
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// recorder passes an answer through and keeps its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	rec.body = append(rec.body, b...)
	return rec.ResponseWriter.Write(b)
}

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
