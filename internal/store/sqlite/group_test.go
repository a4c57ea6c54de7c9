package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/store"
)

// openScratch opens a store with a scratch table of names and a child
// table whose foreign key is checked only at commit.
func openScratch(t *testing.T) (*DB, string) {
	return openWith(t,
		"CREATE TABLE scratch (name TEXT PRIMARY KEY)",
		"CREATE TABLE parent (id INTEGER PRIMARY KEY)",
		"CREATE TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)")
}

// openWith opens a store in a new file and runs schema on it.
func openWith(t *testing.T, schema ...string) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "licentia.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range schema {
		if _, err := db.write.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db, path
}

// holdTurn starts a transaction that inserts "a" once let go, and returns
// when it holds the writer's turn; the function returned lets it go and
// gives its outcome.
func holdTurn(t *testing.T, db *DB) (letGo func() error) {
	t.Helper()
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- db.InTx(context.Background(), func(st store.Tx) error {
			<-release
			return insert("a")(st)
		})
	}()
	for len(db.writer.turn) == 0 {
		time.Sleep(time.Millisecond)
	}
	return func() error {
		close(release)
		return <-done
	}
}

func insert(name string) func(store.Tx) error {
	return func(st store.Tx) error {
		_, err := st.(*tx).tx.ExecContext(context.Background(), "INSERT INTO scratch (name) VALUES (?)", name)
		return err
	}
}

