package storetest

import (
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func newMember(orgID, email string, role licentia.Role) *licentia.Member {
	return &licentia.Member{ID: licentia.NewID(), OrgID: orgID, Email: email, Role: role, CreatedAt: base}
}

func createMembers(t *testing.T, s store.Store, ms ...*licentia.Member) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, m := range ms {
			if err := tx.CreateMember(t.Context(), m); err != nil {
				return err
			}
		}
		return nil
	})
}

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

// testMember reads one member by id and by address. Addresses compare with
// ASCII letters folded and nothing else, as the members_email index does:
// "É" and "é" are different letters to both engines.
func testMember(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	ada := newMember(mine.ID, "ada@example.com", licentia.RoleOwner)
	jose := newMember(mine.ID, "JOSÉ@Example.com", licentia.RoleViewer)
	theirAda := newMember(theirs.ID, "Ada@Example.com", licentia.RoleAdmin)
	createMembers(t, s, ada, jose, theirAda)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, m := range []*licentia.Member{ada, jose, theirAda} {
			got, err := r.Member(ctx, m.OrgID, m.ID)
			if diff := cmp.Diff(m, got); diff != "" || err != nil {
				t.Errorf("Member(%s) error = %v, mismatch (-want +got):\n%s", m.Email, err, diff)
			}
		}
		_, missing := r.Member(ctx, mine.ID, licentia.NewID())
		wantCode(t, "Member(missing)", missing, licentia.CodeMemberNotFound)
		_, err := r.Member(ctx, mine.ID, theirAda.ID)
		wantSame(t, "Member(theirs)", err, missing)
		_, err = r.Member(ctx, theirs.ID, ada.ID)
		wantSame(t, "Member(mine, as theirs)", err, missing)

		for _, c := range []struct {
			org, email string
			want       *licentia.Member
		}{
			{mine.ID, "ada@example.com", ada},
			{mine.ID, "ADA@EXAMPLE.COM", ada},
			{mine.ID, "aDa@eXample.Com", ada},
			{theirs.ID, "ada@example.com", theirAda},
			{mine.ID, "JOSÉ@Example.com", jose},
			{mine.ID, "josÉ@example.COM", jose},
			{mine.ID, "josé@example.com", nil},
			{mine.ID, "JOSé@EXAMPLE.COM", nil},
			{mine.ID, "ada@example.com ", nil},
			{mine.ID, "nobody@example.com", nil},
			{theirs.ID, "JOSÉ@Example.com", nil},
		} {
			got, err := r.MemberByEmail(ctx, c.org, c.email)
			if c.want == nil {
				wantCode(t, "MemberByEmail("+c.email+")", err, licentia.CodeMemberNotFound)
				continue
			}
			if diff := cmp.Diff(c.want, got); diff != "" || err != nil {
				t.Errorf("MemberByEmail(%s) error = %v, mismatch (-want +got):\n%s", c.email, err, diff)
			}
		}
	})
}

