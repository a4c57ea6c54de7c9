package postgres_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestRenewLeaseSettingEndsWithIt shows that the renewal's commit without
// waiting for the WAL flush is its own: on a pool of one connection, the
// statements after a renewal commit as every other write does.
func TestRenewLeaseSettingEndsWithIt(t *testing.T) {
	ctx := t.Context()
	db, err := postgres.Open(ctx, storetest.PostgresURL(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o, p, l := seedLicence(t, db, now)
	a := &licentia.Activation{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, MachineID: "machine-1", ActivatedAt: now, LastSeenAt: now}
	lease := &store.FloatingLease{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, ActivationID: a.ID, TakenAt: now, ExpiresAt: now.Add(time.Minute)}
	err = db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateActivation(ctx, a); err != nil {
			return err
		}
		return tx.PutLease(ctx, lease)
	})
	if err != nil {
		t.Fatalf("setting up: %v", err)
	}
	_, renewed, err := db.RenewLease(ctx, p.ID, l.ID, a.MachineID, lease.ID, now, now.Add(15*time.Minute))
	if err != nil || renewed == nil || !renewed.ExpiresAt.Equal(now.Add(15*time.Minute)) {
		t.Fatalf("RenewLease() = %+v, %v; want the lease ending at +15m", renewed, err)
	}
	if v, err := postgres.Setting(ctx, db, "synchronous_commit"); err != nil || v != "on" {
		t.Errorf("synchronous_commit after a renewal = %q, %v; want on", v, err)
	}
}

// seedLicence stores an organization, a product and a machines licence of
// limit 100 on it, as they were at now.
func seedLicence(t *testing.T, db *postgres.DB, now time.Time) (*licentia.Organization, *licentia.Product, *licentia.Licence) {
	t.Helper()
	ctx := t.Context()
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree, CreatedAt: now}
	p := &licentia.Product{ID: "acme-app", OrgID: o.ID, Name: "Acme", KeyPrefix: "ACME", CurrentMajor: 1,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: now, UpdatedAt: now, LeaseTTLSeconds: 900}
	l := &licentia.Licence{ID: licentia.NewID(), OrgID: o.ID, ProductID: p.ID, Email: "a@example.com", IssuedAt: now,
		LimitKind: licentia.LimitMachines, LimitCount: 100, Major: 1, Status: licentia.StatusActive,
		Source: licentia.SourceAdmin, CreatedAt: now, UpdatedAt: now}
	err := db.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrganization(ctx, o); err != nil {
			return err
		}
		if err := tx.CreateProduct(ctx, p); err != nil {
			return err
		}
		return tx.CreateLicence(ctx, l)
	})
	if err != nil {
		t.Fatalf("setting up: %v", err)
	}
	return o, p, l
}
