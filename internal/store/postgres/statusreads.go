package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/licentia/licentia/internal/gather"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// statusReads sends the status route's reads of a licence and its seat,
// gathered (internal/gather): while statusInFlight of them are out, the
// reads that arrive wait and go together next, as one statement that
// reads them all (statusBatchQuery). PostgreSQL starts and ends a
// statement once for the group, not once a read, and the server writes
// one message and reads one answer for them all. A read that finds a slot
// free goes alone at once: an idle service waits for nothing.
//
// A statement takes its snapshot when it starts, after each of its reads
// was asked for, so a read sees every change committed before its check
// began: a revocation is still seen by the next check, on every process.
type statusReads struct {
	pool  *pgxpool.Pool
	group *gather.Group[statusRead]
}

const (
	// statusInFlight is how many reads or groups are out at once. One:
	// a group is one statement, cheap on both sides, so the reads that
	// gather while one is out cost less than a second one out at once
	// (BENCHMARKS.md, "Next step: trims, and one statement for a group").
	statusInFlight = 1
	// statusGroup is the most reads a statement carries; the rest
	// wait for the next one. A power of two (statusBatchSize).
	statusGroup = 64
)

func newStatusReads(pool *pgxpool.Pool) *statusReads {
	g := &statusReads{pool: pool}
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

// answer runs the reads of p. A read alone runs in its own context. A
// group's reads do not stop for the end of one of their contexts: a
// look-up of one row by its key, with no lock to wait for, is short. A
// group's statement ends by the latest deadline of its reads, so a
// database that stops answering does not hold them longer than their
// requests last.
func (g *statusReads) answer(p []*statusRead) {
	if len(p) == 1 {
		r := p[0]
		r.licence, r.seat, r.err = scanLicenceWithSeat(g.pool.QueryRow(r.ctx, licenceWithSeatQuery, r.licenceID, r.machineID))
		return
	}
	ctx, cancel := groupContext(p)
	defer cancel()
	size := statusBatchSize(len(p))
	args := make([]any, 2*size) // the pairs past p's stay null: they match no licence
	for i, r := range p {
		args[2*i], args[2*i+1] = r.licenceID, r.machineID
	}
	found := make([]bool, len(p))
	err := func() error {
		rows, err := g.pool.Query(ctx, statusBatchQueries[size], args...)
		if err != nil {
			return fmt.Errorf("read licence: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var n int
			l, seat, err := scanLicenceWithSeat(rows, &n)
			if err != nil {
				return err
			}
			if n < 0 || n >= len(p) || found[n] {
				return fmt.Errorf("read licence: a row numbered %d of %d reads", n, len(p))
			}
			p[n].licence, p[n].seat, found[n] = l, seat, true
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read licence: %w", err)
		}
		return nil
	}()
	for i, r := range p {
		switch {
		case err != nil:
			r.licence, r.seat, r.err = nil, nil, err
		case !found[i]:
			r.err = fmt.Errorf("read licence: %w", licenceNotFound())
		}
	}
}

// statusBatchSize is the number of reads of the statement that reads n:
// the next power of two, so that a handful of statements, each prepared
// and planned once on a connection, serve every size of group.
func statusBatchSize(n int) int {
	size := 2
	for size < n {
		size *= 2
	}
	return size
}

// statusBatchQueries are the statements of statusBatchSize's sizes.
var statusBatchQueries = func() map[int]string {
	m := map[int]string{}
	for size := 2; size <= statusGroup; size *= 2 {
		m[size] = statusBatchQuery(size)
	}
	return m
}()

// statusBatchQuery reads size licences and their machines' live seats,
// each row led by the number of its read. Each pair is read by
// licenceWithSeatQuery's own look-ups, run for it alone (LATERAL, kept
// whole by OFFSET 0): a join of the whole list would leave the planner to
// choose its strategy by its estimates (TestStatusBatchReadsByKeys). The
// machine is compared in the column's collation, as in
// licenceWithSeatQuery, so the index of live machines serves.
func statusBatchQuery(size int) string {
	var b strings.Builder
	b.WriteString(`SELECT v.n, s.* FROM (VALUES `)
	for i := range size {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `($%d::uuid, $%d::text COLLATE "C", %d)`, 2*i+1, 2*i+2, i)
	}
	b.WriteString(`) v (licence_id, machine_id, n)
	CROSS JOIN LATERAL (SELECT ` + store.Qualified(store.StatusColumns, "l") + `, a.id, a.last_seen_at
		FROM licences l LEFT JOIN activations a ON a.licence_id = l.id AND a.machine_id = v.machine_id AND a.deactivated_at IS NULL
		WHERE l.id = v.licence_id OFFSET 0) s`)
	return b.String()
}

// groupContext is the context p's reads run in: the first read's
// values, and the latest deadline of them all, none if one has none.
func groupContext(p []*statusRead) (context.Context, context.CancelFunc) {
	var last time.Time
	for _, r := range p {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.WithoutCancel(p[0].ctx), func() {}
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(context.WithoutCancel(p[0].ctx), last)
}

// licenceWithSeatQuery reads what a status check uses of a licence, and the
// machine's live seat, found by one look-up in its partial index.
var licenceWithSeatQuery = `SELECT ` + store.Qualified(store.StatusColumns, "l") + `, a.id, a.last_seen_at
	FROM licences l LEFT JOIN activations a ON a.licence_id = l.id AND a.machine_id = $2 AND a.deactivated_at IS NULL
	WHERE l.id = $1`

// scanLicenceWithSeat scans a row of licenceWithSeatQuery, or with n of
// statusBatchQuery, whose first column is the read's number. Its targets
// are plain types: pgx plans the scan of every column of every row, and a
// named type (a status) or a pointer to a pointer (a time that may be
// null) costs each plan a look by reflection, most of a read's scan.
func scanLicenceWithSeat(row pgx.Row, n ...*int) (*licentia.Licence, *store.Seat, error) {
	var l licentia.Licence
	var status, kind, features string
	var expires, trial, seen pgtype.Timestamptz
	var seat pgtype.Text
	targets := []any{&l.ID, &l.OrgID, &l.ProductID, &status, &expires, &trial, &l.Major, &kind,
		&l.LimitCount, &features, &seat, &seen}
	if len(n) == 1 {
		targets = append([]any{n[0]}, targets...)
	}
	err := row.Scan(targets...)
	if errors.Is(err, pgx.ErrNoRows) {
		err = licenceNotFound()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	l.Status, l.LimitKind = licentia.Status(status), licentia.LimitKind(kind)
	l.ExpiresAt, l.TrialEndsAt = timeOf(expires), timeOf(trial)
	if l.Features, err = store.DecodeGrants(features); err != nil {
		return nil, nil, fmt.Errorf("read licence: %w", err)
	}
	if !seat.Valid || !seen.Valid {
		return &l, nil, nil
	}
	return &l, &store.Seat{ActivationID: seat.String, LastSeenAt: seen.Time.UTC()}, nil
}

// timeOf is a time that may be null, in UTC.
func timeOf(t pgtype.Timestamptz) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time.UTC()
	return &v
}
