package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/web"
)

// withKey returns c sending the Idempotency-Key k.
func withKey(c call, k string) call {
	h := map[string]string{"Idempotency-Key": k}
	for name, v := range c.headers {
		h[name] = v
	}
	c.headers = h
	return c
}

// licenceCount counts the organization's licences.
func (e *testEnv) licenceCount(t *testing.T, orgID string) int {
	t.Helper()
	ls, err := e.store.FindLicences(t.Context(), orgID, store.LicenceFilter{Limit: 1000}, e.clock.Now())
	if err != nil {
		t.Fatalf("FindLicences() error = %v", err)
	}
	return len(ls)
}

// wantReplay checks that r replays first: status, body and Content-Type,
// marked Idempotent-Replayed. An error body names the request answered.
func wantReplay(t *testing.T, first, r *resp) {
	t.Helper()
	want := bytes.Replace(first.body, []byte(first.header.Get("X-Request-Id")), []byte(r.header.Get("X-Request-Id")), 1)
	if r.status != first.status || !bytes.Equal(r.body, want) {
		t.Errorf("replay = %d %s, want %d %s", r.status, r.body, first.status, first.body)
	}
	if got := r.header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("Idempotent-Replayed = %q, want true", got)
	}
	if got, want := r.header.Get("Content-Type"), first.header.Get("Content-Type"); got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if r.header.Get("X-Request-Id") == first.header.Get("X-Request-Id") {
		t.Error("a replay has the first request's X-Request-Id, want its own")
	}
}

// TestIdempotentReplay: the same key and request replay the first answer,
// 201 or 4xx, and make no second change; without the key, or with another,
// the request runs again.
func TestIdempotentReplay(t *testing.T) {
	e := newLicenceEnv(t)
	body := issueBody(nil)
	first := e.send(t, withKey(issueCall(e.allKey, body), "order-1"))
	if first.status != http.StatusCreated {
		t.Fatalf("first issue = %d %s", first.status, first.body)
	}
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Error("the first answer is marked Idempotent-Replayed")
	}
	for range 2 {
		wantReplay(t, first, e.send(t, withKey(issueCall(e.allKey, body), "order-1")))
	}
	if n := e.licenceCount(t, e.org.ID); n != 1 {
		t.Errorf("%d licences, want 1", n)
	}
	if r := e.send(t, withKey(issueCall(e.allKey, body), "order-2")); r.status != http.StatusCreated {
		t.Errorf("another key = %d, want 201", r.status)
	}
	if n := e.licenceCount(t, e.org.ID); n != 2 {
		t.Errorf("%d licences, want 2", n)
	}

	// A 4xx answer is stored and replayed too, even once the request would
	// succeed.
	missing := issueBody(map[string]any{"product_id": "later-app"})
	refused := e.send(t, withKey(issueCall(e.allKey, missing), "order-3"))
	if refused.status != http.StatusNotFound {
		t.Fatalf("issue for a missing product = %d, want 404", refused.status)
	}
	e.createProduct(t, e.allKey, productBody("later-app", "LATER", nil))
	wantReplay(t, refused, e.send(t, withKey(issueCall(e.allKey, missing), "order-3")))

	// A read ignores the header.
	id := decodeStrict[issuedView](t, first.body).Licence.ID
	r := e.send(t, withKey(call{method: "GET", path: "/v1/admin/licences/" + id, key: e.allKey}, "order-1"))
	if r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("GET with a key = %d replayed %q, want 200 not replayed", r.status, r.header.Get("Idempotent-Replayed"))
	}
}

