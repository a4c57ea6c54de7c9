package sqlite_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestStatusReadsOnTheirConnections: the status route's read, which goes
// to the driver directly on connections of its own, answers as the read
// through database/sql does (a transaction's, which the same store runs on
// its writer), keeps one connection for reads one after another and no
// more than its limit for reads at once, gives up a connection
// whose read failed, and fails, not waits, once the store is closed.
func TestStatusReadsOnTheirConnections(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "licentia.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, a := storetest.Seat(t, db, "machine-1")

	type answer struct {
		licence *licentia.Licence
		seat    *store.Seat
		code    licentia.Code
	}
	viaTx := func(licenceID, machineID string) answer {
		var got answer
		err := db.InTx(ctx, func(tx store.Tx) error {
			var err error
			got.licence, got.seat, err = tx.LicenceWithSeat(ctx, licenceID, machineID)
			got.code = licentia.ErrorCode(err)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	direct := func(licenceID, machineID string) answer {
		l, seat, err := db.LicenceWithSeat(ctx, licenceID, machineID)
		return answer{l, seat, licentia.ErrorCode(err)}
	}
	for _, c := range []struct{ name, licenceID, machineID string }{
		{"seat", l.ID, "machine-1"}, {"no seat", l.ID, "machine-2"}, {"no licence", licentia.NewID(), "machine-1"},
	} {
		want, got := viaTx(c.licenceID, c.machineID), direct(c.licenceID, c.machineID)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(answer{})); diff != "" {
			t.Errorf("%s: direct read differs from the transaction's (-tx +direct):\n%s", c.name, diff)
		}
	}
	seat := direct(l.ID, "machine-1")
	if seat.seat == nil || seat.seat.ActivationID != a.ID || len(seat.licence.Features) != 1 || seat.licence.ExpiresAt == nil {
		t.Fatalf("direct read = %+v, %+v; want the seat %s, one feature and an expiry", seat.licence, seat.seat, a.ID)
	}

	for range 50 {
		direct(l.ID, "machine-1")
	}
	if n := sqlite.StatusConns(db); n != 1 {
		t.Errorf("after reads one after another, %d connections open, want 1", n)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wrong := 0
	for range 32 {
		wg.Go(func() {
			for range 20 {
				if got := direct(l.ID, "machine-1"); !cmp.Equal(got, seat, cmp.AllowUnexported(answer{})) {
					mu.Lock()
					wrong++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if wrong > 0 {
		t.Errorf("%d of 640 reads at once differ from the read alone", wrong)
	}
	if n := sqlite.StatusConns(db); n < 1 || n > sqlite.StatusReaders() {
		t.Errorf("after reads at once, %d connections open, want 1 to %d", n, sqlite.StatusReaders())
	}

	// A column holding a value of another type fails the read, naming the
	// column, and its connection is given up.
	before := sqlite.StatusConns(db)
	if _, err := sqlite.Writer(db).ExecContext(ctx, `UPDATE licences SET limit_count = 'many' WHERE id = ?`, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.LicenceWithSeat(ctx, l.ID, "machine-1"); err == nil || !strings.Contains(err.Error(), "column 8") {
		t.Errorf("read of a text limit_count: error = %v, want one naming column 8", err)
	}
	if n := sqlite.StatusConns(db); n != before-1 {
		t.Errorf("after a failed read, %d connections open, want %d", n, before-1)
	}
	if _, err := sqlite.Writer(db).ExecContext(ctx, `UPDATE licences SET limit_count = 3 WHERE id = ?`, l.ID); err != nil {
		t.Fatal(err)
	}
	if got := direct(l.ID, "machine-1"); !cmp.Equal(got, seat, cmp.AllowUnexported(answer{})) {
		t.Errorf("read after the row was mended = %+v, want %+v", got, seat)
	}

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := db.LicenceWithSeat(ctx, l.ID, "machine-1")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("read after Close succeeded, want an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("read after Close still waits after 10 s")
	}
}
