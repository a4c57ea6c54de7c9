package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func newAccount(email string) *licentia.Account {
	return &licentia.Account{ID: licentia.NewID(), Email: email, CreatedAt: base, UpdatedAt: base}
}

func createAccounts(t *testing.T, s store.Store, as ...*licentia.Account) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, a := range as {
			if err := tx.CreateAccount(t.Context(), a); err != nil {
				return err
			}
		}
		return nil
	})
}

// newLoginLink returns an unused link of m, valid for a day from created.
func newLoginLink(m *licentia.Member, created time.Time) *licentia.LoginLink {
	return &licentia.LoginLink{ID: licentia.NewID(), OrgID: m.OrgID, MemberID: m.ID, TokenHash: newTokenHash(),
		ExpiresAt: created.Add(24 * time.Hour), CreatedAt: created}
}

// newSession returns a session signed in at created, ending seven days
// later.
func newSession(accountID, orgID string, created time.Time) *licentia.Session {
	return &licentia.Session{ID: licentia.NewID(), TokenHash: newTokenHash(), AccountID: accountID, OrgID: orgID,
		CreatedAt: created, LastSeenAt: created, ExpiresAt: created.Add(7 * 24 * time.Hour)}
}

func createSessions(t *testing.T, s store.Store, ss ...*licentia.Session) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, sess := range ss {
			if err := tx.CreateSession(t.Context(), sess); err != nil {
				return err
			}
		}
		return nil
	})
}

// testAccounts reads accounts by id and by address, ASCII letters folded;
// one address, whatever the case of its ASCII letters, has one account.
func testAccounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	ada := newAccount("Ada@Example.com")
	jose := newAccount("josé@example.com")
	// Not jose's address: É is not é.
	joseUpper := newAccount("JOSÉ@example.com")
	withPassword := newAccount("bob@example.com")
	withPassword.PasswordHash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"
	createAccounts(t, s, ada, jose, joseUpper, withPassword)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, a := range []*licentia.Account{ada, jose, joseUpper, withPassword} {
			got, err := r.Account(ctx, a.ID)
			if diff := cmp.Diff(a, got); diff != "" || err != nil {
				t.Errorf("Account(%s) error = %v, mismatch (-want +got):\n%s", a.Email, err, diff)
			}
		}
		_, err := r.Account(ctx, licentia.NewID())
		wantCode(t, "Account(missing)", err, licentia.CodeNotFound)
		for _, c := range []struct {
			email string
			want  *licentia.Account
		}{
			{"ada@example.com", ada},
			{"ADA@EXAMPLE.COM", ada},
			{"Ada@Example.com", ada},
			{"JOSé@EXAMPLE.COM", jose},
			{"josÉ@example.com", joseUpper},
			{"BOB@example.com", withPassword},
			{"nobody@example.com", nil},
			{" ada@example.com", nil},
		} {
			got, err := r.AccountByEmail(ctx, c.email)
			if c.want == nil {
				wantCode(t, "AccountByEmail("+c.email+")", err, licentia.CodeNotFound)
				continue
			}
			if diff := cmp.Diff(c.want, got); diff != "" || err != nil {
				t.Errorf("AccountByEmail(%s) error = %v, mismatch (-want +got):\n%s", c.email, err, diff)
			}
		}
	})

	for _, c := range []struct {
		name string
		a    *licentia.Account
	}{
		{"same address", newAccount("Ada@Example.com")},
		{"ASCII case", newAccount("aDA@EXAMPLE.COM")},
		{"ASCII case, non-ASCII address", newAccount("JOSé@Example.Com")},
		{"same id", &licentia.Account{ID: ada.ID, Email: "new@example.com", CreatedAt: base, UpdatedAt: base}},
	} {
		err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateAccount(ctx, c.a) })
		wantCode(t, "CreateAccount("+c.name+")", err, licentia.CodeConflict)
	}
	got, err := s.AccountByEmail(ctx, "ada@example.com")
	if diff := cmp.Diff(ada, got); diff != "" || err != nil {
		t.Errorf("AccountByEmail() after conflicts error = %v, mismatch (-want +got):\n%s", err, diff)
	}
}

// testSetAccountPassword replaces a password hash and updated_at only.
func testSetAccountPassword(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, other := newAccount("ada@example.com"), newAccount("bob@example.com")
	createAccounts(t, s, a, other)
	at := time.Date(2026, 3, 2, 9, 30, 0, 987_654_321, time.FixedZone("UTC-5", -5*3600))
	const hash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$bmV3"
	inTx(t, s, func(tx store.Tx) error { return tx.SetAccountPassword(ctx, a.ID, hash, at) })
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetAccountPassword(ctx, licentia.NewID(), hash, at) })
	wantCode(t, "SetAccountPassword(missing)", err, licentia.CodeNotFound)

	want := *a
	want.PasswordHash, want.UpdatedAt = hash, atMillis(at)
	got, err := s.Account(ctx, a.ID)
	if diff := cmp.Diff(&want, got); diff != "" || err != nil {
		t.Errorf("Account() after SetAccountPassword error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	if err == nil && got.UpdatedAt.Location() != time.UTC {
		t.Errorf("UpdatedAt in %v, want UTC", got.UpdatedAt.Location())
	}
	if got, err := s.Account(ctx, other.ID); err != nil || got.PasswordHash != "" {
		t.Errorf("Account(other) = %+v, %v; want no password", got, err)
	}
}

