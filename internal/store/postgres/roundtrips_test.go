package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// roundTrips counts the round trips of every connection: each statement
// sent alone, and each batch.
type roundTrips struct {
	n   atomic.Int64
	mu  sync.Mutex
	sql []string
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	r.mu.Lock()
	r.sql = append(r.sql, d.SQL)
	r.mu.Unlock()
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	r.mu.Lock()
	r.sql = append(r.sql, fmt.Sprintf("batch of %d", d.Batch.Len()))
	r.mu.Unlock()
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestNewSeatRoundTrips counts the round trips of a new seat's transaction,
// made as the activation service makes it, once its statements are
// prepared: the begin, the sweep lock, the licence's lock (which reads the
// sweep watermark too), the machine's live activation and the product
// with its keys; then the activation's insert, the licence's count, the
// counter, the audit entry, the event and its deliveries with the commit.
// Two, where every statement alone, and the watermark and the keys read
// apart, took fourteen; and the rows it leaves are all there. A second
// live seat of the machine, held back as the first, fails the transaction
// as conflict when it is sent, with nothing of it written.
func TestNewSeatRoundTrips(t *testing.T) {
	ctx := t.Context()
	trips := &roundTrips{}
	db, err := postgres.OpenTraced(ctx, storetest.PostgresURL(t), trips)
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o, _, l := seedLicence(t, db, now)
	seats := func(machines ...string) error {
		return db.InTx(ctx, func(tx store.Tx) error {
			seat, err := tx.LockSeat(ctx, o.ID, l.ID, machines[0], true)
			if err != nil {
				return err
			}
			if seat.Held != nil || seat.Product == nil {
				t.Errorf("LockSeat(%s) = %+v, want no live activation and the product", machines[0], seat)
			}
			locked := seat.Licence
			for _, m := range machines {
				a := &licentia.Activation{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, MachineID: m, ActivatedAt: now, LastSeenAt: now}
				if err := tx.CreateActivation(ctx, a); err != nil {
					return err
				}
				locked.LiveActivations++
				err := events.Record(ctx, tx, licentia.Actor{Type: licentia.ActorApplication}, locked, a, licentia.AuditActivationCreated,
					licentia.EventActivationCreated, now, events.ActivationData(locked, a))
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := seats("machine-0"); err != nil { // prepares the statements
		t.Fatalf("new seat machine-0: %v", err)
	}
	trips.n.Store(0)
	trips.sql = nil
	if err := seats("machine-1"); err != nil {
		t.Fatalf("new seat machine-1: %v", err)
	}
	if got := trips.n.Load(); got != 2 {
		t.Errorf("a new seat took %d round trips, want 2: %q", got, trips.sql)
	}
	err = seats("machine-2", "machine-2")
	if licentia.ErrorCode(err) != licentia.CodeConflict {
		t.Errorf("a second live seat of a machine in one transaction: error %v, want conflict", err)
	}
	got, err := db.Licence(ctx, o.ID, l.ID)
	if err != nil || got.LiveActivations != 2 {
		t.Fatalf("Licence() = %+v, %v; want 2 live activations", got, err)
	}
	audit, err := db.LicenceAudit(ctx, o.ID, l.ID)
	if err != nil || len(audit) != 2 {
		t.Errorf("LicenceAudit() = %d entries, %v; want 2", len(audit), err)
	}
	if counts, err := db.CountLicences(ctx, o.ID, nil, now, now); err != nil || counts.LiveMachines != 2 {
		t.Errorf("CountLicences() = %+v, %v; want 2 live activations counted", counts, err)
	}

	// A held-back statement is sent with its arguments as they were when
	// it was made, whatever the caller changes afterwards.
	licenceID := l.ID
	err = db.InTx(ctx, func(tx store.Tx) error {
		err := tx.AppendAudit(ctx, &licentia.AuditEntry{ID: licentia.NewID(), OrgID: o.ID, LicenceID: &licenceID,
			Action: licentia.AuditActivationCreated, Actor: licentia.Actor{Type: licentia.ActorApplication}, At: now})
		licenceID = "not a licence"
		return err
	})
	if err != nil {
		t.Fatalf("AppendAudit() then a change of its licence id: %v", err)
	}
	if audit, _ := db.LicenceAudit(ctx, o.ID, l.ID); len(audit) != 3 {
		t.Errorf("LicenceAudit() = %d entries, want 3", len(audit))
	}
}

// TestTransactionEnds: a transaction's begin goes with its first statement
// and its commit with its last held-back ones, so a transaction of
// held-back statements only is one round trip, and one that sends nothing
// none. Whichever way a transaction ends (an error, a failed held-back
// statement found at the commit, a panic), its writes are gone and its
// connection goes back to the pool out of any transaction: a pool of one
// connection serves the next one.
func TestTransactionEnds(t *testing.T) {
	ctx := t.Context()
	trips := &roundTrips{}
	url := storetest.PostgresURL(t)
	url += map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + "pool_max_conns=1"
	db, err := postgres.OpenTraced(ctx, url, trips)
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o, _, l := seedLicence(t, db, now)
	audit := func(licenceID string) *licentia.AuditEntry {
		return &licentia.AuditEntry{ID: licentia.NewID(), OrgID: o.ID, LicenceID: &licenceID,
			Action: licentia.AuditActivationCreated, Actor: licentia.Actor{Type: licentia.ActorApplication}, At: now}
	}
	entries := func() int {
		t.Helper()
		got, err := db.LicenceAudit(ctx, o.ID, l.ID)
		if err != nil {
			t.Fatalf("LicenceAudit() error = %v", err)
		}
		return len(got)
	}
	run := func(fn func(store.Tx) error) (int64, error) {
		trips.n.Store(0)
		err := db.InTx(ctx, fn)
		return trips.n.Load(), err
	}

	if n, err := run(func(store.Tx) error { return nil }); err != nil || n != 0 {
		t.Errorf("an empty transaction: %d round trips, error %v; want 0, nil", n, err)
	}
	n, err := run(func(tx store.Tx) error { return tx.AppendAudit(ctx, audit(l.ID)) })
	if err != nil || n != 1 || entries() != 1 {
		t.Errorf("a held-back insert alone: %d round trips, error %v, %d entries; want 1, nil, 1", n, err, entries())
	}

	refused := errors.New("refused")
	_, err = run(func(tx store.Tx) error {
		if err := tx.AppendAudit(ctx, audit(l.ID)); err != nil {
			return err
		}
		if _, err := tx.LockLicence(ctx, o.ID, l.ID); err != nil { // sends the insert
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) || entries() != 1 {
		t.Errorf("a transaction ended by its function: error %v, %d entries; want %v, 1", err, entries(), refused)
	}

	// The same entry twice fails its unique id when it is sent, with the
	// commit.
	_, err = run(func(tx store.Tx) error {
		twice := audit(l.ID)
		if err := tx.AppendAudit(ctx, twice); err != nil {
			return err
		}
		return tx.AppendAudit(ctx, twice)
	})
	if err == nil || entries() != 1 {
		t.Errorf("a held-back insert failing at the commit: error %v, %d entries; want an error, 1", err, entries())
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("the transaction's panic did not come through")
			}
		}()
		db.InTx(ctx, func(tx store.Tx) error {
			if _, err := tx.LockLicence(ctx, o.ID, l.ID); err != nil {
				return err
			}
			tx.AppendAudit(ctx, audit(l.ID))
			panic("in the middle of a transaction")
		})
	}()
	if entries() != 1 {
		t.Errorf("after a panic: %d entries, want 1", entries())
	}
	if _, err := run(func(tx store.Tx) error {
		_, err := tx.LockLicence(ctx, o.ID, l.ID)
		return err
	}); err != nil {
		t.Errorf("a transaction on the pool's one connection afterwards: %v", err)
	}
}
