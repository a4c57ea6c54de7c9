package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	licmail "github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/store"
)

// teamMember puts a member with role on orgID's team and returns its id
// and an access token of an AI assistant acting as them.
func (e *testEnv) teamMember(t *testing.T, orgID, email string, role licentia.Role) (id, token string) {
	t.Helper()
	m := &licentia.Member{ID: licentia.NewID(), OrgID: orgID, Email: email, Role: role, CreatedAt: e.clock.Now()}
	if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateMember(t.Context(), m) }); err != nil {
		t.Fatalf("CreateMember(%s) error = %v", role, err)
	}
	return m.ID, e.assistantToken(t, orgID, email)
}

// assistantToken returns an access token acting as orgID's member email,
// as `licentia assistant token` makes one.
func (e *testEnv) assistantToken(t *testing.T, orgID, email string) string {
	t.Helper()
	at, err := e.admin.NewAssistantToken(t.Context(), licentia.OperatorActor, orgID, email)
	if err != nil {
		t.Fatalf("NewAssistantToken(%s) error = %v", email, err)
	}
	return at.Token
}

// ownerID is the id of the owner org create made.
func (e *testEnv) ownerID(t *testing.T, orgID string) string {
	t.Helper()
	ms, err := e.store.Members(t.Context(), orgID)
	if err != nil || len(ms) == 0 || ms[0].Role != licentia.RoleOwner {
		t.Fatalf("Members() = %v, %v; want the owner first", ms, err)
	}
	return ms[0].ID
}

var joinLink = regexp.MustCompile(`https://licentia\.example\.org/console/join/([0-9A-Za-z]{43})`)

// outboxMail is one mail of the outbox: its recipient, subject and text.
type outboxMail struct {
	to, subject, text string
}

// mails reads the outbox, oldest first.
func (e *testEnv) mails(t *testing.T) []outboxMail {
	t.Helper()
	entries, err := os.ReadDir(e.outbox)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []outboxMail
	for _, de := range entries {
		if !strings.HasSuffix(de.Name(), ".eml") {
			continue
		}
		f, err := os.Open(filepath.Join(e.outbox, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, readMail(t, f))
		f.Close()
	}
	return out
}

// readMail parses an RFC 5322 message with a text part, single or
// multipart, in quoted-printable or not.
func readMail(t *testing.T, r io.Reader) outboxMail {
	t.Helper()
	m, err := mail.ReadMessage(r)
	if err != nil {
		t.Fatalf("outbox mail: %v", err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	text := readPart(t, m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body)
	return outboxMail{to: m.Header.Get("To"), subject: subject, text: text}
}

func readPart(t *testing.T, contentType, encoding string, body io.Reader) string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				t.Fatalf("no text part: %v", err)
			}
			if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
				return readPart(t, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			}
		}
	}
	if strings.EqualFold(encoding, "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// invitationToken returns the link token of the last mail to email.
func (e *testEnv) invitationToken(t *testing.T, email string) string {
	t.Helper()
	ms := e.mails(t)
	for i := len(ms) - 1; i >= 0; i-- {
		if strings.Contains(ms[i].to, email) {
			m := joinLink.FindStringSubmatch(ms[i].text)
			if m == nil {
				t.Fatalf("mail to %s has no join link:\n%s", email, ms[i].text)
			}
			return m[1]
		}
	}
	t.Fatalf("no mail to %s in the outbox", email)
	return ""
}

func invite(token, email string, role licentia.Role) call {
	return call{method: "POST", path: "/v1/admin/invitations", key: token, body: map[string]any{"email": email, "role": role}}
}

func changeRole(token, id string, role licentia.Role) call {
	return call{method: "PUT", path: "/v1/admin/members/" + id + "/role", key: token, body: map[string]any{"role": role}}
}

func removeMember(token, id string) call {
	return call{method: "DELETE", path: "/v1/admin/members/" + id, key: token}
}

func revokeInvitation(token, id string) call {
	return call{method: "POST", path: "/v1/admin/invitations/" + id + "/revoke", key: token}
}

// TestTeamRoutesRefuseKeys: no key holds members:write, so even a key with
// every scope a key may hold gets 403 insufficient_scope on each
// team-changing route, and nothing changes.
func TestTeamRoutesRefuseKeys(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, keyScopes()...)
	owner := e.ownerID(t, e.org.ID)
	for _, c := range []call{
		invite(key, "new@acme.example", licentia.RoleViewer),
		revokeInvitation(key, licentia.NewID()),
		changeRole(key, owner, licentia.RoleAdmin),
		removeMember(key, owner),
	} {
		e.run(t, scenario{call: c, wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
			wantDetails: map[string]any{"missing": []any{"members:write"}}})
	}
	if ms := e.mails(t); len(ms) != 0 {
		t.Errorf("a key's refused invitation sent %d mails", len(ms))
	}
}

// TestTeamRoleRules runs every role rule of the team routes with an AI
// assistant acting as a member of each role.
func TestTeamRoleRules(t *testing.T) {
	e := newTestEnv(t)
	owner := e.ownerID(t, e.org.ID)
	ownerTok := e.assistantToken(t, e.org.ID, "owner@acme.example")
	ids, toks := map[licentia.Role]string{licentia.RoleOwner: owner}, map[licentia.Role]string{licentia.RoleOwner: ownerTok}
	for _, r := range []licentia.Role{licentia.RoleViewer, licentia.RoleSupport, licentia.RoleDeveloper, licentia.RoleAdmin} {
		ids[r], toks[r] = e.teamMember(t, e.org.ID, string(r)+"@acme.example", r)
	}
	admin2, _ := e.teamMember(t, e.org.ID, "admin2@acme.example", licentia.RoleAdmin)
	roleOf := func(r licentia.Role) map[string]any { return map[string]any{"role": string(r)} }

	// Without members:write, every team route answers insufficient_role
	// naming the caller's role, before the path or body is looked at.
	for _, r := range []licentia.Role{licentia.RoleViewer, licentia.RoleSupport, licentia.RoleDeveloper} {
		for _, c := range []call{
			invite(toks[r], "x@acme.example", licentia.RoleViewer),
			revokeInvitation(toks[r], licentia.NewID()),
			changeRole(toks[r], ids[licentia.RoleViewer], licentia.RoleViewer),
			removeMember(toks[r], ids[licentia.RoleViewer]),
			{method: "DELETE", path: "/v1/admin/members/not-a-uuid", key: toks[r], invalid: true},
			{method: "PUT", path: "/v1/admin/members/" + owner + "/role", key: toks[r], body: map[string]any{"role": 7}, invalid: true},
		} {
			t.Run(string(r)+" "+c.method+" "+c.path, func(t *testing.T) {
				e.run(t, scenario{call: c, wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientRole, wantDetails: roleOf(r)})
			})
		}
	}

	for _, tt := range []struct {
		name    string
		call    call
		status  int
		code    licentia.Code
		details map[string]any
	}{
		{"admin invites an owner", invite(toks[licentia.RoleAdmin], "o@acme.example", licentia.RoleOwner), 400, licentia.CodeValidationFailed,
			issuesAt("/role", "owner is never given: must be one of viewer, support, developer, admin")},
		{"owner invites an owner", invite(ownerTok, "o@acme.example", licentia.RoleOwner), 400, licentia.CodeValidationFailed,
			issuesAt("/role", "owner is never given: must be one of viewer, support, developer, admin")},
		{"admin gives owner", changeRole(toks[licentia.RoleAdmin], ids[licentia.RoleViewer], licentia.RoleOwner), 400, licentia.CodeValidationFailed,
			issuesAt("/role", "owner is never given: must be one of viewer, support, developer, admin")},
		{"an unknown role", changeRole(ownerTok, ids[licentia.RoleViewer], "boss"), 400, licentia.CodeValidationFailed,
			issuesAt("/role", "must be one of viewer, support, developer, admin")},
		{"admin changes their own role", changeRole(toks[licentia.RoleAdmin], ids[licentia.RoleAdmin], licentia.RoleViewer), 403, licentia.CodeForbidden, nil},
		{"admin removes themself", removeMember(toks[licentia.RoleAdmin], ids[licentia.RoleAdmin]), 403, licentia.CodeForbidden, nil},
		{"owner changes their own role", changeRole(ownerTok, owner, licentia.RoleAdmin), 403, licentia.CodeForbidden, nil},
		{"owner removes themself", removeMember(ownerTok, owner), 403, licentia.CodeForbidden, nil},
		{"admin changes the owner's role", changeRole(toks[licentia.RoleAdmin], owner, licentia.RoleAdmin), 403, licentia.CodeForbidden, nil},
		{"admin removes the owner", removeMember(toks[licentia.RoleAdmin], owner), 403, licentia.CodeForbidden, nil},
		{"admin changes an unknown member", changeRole(toks[licentia.RoleAdmin], licentia.NewID(), licentia.RoleViewer), 404, licentia.CodeMemberNotFound, nil},
		{"admin removes an unknown member", removeMember(toks[licentia.RoleAdmin], licentia.NewID()), 404, licentia.CodeMemberNotFound, nil},
		{"admin revokes an unknown invitation", revokeInvitation(toks[licentia.RoleAdmin], licentia.NewID()), 404, licentia.CodeInvitationNotFound, nil},
		{"admin invites a member's address", invite(toks[licentia.RoleAdmin], "SUPPORT@acme.example", licentia.RoleViewer), 409, licentia.CodeConflict, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{call: tt.call, wantStatus: tt.status, wantCode: tt.code, wantDetails: tt.details})
		})
	}

	// What an admin may do: give any role up to their own, to anyone but
	// an owner or themself, another admin included.
	want := fmt.Sprintf(`{"member":{"id":%q,"email":"admin2@acme.example","role":"developer","created_at":"2026-03-02T09:00:00.000Z"}}`, admin2)
	e.run(t, scenario{call: changeRole(toks[licentia.RoleAdmin], admin2, licentia.RoleDeveloper), wantStatus: http.StatusOK, wantBody: want})
	e.run(t, scenario{call: changeRole(toks[licentia.RoleAdmin], admin2, licentia.RoleAdmin), wantStatus: http.StatusOK})
	e.run(t, scenario{call: invite(toks[licentia.RoleAdmin], "new-admin@acme.example", licentia.RoleAdmin), wantStatus: http.StatusCreated})
	e.run(t, scenario{call: removeMember(toks[licentia.RoleAdmin], admin2), wantStatus: http.StatusNoContent})
	e.run(t, scenario{call: removeMember(toks[licentia.RoleAdmin], admin2), wantStatus: http.StatusNotFound, wantCode: licentia.CodeMemberNotFound})

	// Another organization's member and invitation are not found.
	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	otherOwner := e.ownerID(t, other.ID)
	otherTok := e.assistantToken(t, other.ID, "owner@globex.example")
	inv := e.run(t, scenario{call: invite(otherTok, "guest@globex.example", licentia.RoleViewer), wantStatus: http.StatusCreated})
	otherInv := decodeStrict[struct{ Invitation invitationView }](t, inv.body).Invitation
	e.run(t, scenario{call: removeMember(ownerTok, otherOwner), wantStatus: http.StatusNotFound, wantCode: licentia.CodeMemberNotFound})
	e.run(t, scenario{call: changeRole(ownerTok, otherOwner, licentia.RoleViewer), wantStatus: http.StatusNotFound, wantCode: licentia.CodeMemberNotFound})
	e.run(t, scenario{call: revokeInvitation(ownerTok, otherInv.ID), wantStatus: http.StatusNotFound, wantCode: licentia.CodeInvitationNotFound})
}

