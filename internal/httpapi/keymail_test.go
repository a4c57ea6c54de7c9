package httpapi_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
)

// onEngines runs fn with a licence env on SQLite and on PostgreSQL.
func onEngines(t *testing.T, fn func(t *testing.T, e *licenceEnv)) {
	for _, tt := range []struct {
		name     string
		postgres bool
	}{{"sqlite", false}, {"postgres", true}} {
		t.Run(tt.name, func(t *testing.T) { fn(t, licenceEnvOf(t, newTestEnvWith(t, envOptions{postgres: tt.postgres}))) })
	}
}

type mailView struct {
	Mail struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"mail"`
}

func sendKeyCall(key, id string, body any) call {
	return call{method: "POST", path: licencePath(id, "send-key"), key: key, body: body}
}

// courier sends the queued mails to the env's outbox, as serve's worker
// does, and returns how many it claimed.
func (e *licenceEnv) courier(t *testing.T) int {
	t.Helper()
	w := courier.New(courier.Options{Store: e.store, Clock: e.clock, Keys: e.keys, Sender: mail.NewOutbox(e.outbox, ""),
		PublicURL: testBaseURL, Logger: slog.New(slog.DiscardHandler)})
	n, err := w.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce() error = %v", err)
	}
	return n
}

// keyMailed counts a licence's licence.key_mailed audit entries and fails
// if any names its email.
func (e *licenceEnv) keyMailed(t *testing.T, id, email string) int {
	t.Helper()
	es, err := e.store.LicenceAudit(t.Context(), e.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range es {
		if a.Action != licentia.AuditLicenceKeyMailed {
			continue
		}
		n++
		if strings.Contains(string(a.Data), email) || !strings.Contains(string(a.Data), id) {
			t.Errorf("licence.key_mailed data = %s, want the licence and never the address", a.Data)
		}
	}
	return n
}

// TestSendKey: send-key answers 202 with the queued mail, for an empty
// body and for {}; the mail goes out with the key on a line of its own;
// the 6th in 24 hours answers 429 without any Retry-After header, and a
// day later the licence may be mailed again.
func TestSendKey(t *testing.T) {
	onEngines(t, func(t *testing.T, e *licenceEnv) {
		l := e.issue(t, e.allKey, issueBody(nil))
		for i, body := range []any{nil, map[string]any{}, "{}", nil, nil} {
			r := e.run(t, scenario{call: sendKeyCall(e.allKey, l.Licence.ID, body), wantStatus: http.StatusAccepted})
			got := decodeStrict[mailView](t, r.body)
			if got.Mail.Status != "queued" || got.Mail.ID == "" {
				t.Errorf("send-key #%d answer = %s, want a queued mail", i+1, r.body)
			}
		}
		r := e.run(t, scenario{call: sendKeyCall(e.allKey, l.Licence.ID, nil), wantStatus: http.StatusTooManyRequests,
			wantCode: licentia.CodeRateLimited})
		for name := range r.header {
			if strings.HasPrefix(strings.ToLower(name), "retry-after") {
				t.Errorf("the key-mail cap's 429 carries %s", name)
			}
		}
		if n := e.keyMailed(t, l.Licence.ID, "ada@example.com"); n != 5 {
			t.Errorf("licence.key_mailed entries = %d, want 5", n)
		}
		if n := e.courier(t); n != 5 {
			t.Fatalf("the worker claimed %d mails, want 5", n)
		}
		mails := mailtest.Outbox(t, e.outbox)
		if len(mails) != 5 {
			t.Fatalf("outbox holds %d mails, want 5", len(mails))
		}
		mails[0].CheckStandalone(t, l.LicenceKey)
		if to := mails[0].Header.Get("To"); !strings.Contains(to, "ada@example.com") {
			t.Errorf("To = %q, want the licence's email", to)
		}
		e.clock.Advance(24*time.Hour + time.Millisecond)
		e.run(t, scenario{call: sendKeyCall(e.allKey, l.Licence.ID, nil), wantStatus: http.StatusAccepted})
	})
}

// TestSendKeyRefusals: the route's refusals, in the order of checks: 400
// for a body that is not empty or {}, or a path id that is not a UUID;
// 404 for another organization's licence as for a missing one; 409
// licence_anonymised, and conflict for a revoked or expired licence, even
// past the cap; 401 and 403 as every route.
func TestSendKeyRefusals(t *testing.T) {
	onEngines(t, func(t *testing.T, e *licenceEnv) {
		l := e.issue(t, e.allKey, issueBody(nil))
		_, theirKey := e.otherOrg(t, "globex", "globex-app", "GLOBEX")
		theirs := e.issue(t, theirKey, map[string]any{"product_id": "globex-app", "email": "bob@example.com"})
		revoked := e.issue(t, e.allKey, issueBody(nil))
		e.change(t, revoked.Licence.ID, "revoke", "refund")
		expiring := e.issue(t, e.allKey, issueBody(map[string]any{"expires_at": at(time.Hour)}))
		gone := e.issue(t, e.allKey, issueBody(nil))
		for range 5 {
			e.run(t, scenario{call: sendKeyCall(e.allKey, gone.Licence.ID, nil), wantStatus: http.StatusAccepted})
		}
		e.run(t, scenario{call: call{method: "POST", path: licencePath(gone.Licence.ID, "anonymise"), key: e.allKey,
			body: map[string]any{"confirm": true}}, wantStatus: http.StatusOK})
		e.clock.Advance(2 * time.Hour)
		readOnly := e.key(t, e.org.ID, licentia.ScopeLicencesRead)
		missing := "00000000-0000-4000-8000-000000000001"

		for _, tt := range []scenario{
			{name: "unknown field", call: call{method: "POST", path: licencePath(l.Licence.ID, "send-key"), key: e.allKey,
				body: map[string]any{"to": "eve@example.com"}, invalid: true}, wantStatus: http.StatusBadRequest,
				wantCode: licentia.CodeValidationFailed, wantDetails: map[string]any{"issues": []any{
					map[string]any{"path": "/to", "message": "unknown field"}}}},
			{name: "not an object", call: call{method: "POST", path: licencePath(l.Licence.ID, "send-key"), key: e.allKey,
				body: "[]", invalid: true}, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
				wantDetails: map[string]any{"issues": []any{map[string]any{"path": "", "message": "the body must be a JSON object"}}}},
			{name: "path id", call: call{method: "POST", path: licencePath("nope", "send-key"), key: e.allKey, invalid: true},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: map[string]any{"issues": []any{
					map[string]any{"path": "path.id", "message": "must be a UUID"}}}},
			{name: "missing", call: sendKeyCall(e.allKey, missing, nil), wantStatus: http.StatusNotFound, wantCode: licentia.CodeLicenceNotFound},
			{name: "another organization's", call: sendKeyCall(e.allKey, theirs.Licence.ID, nil), wantStatus: http.StatusNotFound,
				wantCode: licentia.CodeLicenceNotFound},
			{name: "anonymised, past the cap", call: sendKeyCall(e.allKey, gone.Licence.ID, nil), wantStatus: http.StatusConflict,
				wantCode: licentia.CodeLicenceAnonymised},
			{name: "revoked", call: sendKeyCall(e.allKey, revoked.Licence.ID, nil), wantStatus: http.StatusConflict,
				wantCode: licentia.CodeConflict},
			{name: "expired", call: sendKeyCall(e.allKey, expiring.Licence.ID, nil), wantStatus: http.StatusConflict,
				wantCode: licentia.CodeConflict},
			{name: "no key", call: call{method: "POST", path: licencePath(l.Licence.ID, "send-key"), invalid: true},
				wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized},
			{name: "scope", call: sendKeyCall(readOnly, l.Licence.ID, nil), wantStatus: http.StatusForbidden,
				wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"licences:write"}}},
		} {
			t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
		}
		missingErr := e.send(t, sendKeyCall(e.allKey, missing, nil)).apiError(t)
		theirErr := e.send(t, sendKeyCall(e.allKey, theirs.Licence.ID, nil)).apiError(t)
		if missingErr.Message != theirErr.Message {
			t.Errorf("another organization's licence answers %q, a missing one %q", theirErr.Message, missingErr.Message)
		}
		if n := e.keyMailed(t, theirs.Licence.ID, "bob@example.com"); n != 0 {
			t.Errorf("another organization's licence has %d key mails", n)
		}
	})
}

// TestSendKeyIdempotent: a send-key repeated with its Idempotency-Key
// replays the first answer and queues one mail.
func TestSendKeyIdempotent(t *testing.T) {
	onEngines(t, func(t *testing.T, e *licenceEnv) {
		l := e.issue(t, e.allKey, issueBody(nil))
		c := sendKeyCall(e.allKey, l.Licence.ID, nil)
		c.headers = map[string]string{"Idempotency-Key": "resend-1"}
		first := e.run(t, scenario{call: c, wantStatus: http.StatusAccepted})
		again := e.run(t, scenario{call: c, wantStatus: http.StatusAccepted})
		if string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("repeated send-key = %s (replayed %q), want the first answer %s replayed", again.body,
				again.header.Get("Idempotent-Replayed"), first.body)
		}
		if n := e.keyMailed(t, l.Licence.ID, "ada@example.com"); n != 1 {
			t.Errorf("key mails = %d, want 1", n)
		}
	})
}

// TestIssueWithKeyMail: send_key_mail true queues the key mail with the
// licence, and it counts in the key-mail limit; false or absent mails
// nothing; an address mail cannot go to is refused at /email only when
// the key is to be mailed; a refused issue queues nothing.
func TestIssueWithKeyMail(t *testing.T) {
	onEngines(t, func(t *testing.T, e *licenceEnv) {
		mailed := e.issue(t, e.allKey, issueBody(map[string]any{"send_key_mail": true}))
		for range 4 {
			e.run(t, scenario{call: sendKeyCall(e.allKey, mailed.Licence.ID, nil), wantStatus: http.StatusAccepted})
		}
		e.run(t, scenario{call: sendKeyCall(e.allKey, mailed.Licence.ID, nil), wantStatus: http.StatusTooManyRequests,
			wantCode: licentia.CodeRateLimited})
		quiet := e.issue(t, e.allKey, issueBody(map[string]any{"send_key_mail": false}))
		plain := e.issue(t, e.allKey, issueBody(nil))
		odd := e.issue(t, e.allKey, issueBody(map[string]any{"email": "a..b@example.com"}))
		e.run(t, scenario{call: issueCall(e.allKey, issueBody(map[string]any{"email": "a..b@example.com", "send_key_mail": true})),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: map[string]any{"issues": []any{
				map[string]any{"path": "/email", "message": "must be an address mail can be sent to"}}}})
		e.run(t, scenario{call: issueCall(e.allKey, issueBody(map[string]any{"external_ref": "order-1"})), wantStatus: http.StatusCreated})
		e.run(t, scenario{call: issueCall(e.allKey, issueBody(map[string]any{"external_ref": "order-1", "send_key_mail": true})),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict, wantDetails: map[string]any{"licence_id": e.find(t, e.allKey, "external_ref=order-1&product_id=desk-app")[0].ID}})
		for _, l := range []issuedView{quiet, plain, odd} {
			if n := e.keyMailed(t, l.Licence.ID, l.Licence.Email); n != 0 {
				t.Errorf("licence issued without key mail has %d", n)
			}
		}
		if n := e.keyMailed(t, mailed.Licence.ID, "ada@example.com"); n != 5 {
			t.Errorf("key mails of the mailed licence = %d, want 5 (1 on issue, 4 sent)", n)
		}
		if n := e.courier(t); n != 5 {
			t.Errorf("the worker claimed %d mails, want the 5 queued", n)
		}
		first := mailtest.Outbox(t, e.outbox)[0]
		first.CheckStandalone(t, mailed.LicenceKey)
	})
}

// TestInvitationLinkWholeInOutbox: the invitation link stands whole on a
// line of its own in the raw .eml, never cut by a soft line break.
func TestInvitationLinkWholeInOutbox(t *testing.T) {
	e := newTestEnv(t)
	owner := e.assistantToken(t, e.org.ID, "owner@acme.example")
	e.run(t, scenario{call: invite(owner, "new@acme.example", licentia.RoleDeveloper), wantStatus: http.StatusCreated})
	token := e.invitationToken(t, "new@acme.example")
	raw := mailtest.Outbox(t, e.outbox)
	if len(raw) != 1 {
		t.Fatalf("outbox holds %d mails, want 1", len(raw))
	}
	raw[0].CheckStandalone(t, testBaseURL+"/console/join/"+token)
}
