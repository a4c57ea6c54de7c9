package postgres

import (
	"context"
	"errors"
	"fmt"
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
// reads that arrive wait and go together next, as one pipeline: their
// statements in one write, one Sync, their answers in one read.
// PostgreSQL answers a read of a pipeline for about a third of the CPU of
// one sent alone (its socket reads, writes and wake-ups are shared), and
// the server writes one message for them all. A read that finds a slot
// free goes alone at once: an idle service waits for nothing.
//
// Each statement of a pipeline takes its own snapshot when it runs, after
// its request asked for it, so a read sees every change committed before
// its check began: a revocation is still seen by the next check, on every
// process.
type statusReads struct {
	pool  *pgxpool.Pool
	group *gather.Group[statusRead]
}

const (
	// statusInFlight is how many reads or pipelines are out at once. Two:
	// one is answered while the next one runs.
	statusInFlight = 2
	// statusPipeline is the most reads a pipeline carries; the rest wait
	// for the next one.
	statusPipeline = 64
)

func newStatusReads(pool *pgxpool.Pool) *statusReads {
	g := &statusReads{pool: pool}
	g.group = gather.New(statusInFlight, statusPipeline, g.answer)
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
// pipeline's reads do not stop for the end of one of their contexts: a
// look-up of one row by its key, with no lock to wait for, is short. A
// pipeline ends by the latest deadline of its reads, so a database that
// stops answering does not hold them longer than their requests last.
func (g *statusReads) answer(p []*statusRead) {
	if len(p) == 1 {
		r := p[0]
		r.licence, r.seat, r.err = scanLicenceWithSeat(g.pool.QueryRow(r.ctx, licenceWithSeatQuery, r.licenceID, r.machineID))
		return
	}
	ctx, cancel := pipelineContext(p)
	defer cancel()
	b := &pgx.Batch{}
	for _, r := range p {
		b.Queue(licenceWithSeatQuery, r.licenceID, r.machineID)
	}
	br := g.pool.SendBatch(ctx, b)
	for _, r := range p {
		r.licence, r.seat, r.err = scanLicenceWithSeat(br.QueryRow())
	}
	if err := br.Close(); err != nil {
		for _, r := range p {
			if r.err == nil {
				r.licence, r.seat, r.err = nil, nil, fmt.Errorf("read licence: %w", err)
			}
		}
	}
}

// pipelineContext is the context p's reads run in: the first read's
// values, and the latest deadline of them all, none if one has none.
func pipelineContext(p []*statusRead) (context.Context, context.CancelFunc) {
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

// scanLicenceWithSeat scans a row of licenceWithSeatQuery. Its targets
// are plain types: pgx plans the scan of every column of every row, and a
// named type (a status) or a pointer to a pointer (a time that may be
// null) costs each plan a look by reflection, most of a read's scan.
func scanLicenceWithSeat(row pgx.Row) (*licentia.Licence, *store.Seat, error) {
	var l licentia.Licence
	var status, kind, features string
	var expires, trial, seen pgtype.Timestamptz
	var seat pgtype.Text
	err := row.Scan(&l.ID, &l.OrgID, &l.ProductID, &status, &expires, &trial, &l.Major, &kind,
		&l.LimitCount, &features, &seat, &seen)
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
