package storetest

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testTimes writes instants finer than a millisecond, in another zone, and
// reads them back in UTC at millisecond precision, which is what answers show.
func testTimes(t *testing.T, s store.Store) {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	at := time.Date(2026, 7, 8, 9, 10, 11, 123999999, zone)
	want := time.Date(2026, 7, 8, 3, 40, 11, 123_000_000, time.UTC)
	got := writeAndReadTimes(t, s, at)
	maps.Copy(got, writeAndReadProductTimes(t, s, at))
	for _, tt := range []struct {
		name string
		want time.Time
	}{
		{"organization created_at", want},
		{"member created_at", want},
		{"invitation created_at", want},
		{"invitation expires_at", want.Add(time.Hour)},
		{"api key created_at", want},
		{"api key expires_at", want.Add(time.Hour)},
		{"api key revoked_at, created", want},
		{"api key revoked_at, revoked", want},
		{"audit at", want},
		{"product created_at", want},
		{"product updated_at, created", want.Add(time.Hour)},
		{"product updated_at, updated", want.Add(2 * time.Hour)},
		{"product key created_at", want},
		{"product key retired_at, created", want.Add(time.Hour)},
		{"product key retired_at, set", want.Add(2 * time.Hour)},
	} {
		g, ok := got[tt.name]
		if !ok || !g.Equal(tt.want) || g.Location() != time.UTC {
			t.Errorf("%s = %s (%v), want %s in UTC", tt.name, g.Format(time.RFC3339Nano), g.Location(), tt.want.Format(time.RFC3339Nano))
		}
	}
}

// writeAndReadTimes writes a record of every kind with its times at at, and
// returns the times read back, by record and column.
func writeAndReadTimes(t *testing.T, s store.Store, at time.Time) map[string]time.Time {
	t.Helper()
	ctx := t.Context()
	o := newOrganization("acme")
	o.CreatedAt = at
	m := &licentia.Member{ID: licentia.NewID(), OrgID: o.ID, Email: "a@example.com", Role: licentia.RoleOwner, CreatedAt: at}
	inv := &licentia.Invitation{ID: licentia.NewID(), OrgID: o.ID, Email: "b@example.com", Role: licentia.RoleAdmin,
		ExpiresAt: at.Add(time.Hour), CreatedAt: at}
	k, revoked, toRevoke := newAPIKey(o.ID), newAPIKey(o.ID), newAPIKey(o.ID)
	k.ExpiresAt, k.CreatedAt = ptr(at.Add(time.Hour)), at
	revoked.RevokedAt = ptr(at)
	e := newAuditEntry(o.ID, `{}`)
	e.At = at
	inTx(t, s, func(tx store.Tx) error {
		return errors.Join(tx.CreateOrganization(ctx, o), tx.CreateMember(ctx, m), tx.CreateInvitation(ctx, inv),
			tx.CreateAPIKey(ctx, k), tx.CreateAPIKey(ctx, revoked), tx.CreateAPIKey(ctx, toRevoke), tx.AppendAudit(ctx, e))
	})
	if _, err := revoke(t, s, o.ID, toRevoke.ID, at); err != nil {
		t.Fatalf("RevokeAPIKey() error = %v", err)
	}

	gotOrg, err1 := s.Organization(ctx, o.ID)
	members, err2 := s.Members(ctx, o.ID)
	invs, err3 := s.PendingInvitations(ctx, o.ID, at)
	gotKey, err4 := s.APIKey(ctx, o.ID, k.ID)
	gotRevoked, err5 := s.APIKey(ctx, o.ID, revoked.ID)
	gotToRevoke, err6 := s.APIKey(ctx, o.ID, toRevoke.ID)
	entries, err7 := s.OrganizationAudit(ctx, o.ID)
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); err != nil {
		t.Fatalf("read error = %v", err)
	}
	if len(members) != 1 || len(invs) != 1 || len(entries) != 1 || gotKey.ExpiresAt == nil ||
		gotRevoked.RevokedAt == nil || gotToRevoke.RevokedAt == nil {
		t.Fatalf("read %d members, %d invitations, %d audit entries, keys %+v %+v %+v; want one of each, times set",
			len(members), len(invs), len(entries), gotKey, gotRevoked, gotToRevoke)
	}
	return map[string]time.Time{
		"organization created_at":     gotOrg.CreatedAt,
		"member created_at":           members[0].CreatedAt,
		"invitation created_at":       invs[0].CreatedAt,
		"invitation expires_at":       invs[0].ExpiresAt,
		"api key created_at":          gotKey.CreatedAt,
		"api key expires_at":          *gotKey.ExpiresAt,
		"api key revoked_at, created": *gotRevoked.RevokedAt,
		"api key revoked_at, revoked": *gotToRevoke.RevokedAt,
		"audit at":                    entries[0].At,
	}
}

