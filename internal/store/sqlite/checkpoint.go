package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// checkpointPace is the least time between two checkpoints: at a high rate
// of commits, one pass copies many transactions' pages at once.
const checkpointPace = 50 * time.Millisecond

// restartFrames bounds the WAL (about 16 MiB of 4 KiB pages). The writer
// starts the WAL over only when a checkpoint has copied all of it, which
// under a steady stream of commits never happens by itself: the file would
// grow without end, and appending to a growing file costs more than
// rewriting one.
const restartFrames = 4096

// checkpointer copies committed pages from the WAL into the database file
// on a connection of its own. SQLite's automatic checkpoint runs inside
// the commit that crosses its threshold, on the one writer connection,
// with its writes and fsyncs: every writer queued behind that commit
// waited for it (the p99 of issues and revokes on a large file). Here the
// writer only appends to the WAL. A PASSIVE checkpoint takes no write
// lock, so writers and readers go on while it runs.
type checkpointer struct {
	db *sql.DB
	// turn is the group writer's: held, no transaction of this process
	// writes.
	turn chan struct{}
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newCheckpointer(db *sql.DB, turn chan struct{}) *checkpointer {
	c := &checkpointer{db: db, turn: turn, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// poke asks for a checkpoint after a commit; it never blocks.
func (c *checkpointer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		c.pass(context.Background())
		pace.Reset(checkpointPace)
		select {
		case <-c.stop:
			return
		case <-pace.C:
		}
	}
}

// pass copies what it can without waiting for anyone. When the WAL has
// grown past restartFrames, it copies the rest while holding the writer's
// turn, so that the next transaction finds the WAL copied whole and starts
// it over: a short wait for this process's writers, since the first pass
// copied most pages, and one on a channel. (A RESTART checkpoint would take
// SQLite's write lock instead, and a writer finding it taken sleeps in
// SQLite's busy handler for up to 100 ms at a time.) A failed pass leaves
// the pages in the WAL, where readers still find them; the next commit
// asks again.
func (c *checkpointer) pass(ctx context.Context) {
	var busy, frames, copied int
	err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	if err != nil || frames <= restartFrames {
		return
	}
	c.turn <- struct{}{}
	defer func() { <-c.turn }()
	c.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
}

// close stops the loop, waiting for a pass in progress, and closes its
// connection.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}
