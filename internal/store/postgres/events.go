package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
)

func (t *tx) InsertEvent(ctx context.Context, e *licentia.Event) error {
	t.tx.later(`INSERT INTO events (id, org_id, type, licence_id, at, body) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.ID, e.OrgID, string(e.Type), e.LicenceID, ms(e.At), string(e.Body))
	return nil
}

func (t *tx) DeleteEventsBefore(ctx context.Context, before time.Time) (int64, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM events WHERE at < $1`, ms(before))
	if err != nil {
		return 0, fmt.Errorf("delete events: %w", err)
	}
	return tag.RowsAffected(), nil
}

func scanEvent(row pgx.Row) (*licentia.Event, error) {
	var e licentia.Event
	var body string
	if err := row.Scan(&e.ID, &e.OrgID, &e.Type, &e.LicenceID, &e.At, &body); err != nil {
		return nil, err
	}
	e.At, e.Body = e.At.UTC(), []byte(body)
	return &e, nil
}

func (r reader) OrganizationEvents(ctx context.Context, orgID string) ([]licentia.Event, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT id, org_id, type, licence_id, at, body FROM events
		WHERE org_id = $1 ORDER BY at, seq`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out, err := collect(rows, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