func issuesAt(path, message string) map[string]any {
	return map[string]any{"issues": []any{map[string]any{"path": path, "message": message}}}
}

// invitationView is an invitation in an answer.
type invitationView struct {
	ID         string  `json:"id"`
	Email      string  `json:"email"`
	Role       string  `json:"role"`
	ExpiresAt  string  `json:"expires_at"`
	CreatedAt  string  `json:"created_at"`
	AcceptedAt *string `json:"accepted_at"`
	RevokedAt  *string `json:"revoked_at"`
}

// TestInviteAndJoin: an invitation mails a link valid 7 days; the link
// makes the invitee a member once; a second invitation to the address
// replaces the first, whose link stops working; revoking stops the link.
func TestInviteAndJoin(t *testing.T) {
	e := newTestEnv(t)
	ownerTok := e.assistantToken(t, e.org.ID, "owner@acme.example")

	r := e.run(t, scenario{call: invite(ownerTok, "Ada@Example.com", licentia.RoleSupport), wantStatus: http.StatusCreated})
	first := decodeStrict[struct{ Invitation invitationView }](t, r.body).Invitation
	if first.Email != "Ada@Example.com" || first.Role != "support" || first.ExpiresAt != "2026-03-09T09:00:00.000Z" ||
		first.CreatedAt != "2026-03-02T09:00:00.000Z" || first.AcceptedAt != nil || first.RevokedAt != nil {
		t.Errorf("invitation = %+v", first)
	}
	firstToken := e.invitationToken(t, "Ada@Example.com")
	ms := e.mails(t)
	if len(ms) != 1 || !strings.Contains(ms[0].subject, "Org acme") || !strings.Contains(ms[0].text, "as support") {
		t.Fatalf("mails = %+v", ms)
	}

	// The same address again (another case): the first is replaced.
	e.clock.Advance(time.Minute)
	r = e.run(t, scenario{call: invite(ownerTok, "ada@example.com", licentia.RoleDeveloper), wantStatus: http.StatusCreated})
	second := decodeStrict[struct{ Invitation invitationView }](t, r.body).Invitation
	secondToken := e.invitationToken(t, "ada@example.com")
	if secondToken == firstToken {
		t.Fatal("the second invitation mailed the first's link")
	}
	if _, err := e.admin.OpenLink(t.Context(), admin.LinkInvitation, firstToken); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("OpenLink(replaced) error = %v, want not_found", err)
	}
	list := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/invitations", key: ownerTok}, wantStatus: http.StatusOK})
	if got := decodeStrict[struct{ Invitations []invitationView }](t, list.body).Invitations; len(got) != 1 || got[0].ID != second.ID {
		t.Errorf("pending invitations = %+v, want only the second", got)
	}
	e.run(t, scenario{call: revokeInvitation(ownerTok, first.ID), wantStatus: http.StatusConflict, wantCode: licentia.CodeInvitationNotPending})

	// The link joins once, with the invitation's role.
	v, err := e.admin.OpenLink(t.Context(), admin.LinkInvitation, secondToken)
	if err != nil || v.Email != "ada@example.com" || v.Role != licentia.RoleDeveloper || v.OrgName != "Org acme" || v.HasPassword {
		t.Fatalf("OpenLink() = %+v, %v", v, err)
	}
	if _, _, err := e.admin.UseLink(t.Context(), admin.LinkInvitation, secondToken, "short"); licentia.ErrorCode(err) != licentia.CodeValidationFailed {
		t.Fatalf("UseLink(short password) error = %v, want validation_failed", err)
	}
	acct, m, err := e.admin.UseLink(t.Context(), admin.LinkInvitation, secondToken, "a long enough password")
	if err != nil || m.Role != licentia.RoleDeveloper || m.OrgID != e.org.ID || acct.Email != "ada@example.com" {
		t.Fatalf("UseLink() = %+v, %+v, %v", acct, m, err)
	}
	if _, _, err := e.admin.UseLink(t.Context(), admin.LinkInvitation, secondToken, "a long enough password"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Fatalf("UseLink(used) error = %v, want not_found", err)
	}
	e.run(t, scenario{call: revokeInvitation(ownerTok, second.ID), wantStatus: http.StatusConflict, wantCode: licentia.CodeInvitationNotPending})
	e.run(t, scenario{call: invite(ownerTok, "ADA@example.com", licentia.RoleViewer), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})

	// Revoking a pending invitation stops its link.
	r = e.run(t, scenario{call: invite(ownerTok, "bob@example.com", licentia.RoleViewer), wantStatus: http.StatusCreated})
	bob := decodeStrict[struct{ Invitation invitationView }](t, r.body).Invitation
	bobToken := e.invitationToken(t, "bob@example.com")
	r = e.run(t, scenario{call: revokeInvitation(ownerTok, bob.ID), wantStatus: http.StatusOK})
	if got := decodeStrict[struct{ Invitation invitationView }](t, r.body).Invitation; got.RevokedAt == nil || *got.RevokedAt != "2026-03-02T09:01:00.000Z" {
		t.Errorf("revoked invitation = %+v", got)
	}
	if _, _, err := e.admin.UseLink(t.Context(), admin.LinkInvitation, bobToken, "a long enough password"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Fatalf("UseLink(revoked) error = %v, want not_found", err)
	}
	e.run(t, scenario{call: revokeInvitation(ownerTok, bob.ID), wantStatus: http.StatusConflict, wantCode: licentia.CodeInvitationNotPending})

	// A link expires after 7 days.
	e.run(t, scenario{call: invite(ownerTok, "cy@example.com", licentia.RoleViewer), wantStatus: http.StatusCreated})
	cyToken := e.invitationToken(t, "cy@example.com")
	e.clock.Advance(admin.InvitationLifetime)
	if _, err := e.admin.OpenLink(t.Context(), admin.LinkInvitation, cyToken); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("OpenLink(expired) error = %v, want not_found", err)
	}

	// The organization's audit log has every team change, by the member,
	// with no address in it.
	entries, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range entries {
		actions = append(actions, a.Action)
		if strings.Contains(string(a.Data), "@") {
			t.Errorf("audit %s data %s holds an address", a.Action, a.Data)
		}
	}
	for _, want := range []string{"invitation.created", "invitation.revoked", "member.added"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit actions %v lack %s", actions, want)
		}
	}
	e.noSecretsLogged(t, firstToken, secondToken, "ada@example.com", "Ada@Example.com", "bob@example.com", "a long enough password")
}

