package storetest

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newGrant returns a live grant of a member of orgID to a registered
// client.
func newGrant(orgID, memberID string, created time.Time) *licentia.Grant {
	return &licentia.Grant{
		ID: licentia.NewID(), OrgID: orgID, MemberID: memberID, ClientID: "client_" + rand.Text()[:8],
		ClientName: "Claude Desktop", CreatedAt: created,
	}
}

// newAssistantToken returns an unused token of g whose hash holds a zero
// byte.
func newAssistantToken(g *licentia.Grant, kind licentia.TokenKind) *licentia.AssistantToken {
	hash := make([]byte, 32)
	rand.Read(hash)
	hash[0] = 0
	return &licentia.AssistantToken{
		TokenHash: hash, GrantID: g.ID, Kind: kind, ExpiresAt: g.CreatedAt.Add(time.Hour), CreatedAt: g.CreatedAt, Grant: *g,
	}
}

// createGrants stores grants and tokens in one transaction.
func createGrants(t *testing.T, s store.Store, gs []*licentia.Grant, ts ...*licentia.AssistantToken) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, g := range gs {
			if err := tx.CreateGrant(t.Context(), g); err != nil {
				return err
			}
		}
		for _, at := range ts {
			if err := tx.CreateAssistantToken(t.Context(), at); err != nil {
				return err
			}
		}
		return nil
	})
}

// testAssistantTokens: a token reads back by its hash with its grant, in
// and out of transactions; a grant made by the operator's command (no
// client) reads back with ClientID ""; an unknown hash answers not_found;
// a taken grant id or token hash answers conflict.
func testAssistantTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	g := newGrant(o.ID, licentia.NewID(), base)
	operator := newGrant(o.ID, g.MemberID, base.Add(time.Second))
	operator.ClientID, operator.ClientName = "", "licentia assistant token"
	access, refresh := newAssistantToken(g, licentia.TokenAccess), newAssistantToken(g, licentia.TokenRefresh)
	refresh.ExpiresAt = base.Add(30 * 24 * time.Hour)
	opAccess := newAssistantToken(operator, licentia.TokenAccess)
	createGrants(t, s, []*licentia.Grant{g, operator}, access, refresh, opAccess)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, want := range []*licentia.AssistantToken{access, refresh, opAccess} {
			got, err := r.AssistantToken(ctx, want.TokenHash)
			if diff := cmp.Diff(want, got); diff != "" || err != nil {
				t.Errorf("AssistantToken(%s of %q) mismatch (-want +got), error %v:\n%s", want.Kind, want.Grant.ClientID, err, diff)
			}
		}
		list, err := r.Grants(ctx, o.ID, g.MemberID)
		if diff := cmp.Diff([]licentia.Grant{*g, *operator}, list); diff != "" || err != nil {
			t.Errorf("Grants() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		unknown := make([]byte, 32)
		rand.Read(unknown)
		for name, hash := range map[string][]byte{"unknown": unknown, "empty": nil, "prefix": access.TokenHash[:31]} {
			_, err := r.AssistantToken(ctx, hash)
			wantCode(t, "AssistantToken("+name+")", err, licentia.CodeNotFound)
		}
	})

	err := s.InTx(ctx, func(tx store.Tx) error {
		again := newGrant(o.ID, g.MemberID, base)
		again.ID = g.ID
		return tx.CreateGrant(ctx, again)
	})
	wantCode(t, "CreateGrant(taken id)", err, licentia.CodeConflict)
	err = s.InTx(ctx, func(tx store.Tx) error {
		again := newAssistantToken(operator, licentia.TokenRefresh)
		again.TokenHash = access.TokenHash
		return tx.CreateAssistantToken(ctx, again)
	})
	wantCode(t, "CreateAssistantToken(taken hash)", err, licentia.CodeConflict)
	got, err := s.AssistantToken(ctx, access.TokenHash)
	if diff := cmp.Diff(access, got); diff != "" || err != nil {
		t.Errorf("AssistantToken() after refused writes mismatch (-want +got), error %v:\n%s", err, diff)
	}
}