// writeAndReadProductTimes is writeAndReadTimes for products and their keys.
func writeAndReadProductTimes(t *testing.T, s store.Store, at time.Time) map[string]time.Time {
	t.Helper()
	ctx := t.Context()
	o := createOrganization(t, s, "times")
	p, updated := newProduct(o.ID, "times", "TIMES"), newProduct(o.ID, "updated", "UPDATED")
	p.CreatedAt, p.UpdatedAt, updated.UpdatedAt = at, at.Add(time.Hour), at.Add(2*time.Hour)
	retired := newProductKey(p.ID, licentia.KeyRetired, at.Add(time.Second))
	retired.RetiredAt = ptr(at.Add(time.Hour))
	p.Keys = append(p.Keys, retired, newProductKey(p.ID, licentia.KeyPrevious, at.Add(time.Minute)))
	p.Keys[0].CreatedAt = at
	createProducts(t, s, p)
	inTx(t, s, func(tx store.Tx) error {
		return errors.Join(tx.CreateProduct(ctx, newProduct(o.ID, updated.ID, updated.KeyPrefix)),
			tx.UpdateProduct(ctx, updated),
			tx.SetProductKeyStatus(ctx, p.ID, p.Keys[2].ID, licentia.KeyRetired, ptr(at.Add(2*time.Hour))))
	})

	gotP, err1 := s.Product(ctx, o.ID, p.ID)
	gotUpdated, err2 := s.Product(ctx, o.ID, updated.ID)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("read error = %v", err)
	}
	if len(gotP.Keys) != 3 || gotP.Keys[1].RetiredAt == nil || gotP.Keys[2].RetiredAt == nil {
		t.Fatalf("Product().Keys = %+v, want 3, the last two retired", gotP.Keys)
	}
	return map[string]time.Time{
		"product created_at":              gotP.CreatedAt,
		"product updated_at, created":     gotP.UpdatedAt,
		"product updated_at, updated":     gotUpdated.UpdatedAt,
		"product key created_at":          gotP.Keys[0].CreatedAt,
		"product key retired_at, created": *gotP.Keys[1].RetiredAt,
		"product key retired_at, set":     *gotP.Keys[2].RetiredAt,
	}
}

// testReadOwnWrites reads, inside a transaction, what it has just written.
func testReadOwnWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := newOrganization("acme")
	k := newAPIKey(o.ID)
	inTx(t, s, func(tx store.Tx) error {
		if err := errors.Join(tx.CreateOrganization(ctx, o), tx.CreateAPIKey(ctx, k), tx.SetSetting(ctx, "name", "value")); err != nil {
			return err
		}
		if _, err := tx.OrganizationBySlug(ctx, o.Slug); err != nil {
			t.Errorf("OrganizationBySlug() in tx error = %v", err)
		}
		if _, err := tx.APIKeyByPrefix(ctx, k.Prefix); err != nil {
			t.Errorf("APIKeyByPrefix() in tx error = %v", err)
		}
		if got, err := tx.Setting(ctx, "name"); got != "value" || err != nil {
			t.Errorf("Setting() in tx = %q, %v, want \"value\", nil", got, err)
		}
		return nil
	})
}

// testRollbackOnError returns an error after writing: nothing stays.
func testRollbackOnError(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := newOrganization("acme")
	errStop := errors.New("stop")
	err := s.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrganization(ctx, o); err != nil {
			return err
		}
		if err := tx.AppendAudit(ctx, newAuditEntry(o.ID, `{}`)); err != nil {
			return err
		}
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("InTx() error = %v, want %v", err, errStop)
	}
	checkNothingWritten(t, s, o)
}

// testRollbackOnPanic panics after writing: nothing stays, the panic goes
// on to the caller, and the store still takes transactions.
func testRollbackOnPanic(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := newOrganization("acme")
	recovered := func() (p any) {
		defer func() { p = recover() }()
		s.InTx(ctx, func(tx store.Tx) error {
			if err := tx.CreateOrganization(ctx, o); err != nil {
				return err
			}
			if err := tx.AppendAudit(ctx, newAuditEntry(o.ID, `{}`)); err != nil {
				return err
			}
			panic("boom")
		})
		return nil
	}()
	if recovered != "boom" {
		t.Fatalf("InTx() panicked with %v, want boom", recovered)
	}
	checkNothingWritten(t, s, o)
	createOrganization(t, s, o.Slug)
}

func checkNothingWritten(t *testing.T, s store.Store, o *licentia.Organization) {
	t.Helper()
	ctx := t.Context()
	_, err := s.Organization(ctx, o.ID)
	wantCode(t, "Organization() after rollback", err, licentia.CodeNotFound)
	_, err = s.OrganizationBySlug(ctx, o.Slug)
	wantCode(t, "OrganizationBySlug() after rollback", err, licentia.CodeNotFound)
	if entries, err := s.OrganizationAudit(ctx, o.ID); len(entries) != 0 || err != nil {
		t.Errorf("OrganizationAudit() after rollback = %+v, %v, want none", entries, err)
	}
}