// testLoginLinks finds a link by its token, used or not, and uses it once,
// even when racers use it at the same moment.
func testLoginLinks(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	m, theirM := newMember(mine.ID, "ada@example.com", licentia.RoleOwner), newMember(theirs.ID, "ada@example.com", licentia.RoleOwner)
	createMembers(t, s, m, theirM)
	link, theirLink, raced := newLoginLink(m, base), newLoginLink(theirM, base), newLoginLink(m, base)
	inTx(t, s, func(tx store.Tx) error {
		for _, l := range []*licentia.LoginLink{link, theirLink, raced} {
			if err := tx.CreateLoginLink(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, l := range []*licentia.LoginLink{link, theirLink} {
			got, err := r.LoginLinkByToken(ctx, l.TokenHash)
			if diff := cmp.Diff(l, got); diff != "" || err != nil {
				t.Errorf("LoginLinkByToken() error = %v, mismatch (-want +got):\n%s", err, diff)
			}
		}
		for name, hash := range map[string][]byte{"unknown": newTokenHash(), "nil": nil, "prefix": link.TokenHash[:16]} {
			_, err := r.LoginLinkByToken(ctx, hash)
			wantCode(t, "LoginLinkByToken("+name+")", err, licentia.CodeNotFound)
		}
	})

	twin := newLoginLink(theirM, base)
	twin.TokenHash = link.TokenHash
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateLoginLink(ctx, twin) })
	wantCode(t, "CreateLoginLink(same token)", err, licentia.CodeConflict)

	at := base.Add(time.Minute)
	use := func(id string) (bool, error) {
		var changed bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			changed, err = tx.UseLoginLink(ctx, id, at)
			return err
		})
		return changed, err
	}
	if changed, err := use(link.ID); !changed || err != nil {
		t.Errorf("UseLoginLink() = %v, %v; want true, nil", changed, err)
	}
	if changed, err := use(link.ID); changed || err != nil {
		t.Errorf("UseLoginLink(again) = %v, %v; want false, nil", changed, err)
	}
	_, err = use(licentia.NewID())
	wantCode(t, "UseLoginLink(missing)", err, licentia.CodeNotFound)
	want := *link
	want.UsedAt = &at
	got, err := s.LoginLinkByToken(ctx, link.TokenHash)
	if diff := cmp.Diff(&want, got); diff != "" || err != nil {
		t.Errorf("LoginLinkByToken(used) error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	if got, err := s.LoginLinkByToken(ctx, theirLink.TokenHash); err != nil || got.UsedAt != nil {
		t.Errorf("LoginLinkByToken(another) = %+v, %v; want unused", got, err)
	}

	if won := race(t, func() (bool, error) { return use(raced.ID) }); won != 1 {
		t.Errorf("racers using one login link = %d, want exactly 1", won)
	}
}

