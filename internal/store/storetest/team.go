package storetest

import (
	"errors"
	"strings"
	"testing"

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
