package storetest

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newTokenHash returns a random SHA-256-sized hash whose first byte is zero,
// which must survive the round trip too.
func newTokenHash() []byte {
	h := make([]byte, 32)
	rand.Read(h)
	h[0] = 0
	return h
}

// newInvitation returns an invitation with a link, pending for a day from
// created.
func newInvitation(orgID, email string, created time.Time) *licentia.Invitation {
	return &licentia.Invitation{ID: licentia.NewID(), OrgID: orgID, Email: email, Role: licentia.RoleDeveloper,
		ExpiresAt: created.Add(24 * time.Hour), CreatedAt: created, TokenHash: newTokenHash()}
}

func createInvitations(t *testing.T, s store.Store, invs ...*licentia.Invitation) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, inv := range invs {
			if err := tx.CreateInvitation(t.Context(), inv); err != nil {
				return err
			}
		}
		return nil
	})
}

// testInvitations writes invitations with their link's token hash and
// sender and reads them back by id, within the organization, and by token,
// in any organization.
func testInvitations(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	sender := newMember(mine.ID, "owner@example.com", licentia.RoleOwner)
	createMembers(t, s, sender)
	linked := newInvitation(mine.ID, "ada@example.com", base)
	linked.InvitedBy = &sender.ID
	// Invitations written before links existed have no token; any number
	// of them may be stored.
	unlinked := newInvitation(mine.ID, "bob@example.com", base.Add(time.Minute))
	unlinked.TokenHash = nil
	unlinked2 := newInvitation(mine.ID, "carol@example.com", base.Add(2*time.Minute))
	unlinked2.TokenHash = nil
	accepted := newInvitation(mine.ID, "dave@example.com", base)
	accepted.AcceptedAt = ptr(base.Add(time.Hour))
	theirInv := newInvitation(theirs.ID, "ada@example.com", base)
	createInvitations(t, s, linked, unlinked, unlinked2, accepted, theirInv)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, inv := range []*licentia.Invitation{linked, unlinked, accepted, theirInv} {
			got, err := r.Invitation(ctx, inv.OrgID, inv.ID)
			if diff := cmp.Diff(inv, got); diff != "" || err != nil {
				t.Errorf("Invitation(%s) error = %v, mismatch (-want +got):\n%s", inv.Email, err, diff)
			}
		}
		_, missing := r.Invitation(ctx, mine.ID, licentia.NewID())
		wantCode(t, "Invitation(missing)", missing, licentia.CodeInvitationNotFound)
		_, err := r.Invitation(ctx, mine.ID, theirInv.ID)
		wantSame(t, "Invitation(theirs)", err, missing)
		_, err = r.Invitation(ctx, theirs.ID, linked.ID)
		wantSame(t, "Invitation(mine, as theirs)", err, missing)

		for _, inv := range []*licentia.Invitation{linked, accepted, theirInv} {
			got, err := r.InvitationByToken(ctx, inv.TokenHash)
			if diff := cmp.Diff(inv, got); diff != "" || err != nil {
				t.Errorf("InvitationByToken(%s) error = %v, mismatch (-want +got):\n%s", inv.Email, err, diff)
			}
		}
		for name, hash := range map[string][]byte{"unknown": newTokenHash(), "nil": nil, "empty": {},
			"prefix": linked.TokenHash[:31]} {
			_, err := r.InvitationByToken(ctx, hash)
			wantCode(t, "InvitationByToken("+name+")", err, licentia.CodeNotFound)
		}

		pending, err := r.PendingInvitations(ctx, mine.ID, base.Add(time.Hour))
		want := []licentia.Invitation{*linked, *unlinked, *unlinked2}
		if diff := cmp.Diff(want, pending); diff != "" || err != nil {
			t.Errorf("PendingInvitations() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	})

	// A token is one invitation's, in every organization; so is an id.
	twin := newInvitation(theirs.ID, "eve@example.com", base)
	twin.TokenHash = linked.TokenHash
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateInvitation(ctx, twin) })
	wantCode(t, "CreateInvitation(same token)", err, licentia.CodeConflict)
	sameID := newInvitation(mine.ID, "eve@example.com", base)
	sameID.ID = linked.ID
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.CreateInvitation(ctx, sameID) })
	wantCode(t, "CreateInvitation(same id)", err, licentia.CodeConflict)
	got, err := s.InvitationByToken(ctx, linked.TokenHash)
	if diff := cmp.Diff(linked, got); diff != "" || err != nil {
		t.Errorf("InvitationByToken() after conflicts error = %v, mismatch (-want +got):\n%s", err, diff)
	}
}

