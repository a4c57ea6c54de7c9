package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newPortalLink returns an unused sign-in link of an organization, valid
// for 15 minutes from created.
func newPortalLink(orgID string, created time.Time) *licentia.PortalLink {
	return &licentia.PortalLink{ID: licentia.NewID(), OrgID: orgID, TokenHash: newTokenHash(), Email: "ada@example.com",
		CreatedAt: created, ExpiresAt: created.Add(15 * time.Minute)}
}

// testPortalLinks reads a sign-in link by id, only in its organization,
// and by token; it signs in once, never expired, even when racers use
// it at the same moment.
func testPortalLinks(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	link, theirLink, raced, late := newPortalLink(mine.ID, base), newPortalLink(theirs.ID, base), newPortalLink(mine.ID, base), newPortalLink(mine.ID, base)
	inTx(t, s, func(tx store.Tx) error {
		for _, l := range []*licentia.PortalLink{link, theirLink, raced, late} {
			if err := tx.CreatePortalLink(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, l := range []*licentia.PortalLink{link, theirLink} {
			got, err := r.PortalLinkByToken(ctx, l.TokenHash)
			if diff := cmp.Diff(l, got); diff != "" || err != nil {
				t.Errorf("PortalLinkByToken() error = %v, mismatch (-want +got):\n%s", err, diff)
			}
			got, err = r.PortalLink(ctx, l.OrgID, l.ID)
			if diff := cmp.Diff(l, got); diff != "" || err != nil {
				t.Errorf("PortalLink() error = %v, mismatch (-want +got):\n%s", err, diff)
			}
		}
		_, missing := r.PortalLink(ctx, mine.ID, licentia.NewID())
		wantCode(t, "PortalLink(missing)", missing, licentia.CodeNotFound)
		_, err := r.PortalLink(ctx, mine.ID, theirLink.ID)
		wantSame(t, "PortalLink(another organization's)", err, missing)
		_, err = r.PortalLink(ctx, mine.ID, "not-an-id")
		wantCode(t, "PortalLink(malformed)", err, licentia.CodeNotFound)
		for name, hash := range map[string][]byte{"unknown": newTokenHash(), "nil": nil, "prefix": link.TokenHash[:16]} {
			_, err := r.PortalLinkByToken(ctx, hash)
			wantCode(t, "PortalLinkByToken("+name+")", err, licentia.CodeNotFound)
		}
	})

	twin := newPortalLink(theirs.ID, base)
	twin.TokenHash = link.TokenHash
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreatePortalLink(ctx, twin) })
	wantCode(t, "CreatePortalLink(same token)", err, licentia.CodeConflict)

	use := func(hash []byte, at time.Time) (*licentia.PortalLink, error) {
		var got *licentia.PortalLink
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			got, err = tx.UsePortalLink(ctx, hash, at)
			return err
		})
		return got, err
	}
	at := base.Add(time.Minute)
	want := *link
	want.UsedAt = &at
	got, err := use(link.TokenHash, at)
	if diff := cmp.Diff(&want, got); diff != "" || err != nil {
		t.Errorf("UsePortalLink() error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	_, err = use(link.TokenHash, at)
	wantCode(t, "UsePortalLink(used)", err, licentia.CodeNotFound)
	_, err = use(newTokenHash(), at)
	wantCode(t, "UsePortalLink(unknown)", err, licentia.CodeNotFound)
	// A link expires at its ExpiresAt: the instant before, it signs in.
	_, err = use(late.TokenHash, late.ExpiresAt)
	wantCode(t, "UsePortalLink(expired)", err, licentia.CodeNotFound)
	if got, err := s.PortalLinkByToken(ctx, late.TokenHash); err != nil || got.UsedAt != nil {
		t.Errorf("PortalLinkByToken(expired) = %+v, %v; want unused", got, err)
	}
	if _, err := use(late.TokenHash, late.ExpiresAt.Add(-time.Millisecond)); err != nil {
		t.Errorf("UsePortalLink(a millisecond before expiry) error = %v", err)
	}
	if got, err := s.PortalLinkByToken(ctx, theirLink.TokenHash); err != nil || got.UsedAt != nil {
		t.Errorf("PortalLinkByToken(another) = %+v, %v; want unused", got, err)
	}

	won := race(t, func() (bool, error) {
		_, err := use(raced.TokenHash, at)
		if licentia.ErrorCode(err) == licentia.CodeNotFound {
			return false, nil
		}
		return err == nil, err
	})
	if won != 1 {
		t.Errorf("racers using one sign-in link = %d, want exactly 1", won)
	}
}

// testPortalSessions finds a session by its token, ends it, and sweeps the
// links and sessions expired.
func testPortalSessions(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	sess := &licentia.PortalSession{ID: licentia.NewID(), OrgID: mine.ID, TokenHash: newTokenHash(), Email: "ada@example.com",
		CreatedAt: base, ExpiresAt: base.Add(12 * time.Hour)}
	other := &licentia.PortalSession{ID: licentia.NewID(), OrgID: mine.ID, TokenHash: newTokenHash(), Email: "bob@example.com",
		CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
	link := newPortalLink(mine.ID, base)
	inTx(t, s, func(tx store.Tx) error {
		for _, x := range []*licentia.PortalSession{sess, other} {
			if err := tx.CreatePortalSession(ctx, x); err != nil {
				return err
			}
		}
		return tx.CreatePortalLink(ctx, link)
	})
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.PortalSessionByToken(ctx, sess.TokenHash)
		if diff := cmp.Diff(sess, got); diff != "" || err != nil {
			t.Errorf("PortalSessionByToken() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		_, err = r.PortalSessionByToken(ctx, newTokenHash())
		wantCode(t, "PortalSessionByToken(unknown)", err, licentia.CodeNotFound)
	})
	twin := *other
	twin.ID = licentia.NewID()
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreatePortalSession(ctx, &twin) })
	wantCode(t, "CreatePortalSession(same token)", err, licentia.CodeConflict)

	// At the hour: the link (15 minutes) and the short session are stale.
	var n int64
	inTx(t, s, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteStalePortal(ctx, base.Add(time.Hour))
		return err
	})
	if n != 2 {
		t.Errorf("DeleteStalePortal() = %d, want 2", n)
	}
	if _, err := s.PortalSessionByToken(ctx, other.TokenHash); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("PortalSessionByToken(swept) error = %v, want not_found", err)
	}
	if _, err := s.PortalLinkByToken(ctx, link.TokenHash); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("PortalLinkByToken(swept) error = %v, want not_found", err)
	}
	inTx(t, s, func(tx store.Tx) error {
		if err := tx.DeletePortalSession(ctx, "not-an-id"); err != nil {
			return err
		}
		return tx.DeletePortalSession(ctx, sess.ID)
	})
	if _, err := s.PortalSessionByToken(ctx, sess.TokenHash); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("PortalSessionByToken(ended) error = %v, want not_found", err)
	}
}
