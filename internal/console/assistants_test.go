package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestAssistantsPage: a member sees their own AI assistants' grants, and
// no one else's, and ends one: its tokens are refused at once, the end is
// audited with the member as actor, and another member's grant cannot be
// ended by naming it.
func TestAssistantsPage(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		support := e.as(t, licentia.RoleSupport)
		e.owner(t)
		tok, err := e.admin.NewAssistantToken(t.Context(), licentia.OperatorActor, e.org.ID, "support@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		ownerTok, err := e.admin.NewAssistantToken(t.Context(), licentia.OperatorActor, e.org.ID, "owner@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		m, err := e.store.MemberByEmail(t.Context(), e.org.ID, "support@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		desktop := &licentia.Grant{ID: licentia.NewID(), OrgID: e.org.ID, MemberID: m.ID, ClientID: "CLIENT1",
			ClientName: "Claude Desktop", CreatedAt: e.clock.Now()}
		if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateGrant(t.Context(), desktop) }); err != nil {
			t.Fatal(err)
		}
		gs, _ := e.store.Grants(t.Context(), e.org.ID, m.ID)
		owner, _ := e.store.MemberByEmail(t.Context(), e.org.ID, "owner@acme.example")
		ownerGrants, _ := e.store.Grants(t.Context(), e.org.ID, owner.ID)
		if len(gs) != 2 || len(ownerGrants) != 1 {
			t.Fatalf("grants: %+v and %+v, want two and one", gs, ownerGrants)
		}
		byToken := gs[0]
		if byToken.ID == desktop.ID {
			byToken = gs[1]
		}

		a := support.get(t, "/console/")
		if !strings.Contains(a.body, `href="/console/assistants"`) {
			t.Errorf("the layout does not link the AI assistants page")
		}
		a = support.get(t, "/console/assistants")
		wantStatus(t, "assistants page", a, http.StatusOK)
		for _, want := range []string{"Claude Desktop", "licentia assistant token", "/console/assistants/" + byToken.ID + "/revoke",
			"/console/assistants/" + desktop.ID + "/revoke"} {
			if !strings.Contains(a.body, want) {
				t.Errorf("the assistants page lacks %q:\n%s", want, a.body)
			}
		}
		if strings.Contains(a.body, ownerGrants[0].ID) {
			t.Errorf("the assistants page shows the owner's grant")
		}

		authn := auth.NewAuthenticator(e.store, e.clock)
		if _, err := authn.Authenticate(t.Context(), "Bearer "+tok.Token); err != nil {
			t.Fatalf("the token before its grant ends: %v", err)
		}
		wantSeeOther(t, "end access", support.post(t, "/console/assistants/"+byToken.ID+"/revoke", url.Values{}),
			"/console/assistants?done=grant-revoked")
		if _, err := authn.Authenticate(t.Context(), "Bearer "+tok.Token); licentia.ErrorCode(err) != licentia.CodeUnauthorized {
			t.Errorf("the token after its grant ended: %v, want unauthorized", err)
		}
		wantSeeOther(t, "end again", support.post(t, "/console/assistants/"+byToken.ID+"/revoke", url.Values{}),
			"/console/assistants?done=unchanged")
		a = support.get(t, "/console/assistants?done=grant-revoked")
		if !strings.Contains(a.body, "was ended") || strings.Contains(a.body, "licentia assistant token") || !strings.Contains(a.body, "Claude Desktop") {
			t.Errorf("the page after ending a grant:\n%s", a.body)
		}

		wantStatus(t, "end the owner's grant", support.post(t, "/console/assistants/"+ownerGrants[0].ID+"/revoke", url.Values{}), http.StatusNotFound)
		wantStatus(t, "end a malformed id", support.post(t, "/console/assistants/nope/revoke", url.Values{}), http.StatusNotFound)
		if _, err := authn.Authenticate(t.Context(), "Bearer "+ownerTok.Token); err != nil {
			t.Errorf("the owner's token after another member tried to end it: %v", err)
		}

		log, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		var ended []licentia.AuditEntry
		for _, en := range log {
			if en.Action == licentia.AuditGrantRevoked {
				ended = append(ended, en)
			}
		}
		if len(ended) != 1 || ended[0].Actor.Type != licentia.ActorMember || *ended[0].Actor.ID != m.ID ||
			!strings.Contains(string(ended[0].Data), `"client_name":"licentia assistant token"`) {
			t.Errorf("grant.revoked entries = %+v, want one by the member", ended)
		}
	})
}
