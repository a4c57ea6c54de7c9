package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pipe is a transaction's connection with some statements held back: a
// statement whose answer the transaction never reads (its begin, the sweep
// lock, an audit entry, an event, its deliveries, a counter's upsert)
// waits, and goes to the server with the next statement that needs an
// answer, or with the commit, in one round trip. The server runs them in
// the order they were made, so the lock order of InTx holds; a held-back
// statement that fails fails the statement it went with, and so the
// transaction, as it would have failed it a moment earlier.
type pipe struct {
	conn    conn
	pending []heldBack
}

// conn is what a pipe sends its statements on: a connection of the pool.
type conn interface {
	queryer
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// inTx returns a pipe that begins a transaction on c: its begin is the
// first statement held back.
func inTx(c conn) *pipe { return &pipe{conn: c, pending: []heldBack{{sql: begin}}} }

const begin = "begin"

type heldBack struct {
	sql  string
	args []any
	// fails, if set, is what the transaction answers when the statement
	// fails, given the server's error.
	fails func(error) error
}

// later holds a statement back until the next statement that needs an
// answer, or the commit. Its arguments are taken as they are now: values
// behind pointers are copied, since the caller may change them before the
// statement is sent.
func (p *pipe) later(sql string, args ...any) { p.laterOr(nil, sql, args...) }

// laterOr holds a statement back as later does; if it fails, the
// transaction fails with fails(err).
func (p *pipe) laterOr(fails func(error) error, sql string, args ...any) {
	held := make([]any, len(args))
	for i, a := range args {
		held[i] = detach(a)
	}
	p.pending = append(p.pending, heldBack{sql, held, fails})
}

// detach returns a copy of what a pointer argument points to, behind a
// pointer of its own, and any other argument as it is. Byte slices are
// copied too.
func detach(a any) any {
	switch v := a.(type) {
	case *string:
		return copyOf(v)
	case *int:
		return copyOf(v)
	case *int64:
		return copyOf(v)
	case *bool:
		return copyOf(v)
	case *time.Time:
		return copyOf(v)
	case []byte:
		if v == nil {
			return v
		}
		return append([]byte{}, v...)
	}
	return a
}

func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// batch takes the held-back statements, followed by qs, as one batch, and
// returns the held-back statements it took.
func (p *pipe) batch(qs []heldBack) (*pgx.Batch, []heldBack) {
	b := &pgx.Batch{}
	for _, s := range p.pending {
		b.Queue(s.sql, s.args...)
	}
	held := p.pending
	p.pending = p.pending[:0] // held is read before anything is held back again
	for _, q := range qs {
		b.Queue(q.sql, q.args...)
	}
	return b, held
}

// send sends the held-back statements and qs in one round trip and reads
// the held-back statements' results; qs's results are left to read, in
// their order.
func (p *pipe) send(ctx context.Context, qs ...heldBack) (pgx.BatchResults, error) {
	b, held := p.batch(qs)
	br := p.conn.SendBatch(ctx, b)
	for _, h := range held {
		if _, err := br.Exec(); err != nil {
			br.Close()
			if h.fails != nil {
				err = h.fails(err)
			}
			return nil, err
		}
	}
	return br, nil
}

// flush sends the held-back statements, if any, alone.
func (p *pipe) flush(ctx context.Context) error {
	if len(p.pending) == 0 {
		return nil
	}
	br, err := p.send(ctx)
	if err != nil {
		return err
	}
	return br.Close()
}

// commit sends the held-back statements and the commit in one round trip.
// A transaction that sent nothing, not even its begin, has nothing to
// commit. The server answers a commit of a transaction a failed statement
// ended with ROLLBACK, not an error; that is an error here.
func (p *pipe) commit(ctx context.Context) error {
	if len(p.pending) == 1 && p.pending[0].sql == begin {
		p.pending = p.pending[:0]
		return nil
	}
	tag, err := p.Exec(ctx, "commit")
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("commit: %w", pgx.ErrTxCommitRollback)
	}
	return nil
}

func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if len(p.pending) == 0 {
		return p.conn.Exec(ctx, sql, args...)
	}
	br, err := p.send(ctx, heldBack{sql: sql, args: args})
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if len(p.pending) == 0 {
		return p.conn.QueryRow(ctx, sql, args...)
	}
	br, err := p.send(ctx, heldBack{sql: sql, args: args})
	if err != nil {
		return failedRow{err}
	}
	return &batchRow{row: br.QueryRow(), br: br}
}

func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if len(p.pending) == 0 {
		return p.conn.Query(ctx, sql, args...)
	}
	br, err := p.send(ctx, heldBack{sql: sql, args: args})
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// execBatch runs the held-back statements and then b's, in one round trip.
func (p *pipe) execBatch(ctx context.Context, b *pgx.Batch) error {
	p.laterBatch(b)
	return p.flush(ctx)
}

// laterBatch holds back every statement of b, in order.
func (p *pipe) laterBatch(b *pgx.Batch) {
	for _, q := range b.QueuedQueries {
		p.later(q.SQL, q.Arguments...)
	}
}

// batchRow is the one row of the last statement of a batch; reading it
// ends the batch.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r *batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// batchRows are the rows of the last statement of a batch; reading the
// last of them, or closing them, ends the batch, so the connection is free
// for the next statement whichever the caller does.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.end()
	return false
}

func (r *batchRows) Close() {
	r.Rows.Close()
	r.end()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

func (r *batchRows) end() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }
