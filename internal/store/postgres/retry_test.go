package postgres_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// openLogged opens a store whose warnings go to the returned buffer.
func openLogged(t *testing.T) (*postgres.DB, *syncBuffer) {
	t.Helper()
	db, err := postgres.Open(t.Context(), storetest.PostgresURL(t))
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	var logs syncBuffer
	db.SetLogger(slog.New(slog.NewJSONHandler(&logs, nil)))
	return db, &logs
}

func sqlstate(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Two transactions locking two organizations in opposite orders deadlock on
// their first run; PostgreSQL ends one, and InTx runs that one again, so
// both succeed, the victim having run twice, and the retry is logged.
func TestInTxRetriesDeadlockVictim(t *testing.T) {
	ctx := t.Context()
	db, logs := openLogged(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var orgs [2]string
	for i := range orgs {
		o := &licentia.Organization{ID: licentia.NewID(), Name: "Org", Slug: "org-" + string(rune('a'+i)), Plan: licentia.PlanFree, CreatedAt: now}
		if err := db.InTx(ctx, func(tx store.Tx) error { return tx.CreateOrganization(ctx, o) }); err != nil {
			t.Fatalf("CreateOrganization() error = %v", err)
		}
		orgs[i] = o.ID
	}
	var holding sync.WaitGroup // both hold their first lock
	holding.Add(2)
	var runs [2]atomic.Int32
	// The victim's run again waits for the other to commit: on a busy
	// machine it could otherwise take its first lock again before the
	// other, woken by the rollback, takes it, and deadlock once more.
	done := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	lockBoth := func(i int) error {
		defer close(done[i])
		return db.InTx(ctx, func(tx store.Tx) error {
			first := runs[i].Add(1) == 1
			if !first {
				<-done[1-i]
			}
			if err := tx.LockOrganization(ctx, orgs[i]); err != nil {
				return err
			}
			if first {
				holding.Done()
				holding.Wait()
			}
			return tx.LockOrganization(ctx, orgs[1-i])
		})
	}
	var errs [2]error
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { errs[i] = lockBoth(i) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("transaction %d: InTx() error = %v", i, err)
		}
	}
	if total := runs[0].Load() + runs[1].Load(); total != 3 {
		t.Errorf("runs %d and %d, want one transaction run once and the other twice", runs[0].Load(), runs[1].Load())
	}
	if got := logs.String(); !strings.Contains(got, `"level":"WARN","msg":"transaction retried","sqlstate":"40P01","attempt":1`) {
		t.Errorf("log = %q, want a warning of the retried deadlock", got)
	}
}

// A transaction that keeps failing with a serialization failure runs
// TxAttempts times and returns the failure; any other error is returned
// after one run.
func TestInTxRetriesBounded(t *testing.T) {
	ctx := t.Context()
	db, logs := openLogged(t)
	for _, tt := range []struct {
		errcode, want string
		runs          int
	}{
		{"serialization_failure", "40001", postgres.TxAttempts},
		{"deadlock_detected", "40P01", postgres.TxAttempts},
		{"unique_violation", "23505", 1},
	} {
		runs := 0
		err := db.InTx(ctx, func(tx store.Tx) error {
			runs++
			return postgres.Exec(ctx, tx, `DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '`+tt.errcode+`'; END $$`)
		})
		if got := sqlstate(err); got != tt.want || runs != tt.runs {
			t.Errorf("%s: InTx() error = %v (SQLSTATE %q) after %d runs, want SQLSTATE %s after %d", tt.errcode, err, got, runs, tt.want, tt.runs)
		}
	}
	if n := strings.Count(logs.String(), `"msg":"transaction retried"`); n != 2*(postgres.TxAttempts-1) {
		t.Errorf("%d retries logged, want %d", n, 2*(postgres.TxAttempts-1))
	}
}