// TestIdempotencyKeyReused: the same key with another body, path or method
// answers 422 idempotency_key_reused and changes nothing.
func TestIdempotencyKeyReused(t *testing.T) {
	e := newLicenceEnv(t)
	first := e.issue(t, e.allKey, issueBody(nil))
	e.send(t, withKey(call{method: "POST", path: "/v1/admin/licences/" + first.Licence.ID + "/revoke", key: e.allKey,
		body: map[string]any{"reason": "refund"}}, "k"))
	for _, tt := range []struct {
		name string
		c    call
	}{
		{"another body", call{method: "POST", path: "/v1/admin/licences/" + first.Licence.ID + "/revoke", key: e.allKey,
			body: map[string]any{"reason": "chargeback"}}},
		{"another path", call{method: "POST", path: "/v1/admin/licences/" + first.Licence.ID + "/expire", key: e.allKey,
			body: map[string]any{"reason": "refund"}}},
		{"another method", call{method: "DELETE", path: "/v1/admin/webhooks/" + licentia.NewID(), key: e.allKey}},
		{"another route", issueCall(e.allKey, issueBody(nil))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.send(t, withKey(tt.c, "k"))
			if r.status != http.StatusUnprocessableEntity || r.apiError(t).Code != licentia.CodeIdempotencyKeyReused {
				t.Errorf("%s = %d %s, want 422 idempotency_key_reused", tt.name, r.status, r.body)
			}
		})
	}
	if n := e.licenceCount(t, e.org.ID); n != 1 {
		t.Errorf("%d licences, want 1", n)
	}
}

// TestIdempotencyKeyValidation: a key must be one value of 1 to 255
// printable ASCII characters, else 400 at header.Idempotency-Key, after
// 401, 403 and 413 and before the body's own 400.
func TestIdempotencyKeyValidation(t *testing.T) {
	e := newLicenceEnv(t)
	readOnly := e.key(t, e.org.ID, licentia.ScopeLicencesRead)
	for _, tt := range []struct {
		name       string
		c          call
		wantStatus int
		wantCode   string
	}{
		{"empty", withKey(issueCall(e.allKey, issueBody(nil)), ""), 400, "validation_failed"},
		{"256 characters", withKey(issueCall(e.allKey, issueBody(nil)), strings.Repeat("k", 256)), 400, "validation_failed"},
		{"a control character", withKey(issueCall(e.allKey, issueBody(nil)), "a\tb"), 400, "validation_failed"},
		{"not ASCII", withKey(issueCall(e.allKey, issueBody(nil)), "clé"), 400, "validation_failed"},
		{"two values", call{method: "POST", path: "/v1/admin/licences", key: e.allKey, body: issueBody(nil),
			more: http.Header{"Idempotency-Key": {"a", "b"}}}, 400, "validation_failed"},
		{"an invalid body", withKey(issueCall(e.allKey, map[string]any{"nonsense": 1}), ""), 400, "validation_failed"},
		{"no key", withKey(issueCall("", issueBody(nil)), ""), 401, "unauthorized"},
		{"missing scope", withKey(issueCall(readOnly, issueBody(nil)), ""), 403, "insufficient_scope"},
		{"oversized body", withKey(issueCall(e.allKey, paddedBody(`{"product_id":"desk-app","email":"a@b.example"}`, web.MaxBody+1)), ""),
			413, "payload_too_large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.invalid = true
			r := e.send(t, tt.c)
			got := r.apiError(t)
			if r.status != tt.wantStatus || string(got.Code) != tt.wantCode {
				t.Fatalf("%s = %d %s, want %d %s", tt.name, r.status, r.body, tt.wantStatus, tt.wantCode)
			}
			if tt.wantStatus == 400 {
				issues, _ := got.Details["issues"].([]any)
				if len(issues) != 1 || !strings.Contains(fmt.Sprint(issues[0]), "header.Idempotency-Key") {
					t.Errorf("issues = %v, want one at header.Idempotency-Key", got.Details["issues"])
				}
			}
		})
	}
	for _, k := range []string{"k", strings.Repeat("k", 255), " !~ spaced key ~! "[1:17]} {
		if r := e.send(t, withKey(issueCall(e.allKey, issueBody(nil)), k)); r.status != http.StatusCreated {
			t.Errorf("key %q = %d %s, want 201", k, r.status, r.body)
		}
	}
	if n := e.licenceCount(t, e.org.ID); n != 3 {
		t.Errorf("%d licences, want 3", n)
	}
}

