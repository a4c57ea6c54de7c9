package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"strings"

	"github.com/licentia/licentia/internal/gather"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// statusReads answers the status route's reads of a licence and its seat,
// gathered (internal/gather): while statusInFlight of them run, the reads
// that arrive wait, and go together next, in one statement that looks each
// one up (statusGroupQuery). SQLite then begins one read transaction, takes
// the WAL's read lock once and database/sql runs one query for them all: a
// read of a group of four costs about half of one alone. A read that finds
// a slot free runs at once: an idle service waits for nothing.
//
// A statement reads the database as it was when it began, after every read
// of its group was asked for, so a read sees every change committed before
// its check began: a revocation is still seen by the next check.
type statusReads struct {
	q     queryer
	group *gather.Group[statusRead]
}

const (
	// statusInFlight is how many reads or groups run at once: one a core
	// of the machines the service is sized for.
	statusInFlight = 2
	// statusGroup is the most reads a group carries.
	statusGroup = 64
)

func newStatusReads(q queryer) *statusReads {
	g := &statusReads{q: q}
	g.group = gather.New(statusInFlight, statusGroup, g.answer)
	return g
}

// statusRead is one status check's read, and its answer.
type statusRead struct {
	ctx                  context.Context
	licenceID, machineID string
	licence              *licentia.Licence
	seat                 *store.Seat
	err                  error
}

// read answers the read of a licence and the machine's seat.
func (g *statusReads) read(ctx context.Context, licenceID, machineID string) (*licentia.Licence, *store.Seat, error) {
	r := &statusRead{ctx: ctx, licenceID: licenceID, machineID: machineID}
	if err := g.group.Do(ctx, r); err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	return r.licence, r.seat, r.err
}

// answer runs the reads of p: one alone as reader's LicenceWithSeat does,
// more in one statement. Like it, it does not stop for a context's end.
func (g *statusReads) answer(p []*statusRead) {
	if len(p) == 1 {
		r := p[0]
		r.licence, r.seat, r.err = reader{q: g.q}.LicenceWithSeat(r.ctx, r.licenceID, r.machineID)
		return
	}
	n := groupSize(len(p))
	args := make([]any, 0, 3*n)
	for i, r := range p {
		args = append(args, i, r.licenceID, r.machineID)
	}
	for range n - len(p) {
		args = append(args, nil, nil, nil) // rows that match no licence
	}
	err := g.scanGroup(context.WithoutCancel(p[0].ctx), statusGroupQueries[bits.Len(uint(n))-2], args, p)
	for _, r := range p {
		switch {
		case err != nil:
			r.licence, r.seat, r.err = nil, nil, fmt.Errorf("read licence: %w", err)
		case r.err == nil && r.licence == nil:
			r.err = fmt.Errorf("read licence: %w", store.NotFound(licentia.CodeLicenceNotFound, "Licence"))
		}
	}
}

// scanGroup runs a group's statement and gives each read of p the row that
// names it, if any.
func (g *statusReads) scanGroup(ctx context.Context, query string, args []any, p []*statusRead) error {
	rows, err := g.q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		var c seatColumns
		if err := rows.Scan(append([]any{&i}, c.dest()...)...); err != nil {
			return err
		}
		if i < 0 || i >= len(p) {
			return fmt.Errorf("status group: row %d of %d", i, len(p))
		}
		if p[i].licence, p[i].seat, p[i].err = c.result(); p[i].err != nil {
			p[i].err = fmt.Errorf("read licence: %w", p[i].err)
		}
	}
	return rows.Err()
}

// groupSize is the number of reads the statement of a group of n (two or
// more) carries: the next power of two, so that six statements, prepared
// once each, serve every size. The rows past n match no licence.
func groupSize(n int) int { return 1 << bits.Len(uint(n-1)) }

// statusGroupQueries are the group statements of 2, 4 ... statusGroup
// reads: a row (index, licence id, machine id) for each read, and the
// look-ups of licenceWithSeatQuery for each row.
var statusGroupQueries = func() []string {
	var qs []string
	for n := 2; n <= statusGroup; n *= 2 {
		qs = append(qs, `WITH q(i, licence_id, machine_id) AS (VALUES `+strings.Repeat("(?, ?, ?), ", n-1)+`(?, ?, ?))
	SELECT q.i, `+store.Qualified(store.StatusColumns, "l")+`, a.id, a.last_seen_at
	FROM q JOIN licences l ON l.id = q.licence_id
	LEFT JOIN activations a ON a.licence_id = l.id AND a.machine_id = q.machine_id AND a.deactivated_at IS NULL`)
	}
	return qs
}()

// licenceWithSeatQuery reads what a status check uses of a licence, and the
// machine's live seat, found by one look-up in its partial index.
var licenceWithSeatQuery = `SELECT ` + store.Qualified(store.StatusColumns, "l") + `, a.id, a.last_seen_at
	FROM licences l LEFT JOIN activations a ON a.licence_id = l.id AND a.machine_id = ? AND a.deactivated_at IS NULL
	WHERE l.id = ?`

// seatColumns are a row of licenceWithSeatQuery, as scanned.
type seatColumns struct {
	l                           licentia.Licence
	status, limitKind, features string
	expires, trial, seen        sql.Null[int64]
	seat                        sql.Null[string]
}

func (c *seatColumns) dest() []any {
	return []any{&c.l.ID, &c.l.OrgID, &c.l.ProductID, &c.status, &c.expires, &c.trial, &c.l.Major, &c.limitKind,
		&c.l.LimitCount, &c.features, &c.seat, &c.seen}
}

// result is the licence and the seat of the row.
func (c *seatColumns) result() (*licentia.Licence, *store.Seat, error) {
	l := &c.l
	l.Status, l.LimitKind = licentia.Status(c.status), licentia.LimitKind(c.limitKind)
	l.ExpiresAt, l.TrialEndsAt = instant(c.expires), instant(c.trial)
	var err error
	if l.Features, err = store.DecodeGrants(c.features); err != nil {
		return nil, nil, err
	}
	if !c.seat.Valid || !c.seen.Valid {
		return l, nil, nil
	}
	return l, &store.Seat{ActivationID: c.seat.V, LastSeenAt: store.FromMillis(c.seen.V)}, nil
}
