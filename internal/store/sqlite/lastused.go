package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) NoteAPIKeyUse(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.noteUse(ctx, "api_keys", id, at)
}

func (t *tx) NoteGrantUse(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.noteUse(ctx, "grants", id, at)
}

// noteUse is the one conditional UPDATE of both: table is one of the two
// names above, never the caller's text.
func (t *tx) noteUse(ctx context.Context, table, id string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE `+table+` SET last_used_at = ?
		WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)`,
		store.Millis(at), id, store.Millis(at.Add(-licentia.LastUseEvery)))
	if err != nil {
		return false, fmt.Errorf("note use of %s: %w", table, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