// testUseAssistantToken: a token is used once; later uses, and uses of an
// unknown hash, change nothing; using one token leaves the others of its
// grant unused.
func testUseAssistantToken(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	g := newGrant(o.ID, licentia.NewID(), base)
	first, second := newAssistantToken(g, licentia.TokenRefresh), newAssistantToken(g, licentia.TokenRefresh)
	createGrants(t, s, []*licentia.Grant{g}, first, second)

	at := base.Add(time.Minute)
	for i, want := range []bool{true, false} {
		var used bool
		inTx(t, s, func(tx store.Tx) error {
			var err error
			used, err = tx.UseAssistantToken(ctx, first.TokenHash, at.Add(time.Duration(i)*time.Second))
			return err
		})
		if used != want {
			t.Errorf("UseAssistantToken() call %d changed = %v, want %v", i+1, used, want)
		}
	}
	first.UsedAt = &at
	var used bool
	inTx(t, s, func(tx store.Tx) error {
		var err error
		used, err = tx.UseAssistantToken(ctx, []byte("unknown"), at)
		return err
	})
	if used {
		t.Errorf("UseAssistantToken(unknown) changed = true, want false")
	}
	for _, want := range []*licentia.AssistantToken{first, second} {
		got, err := s.AssistantToken(ctx, want.TokenHash)
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("AssistantToken() after use mismatch (-want +got), error %v:\n%s", err, diff)
		}
	}
}

// testUseAssistantTokenRace: of racers exchanging one refresh token at
// once, exactly one is told it changed it.
func testUseAssistantTokenRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	g := newGrant(o.ID, licentia.NewID(), base)
	tok := newAssistantToken(g, licentia.TokenRefresh)
	createGrants(t, s, []*licentia.Grant{g}, tok)
	winners := race(t, func() (used bool, err error) {
		err = s.InTx(ctx, func(tx store.Tx) error {
			used, err = tx.UseAssistantToken(ctx, tok.TokenHash, base.Add(time.Second))
			return err
		})
		return used, err
	})
	if winners != 1 {
		t.Errorf("UseAssistantToken() changed for %d racers, want 1", winners)
	}
	got, err := s.AssistantToken(ctx, tok.TokenHash)
	if err != nil || got.UsedAt == nil {
		t.Errorf("AssistantToken() after race = %+v, %v, want used", got, err)
	}
}

// testRevokeGrant: a member revokes their own grant once; again changes
// nothing; another member's grant, another organization's, a missing one
// and a malformed id all answer not_found alike, and leave the grant live.
// A revoked grant's tokens read back with the grant's end.
func testRevokeGrant(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, other := createOrganization(t, s, "acme"), createOrganization(t, s, "other")
	member, colleague := licentia.NewID(), licentia.NewID()
	g, kept := newGrant(o.ID, member, base), newGrant(o.ID, member, base.Add(time.Second))
	tok := newAssistantToken(g, licentia.TokenAccess)
	createGrants(t, s, []*licentia.Grant{g, kept}, tok)

	revoke := func(orgID, memberID, id string, at time.Time) (bool, error) {
		var changed bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			changed, err = tx.RevokeGrant(ctx, orgID, memberID, id, at)
			return err
		})
		return changed, err
	}
	_, missing := revoke(o.ID, member, licentia.NewID(), base)
	wantCode(t, "RevokeGrant(missing)", missing, licentia.CodeNotFound)
	for name, c := range map[string]struct{ org, member, id string }{
		"another member's":       {o.ID, colleague, kept.ID},
		"another organization's": {other.ID, member, kept.ID},
		"malformed id":           {o.ID, member, "nope"},
		"malformed member":       {o.ID, "nope", kept.ID},
		"upper case":             {o.ID, member, strings.ToUpper(kept.ID)},
		"zero byte":              {o.ID, member, kept.ID + "\x00"},
	} {
		changed, err := revoke(c.org, c.member, c.id, base)
		wantSame(t, "RevokeGrant("+name+")", err, missing)
		if changed {
			t.Errorf("RevokeGrant(%s) changed = true, want false", name)
		}
	}

	at := base.Add(time.Hour)
	for i, want := range []bool{true, false} {
		changed, err := revoke(o.ID, member, g.ID, at.Add(time.Duration(i)*time.Minute))
		if changed != want || err != nil {
			t.Errorf("RevokeGrant() call %d = %v, %v, want %v, nil", i+1, changed, err, want)
		}
	}
	g.RevokedAt, tok.Grant.RevokedAt = &at, &at
	list, err := s.Grants(ctx, o.ID, member)
	if diff := cmp.Diff([]licentia.Grant{*kept}, list); diff != "" || err != nil {
		t.Errorf("Grants() after RevokeGrant() mismatch (-want +got), error %v:\n%s", err, diff)
	}
	got, err := s.AssistantToken(ctx, tok.TokenHash)
	if diff := cmp.Diff(tok, got); diff != "" || err != nil {
		t.Errorf("AssistantToken() of a revoked grant mismatch (-want +got), error %v:\n%s", err, diff)
	}
}