// TestIdempotencyKeyPerCaller: one key of two callers is two keys; an
// assistant's caller is its member.
func TestIdempotencyKeyPerCaller(t *testing.T) {
	e := newLicenceEnv(t)
	other := e.key(t, e.org.ID, keyScopes()...)
	body := issueBody(nil)
	a := e.send(t, withKey(issueCall(e.allKey, body), "shared"))
	b := e.send(t, withKey(issueCall(other, body), "shared"))
	if a.status != http.StatusCreated || b.status != http.StatusCreated || b.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("two callers, one key = %d, %d (replayed %q), want 201 twice", a.status, b.status, b.header.Get("Idempotent-Replayed"))
	}
	if n := e.licenceCount(t, e.org.ID); n != 2 {
		t.Errorf("%d licences, want 2", n)
	}
	// An AI assistant's key is its member's: two tokens of one member share
	// it, and it is not the API keys'.
	tokA := e.assistantToken(t, e.org.ID, "owner@acme.example")
	tokB := e.assistantToken(t, e.org.ID, "owner@acme.example")
	byA := e.send(t, withKey(issueCall(tokA, body), "shared"))
	if byA.status != http.StatusCreated || byA.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the assistant's first = %d (replayed %q), want a new 201", byA.status, byA.header.Get("Idempotent-Replayed"))
	}
	wantReplay(t, byA, e.send(t, withKey(issueCall(tokB, body), "shared")))
	if n := e.licenceCount(t, e.org.ID); n != 3 {
		t.Errorf("%d licences, want 3", n)
	}
}

// TestIdempotencyKeyExpiry: a key replays for 24 hours, then runs again.
func TestIdempotencyKeyExpiry(t *testing.T) {
	e := newLicenceEnv(t)
	body := issueBody(nil)
	first := e.send(t, withKey(issueCall(e.allKey, body), "daily"))
	e.clock.Advance(24*time.Hour - time.Millisecond)
	wantReplay(t, first, e.send(t, withKey(issueCall(e.allKey, body), "daily")))
	e.clock.Advance(time.Millisecond)
	if r := e.send(t, withKey(issueCall(e.allKey, body), "daily")); r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("after 24 hours = %d replayed %q, want a new 201", r.status, r.header.Get("Idempotent-Replayed"))
	}
	if n := e.licenceCount(t, e.org.ID); n != 2 {
		t.Errorf("%d licences, want 2", n)
	}
}

// TestIdempotencyKeyAcrossServers: a key used on one server replays on
// another sharing its database, as two processes would.
func TestIdempotencyKeyAcrossServers(t *testing.T) {
	e := newLicenceEnv(t)
	second := newTestEnvWith(t, envOptions{shareStore: e.testEnv})
	body := issueBody(nil)
	first := e.send(t, withKey(issueCall(e.allKey, body), "across"))
	wantReplay(t, first, second.send(t, withKey(issueCall(e.allKey, body), "across")))
	r := second.send(t, withKey(issueCall(e.allKey, issueBody(map[string]any{"email": "other@example.com"})), "across"))
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("another body on the second server = %d, want 422", r.status)
	}
	if n := e.licenceCount(t, e.org.ID); n != 1 {
		t.Errorf("%d licences, want 1", n)
	}
}

