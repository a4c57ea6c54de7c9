package postgres_test

import (
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.OpenPostgres)
}

// openAll opens n stores on one schema at once, as n processes starting
// together would: the migration lock lets exactly one migrate.
func openAll(t *testing.T, n int) []*postgres.DB {
	t.Helper()
	url := storetest.PostgresURL(t)
	dbs := make([]*postgres.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), url) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open() #%d error = %v", i, errs[i])
		} else {
			t.Cleanup(func() { dbs[i].Close() })
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return dbs
}

// TestLastPlaceAcrossProcesses races for the last place through separate
// pools, as separate processes sharing one database would.
func TestLastPlaceAcrossProcesses(t *testing.T) {
	const racers = 8
	ctx := t.Context()
	dbs := openAll(t, 4)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree, CreatedAt: now}
	if err := dbs[0].InTx(ctx, func(tx store.Tx) error { return tx.CreateOrganization(ctx, o) }); err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = dbs[i%len(dbs)].InTx(ctx, func(tx store.Tx) error {
				if err := tx.LockOrganization(ctx, o.ID); err != nil {
					return err
				}
				n, err := tx.CountLiveAPIKeys(ctx, o.ID, now)
				if err != nil || n >= 1 {
					return err
				}
				return tx.CreateAPIKey(ctx, &licentia.APIKey{ID: licentia.NewID(), OrgID: o.ID, Name: "key",
					Prefix: licentia.NewID(), Hash: []byte{1}, Scopes: []licentia.Scope{licentia.ScopeAuditRead}, CreatedAt: now})
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("racer %d: InTx() error = %v", i, err)
		}
	}
	if n, err := dbs[0].CountLiveAPIKeys(ctx, o.ID, now); n != 1 || err != nil {
		t.Errorf("CountLiveAPIKeys() = %d, %v, want 1, nil", n, err)
	}
}