// testMemberships lists an address's member records in every organization,
// by organization name byte for byte, then organization id.
func testMemberships(t *testing.T, s store.Store) {
	ctx := t.Context()
	org := func(id, name, slug string) *licentia.Organization {
		return &licentia.Organization{ID: id, Name: name, Slug: slug, Plan: licentia.PlanFree, CreatedAt: base}
	}
	// Written out of order; the two named Beta are ordered by id.
	zeta, alpha := org(licentia.NewID(), "Zeta", "zeta"), org(licentia.NewID(), "alpha", "alpha")
	beta2, beta1 := org(seqID(2), "Beta", "beta-2"), org(seqID(1), "Beta", "beta-1")
	none := org(licentia.NewID(), "Aardvark", "aardvark")
	inTx(t, s, func(tx store.Tx) error {
		for _, o := range []*licentia.Organization{zeta, alpha, beta2, beta1, none} {
			if err := tx.CreateOrganization(ctx, o); err != nil {
				return err
			}
		}
		return nil
	})
	inZeta := newMember(zeta.ID, "josé@example.com", licentia.RoleOwner)
	inAlpha := newMember(alpha.ID, "JOSé@Example.COM", licentia.RoleViewer)
	inBeta2 := newMember(beta2.ID, "José@example.com", licentia.RoleAdmin)
	inBeta1 := newMember(beta1.ID, "jOSé@EXAMPLE.com", licentia.RoleSupport)
	// Not the same address: É is not é.
	other := newMember(none.ID, "JOSÉ@example.com", licentia.RoleOwner)
	createMembers(t, s, inZeta, inAlpha, inBeta2, inBeta1, other, newMember(zeta.ID, "ada@example.com", licentia.RoleAdmin))

	membership := func(m *licentia.Member, o *licentia.Organization) licentia.Membership {
		return licentia.Membership{Member: *m, OrgName: o.Name, OrgSlug: o.Slug}
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Memberships(ctx, "JOSé@example.com")
		want := []licentia.Membership{membership(inBeta1, beta1), membership(inBeta2, beta2),
			membership(inZeta, zeta), membership(inAlpha, alpha)}
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("Memberships() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		got, err = r.Memberships(ctx, "josÉ@EXAMPLE.com")
		if diff := cmp.Diff([]licentia.Membership{membership(other, none)}, got); diff != "" || err != nil {
			t.Errorf("Memberships(É) error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		if got, err := r.Memberships(ctx, "nobody@example.com"); len(got) != 0 || err != nil {
			t.Errorf("Memberships(nobody) = %+v, %v; want none", got, err)
		}
	})
}

// testSetMemberRole changes one member's role, never another
// organization's.
func testSetMemberRole(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	m := newMember(mine.ID, "ada@example.com", licentia.RoleViewer)
	theirM := newMember(theirs.ID, "ada@example.com", licentia.RoleViewer)
	createMembers(t, s, m, theirM)

	inTx(t, s, func(tx store.Tx) error { return tx.SetMemberRole(ctx, mine.ID, m.ID, licentia.RoleAdmin) })
	var missing error
	err := s.InTx(ctx, func(tx store.Tx) error {
		missing = tx.SetMemberRole(ctx, mine.ID, licentia.NewID(), licentia.RoleAdmin)
		wantCode(t, "SetMemberRole(missing)", missing, licentia.CodeMemberNotFound)
		wantSame(t, "SetMemberRole(theirs)", tx.SetMemberRole(ctx, mine.ID, theirM.ID, licentia.RoleOwner), missing)
		wantSame(t, "SetMemberRole(mine, as theirs)", tx.SetMemberRole(ctx, theirs.ID, m.ID, licentia.RoleOwner), missing)
		return nil
	})
	if err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	want := *m
	want.Role = licentia.RoleAdmin
	for _, c := range []struct{ got, want *licentia.Member }{{readMember(t, s, m), &want}, {readMember(t, s, theirM), theirM}} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("Member() after SetMemberRole mismatch (-want +got):\n%s", diff)
		}
	}
}

func readMember(t *testing.T, r store.Reader, m *licentia.Member) *licentia.Member {
	t.Helper()
	got, err := r.Member(t.Context(), m.OrgID, m.ID)
	if err != nil {
		t.Fatalf("Member(%s) error = %v", m.ID, err)
	}
	return got
}

