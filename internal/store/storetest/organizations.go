package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func testOrganizations(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	createOrganization(t, s, "other")

	got, err := s.Organization(ctx, o.ID)
	if err != nil {
		t.Fatalf("Organization() error = %v", err)
	}
	if diff := cmp.Diff(o, got); diff != "" {
		t.Errorf("Organization() mismatch (-want +got):\n%s", diff)
	}
	got, err = s.OrganizationBySlug(ctx, o.Slug)
	if err != nil {
		t.Fatalf("OrganizationBySlug() error = %v", err)
	}
	if diff := cmp.Diff(o, got); diff != "" {
		t.Errorf("OrganizationBySlug() mismatch (-want +got):\n%s", diff)
	}

	_, err = s.Organization(ctx, licentia.NewID())
	wantCode(t, "Organization(missing)", err, licentia.CodeNotFound)
	_, err = s.OrganizationBySlug(ctx, "missing")
	wantCode(t, "OrganizationBySlug(missing)", err, licentia.CodeNotFound)
	_, err = s.OrganizationBySlug(ctx, "ACME")
	wantCode(t, "OrganizationBySlug(ACME)", err, licentia.CodeNotFound)
}

func testOrganizationConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	taken := createOrganization(t, s, "acme")
	for _, tt := range []struct {
		name string
		org  *licentia.Organization
	}{
		{"slug", newOrganization(taken.Slug)},
		{"id", &licentia.Organization{ID: taken.ID, Name: "Twin", Slug: "twin", Plan: licentia.PlanFree, CreatedAt: base}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateOrganization(ctx, tt.org) })
			wantCode(t, "CreateOrganization()", err, licentia.CodeConflict)
			got, err := s.OrganizationBySlug(ctx, taken.Slug)
			if err != nil {
				t.Fatalf("OrganizationBySlug() error = %v", err)
			}
			if diff := cmp.Diff(taken, got); diff != "" {
				t.Errorf("OrganizationBySlug() after conflict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func testMembers(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	// Written newest first; two share created_at, so the id breaks the tie.
	member := func(id, orgID, email string, created time.Time) *licentia.Member {
		return &licentia.Member{ID: id, OrgID: orgID, Email: email, Role: licentia.RoleAdmin, CreatedAt: created}
	}
	newest := member(seqID(1), o.ID, "new@example.com", base.Add(time.Hour))
	second := member(seqID(3), o.ID, "Zoë@Example.com", base)
	first := member(seqID(2), o.ID, "owner@example.com", base)
	first.Role = licentia.RoleOwner
	// The same address may be a member of another organization.
	elsewhere := member(licentia.NewID(), other.ID, first.Email, base)
	inTx(t, s, func(tx store.Tx) error {
		for _, m := range []*licentia.Member{newest, second, first, elsewhere} {
			if err := tx.CreateMember(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})

	got, err := s.Members(ctx, o.ID)
	if err != nil {
		t.Fatalf("Members() error = %v", err)
	}
	if diff := cmp.Diff([]licentia.Member{*first, *second, *newest}, got); diff != "" {
		t.Errorf("Members() mismatch (-want +got):\n%s", diff)
	}

	// An address is a member once, whatever the case of its letters.
	for _, email := range []string{first.Email, strings.ToUpper(first.Email), "zoë@example.com"} {
		m := &licentia.Member{ID: licentia.NewID(), OrgID: o.ID, Email: email, Role: licentia.RoleAdmin, CreatedAt: base}
		err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateMember(ctx, m) })
		wantCode(t, "CreateMember("+email+")", err, licentia.CodeConflict)
	}
}

func testPendingInvitations(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	inv := func(id string, created, expires time.Time) *licentia.Invitation {
		return &licentia.Invitation{ID: id, OrgID: o.ID, Email: id + "@example.com", Role: licentia.RoleAdmin,
			ExpiresAt: expires, CreatedAt: created}
	}
	oldest := inv(seqID(1), base.Add(-2*time.Hour), base.Add(24*time.Hour))
	lastMillisecond := inv(seqID(2), base.Add(-time.Hour), base.Add(time.Millisecond))
	tie := inv(seqID(3), base.Add(-time.Hour), base.Add(time.Hour))
	expiresNow := inv(seqID(4), base.Add(-3*time.Hour), base)
	expired := inv(seqID(5), base.Add(-3*time.Hour), base.Add(-time.Hour))
	accepted := inv(seqID(6), base.Add(-3*time.Hour), base.Add(time.Hour))
	accepted.AcceptedAt = ptr(base.Add(-time.Minute))
	revoked := inv(seqID(7), base.Add(-3*time.Hour), base.Add(time.Hour))
	revoked.RevokedAt = ptr(base.Add(-time.Minute))
	inTx(t, s, func(tx store.Tx) error {
		for _, i := range []*licentia.Invitation{revoked, tie, accepted, expired, lastMillisecond, expiresNow, oldest} {
			if err := tx.CreateInvitation(ctx, i); err != nil {
				return err
			}
		}
		return nil
	})

	got, err := s.PendingInvitations(ctx, o.ID, base)
	if err != nil {
		t.Fatalf("PendingInvitations() error = %v", err)
	}
	if diff := cmp.Diff([]licentia.Invitation{*oldest, *lastMillisecond, *tie}, got); diff != "" {
		t.Errorf("PendingInvitations() mismatch (-want +got):\n%s", diff)
	}
	got, err = s.PendingInvitations(ctx, o.ID, base.Add(time.Millisecond))
	if err != nil {
		t.Fatalf("PendingInvitations() error = %v", err)
	}
	if diff := cmp.Diff([]licentia.Invitation{*oldest, *tie}, got); diff != "" {
		t.Errorf("PendingInvitations(1 ms later) mismatch (-want +got):\n%s", diff)
	}
}

func testSettings(t *testing.T, s store.Store) {
	ctx := t.Context()
	name := store.SettingMasterKeyFingerprint
	if got, err := s.Setting(ctx, name); got != "" || err != nil {
		t.Errorf("Setting(unset) = %q, %v, want \"\", nil", got, err)
	}
	for _, value := range []string{"sha256:first", "sha256:second ✓", ""} {
		inTx(t, s, func(tx store.Tx) error { return tx.SetSetting(ctx, name, value) })
		if got, err := s.Setting(ctx, name); got != value || err != nil {
			t.Errorf("Setting() = %q, %v, want %q, nil", got, err, value)
		}
	}
}

// testLockSetting: a setting locked exclusively is read by no other
// LockSetting until its transaction ends, and the reader then sees what it
// wrote; a shared lock holds off an exclusive one likewise. The check that
// the second waits gives it 200 ms, so a store that does not lock can pass
// by luck but one that does never fails.
func testLockSetting(t *testing.T, s store.Store) {
	ctx := t.Context()
	name := store.SettingMasterKeyFingerprint
	inTx(t, s, func(tx store.Tx) error { return tx.SetSetting(ctx, name, "sha256:v1") })
	for _, tt := range []struct {
		name                  string
		firstExcl, secondExcl bool
	}{
		{"exclusive then shared", true, false},
		{"shared then exclusive", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, err := s.Setting(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			after := before + "+"
			held, release := make(chan struct{}), make(chan struct{})
			firstDone := make(chan error, 1)
			go func() {
				firstDone <- s.InTx(ctx, func(tx store.Tx) error {
					v, err := tx.LockSetting(ctx, name, tt.firstExcl)
					if err != nil {
						return err
					}
					if v != before {
						return fmt.Errorf("LockSetting() = %q, want %q", v, before)
					}
					close(held)
					<-release
					if tt.firstExcl {
						return tx.SetSetting(ctx, name, after)
					}
					return nil
				})
			}()
			<-held
			second := make(chan string, 1)
			secondDone := make(chan error, 1)
			go func() {
				secondDone <- s.InTx(ctx, func(tx store.Tx) error {
					v, err := tx.LockSetting(ctx, name, tt.secondExcl)
					second <- v
					if err == nil && tt.secondExcl {
						err = tx.SetSetting(ctx, name, after)
					}
					return err
				})
			}()
			select {
			case v := <-second:
				close(release)
				t.Errorf("LockSetting() answered %q while another transaction held the setting", v)
			case <-time.After(200 * time.Millisecond):
				close(release)
				if v := <-second; tt.firstExcl && v != after || !tt.firstExcl && v != before {
					t.Errorf("LockSetting() after the first transaction = %q", v)
				}
			}
			if err := <-firstDone; err != nil {
				t.Fatalf("first transaction: %v", err)
			}
			if err := <-secondDone; err != nil {
				t.Fatalf("second transaction: %v", err)
			}
			if got, _ := s.Setting(ctx, name); got != after {
				t.Errorf("Setting() = %q, want %q", got, after)
			}
		})
	}
}