// noSecretsLogged fails when any of secrets appears in the env's logs.
func (e *testEnv) noSecretsLogged(t *testing.T, secrets ...string) {
	t.Helper()
	logs := e.logs.String()
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the logs hold %q", s)
		}
	}
}

// TestInvitationLimits: members plus pending invitations fill the team
// places (402); past 3 invitations to one address or 20 per organization in
// 24 hours, 429 without Retry-After; nothing is written or mailed.
func TestInvitationLimits(t *testing.T) {
	e := newTestEnv(t)
	indie := e.createOrg(t, "indie", licentia.PlanIndie) // 3 team places
	tok := e.assistantToken(t, indie.ID, "owner@indie.example")
	e.run(t, scenario{call: invite(tok, "a@indie.example", licentia.RoleViewer), wantStatus: http.StatusCreated})
	e.run(t, scenario{call: invite(tok, "b@indie.example", licentia.RoleViewer), wantStatus: http.StatusCreated})
	e.run(t, scenario{call: invite(tok, "c@indie.example", licentia.RoleViewer), wantStatus: http.StatusPaymentRequired,
		wantCode: licentia.CodePlanLimitReached, wantDetails: map[string]any{"plan": "indie", "limit": float64(3), "resource": "team_places", "count": float64(3)}})
	// Replacing a pending invitation takes no new place.
	e.run(t, scenario{call: invite(tok, "a@indie.example", licentia.RoleSupport), wantStatus: http.StatusCreated})
	// A third to one address in 24 hours is the last.
	e.run(t, scenario{call: invite(tok, "a@indie.example", licentia.RoleViewer), wantStatus: http.StatusCreated})
	r := e.run(t, scenario{call: invite(tok, "A@indie.example", licentia.RoleViewer), wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
	for name := range r.header {
		if strings.HasPrefix(name, "Retry-After") {
			t.Errorf("the invitation limit's 429 carries %s", name)
		}
	}
	mailed := len(e.mails(t))
	e.clock.Advance(24*time.Hour + time.Millisecond)
	tok = e.assistantToken(t, indie.ID, "owner@indie.example") // the first lasted an hour
	e.run(t, scenario{call: invite(tok, "a@indie.example", licentia.RoleViewer), wantStatus: http.StatusCreated})

	// 20 per organization in 24 hours.
	tok = e.assistantToken(t, e.org.ID, "owner@acme.example")
	for i := range 20 {
		e.run(t, scenario{call: invite(tok, fmt.Sprintf("p%d@acme.example", i), licentia.RoleViewer), wantStatus: http.StatusCreated})
	}
	before := len(e.mails(t))
	e.run(t, scenario{call: invite(tok, "p20@acme.example", licentia.RoleViewer), wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
	if got := len(e.mails(t)); got != before || before != mailed+21 {
		t.Errorf("mails = %d after the refusal, %d before; want no mail for a refusal", got, before)
	}
}

// failingSender hands nothing over.
type failingSender struct{}

func (failingSender) Send(context.Context, licmail.Message) error {
	return fmt.Errorf("%w: connection refused", licmail.ErrNotSent)
}

// TestInvitationMailFails: 503 service_unavailable, nothing written.
func TestInvitationMailFails(t *testing.T) {
	e := newTestEnvWith(t, envOptions{mail: failingSender{}})
	tok := e.assistantToken(t, e.org.ID, "owner@acme.example")
	before, _ := e.store.OrganizationAudit(t.Context(), e.org.ID)
	e.run(t, scenario{call: invite(tok, "ada@example.com", licentia.RoleViewer), wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeServiceUnavailable})
	invs, _ := e.store.PendingInvitations(t.Context(), e.org.ID, e.clock.Now())
	after, _ := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if len(invs) != 0 || len(after) != len(before) {
		t.Errorf("after a failed mail: %d invitations, audit %d entries (was %d)", len(invs), len(after), len(before))
	}
	e.noSecretsLogged(t, "ada@example.com")
}

// TestMemberRoleAtEachRequest: a demotion holds from the assistant's next
// request, and a removal refuses it (401), on another process too.
func TestMemberRoleAtEachRequest(t *testing.T) {
	e := newTestEnv(t)
	other := newTestEnvWith(t, envOptions{shareStore: e})
	ownerTok := e.assistantToken(t, e.org.ID, "owner@acme.example")
	id, tok := e.teamMember(t, e.org.ID, "ann@acme.example", licentia.RoleAdmin)
	other.run(t, scenario{call: invite(tok, "x@acme.example", licentia.RoleViewer), wantStatus: http.StatusCreated})

	e.run(t, scenario{call: changeRole(ownerTok, id, licentia.RoleSupport), wantStatus: http.StatusOK})
	other.run(t, scenario{call: invite(tok, "y@acme.example", licentia.RoleViewer), wantStatus: http.StatusForbidden,
		wantCode: licentia.CodeInsufficientRole, wantDetails: map[string]any{"role": "support"}})
	// Support still reads and writes licences; not products (and an
	// assistant never writes products or anonymises).
	other.run(t, scenario{call: call{method: "GET", path: "/v1/admin/members", key: tok}, wantStatus: http.StatusOK})
	other.run(t, scenario{call: call{method: "POST", path: "/v1/admin/products", key: ownerTok, body: map[string]any{"id": "app", "name": "App", "key_prefix": "APP", "current_major": 1}},
		wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"products:write"}}})

	e.run(t, scenario{call: removeMember(ownerTok, id), wantStatus: http.StatusNoContent})
	other.run(t, scenario{call: call{method: "GET", path: "/v1/admin/members", key: tok, invalid: true}, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})

	entries, _ := e.store.OrganizationAudit(t.Context(), e.org.ID)
	var changed, removed bool
	for _, a := range entries {
		changed = changed || a.Action == "member.role_changed" && a.Actor.Type == licentia.ActorMember
		removed = removed || a.Action == "member.removed" && a.Actor.Type == licentia.ActorMember
	}
	if !changed || !removed {
		t.Errorf("audit lacks member.role_changed or member.removed by a member: %+v", entries)
	}
}