// TestIdempotencyKeyRace: ten identical issues at once with one key make
// one licence; every answer is that licence's 201 or 409
// idempotency_key_in_use. On SQLite and PostgreSQL.
func TestIdempotencyKeyRace(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := licenceEnvOf(t, newTestEnvWith(t, envOptions{postgres: engine == "postgres"}))
			body := issueBody(nil)
			answers := e.concurrently(t, 10, func(int) call { return withKey(issueCall(e.allKey, body), "race") })
			var created [][]byte
			for _, r := range answers {
				switch {
				case r.status == http.StatusCreated:
					created = append(created, r.body)
				case r.status == http.StatusConflict && r.apiError(t).Code == licentia.CodeIdempotencyKeyInUse:
				default:
					t.Errorf("answer %d %s, want 201 or 409 idempotency_key_in_use", r.status, r.body)
				}
			}
			if len(created) == 0 {
				t.Fatal("no answer was 201")
			}
			for _, b := range created[1:] {
				if !bytes.Equal(b, created[0]) {
					t.Errorf("201 answers differ:\n%s\n%s", created[0], b)
				}
			}
			if n := e.licenceCount(t, e.org.ID); n != 1 {
				t.Errorf("%d licences, want 1", n)
			}
			if n := len(e.events(t, e.org.ID)); n != 1 {
				t.Errorf("%d events, want 1", n)
			}
		})
	}
}

// raw sends a request to a route the document does not have.
func (e *testEnv) raw(t *testing.T, method, path, key, idemKey, body string) *resp {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idemKey)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &resp{status: res.StatusCode, header: res.Header, body: b}
}

// TestIdempotencyKeyInUse: while the first request with a key runs, the
// same request answers 409 idempotency_key_in_use; once it has answered,
// it is replayed.
func TestIdempotencyKeyInUse(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	e := newTestEnvWith(t, envOptions{setup: func(s *httpapi.Server) {
		s.HandleForTest("POST /v1/admin/slow", licentia.ScopeLicencesWrite, func(w http.ResponseWriter, r *http.Request) error {
			close(started)
			<-release
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, "done\n")
			return nil
		})
	}})
	key := e.key(t, e.org.ID, licentia.ScopeLicencesWrite)
	done := make(chan *resp)
	go func() {
		req, _ := http.NewRequest("POST", e.srv.URL+"/v1/admin/slow", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "slow")
		res, err := e.srv.Client().Do(req)
		if err != nil {
			done <- nil
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- &resp{status: res.StatusCode, header: res.Header, body: b}
	}()
	<-started
	r := e.raw(t, "POST", "/v1/admin/slow", key, "slow", "{}")
	if r.status != http.StatusConflict || !bytes.Contains(r.body, []byte(`"idempotency_key_in_use"`)) {
		t.Errorf("while running = %d %s, want 409 idempotency_key_in_use", r.status, r.body)
	}
	close(release)
	first := <-done
	if first == nil || first.status != http.StatusAccepted {
		t.Fatalf("first = %v, want 202", first)
	}
	wantReplay(t, first, e.raw(t, "POST", "/v1/admin/slow", key, "slow", "{}"))
}

// TestIdempotencyKeyServerError: a 5xx answer is not stored; the key is
// released, and a retry runs the request again.
func TestIdempotencyKeyServerError(t *testing.T) {
	calls := 0
	e := newTestEnvWith(t, envOptions{setup: func(s *httpapi.Server) {
		s.HandleForTest("POST /v1/admin/flaky", licentia.ScopeLicencesWrite, func(w http.ResponseWriter, r *http.Request) error {
			calls++
			if calls == 1 {
				return errors.New("the first call fails")
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
	}})
	key := e.key(t, e.org.ID, licentia.ScopeLicencesWrite)
	if r := e.raw(t, "POST", "/v1/admin/flaky", key, "flaky", ""); r.status != http.StatusInternalServerError {
		t.Fatalf("first = %d, want 500", r.status)
	}
	if r := e.raw(t, "POST", "/v1/admin/flaky", key, "flaky", ""); r.status != http.StatusNoContent || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("retry = %d replayed %q, want a fresh 204", r.status, r.header.Get("Idempotent-Replayed"))
	}
	if r := e.raw(t, "POST", "/v1/admin/flaky", key, "flaky", ""); r.status != http.StatusNoContent || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("third = %d replayed %q, want the 204 replayed", r.status, r.header.Get("Idempotent-Replayed"))
	}
	if calls != 2 {
		t.Errorf("handler ran %d times, want 2", calls)
	}
}

// unanswered is a store whose process stops after a change commits and
// before its Idempotency-Key's answer is stored: every answer fails.
type unanswered struct{ store.Store }

func (s unanswered) InTx(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(unansweredTx{tx}) })
}

