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

// newOAuthClient returns a registered client with two redirect URIs.
func newOAuthClient(created time.Time) *licentia.OAuthClient {
	return &licentia.OAuthClient{
		ID: rand.Text(), Name: "Claude Desktop", CreatedAt: created,
		RedirectURIs: []string{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/callback?x=1&y=2"},
	}
}

// newAuthorizationCode returns an unused code of g, given to client c,
// whose hash holds a zero byte.
func newAuthorizationCode(c *licentia.OAuthClient, g *licentia.Grant) *licentia.AuthorizationCode {
	hash := make([]byte, 32)
	rand.Read(hash)
	hash[0] = 0
	return &licentia.AuthorizationCode{
		CodeHash: hash, ClientID: c.ID, RedirectURI: c.RedirectURIs[1], CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		Resource: "https://licentia.example.org/mcp", OrgID: g.OrgID, MemberID: g.MemberID, GrantID: g.ID,
		ExpiresAt: g.CreatedAt.Add(10 * time.Minute), CreatedAt: g.CreatedAt, Grant: *g,
	}
}

// createCodeFixture stores a client, a grant of a member of a new
// organization to it, and codes of that grant made by mk.
func createCodeFixture(t *testing.T, s store.Store, mk ...func(*licentia.AuthorizationCode)) (*licentia.OAuthClient, *licentia.Grant, []*licentia.AuthorizationCode) {
	t.Helper()
	o := createOrganization(t, s, "acme")
	c := newOAuthClient(base)
	g := newGrant(o.ID, licentia.NewID(), base)
	g.ClientID, g.ClientName = c.ID, c.Name
	var codes []*licentia.AuthorizationCode
	for _, f := range mk {
		code := newAuthorizationCode(c, g)
		f(code)
		codes = append(codes, code)
	}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.CreateOAuthClient(t.Context(), c); err != nil {
			return err
		}
		if err := tx.CreateGrant(t.Context(), g); err != nil {
			return err
		}
		for _, code := range codes {
			if err := tx.CreateAuthorizationCode(t.Context(), code); err != nil {
				return err
			}
		}
		return nil
	})
	return c, g, codes
}

// testOAuthClients: a client reads back with its redirect URIs in order,
// in and out of transactions; an unknown id answers not_found; a taken id
// answers conflict and changes nothing.
func testOAuthClients(t *testing.T, s store.Store) {
	ctx := t.Context()
	c, one := newOAuthClient(base), newOAuthClient(base.Add(time.Second))
	one.Name, one.RedirectURIs = "", []string{"https://cursor.example/callback"}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.CreateOAuthClient(ctx, c); err != nil {
			return err
		}
		return tx.CreateOAuthClient(ctx, one)
	})
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, want := range []*licentia.OAuthClient{c, one} {
			got, err := r.OAuthClient(ctx, want.ID)
			if diff := cmp.Diff(want, got); diff != "" || err != nil {
				t.Errorf("OAuthClient(%q) mismatch (-want +got), error %v:\n%s", want.Name, err, diff)
			}
		}
		for name, id := range map[string]string{
			"unknown": rand.Text(), "empty": "", "zero byte": c.ID + "\x00", "invalid UTF-8": c.ID + "\xff", "lower case": strings.ToLower(c.ID),
		} {
			_, err := r.OAuthClient(ctx, id)
			wantCode(t, "OAuthClient("+name+")", err, licentia.CodeNotFound)
		}
	})
	err := s.InTx(ctx, func(tx store.Tx) error {
		again := newOAuthClient(base.Add(time.Hour))
		again.ID = c.ID
		return tx.CreateOAuthClient(ctx, again)
	})
	wantCode(t, "CreateOAuthClient(taken id)", err, licentia.CodeConflict)
	got, err := s.OAuthClient(ctx, c.ID)
	if diff := cmp.Diff(c, got); diff != "" || err != nil {
		t.Errorf("OAuthClient() after a refused write mismatch (-want +got), error %v:\n%s", err, diff)
	}
}

// testAuthorizationCodes: a code reads back by its hash with everything it
// is bound to and its grant, in and out of transactions, with the grant's
// end once it is revoked; an unknown hash answers not_found; a taken hash
// answers conflict.
func testAuthorizationCodes(t *testing.T, s store.Store) {
	ctx := t.Context()
	c, g, codes := createCodeFixture(t, s, func(*licentia.AuthorizationCode) {}, func(code *licentia.AuthorizationCode) {
		code.RedirectURI = "https://claude.ai/api/mcp/auth_callback"
		code.UsedAt = ptr(base.Add(time.Minute))
	})
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, want := range codes {
			got, err := r.AuthorizationCode(ctx, want.CodeHash)
			if diff := cmp.Diff(want, got); diff != "" || err != nil {
				t.Errorf("AuthorizationCode(%s) mismatch (-want +got), error %v:\n%s", want.RedirectURI, err, diff)
			}
		}
		unknown := make([]byte, 32)
		rand.Read(unknown)
		for name, hash := range map[string][]byte{"unknown": unknown, "empty": nil, "prefix": codes[0].CodeHash[:31]} {
			_, err := r.AuthorizationCode(ctx, hash)
			wantCode(t, "AuthorizationCode("+name+")", err, licentia.CodeNotFound)
		}
	})
	err := s.InTx(ctx, func(tx store.Tx) error {
		again := newAuthorizationCode(c, g)
		again.CodeHash = codes[0].CodeHash
		return tx.CreateAuthorizationCode(ctx, again)
	})
	wantCode(t, "CreateAuthorizationCode(taken hash)", err, licentia.CodeConflict)
	got, err := s.AuthorizationCode(ctx, codes[0].CodeHash)
	if diff := cmp.Diff(codes[0], got); diff != "" || err != nil {
		t.Errorf("AuthorizationCode() after a refused write mismatch (-want +got), error %v:\n%s", err, diff)
	}
	at := base.Add(time.Hour)
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.RevokeGrant(ctx, g.OrgID, g.MemberID, g.ID, at)
		return err
	})
	codes[0].Grant.RevokedAt = &at
	got, err = s.AuthorizationCode(ctx, codes[0].CodeHash)
	if diff := cmp.Diff(codes[0], got); diff != "" || err != nil {
		t.Errorf("AuthorizationCode() of a revoked grant mismatch (-want +got), error %v:\n%s", err, diff)
	}
}

// testUseAuthorizationCode: a code is used once; later uses, and uses of
// an unknown hash, change nothing; using one code leaves another unused.
func testUseAuthorizationCode(t *testing.T, s store.Store) {
	ctx := t.Context()
	same := func(*licentia.AuthorizationCode) {}
	_, _, codes := createCodeFixture(t, s, same, same)
	first, second := codes[0], codes[1]
	use := func(hash []byte, at time.Time) bool {
		var used bool
		inTx(t, s, func(tx store.Tx) error {
			var err error
			used, err = tx.UseAuthorizationCode(ctx, hash, at)
			return err
		})
		return used
	}
	at := base.Add(time.Minute)
	for i, want := range []bool{true, false} {
		if used := use(first.CodeHash, at.Add(time.Duration(i)*time.Second)); used != want {
			t.Errorf("UseAuthorizationCode() call %d changed = %v, want %v", i+1, used, want)
		}
	}
	if use([]byte("unknown"), at) {
		t.Errorf("UseAuthorizationCode(unknown) changed = true, want false")
	}
	first.UsedAt = &at
	for _, want := range []*licentia.AuthorizationCode{first, second} {
		got, err := s.AuthorizationCode(ctx, want.CodeHash)
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("AuthorizationCode() after use mismatch (-want +got), error %v:\n%s", err, diff)
		}
	}
}

// testUseAuthorizationCodeRace: of racers exchanging one code at once,
// exactly one is told it changed it.
func testUseAuthorizationCodeRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, _, codes := createCodeFixture(t, s, func(*licentia.AuthorizationCode) {})
	code := codes[0]
	winners := race(t, func() (used bool, err error) {
		err = s.InTx(ctx, func(tx store.Tx) error {
			if _, err := tx.AuthorizationCode(ctx, code.CodeHash); err != nil {
				return err
			}
			used, err = tx.UseAuthorizationCode(ctx, code.CodeHash, base.Add(time.Second))
			return err
		})
		return used, err
	})
	if winners != 1 {
		t.Errorf("UseAuthorizationCode() changed for %d racers, want 1", winners)
	}
	got, err := s.AuthorizationCode(ctx, code.CodeHash)
	if err != nil || got.UsedAt == nil {
		t.Errorf("AuthorizationCode() after race = %+v, %v, want used", got, err)
	}
}

// testDeleteExpiredAuthorizationCodes: codes that expired at or before now
// go, used or not, and are counted; live ones stay.
func testDeleteExpiredAuthorizationCodes(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := base.Add(time.Hour)
	expiring := func(at time.Time, used bool) func(*licentia.AuthorizationCode) {
		return func(c *licentia.AuthorizationCode) {
			c.ExpiresAt = at
			if used {
				c.UsedAt = ptr(base)
			}
		}
	}
	_, _, codes := createCodeFixture(t, s,
		expiring(now.Add(-time.Minute), false), expiring(now, true), expiring(now.Add(time.Millisecond), false),
		expiring(now.Add(time.Minute), true))
	for i, want := range []int64{2, 0} {
		var n int64
		inTx(t, s, func(tx store.Tx) error {
			var err error
			n, err = tx.DeleteExpiredAuthorizationCodes(ctx, now)
			return err
		})
		if n != want {
			t.Errorf("DeleteExpiredAuthorizationCodes() call %d = %d, want %d", i+1, n, want)
		}
	}
	for i, c := range codes {
		_, err := s.AuthorizationCode(ctx, c.CodeHash)
		switch {
		case i < 2:
			wantCode(t, "AuthorizationCode(expired)", err, licentia.CodeNotFound)
		case err != nil:
			t.Errorf("AuthorizationCode(live %d) error = %v", i, err)
		}
	}
}