func names(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.read.Query("SELECT name FROM scratch ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// runGroup runs first, holding the turn until len(others) callers wait for
// it, then runs others concurrently; it returns each one's error or panic.
func runGroup(t *testing.T, db *DB, first func(store.Tx) error, others ...func(store.Tx) error) []any {
	t.Helper()
	out := make([]any, len(others)+1)
	var wg sync.WaitGroup
	run := func(i int, fn func(store.Tx) error) {
		defer wg.Done()
		defer func() {
			if p := recover(); p != nil {
				out[i] = p
			}
		}()
		if err := db.InTx(context.Background(), fn); err != nil {
			out[i] = err
		}
	}
	holding, queued := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go run(0, func(st store.Tx) error {
		close(holding)
		<-queued
		return first(st)
	})
	// Only once the first holds the turn do the others start waiting. The
	// turn's state alone cannot tell: the committer of an earlier
	// transaction may hold it for a moment.
	<-holding
	for i, fn := range others {
		wg.Add(1)
		go run(i+1, fn)
	}
	for db.writer.waiting.Load() != int64(len(others)) {
		time.Sleep(time.Millisecond)
	}
	close(queued)
	wg.Wait()
	return out
}

// TestGroupCommitsTogether: transactions waiting while one runs join its
// group, and one commit makes them all visible.
func TestGroupCommitsTogether(t *testing.T) {
	db, _ := openScratch(t)
	before := db.writer.commits.Load()
	got := runGroup(t, db, insert("a"), insert("b"), insert("c"), insert("d"))
	if slices.ContainsFunc(got, func(v any) bool { return v != nil }) {
		t.Fatalf("InTx() outcomes = %v, want all nil", got)
	}
	if n := db.writer.commits.Load() - before; n != 1 {
		t.Errorf("commits = %d, want 1 for a group of four", n)
	}
	if diff := slices.Compare(names(t, db), []string{"a", "b", "c", "d"}); diff != 0 {
		t.Errorf("rows = %v, want a, b, c, d", names(t, db))
	}
}

// TestGroupMemberFails: a member's error or panic undoes its own changes
// only; it reaches that member's caller alone.
func TestGroupMemberFails(t *testing.T) {
	db, _ := openScratch(t)
	errStop := errors.New("stop")
	failing := func(st store.Tx) error {
		if err := insert("failed")(st); err != nil {
			return err
		}
		return errStop
	}
	panicking := func(st store.Tx) error {
		if err := insert("panicked")(st); err != nil {
			return err
		}
		panic("boom")
	}
	got := runGroup(t, db, insert("a"), failing, insert("b"), panicking, insert("c"), insert("a"))
	if got[0] != nil || got[2] != nil || got[4] != nil {
		t.Errorf("outcomes of the good members = %v, %v, %v, want nil", got[0], got[2], got[4])
	}
	if err, _ := got[1].(error); !errors.Is(err, errStop) {
		t.Errorf("failing member's outcome = %v, want %v", got[1], errStop)
	}
	if got[3] != "boom" {
		t.Errorf("panicking member's outcome = %v, want the panic boom", got[3])
	}
	if err, _ := got[5].(error); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("duplicate member's outcome = %v, want a UNIQUE violation", got[5])
	}
	if diff := slices.Compare(names(t, db), []string{"a", "b", "c"}); diff != 0 {
		t.Errorf("rows = %v, want a, b, c", names(t, db))
	}
}

// TestGroupFirstMemberFails: the member that began a group runs without a
// savepoint; its error or panic rolls back the group, which holds nothing
// else yet, and the members waiting start a new one.
func TestGroupFirstMemberFails(t *testing.T) {
	db, _ := openScratch(t)
	errStop := errors.New("stop")
	got := runGroup(t, db, func(st store.Tx) error {
		if err := insert("panicked")(st); err != nil {
			return err
		}
		panic("boom")
	}, insert("a"), insert("b"))
	if got[0] != "boom" || got[1] != nil || got[2] != nil {
		t.Errorf("outcomes = %v, want boom, nil, nil", got)
	}
	got = runGroup(t, db, func(st store.Tx) error {
		if err := insert("failed")(st); err != nil {
			return err
		}
		return errStop
	}, insert("c"))
	if err, _ := got[0].(error); !errors.Is(err, errStop) || got[1] != nil {
		t.Errorf("outcomes = %v, want %v, nil", got, errStop)
	}
	if rows := names(t, db); slices.Compare(rows, []string{"a", "b", "c"}) != 0 {
		t.Errorf("rows = %v, want a, b, c", rows)
	}
}

// TestGroupCommitFails: when the group's commit fails, every member learns
// it and none of their changes stays.
func TestGroupCommitFails(t *testing.T) {
	db, _ := openScratch(t)
	orphan := func(st store.Tx) error {
		_, err := st.(*tx).tx.ExecContext(context.Background(), "INSERT INTO child (p) VALUES (42)")
		return err
	}
	got := runGroup(t, db, insert("a"), orphan, insert("b"))
	for i, v := range got {
		if err, _ := v.(error); err == nil || !strings.Contains(err.Error(), "commit") {
			t.Errorf("member %d outcome = %v, want the commit's error", i, v)
		}
	}
	if rows := names(t, db); len(rows) != 0 {
		t.Errorf("rows = %v, want none", rows)
	}
	if err := db.InTx(context.Background(), insert("after")); err != nil {
		t.Errorf("InTx() after a failed commit error = %v", err)
	}
}

// TestGroupFailureFreesTheWriteLock: a transaction that fails alone leaves
// no open transaction behind, so another process can write at once.
func TestGroupFailureFreesTheWriteLock(t *testing.T) {
	db, path := openScratch(t)
	errStop := errors.New("stop")
	err := db.InTx(context.Background(), func(st store.Tx) error {
		if err := insert("a")(st); err != nil {
			return err
		}
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("InTx() error = %v, want %v", err, errStop)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otx, err := other.Begin()
	if err != nil {
		t.Fatalf("another connection's BEGIN IMMEDIATE error = %v, want the write lock free", err)
	}
	otx.Rollback()
}

// TestGroupWaitEndsWithContext: a caller whose context ends while another
// holds the turn leaves without running.
func TestGroupWaitEndsWithContext(t *testing.T) {
	db, _ := openScratch(t)
	letGo := holdTurn(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := db.InTx(ctx, func(st store.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Errorf("InTx(cancelled) = %v, ran %v; want context.Canceled without running", err, ran)
	}
	if err := letGo(); err != nil {
		t.Fatal(err)
	}
}

// TestGroupClose: closing commits what a member has begun, then refuses
// new transactions.
func TestGroupClose(t *testing.T) {
	db, path := openScratch(t)
	letGo := holdTurn(t, db)
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	if err := letGo(); err != nil {
		t.Errorf("InTx() in progress at close error = %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close() error = %v", err)
	}
	if err := db.InTx(context.Background(), insert("b")); err == nil {
		t.Error("InTx() after close error = nil")
	}
	again, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if rows := names(t, again); slices.Compare(rows, []string{"a"}) != 0 {
		t.Errorf("rows after reopening = %v, want a", rows)
	}
}

// TestGroupMemberPastDeadline: a member whose context ends while its write
// runs (a request's deadline) fails alone at its next statement; the write
// is not interrupted, which would roll back the whole group.
func TestGroupMemberPastDeadline(t *testing.T) {
	db, _ := openScratch(t)
	got := runGroup(t, db, insert("a"), func(st store.Tx) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		q := st.(*tx).tx
		if _, err := q.ExecContext(ctx, `INSERT INTO scratch (name) WITH RECURSIVE n(i) AS
			(SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) SELECT 'slow' || i FROM n`); err != nil {
			return err
		}
		if ctx.Err() == nil {
			t.Fatal("the write ended before the deadline; the case tests nothing")
		}
		_, err := q.ExecContext(ctx, "INSERT INTO scratch (name) VALUES ('b')")
		return err
	})
	if got[0] != nil || !errors.Is(got[1].(error), context.DeadlineExceeded) {
		t.Fatalf("InTx() outcomes = %v, want nil and the deadline", got)
	}
	if n := names(t, db); !slices.Equal(n, []string{"a"}) {
		t.Errorf("names = %v, want [a]", n)
	}
}