// testRevokeInvitation revokes an invitation neither accepted nor revoked,
// expired or not, once; another organization's answers as a missing one.
func testRevokeInvitation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	pending := newInvitation(mine.ID, "ada@example.com", base)
	expired := newInvitation(mine.ID, "bob@example.com", base.Add(-48*time.Hour))
	accepted := newInvitation(mine.ID, "carol@example.com", base)
	accepted.AcceptedAt = ptr(base.Add(time.Minute))
	theirInv := newInvitation(theirs.ID, "ada@example.com", base)
	createInvitations(t, s, pending, expired, accepted, theirInv)

	at := time.Date(2026, 3, 1, 14, 0, 0, 123_456_789, time.FixedZone("UTC+2", 2*3600))
	revoke := func(orgID, id string) (bool, error) {
		var changed bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			changed, err = tx.RevokeInvitation(ctx, orgID, id, at)
			return err
		})
		return changed, err
	}
	for _, c := range []struct {
		name    string
		inv     *licentia.Invitation
		changed bool
	}{
		{"pending", pending, true},
		{"again", pending, false},
		{"expired", expired, true},
		{"accepted", accepted, false},
	} {
		if changed, err := revoke(c.inv.OrgID, c.inv.ID); changed != c.changed || err != nil {
			t.Errorf("RevokeInvitation(%s) = %v, %v; want %v, nil", c.name, changed, err, c.changed)
		}
	}
	_, missing := revoke(mine.ID, licentia.NewID())
	wantCode(t, "RevokeInvitation(missing)", missing, licentia.CodeInvitationNotFound)
	_, err := revoke(mine.ID, theirInv.ID)
	wantSame(t, "RevokeInvitation(theirs)", err, missing)
	_, err = revoke(theirs.ID, pending.ID)
	wantSame(t, "RevokeInvitation(mine, as theirs)", err, missing)

	for _, c := range []struct {
		inv     *licentia.Invitation
		revoked *time.Time
	}{{pending, ptr(atMillis(at))}, {expired, ptr(atMillis(at))}, {accepted, nil}, {theirInv, nil}} {
		want := *c.inv
		want.RevokedAt = c.revoked
		got, err := s.Invitation(ctx, c.inv.OrgID, c.inv.ID)
		if diff := cmp.Diff(&want, got); diff != "" || err != nil {
			t.Errorf("Invitation(%s) after revoking error = %v, mismatch (-want +got):\n%s", c.inv.Email, err, diff)
		}
	}
}

// testAcceptInvitation accepts an invitation neither accepted nor revoked
// once, even when racers use its link at the same moment; expiry is the
// caller's to check.
func testAcceptInvitation(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	pending := newInvitation(o.ID, "ada@example.com", base)
	expired := newInvitation(o.ID, "bob@example.com", base.Add(-48*time.Hour))
	revoked := newInvitation(o.ID, "carol@example.com", base)
	revoked.RevokedAt = ptr(base.Add(time.Minute))
	raced := newInvitation(o.ID, "dave@example.com", base)
	createInvitations(t, s, pending, expired, revoked, raced)

	at := base.Add(time.Hour)
	accept := func(id string) (bool, error) {
		var changed bool
		err := s.InTx(ctx, func(tx store.Tx) error {
			var err error
			changed, err = tx.AcceptInvitation(ctx, id, at)
			return err
		})
		return changed, err
	}
	for _, c := range []struct {
		name    string
		inv     *licentia.Invitation
		changed bool
	}{
		{"pending", pending, true},
		{"again", pending, false},
		{"expired", expired, true},
		{"revoked", revoked, false},
	} {
		if changed, err := accept(c.inv.ID); changed != c.changed || err != nil {
			t.Errorf("AcceptInvitation(%s) = %v, %v; want %v, nil", c.name, changed, err, c.changed)
		}
	}
	_, err := accept(licentia.NewID())
	wantCode(t, "AcceptInvitation(missing)", err, licentia.CodeInvitationNotFound)
	for _, c := range []struct {
		inv      *licentia.Invitation
		accepted *time.Time
	}{{pending, &at}, {expired, &at}, {revoked, nil}} {
		want := *c.inv
		want.AcceptedAt = c.accepted
		got, err := s.Invitation(ctx, o.ID, c.inv.ID)
		if diff := cmp.Diff(&want, got); diff != "" || err != nil {
			t.Errorf("Invitation(%s) after accepting error = %v, mismatch (-want +got):\n%s", c.inv.Email, err, diff)
		}
	}

	won := race(t, func() (bool, error) { return accept(raced.ID) })
	if won != 1 {
		t.Errorf("racers accepting one invitation = %d, want exactly 1", won)
	}
}

// testCountInvitationsSince counts an organization's invitations created at
// or after since, whatever their state, and those to one address with ASCII
// letters folded.
func testCountInvitationsSince(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	since := base.Add(-24 * time.Hour)
	before := newInvitation(mine.ID, "ada@example.com", since.Add(-time.Millisecond))
	atSince := newInvitation(mine.ID, "ADA@example.com", since)
	later := newInvitation(mine.ID, "Ada@Example.Com", base)
	later.RevokedAt = ptr(base.Add(time.Minute))
	accepted := newInvitation(mine.ID, "ada@example.com", base)
	accepted.AcceptedAt = ptr(base.Add(time.Minute))
	jose := newInvitation(mine.ID, "josé@example.com", base)
	joseUpper := newInvitation(mine.ID, "JOSÉ@example.com", base)
	theirAda := newInvitation(theirs.ID, "ada@example.com", base)
	createInvitations(t, s, before, atSince, later, accepted, jose, joseUpper, theirAda)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, c := range []struct {
			org, email   string
			since        time.Time
			all, toEmail int64
		}{
			{mine.ID, "ada@example.com", since, 5, 3},
			{mine.ID, "aDA@EXAMPLE.COM", since, 5, 3},
			{mine.ID, "ada@example.com", since.Add(-time.Millisecond), 6, 4},
			{mine.ID, "ada@example.com", since.Add(time.Millisecond), 4, 2},
			{mine.ID, "JOSé@EXAMPLE.COM", since, 5, 1},
			{mine.ID, "josÉ@example.com", since, 5, 1},
			{mine.ID, "nobody@example.com", since, 5, 0},
			{mine.ID, "ada@example.com", base.Add(time.Millisecond), 0, 0},
			{theirs.ID, "ADA@example.com", since, 1, 1},
			{licentia.NewID(), "ada@example.com", since, 0, 0},
		} {
			all, toEmail, err := r.CountInvitationsSince(ctx, c.org, c.email, c.since)
			if all != c.all || toEmail != c.toEmail || err != nil {
				t.Errorf("CountInvitationsSince(%s, %s) = %d, %d, %v; want %d, %d, nil",
					c.email, c.since.Sub(since), all, toEmail, err, c.all, c.toEmail)
			}
		}
	})
}
