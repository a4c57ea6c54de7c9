package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// maxStmts bounds the statement cache. The store's queries are a fixed set
// (finds combine a few optional filters), far below it; a query past the
// bound runs unprepared.
const maxStmts = 512

// stmts caches prepared statements by query text. Without it the driver
// parses and plans every query on every call; database/sql prepares a
// cached statement once on each connection of the pool that runs it.
type stmts struct {
	db     *sql.DB
	mu     sync.RWMutex
	m      map[string]*sql.Stmt
	wanted map[string]bool // met in a transaction, prepared after it
}

func newStmts(db *sql.DB) *stmts {
	return &stmts{db: db, m: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// cached returns the statement of query if it is prepared. Otherwise it
// notes query for prepareWanted: a transaction holds the writer's one
// connection, so preparing on the pool then would wait for it forever.
func (c *stmts) cached(query string) *sql.Stmt {
	c.mu.RLock()
	s := c.m[query]
	c.mu.RUnlock()
	if s != nil {
		return s
	}
	c.mu.Lock()
	if len(c.m)+len(c.wanted) < maxStmts {
		c.wanted[query] = true
	}
	c.mu.Unlock()
	return nil
}

// prepareWanted prepares the queries cached noted, once this goroutine's
// transaction has released the writer's connection. The lock is not held
// while preparing: another transaction may hold the connection meanwhile
// and need the cache. A query that fails to prepare runs unprepared.
func (c *stmts) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	queries := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		queries = append(queries, q)
		delete(c.wanted, q)
	}
	c.mu.Unlock()
	for _, q := range queries {
		s, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.m[q] == nil {
			c.m[q], s = s, nil
		}
		c.mu.Unlock()
		if s != nil {
			s.Close()
		}
	}
}

// get returns the statement of query, preparing it on the pool, or nil
// when the cache is full.
func (c *stmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.RLock()
	s := c.m[query]
	c.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.m[query]; s != nil {
		return s, nil
	}
	if len(c.m) >= maxStmts {
		return nil, nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m[query] = s
	return s, nil
}

// pool runs queries on a connection pool through its statement cache.
type pool struct {
	db    *sql.DB
	stmts *stmts
}

func (p pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := p.stmts.get(ctx, query)
	if err != nil || s == nil {
		return p.db.ExecContext(ctx, query, args...)
	}
	return s.ExecContext(ctx, args...)
}

func (p pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.stmts.get(ctx, query)
	if err != nil || s == nil {
		return p.db.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := p.stmts.get(ctx, query)
	if err != nil || s == nil {
		return p.db.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// txQueryer runs queries in a transaction with the writer's cached
// statements, which are prepared on its one connection. A statement whose
// context has ended is refused before it starts, and one that starts runs
// to its end: SQLite rolls back the whole transaction when a write is
// interrupted, taking the other members of its group with it.
type txQueryer struct {
	tx    *sql.Tx
	stmts *stmts
}

// uninterrupted is ctx unless it has ended, without its end otherwise:
// database/sql refuses an ended context before the statement reaches
// SQLite.
func uninterrupted(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

func (t txQueryer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = uninterrupted(ctx)
	s := t.stmts.cached(query)
	if s == nil {
		return t.tx.ExecContext(ctx, query, args...)
	}
	return t.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
}

func (t txQueryer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = uninterrupted(ctx)
	s := t.stmts.cached(query)
	if s == nil {
		return t.tx.QueryContext(ctx, query, args...)
	}
	return t.tx.StmtContext(ctx, s).QueryContext(ctx, args...)
}

func (t txQueryer) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = uninterrupted(ctx)
	s := t.stmts.cached(query)
	if s == nil {
		return t.tx.QueryRowContext(ctx, query, args...)
	}
	return t.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
}
