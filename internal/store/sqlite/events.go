package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) InsertEvent(ctx context.Context, e *licentia.Event) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO events (id, org_id, type, licence_id, at, body) VALUES (?, ?, ?, ?, ?, ?)`,
		e.ID, e.OrgID, e.Type, e.LicenceID, store.Millis(e.At), string(e.Body))
	if err != nil {
		return fmt.Errorf("insert event %s: %w", e.Type, err)
	}
	return nil
}

func (t *tx) DeleteEventsBefore(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM events WHERE at < ?`, store.Millis(before))
	if err != nil {
		return 0, fmt.Errorf("delete events: %w", err)
	}
	return res.RowsAffected()
}

func (r reader) OrganizationEvents(ctx context.Context, orgID string) ([]licentia.Event, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, org_id, type, licence_id, at, body FROM events
		WHERE org_id = ? ORDER BY at, rowid`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []licentia.Event
	for rows.Next() {
		var e licentia.Event
		var at int64
		var body string
		if err := rows.Scan(&e.ID, &e.OrgID, &e.Type, &e.LicenceID, &at, &body); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		e.At, e.Body = store.FromMillis(at), []byte(body)
		out = append(out, e)
	}
	return out, rows.Err()
}