type unansweredTx struct{ store.Tx }

func (unansweredTx) AnswerIdempotencyKey(context.Context, string, string, string, store.IdempotentAnswer) (bool, error) {
	return false, errors.New("the process stopped")
}

// TestIdempotencyKeyCrash: the change commits with its key used, but the
// answer is never stored. A retry, on this server or another, answers 409
// idempotency_key_in_use and makes no second change, even once the claim's
// lease has passed.
func TestIdempotencyKeyCrash(t *testing.T) {
	e := newTestEnvWith(t, envOptions{wrapStore: func(s store.Store) store.Store { return unanswered{s} }})
	le := licenceEnvOf(t, e)
	body := issueBody(nil)
	if r := e.send(t, withKey(issueCall(le.allKey, body), "crash")); r.status != http.StatusCreated {
		t.Fatalf("first = %d %s, want 201", r.status, r.body)
	}
	healthy := newTestEnvWith(t, envOptions{shareStore: e})
	for _, env := range []*testEnv{e, healthy} {
		for _, after := range []time.Duration{0, time.Hour} {
			env.clock.Advance(after)
			r := env.send(t, withKey(issueCall(le.allKey, body), "crash"))
			if r.status != http.StatusConflict || r.apiError(t).Code != licentia.CodeIdempotencyKeyInUse {
				t.Errorf("retry = %d %s, want 409 idempotency_key_in_use", r.status, r.body)
			}
		}
	}
	if n := e.licenceCount(t, e.org.ID); n != 1 {
		t.Errorf("%d licences, want 1", n)
	}
}

// FuzzIdempotencyKeyHeader: any header value is either a key (1 to 255
// printable ASCII characters: the write runs or is replayed) or refused 400
// at header.Idempotency-Key; never anything else.
func FuzzIdempotencyKeyHeader(f *testing.F) {
	e := newTestEnvWith(f, envOptions{setup: func(s *httpapi.Server) {
		s.HandleForTest("POST /v1/admin/echo", licentia.ScopeLicencesWrite, func(w http.ResponseWriter, r *http.Request) error {
			w.WriteHeader(http.StatusCreated)
			return nil
		})
	}})
	for _, seed := range []string{"", "k", " ", "a\tb", "a\x00b", "clé", "\x7f", strings.Repeat("k", 255), strings.Repeat("k", 256),
		"order-1", "\xff\xfe"} {
		f.Add(seed)
	}
	var key string
	var once sync.Once
	f.Fuzz(func(t *testing.T, v string) {
		once.Do(func() { key = e.key(t, e.org.ID, licentia.ScopeLicencesWrite) })
		// A minute between requests keeps the admin rate limit away.
		e.clock.Advance(time.Minute)
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/v1/admin/echo", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header["Idempotency-Key"] = []string{v}
		rec := httptest.NewRecorder()
		e.api.ServeHTTP(rec, req)
		valid := len(v) >= 1 && len(v) <= 255
		for i := range len(v) {
			valid = valid && v[i] >= 0x20 && v[i] <= 0x7e
		}
		switch {
		case valid && rec.Code == http.StatusCreated:
		case !valid && rec.Code == http.StatusBadRequest && strings.Contains(rec.Body.String(), `"header.Idempotency-Key"`):
		default:
			t.Errorf("key %q = %d %s, want 201 when valid (%v), else 400 at header.Idempotency-Key", v, rec.Code, rec.Body, valid)
		}
	})
}