// testRevokeMemberGrants: every live grant of the member ends and is
// counted; one already ended keeps its end; other members' grants, and
// grants in another organization, stay live.
func testRevokeMemberGrants(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, other := createOrganization(t, s, "acme"), createOrganization(t, s, "other")
	member, colleague := licentia.NewID(), licentia.NewID()
	ended := base.Add(time.Minute)
	a, b, c := newGrant(o.ID, member, base), newGrant(o.ID, member, base.Add(time.Second)), newGrant(o.ID, member, base.Add(2*time.Second))
	c.RevokedAt = &ended
	theirs, elsewhere := newGrant(o.ID, colleague, base), newGrant(other.ID, member, base)
	tok := newAssistantToken(c, licentia.TokenAccess)
	createGrants(t, s, []*licentia.Grant{a, b, c, theirs, elsewhere}, tok)

	at := base.Add(time.Hour)
	for i, want := range []int64{2, 0} {
		var n int64
		inTx(t, s, func(tx store.Tx) error {
			var err error
			n, err = tx.RevokeMemberGrants(ctx, o.ID, member, at)
			return err
		})
		if n != want {
			t.Errorf("RevokeMemberGrants() call %d = %d, want %d", i+1, n, want)
		}
	}
	var n int64
	inTx(t, s, func(tx store.Tx) error {
		var err error
		n, err = tx.RevokeMemberGrants(ctx, o.ID, "nope", at)
		return err
	})
	if n != 0 {
		t.Errorf("RevokeMemberGrants(malformed member) = %d, want 0", n)
	}

	for _, c := range []struct {
		org, member string
		want        []licentia.Grant
	}{
		{o.ID, member, nil},
		{o.ID, colleague, []licentia.Grant{*theirs}},
		{other.ID, member, []licentia.Grant{*elsewhere}},
	} {
		list, err := s.Grants(ctx, c.org, c.member)
		if diff := cmp.Diff(c.want, list); diff != "" || err != nil {
			t.Errorf("Grants() after RevokeMemberGrants() mismatch (-want +got), error %v:\n%s", err, diff)
		}
	}
	got, err := s.AssistantToken(ctx, tok.TokenHash)
	if err != nil || got.Grant.RevokedAt == nil || !got.Grant.RevokedAt.Equal(ended) {
		t.Errorf("grant ended before RevokeMemberGrants() reads %+v, %v, want ended at %v", got, err, ended)
	}
}

// testGrants: a member's live grants, oldest first with ties by id,
// revoked ones left out; a member without grants, or a malformed id, has
// none.
func testGrants(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	member := licentia.NewID()
	later, tieLow, tieHigh := newGrant(o.ID, member, base.Add(time.Minute)), newGrant(o.ID, member, base), newGrant(o.ID, member, base)
	tieLow.ID, tieHigh.ID = seqID(1), seqID(2)
	revoked := newGrant(o.ID, member, base.Add(-time.Minute))
	revoked.RevokedAt = ptr(base)
	noClient := newGrant(o.ID, member, base.Add(2*time.Minute))
	noClient.ClientID = ""
	createGrants(t, s, []*licentia.Grant{later, tieHigh, revoked, noClient, tieLow})

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		list, err := r.Grants(ctx, o.ID, member)
		if diff := cmp.Diff([]licentia.Grant{*tieLow, *tieHigh, *later, *noClient}, list); diff != "" || err != nil {
			t.Errorf("Grants() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		for name, id := range map[string]string{"without grants": licentia.NewID(), "malformed": "nope"} {
			list, err := r.Grants(ctx, o.ID, id)
			if len(list) != 0 || err != nil {
				t.Errorf("Grants(%s) = %v, %v, want none", name, list, err)
			}
		}
	})
}
