package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// statusReads runs the status route's read, the store's most frequent, on
// connections of its own, through the driver's prepared statement directly.
// database/sql's Rows and Scan cost a check about a quarter of what the
// read costs SQLite: the statement cache's look-up, the rows' bookkeeping
// and a conversion of every column by reflection (BENCHMARKS.md). Each
// connection is held by one read at a time, as database/sql holds it.
type statusReads struct {
	db   *sql.DB
	idle chan *statusConn
	// made counts the connections opened, up to cap(idle); a token is
	// taken before opening one and handed back when it is closed.
	made chan struct{}
}

// statusConn is a connection with the read prepared on it.
type statusConn struct {
	conn *sql.Conn
	stmt driver.Stmt
	args []driver.NamedValue
	dest []driver.Value
}

func newStatusReads(db *sql.DB, conns int) *statusReads {
	return &statusReads{db: db, idle: make(chan *statusConn, conns), made: make(chan struct{}, conns)}
}

// read reads licenceID and the live seat of machineID on it: a licence
// column a verdict states, and the seat's id and last_seen_at.
func (s *statusReads) read(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *store.Seat, error) {
	c, err := s.take(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	var row statusRow
	found := false
	c.args[0].Value, c.args[1].Value = machineID, licenceID
	err = c.conn.Raw(func(any) error {
		rows, err := c.stmt.(driver.StmtQueryContext).QueryContext(ctx, c.args)
		if err != nil {
			return err
		}
		err = rows.Next(c.dest)
		if err == nil {
			found = true
			err = row.fill(c.dest)
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return errors.Join(err, rows.Close())
	})
	c.args[0].Value, c.args[1].Value = nil, nil
	clear(c.dest)
	s.give(c, err)
	if err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	if !found {
		return nil, nil, store.NotFound(licentia.CodeLicenceNotFound, "Licence")
	}
	return row.licence()
}

// take returns an idle connection, opening one while fewer than the
// limit are open, and otherwise waits for one.
func (s *statusReads) take(ctx context.Context) (*statusConn, error) {
	select {
	case c := <-s.idle:
		return c, nil
	default:
	}
	select {
	case c := <-s.idle:
		return c, nil
	case s.made <- struct{}{}:
		c, err := s.open(ctx)
		if err != nil {
			<-s.made
		}
		return c, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *statusReads) open(ctx context.Context) (*statusConn, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	c := &statusConn{conn: conn, args: []driver.NamedValue{{Ordinal: 1}, {Ordinal: 2}}}
	err = conn.Raw(func(dc any) error {
		p, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errors.New("the driver cannot prepare with a context")
		}
		if c.stmt, err = p.PrepareContext(ctx, licenceWithSeatQuery); err != nil {
			return err
		}
		if _, ok := c.stmt.(driver.StmtQueryContext); !ok {
			return errors.New("the driver's statement cannot query with a context")
		}
		c.dest = make([]driver.Value, len(new(statusRow).targets()))
		return nil
	})
	if err != nil {
		s.drop(c)
		return nil, err
	}
	return c, nil
}

// give hands c back after a read that ended with err. A connection whose
// read failed is not kept: the failure may have been its own. Its
// statement is closed and the connection goes back to database/sql's
// pool, which closes it if the driver found it broken.
func (s *statusReads) give(c *statusConn, err error) {
	if err != nil {
		s.drop(c)
		<-s.made
		return
	}
	s.idle <- c
}

// drop closes c's statement and hands its connection back to the pool.
func (s *statusReads) drop(c *statusConn) {
	if c.stmt != nil {
		c.conn.Raw(func(any) error { return c.stmt.Close() })
	}
	c.conn.Close()
}

// close hands the idle connections back to the pool, so that closing it
// closes them. A read after it fails: the pool opens no connection.
func (s *statusReads) close() {
	for {
		select {
		case c := <-s.idle:
			s.drop(c)
			<-s.made
		default:
			return
		}
	}
}