// testSessions finds a session by its token, touches it, switches its
// organization and ends it, alone or with every session of its account.
func testSessions(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	ada, bob := newAccount("ada@example.com"), newAccount("bob@example.com")
	createAccounts(t, s, ada, bob)
	sess, second, bobs := newSession(ada.ID, mine.ID, base), newSession(ada.ID, theirs.ID, base), newSession(bob.ID, mine.ID, base)
	createSessions(t, s, sess, second, bobs)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, want := range []*licentia.Session{sess, second, bobs} {
			got, err := r.SessionByToken(ctx, want.TokenHash)
			if diff := cmp.Diff(want, got); diff != "" || err != nil {
				t.Errorf("SessionByToken() error = %v, mismatch (-want +got):\n%s", err, diff)
			}
		}
		for name, hash := range map[string][]byte{"unknown": newTokenHash(), "nil": nil, "prefix": sess.TokenHash[:31]} {
			_, err := r.SessionByToken(ctx, hash)
			wantCode(t, "SessionByToken("+name+")", err, licentia.CodeNotFound)
		}
	})

	twin := newSession(bob.ID, mine.ID, base)
	twin.TokenHash = sess.TokenHash
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateSession(ctx, twin) })
	wantCode(t, "CreateSession(same token)", err, licentia.CodeConflict)

	seen := time.Date(2026, 3, 1, 13, 0, 0, 500_999_999, time.FixedZone("UTC+1", 3600))
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.TouchSession(ctx, sess.ID, seen); err != nil {
			return err
		}
		return tx.SetSessionOrganization(ctx, sess.ID, theirs.ID)
	})
	err = s.InTx(ctx, func(tx store.Tx) error {
		wantCode(t, "TouchSession(missing)", tx.TouchSession(ctx, licentia.NewID(), seen), licentia.CodeNotFound)
		wantCode(t, "SetSessionOrganization(missing)", tx.SetSessionOrganization(ctx, licentia.NewID(), mine.ID), licentia.CodeNotFound)
		return nil
	})
	if err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	want := *sess
	want.LastSeenAt, want.OrgID = atMillis(seen), theirs.ID
	got, err := s.SessionByToken(ctx, sess.TokenHash)
	if diff := cmp.Diff(&want, got); diff != "" || err != nil {
		t.Errorf("SessionByToken() after touching error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	if err == nil && got.LastSeenAt.Location() != time.UTC {
		t.Errorf("LastSeenAt in %v, want UTC", got.LastSeenAt.Location())
	}
	got, err = s.SessionByToken(ctx, bobs.TokenHash)
	if diff := cmp.Diff(bobs, got); diff != "" || err != nil {
		t.Errorf("SessionByToken(another) error = %v, mismatch (-want +got):\n%s", err, diff)
	}

	// Ending one session leaves the account's others; ending a missing one
	// is no error.
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteSession(ctx, second.ID) })
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteSession(ctx, second.ID) })
	_, err = s.SessionByToken(ctx, second.TokenHash)
	wantCode(t, "SessionByToken(deleted)", err, licentia.CodeNotFound)
	if _, err := s.SessionByToken(ctx, sess.TokenHash); err != nil {
		t.Errorf("SessionByToken(kept) error = %v", err)
	}

	third := newSession(ada.ID, mine.ID, base.Add(time.Hour))
	createSessions(t, s, third)
	deleteAccountSessions := func(accountID string) int64 {
		t.Helper()
		var n int64
		inTx(t, s, func(tx store.Tx) error {
			var err error
			n, err = tx.DeleteAccountSessions(ctx, accountID)
			return err
		})
		return n
	}
	if n := deleteAccountSessions(ada.ID); n != 2 {
		t.Errorf("DeleteAccountSessions() = %d, want 2", n)
	}
	if n := deleteAccountSessions(ada.ID); n != 0 {
		t.Errorf("DeleteAccountSessions(again) = %d, want 0", n)
	}
	for _, gone := range []*licentia.Session{sess, third} {
		_, err := s.SessionByToken(ctx, gone.TokenHash)
		wantCode(t, "SessionByToken(account's)", err, licentia.CodeNotFound)
	}
	if _, err := s.SessionByToken(ctx, bobs.TokenHash); err != nil {
		t.Errorf("SessionByToken(another account's) error = %v", err)
	}
}

// testDeleteStaleSessions deletes sessions last seen before idleBefore, or
// whose absolute end is at or before now, at the millisecond.
func testDeleteStaleSessions(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	a := newAccount("ada@example.com")
	createAccounts(t, s, a)
	now := base.Add(3 * 24 * time.Hour)
	idleBefore := now.Add(-12 * time.Hour)
	session := func(lastSeen, expires time.Time) *licentia.Session {
		sess := newSession(a.ID, o.ID, base)
		sess.LastSeenAt, sess.ExpiresAt = lastSeen, expires
		return sess
	}
	idle := session(idleBefore.Add(-time.Millisecond), now.Add(time.Hour))
	idleBoundary := session(idleBefore, now.Add(time.Hour))
	ended := session(now, now)
	endsNext := session(now, now.Add(time.Millisecond))
	both := session(idleBefore.Add(-time.Hour), now.Add(-time.Hour))
	createSessions(t, s, idle, idleBoundary, ended, endsNext, both)

	deleteStale := func() int64 {
		t.Helper()
		var n int64
		inTx(t, s, func(tx store.Tx) error {
			var err error
			n, err = tx.DeleteStaleSessions(ctx, idleBefore, now)
			return err
		})
		return n
	}
	if n := deleteStale(); n != 3 {
		t.Errorf("DeleteStaleSessions() = %d, want 3", n)
	}
	for _, c := range []struct {
		name string
		sess *licentia.Session
		kept bool
	}{
		{"idle", idle, false},
		{"last seen at idleBefore", idleBoundary, true},
		{"ends now", ended, false},
		{"ends 1 ms after now", endsNext, true},
		{"idle and ended", both, false},
	} {
		_, err := s.SessionByToken(ctx, c.sess.TokenHash)
		if c.kept && err != nil {
			t.Errorf("SessionByToken(%s) error = %v, want it kept", c.name, err)
		}
		if !c.kept {
			wantCode(t, "SessionByToken("+c.name+")", err, licentia.CodeNotFound)
		}
	}
	if n := deleteStale(); n != 0 {
		t.Errorf("DeleteStaleSessions(again) = %d, want 0", n)
	}
}
