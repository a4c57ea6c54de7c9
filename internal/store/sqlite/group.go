package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/licentia/licentia/internal/store"
)

// groupWriter runs the store's transactions on the one writer connection,
// committing together those that arrive while another commits (group
// commit). A commit writes every page a transaction changed to the WAL;
// transactions that append to the same tables and indexes change mostly
// the same pages, so a group of eight writes about the pages of two, with
// one commit's system calls instead of eight.
//
// Each transaction still runs alone: it holds the turn, in its caller's
// goroutine, inside a savepoint of the group's SQLite transaction. One that
// fails rolls back to its savepoint and leaves the group's others intact;
// one that succeeds returns once the group is committed, with the
// commit's error if it fails. Nothing is visible to readers before the
// commit, and no caller learns of success before it.
type groupWriter struct {
	db    *sql.DB
	stmts *stmts
	ckpt  *checkpointer
	// turn is held by the transaction running, or by the committer.
	turn chan struct{}
	// open is the group taking members, or nil, and closed is set once the
	// committer has stopped; both belong to the turn's holder.
	open   *group
	closed bool
	// commit wakes the committer, stop ends it, and done tells it ended.
	commit chan struct{}
	stop   chan struct{}
	done   chan struct{}

	// waiting counts the callers waiting for the turn: with none, a member
	// commits at once. commits counts the groups committed, for tests.
	waiting atomic.Int64
	commits atomic.Int64
}

// group is one SQLite transaction and its members' outcome.
type group struct {
	tx      *sql.Tx
	members int
	done    chan struct{} // closed once err is set
	err     error
}

// newGroupWriter starts the writer of db, and ckptDB's checkpointer, which
// shares its turn.
func newGroupWriter(db *sql.DB, stmts *stmts, ckptDB *sql.DB) *groupWriter {
	w := &groupWriter{db: db, stmts: stmts, turn: make(chan struct{}, 1),
		commit: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	w.ckpt = newCheckpointer(ckptDB, w.turn)
	go w.committer()
	return w
}

// inTx runs fn as one member of a group. A caller whose context ends before
// its turn comes leaves with nothing done; once fn has run, it waits for
// the group's outcome whatever its context, since its changes are in it.
func (w *groupWriter) inTx(ctx context.Context, fn func(store.Tx) error) error {
	w.waiting.Add(1)
	select {
	case w.turn <- struct{}{}:
		w.waiting.Add(-1)
	case <-ctx.Done():
		w.waiting.Add(-1)
		return ctx.Err()
	}
	g, err := w.run(ctx, fn)
	if err != nil {
		return err
	}
	<-g.done
	if g.err != nil {
		return fmt.Errorf("commit: %w", g.err)
	}
	return nil
}

// run holds the turn, and gives it back: it joins or begins the open
// group and runs fn in it. When nobody waits for the turn, it commits the
// group itself; otherwise it leaves the commit to the committer, so that
// those waiting join first. Deferred, the clean-up and the turn's return
// also run when fn panics or calls runtime.Goexit.
func (w *groupWriter) run(ctx context.Context, fn func(store.Tx) error) (joined *group, err error) {
	defer func() {
		switch {
		case joined == nil:
			// A group nobody waits on must not keep the write lock.
			if w.open != nil && w.open.members == 0 {
				w.open.tx.Rollback()
				w.open = nil
			}
			<-w.turn
		case w.waiting.Load() == 0:
			w.commitOpen()
			<-w.turn
		default:
			<-w.turn
			select {
			case w.commit <- struct{}{}:
			default:
			}
		}
	}()
	if w.closed {
		return nil, errors.New("begin: the database is closed")
	}
	first := w.open == nil
	if first {
		// The group outlives its first member's context.
		tx, err := w.db.BeginTx(context.Background(), nil)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		w.open = &group{tx: tx, done: make(chan struct{})}
	}
	g := w.open
	// No statement of a group is ever interrupted: SQLite rolls back the
	// whole transaction when a write is, taking the other members with it.
	q := txQueryer{g.tx, w.stmts}
	bg := context.WithoutCancel(ctx)
	// The first member needs no savepoint: should it fail, the group,
	// holding nothing else, is rolled back whole.
	if !first {
		if _, err := q.ExecContext(bg, "SAVEPOINT member"); err != nil {
			w.fail(err)
			return nil, fmt.Errorf("begin: %w", err)
		}
		defer func() {
			if joined != nil {
				return
			}
			// An error that ended SQLite's transaction (a full disk,
			// say) leaves no savepoint to return to: the group fails
			// whole.
			_, rerr := q.ExecContext(bg, "ROLLBACK TO member")
			if rerr == nil {
				_, rerr = q.ExecContext(bg, "RELEASE member")
			}
			if rerr != nil {
				w.fail(rerr)
			}
		}()
	}
	if err := fn(&tx{reader: reader{q: q}, tx: q}); err != nil {
		return nil, err
	}
	if !first {
		if _, err := q.ExecContext(bg, "RELEASE member"); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
	}
	g.members++
	return g, nil
}

// commitOpen commits the open group; the caller holds the turn.
func (w *groupWriter) commitOpen() {
	g := w.open
	w.open = nil
	g.err = g.tx.Commit()
	if g.err == nil {
		w.commits.Add(1)
		w.ckpt.poke()
	}
	close(g.done)
	// The connection is free until the turn is given back.
	w.stmts.prepareWanted(context.Background())
}

// fail ends the open group with err, rolling back whatever it holds.
func (w *groupWriter) fail(err error) {
	g := w.open
	w.open = nil
	g.tx.Rollback()
	g.err = err
	close(g.done)
}

// committer commits the open group whenever a member asks. Members that
// queued for the turn before it join the group first. When stopped, it
// commits what is open, for members already waiting, and takes no more.
func (w *groupWriter) committer() {
	defer close(w.done)
	for {
		stopping := false
		select {
		case <-w.commit:
		case <-w.stop:
			stopping = true
		}
		w.turn <- struct{}{}
		if w.open != nil {
			w.commitOpen()
		}
		w.closed = stopping
		<-w.turn
		if stopping {
			return
		}
	}
}

// close stops the committer after it has committed the open group.
func (w *groupWriter) close() {
	close(w.stop)
	<-w.done
}
