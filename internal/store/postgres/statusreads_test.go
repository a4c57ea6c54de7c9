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

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// heldReads counts the status reads sent alone and in groups, and holds
// those sent alone while hold is set, until release closes.
type heldReads struct {
	hold    atomic.Bool
	held    chan struct{}
	release chan struct{}
	alone   atomic.Int64
	mu      sync.Mutex
	groups  [][2]int // reads, and the statement's size
}

func isStatusRead(sql string) bool { return sql == postgres.LicenceWithSeatQuery }

func (h *heldReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if isStatusRead(d.SQL) {
		h.alone.Add(1)
		if h.hold.Load() {
			h.held <- struct{}{}
			<-h.release
		}
	}
	if size := len(d.Args) / 2; postgres.StatusBatchQueries[size] == d.SQL {
		reads := 0
		for i := 0; i < len(d.Args); i += 2 {
			if d.Args[i] != nil {
				reads++
			}
		}
		h.mu.Lock()
		h.groups = append(h.groups, [2]int{reads, size})
		h.mu.Unlock()
	}
	return ctx
}
func (h *heldReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestStatusReadsShareAStatement: while as many status reads as may be out
// are out, the reads that arrive wait and go next, together, in one
// statement; each gets its own answer (a seat, no seat, no licence). A read
// whose context ends while it waits leaves at once. Once nothing is out, a
// read goes alone again. Then many readers at once each get their own
// answer.
func TestStatusReadsShareAStatement(t *testing.T) {
	ctx := t.Context()
	h := &heldReads{held: make(chan struct{}), release: make(chan struct{})}
	db, err := postgres.OpenTraced(ctx, storetest.PostgresURL(t), h)
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	o, _, l := seedLicence(t, db, now)
	const seated = 5
	seats := map[string]string{} // machine id: activation id
	err = db.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.LockLicence(ctx, o.ID, l.ID); err != nil {
			return err
		}
		for i := range seated {
			a := &licentia.Activation{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, MachineID: fmt.Sprintf("machine-%d", i),
				ActivatedAt: now, LastSeenAt: now}
			if err := tx.CreateActivation(ctx, a); err != nil {
				return err
			}
			seats[a.MachineID] = a.ID
		}
		return nil
	})
	if err != nil {
		t.Fatalf("activating: %v", err)
	}
	unknown := licentia.NewID()
	// check reads machine i's seat (of no licence when i is negative) and
	// reports what is wrong with the answer.
	check := func(ctx context.Context, i int) error {
		licenceID, machine := l.ID, fmt.Sprintf("machine-%d", i)
		if i < 0 {
			licenceID, machine = unknown, fmt.Sprintf("machine-%d", -i)
		}
		got, seat, err := db.LicenceWithSeat(ctx, licenceID, machine)
		switch {
		case i < 0:
			if licentia.ErrorCode(err) != licentia.CodeLicenceNotFound {
				return fmt.Errorf("LicenceWithSeat(unknown, %s) error = %v, want licence_not_found", machine, err)
			}
		case err != nil:
			return fmt.Errorf("LicenceWithSeat(%s) error = %v", machine, err)
		case got.ID != l.ID || got.Status != licentia.StatusActive || got.LimitCount != l.LimitCount:
			return fmt.Errorf("LicenceWithSeat(%s) = %+v, want licence %s", machine, got, l.ID)
		case (seat == nil) != (seats[machine] == ""):
			return fmt.Errorf("LicenceWithSeat(%s) seat = %+v, want activation %q", machine, seat, seats[machine])
		case seat != nil && (seat.ActivationID != seats[machine] || !seat.LastSeenAt.Equal(now)):
			return fmt.Errorf("LicenceWithSeat(%s) seat = %+v, want activation %s seen at %v", machine, seat, seats[machine], now)
		}
		return nil
	}
	if err := check(ctx, 0); err != nil { // prepares the statement
		t.Fatal(err)
	}

	// As many reads as may be out, held in the tracer.
	h.hold.Store(true)
	errs := make(chan error, 100)
	var wg sync.WaitGroup
	for i := range postgres.StatusInFlight {
		wg.Go(func() { errs <- check(ctx, i) })
		<-h.held
	}
	h.hold.Store(false)
	// The next ones wait: seated machines, machines without a seat, and a
	// licence nobody has.
	next := []int{1, 2, 3, 4, 5, 6, 7, -1, 8, -2, 9}
	for _, i := range next {
		wg.Go(func() { errs <- check(ctx, i) })
	}
	waitFor(t, func() bool { return postgres.StatusWaiting(db) == len(next) })
	// One that gives up while it waits.
	gone, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		_, _, err := db.LicenceWithSeat(gone, l.ID, "machine-0")
		left <- err
	}()
	waitFor(t, func() bool { return postgres.StatusWaiting(db) == len(next)+1 })
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("a read whose context ended while it waited: error = %v, want context.Canceled", err)
	}
	if n := postgres.StatusWaiting(db); n != len(next) {
		t.Errorf("%d reads wait after one left, want %d", n, len(next))
	}
	close(h.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	h.mu.Lock()
	groups := h.groups
	h.mu.Unlock()
	if len(groups) != 1 || groups[0] != [2]int{len(next), 16} {
		t.Errorf("groups sent (reads, size) = %v, want one of %d reads in the statement of 16", groups, len(next))
	}
	if n := h.alone.Load(); n != 1+postgres.StatusInFlight {
		t.Errorf("%d reads went alone, want %d", n, 1+postgres.StatusInFlight)
	}

	// Nothing out: a read goes alone, at once.
	if err := check(ctx, 3); err != nil {
		t.Error(err)
	}
	if n := h.alone.Load(); n != 2+postgres.StatusInFlight {
		t.Errorf("%d reads went alone, want %d", n, 2+postgres.StatusInFlight)
	}

	// Many readers at once, each with its own answer, however they are
	// gathered.
	var failed atomic.Int64
	for w := range 32 {
		wg.Go(func() {
			for i := range 40 {
				if err := check(ctx, (w+i)%12-2); err != nil && failed.Add(1) < 5 {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if n := postgres.StatusWaiting(db); n != 0 {
		t.Errorf("%d reads wait after every reader returned, want 0", n)
	}
}

// waitFor waits until ok holds, for at most ten seconds.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

// TestStatusBatchReadsByKeys shows that the statement reading a group of
// status checks reads each of its pairs as the read of one check does: the
// licence by its key, and the seat through the same index of live
// activations, by the pair's licence (see explainer for how the plans are
// asked), for every size of group.
func TestStatusBatchReadsByKeys(t *testing.T) {
	explain := explainer(t)
	scans := func(plan *planNode) map[string]*planNode {
		m := map[string]*planNode{}
		for n := range plan.walk {
			if n.Relation != "" {
				m[n.Relation] = n
			}
		}
		return m
	}
	plan, raw := explain(postgres.LicenceWithSeatQuery, licentia.NewID(), "machine-1")
	one := scans(plan)
	if one["licences"] == nil || one["licences"].Index != "licences_pkey" || one["activations"] == nil || one["activations"].Index == "" {
		t.Fatalf("one read's plan %s, want the licence by its key and the seat by an index", raw)
	}
	for size, query := range postgres.StatusBatchQueries {
		args := make([]any, 2*size)
		for i := range size {
			args[2*i], args[2*i+1] = licentia.NewID(), fmt.Sprintf("machine-%d", i)
		}
		plan, raw := explain(query, args...)
		got := scans(plan)
		for rel, want := range one {
			n := got[rel]
			if n == nil || n.Type != want.Type || n.Index != want.Index || !strings.Contains(n.IndexCond, `"*VALUES*".column1)`) {
				t.Errorf("size %d: %s read by %+v, want by %s on the pair's licence, as one read; plan %s", size, rel, n, want.Index, raw)
			}
		}
	}
}