// testDeleteMember removes a member and its login links, never another
// organization's member; an account and sessions of its address and the
// invitations it sent stay, and hold it back by no foreign key.
func testDeleteMember(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	gone := newMember(mine.ID, "ada@example.com", licentia.RoleAdmin)
	stays := newMember(mine.ID, "bob@example.com", licentia.RoleOwner)
	theirM := newMember(theirs.ID, "ada@example.com", licentia.RoleAdmin)
	createMembers(t, s, gone, stays, theirM)
	acct := newAccount("ada@example.com")
	createAccounts(t, s, acct)
	sess := newSession(acct.ID, mine.ID, base)
	sent := newInvitation(mine.ID, "carol@example.com", base)
	sent.InvitedBy = &gone.ID
	goneLink, staysLink := newLoginLink(gone, base), newLoginLink(stays, base)
	theirLink := newLoginLink(theirM, base)
	inTx(t, s, func(tx store.Tx) error {
		return errors.Join(tx.CreateSession(ctx, sess), tx.CreateInvitation(ctx, sent),
			tx.CreateLoginLink(ctx, goneLink), tx.CreateLoginLink(ctx, staysLink), tx.CreateLoginLink(ctx, theirLink))
	})

	err := s.InTx(ctx, func(tx store.Tx) error {
		missing := tx.DeleteMember(ctx, mine.ID, licentia.NewID())
		wantCode(t, "DeleteMember(missing)", missing, licentia.CodeMemberNotFound)
		wantSame(t, "DeleteMember(theirs)", tx.DeleteMember(ctx, mine.ID, theirM.ID), missing)
		wantSame(t, "DeleteMember(mine, as theirs)", tx.DeleteMember(ctx, theirs.ID, gone.ID), missing)
		return tx.DeleteMember(ctx, mine.ID, gone.ID)
	})
	if err != nil {
		t.Fatalf("DeleteMember() error = %v", err)
	}
	_, err = s.Member(ctx, mine.ID, gone.ID)
	wantCode(t, "Member(deleted)", err, licentia.CodeMemberNotFound)
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteMember(ctx, mine.ID, gone.ID) })
	wantCode(t, "DeleteMember(again)", err, licentia.CodeMemberNotFound)
	members, err := s.Members(ctx, mine.ID)
	if diff := cmp.Diff([]licentia.Member{*stays}, members); diff != "" || err != nil {
		t.Errorf("Members() error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	readMember(t, s, theirM)

	_, err = s.LoginLinkByToken(ctx, goneLink.TokenHash)
	wantCode(t, "LoginLinkByToken(deleted member's)", err, licentia.CodeNotFound)
	for _, l := range []*licentia.LoginLink{staysLink, theirLink} {
		if _, err := s.LoginLinkByToken(ctx, l.TokenHash); err != nil {
			t.Errorf("LoginLinkByToken(another member's) error = %v", err)
		}
	}
	if _, err := s.Account(ctx, acct.ID); err != nil {
		t.Errorf("Account() after DeleteMember error = %v", err)
	}
	if _, err := s.SessionByToken(ctx, sess.TokenHash); err != nil {
		t.Errorf("SessionByToken() after DeleteMember error = %v", err)
	}
	inv, err := s.Invitation(ctx, mine.ID, sent.ID)
	if diff := cmp.Diff(sent, inv); diff != "" || err != nil {
		t.Errorf("Invitation() after DeleteMember error = %v, mismatch (-want +got):\n%s", err, diff)
	}
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

// race runs try in racers goroutines at once and returns how many won.
func race(t *testing.T, try func() (bool, error)) int {
	t.Helper()
	const racers = 8
	wins := make([]bool, racers)
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			wins[i], errs[i] = try()
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i := range racers {
		if errs[i] != nil {
			t.Errorf("racer %d: error = %v", i, errs[i])
		}
		if wins[i] {
			won++
		}
	}
	return won
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

// testTeamMalformedIDs gives the team and account methods ids and addresses
// no record can have: they answer like missing ones and leave a
// transaction usable.
func testTeamMalformedIDs(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	m := newMember(o.ID, "ada@example.com", licentia.RoleOwner)
	createMembers(t, s, m)
	inv := newInvitation(o.ID, "bob@example.com", base)
	createInvitations(t, s, inv)
	for _, tt := range []struct{ name, id string }{
		{"empty", ""},
		{"word", "not-a-uuid"},
		{"upper case", strings.ToUpper(m.ID)},
		{"nul", m.ID + "\x00"},
		{"invalid utf-8", "ada-\xff\xfe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := tt.id
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				ctx := t.Context()
				_, err := r.Member(ctx, o.ID, bad)
				wantCode(t, "Member(org, bad)", err, licentia.CodeMemberNotFound)
				_, err = r.Member(ctx, bad, m.ID)
				wantCode(t, "Member(bad, member)", err, licentia.CodeMemberNotFound)
				_, err = r.MemberByEmail(ctx, bad, m.Email)
				wantCode(t, "MemberByEmail(bad, email)", err, licentia.CodeMemberNotFound)
				_, err = r.MemberByEmail(ctx, o.ID, bad)
				wantCode(t, "MemberByEmail(org, bad)", err, licentia.CodeMemberNotFound)
				if v, err := r.Memberships(ctx, bad); len(v) != 0 || err != nil {
					t.Errorf("Memberships() = %+v, %v; want none", v, err)
				}
				_, err = r.Invitation(ctx, o.ID, bad)
				wantCode(t, "Invitation(org, bad)", err, licentia.CodeInvitationNotFound)
				_, err = r.Invitation(ctx, bad, inv.ID)
				wantCode(t, "Invitation(bad, invitation)", err, licentia.CodeInvitationNotFound)
				if all, to, err := r.CountInvitationsSince(ctx, bad, inv.Email, base); all != 0 || to != 0 || err != nil {
					t.Errorf("CountInvitationsSince(bad, email) = %d, %d, %v; want 0, 0, nil", all, to, err)
				}
				if all, to, err := r.CountInvitationsSince(ctx, o.ID, bad, base); all != 1 || to != 0 || err != nil {
					t.Errorf("CountInvitationsSince(org, bad) = %d, %d, %v; want 1, 0, nil", all, to, err)
				}
				_, err = r.Account(ctx, bad)
				wantCode(t, "Account(bad)", err, licentia.CodeNotFound)
				_, err = r.AccountByEmail(ctx, bad)
				wantCode(t, "AccountByEmail(bad)", err, licentia.CodeNotFound)
				// The reads above must not have spoilt a transaction.
				if _, err := r.Member(ctx, o.ID, m.ID); err != nil {
					t.Errorf("Member(valid) after malformed reads error = %v", err)
				}
			})
			err := s.InTx(t.Context(), func(tx store.Tx) error {
				ctx := t.Context()
				wantCode(t, "SetMemberRole(org, bad)", tx.SetMemberRole(ctx, o.ID, bad, licentia.RoleViewer), licentia.CodeMemberNotFound)
				wantCode(t, "SetMemberRole(bad, member)", tx.SetMemberRole(ctx, bad, m.ID, licentia.RoleViewer), licentia.CodeMemberNotFound)
				wantCode(t, "DeleteMember(org, bad)", tx.DeleteMember(ctx, o.ID, bad), licentia.CodeMemberNotFound)
				wantCode(t, "DeleteMember(bad, member)", tx.DeleteMember(ctx, bad, m.ID), licentia.CodeMemberNotFound)
				_, err := tx.RevokeInvitation(ctx, o.ID, bad, base)
				wantCode(t, "RevokeInvitation(org, bad)", err, licentia.CodeInvitationNotFound)
				_, err = tx.RevokeInvitation(ctx, bad, inv.ID, base)
				wantCode(t, "RevokeInvitation(bad, invitation)", err, licentia.CodeInvitationNotFound)
				_, err = tx.AcceptInvitation(ctx, bad, base)
				wantCode(t, "AcceptInvitation(bad)", err, licentia.CodeInvitationNotFound)
				wantCode(t, "SetAccountPassword(bad)", tx.SetAccountPassword(ctx, bad, "x", base), licentia.CodeNotFound)
				_, err = tx.UseLoginLink(ctx, bad, base)
				wantCode(t, "UseLoginLink(bad)", err, licentia.CodeNotFound)
				wantCode(t, "TouchSession(bad)", tx.TouchSession(ctx, bad, base), licentia.CodeNotFound)
				wantCode(t, "SetSessionOrganization(bad, org)", tx.SetSessionOrganization(ctx, bad, o.ID), licentia.CodeNotFound)
				if err := tx.DeleteSession(ctx, bad); err != nil {
					t.Errorf("DeleteSession(bad) error = %v, want nil", err)
				}
				if n, err := tx.DeleteAccountSessions(ctx, bad); n != 0 || err != nil {
					t.Errorf("DeleteAccountSessions(bad) = %d, %v; want 0, nil", n, err)
				}
				got, err := tx.Member(ctx, o.ID, m.ID)
				if diff := cmp.Diff(m, got); diff != "" || err != nil {
					t.Errorf("Member(valid) after malformed writes error = %v, mismatch (-want +got):\n%s", err, diff)
				}
				return errRollback
			})
			if !errors.Is(err, errRollback) {
				t.Errorf("InTx() error = %v, want %v", err, errRollback)
			}
		})
	}
}
