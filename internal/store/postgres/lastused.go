package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

func (t *tx) NoteAPIKeyUse(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.noteUse(ctx, "api_keys", id, at)
}

func (t *tx) NoteGrantUse(ctx context.Context, id string, at time.Time) (bool, error) {
	return t.noteUse(ctx, "grants", id, at)
}

// noteUse is the one conditional UPDATE of both: table is one of the two
// names above, never the caller's text. Of racing transactions, the later
// waits for the row lock, then finds the condition false and writes
// nothing.
func (t *tx) noteUse(ctx context.Context, table, id string, at time.Time) (bool, error) {
	if !isID(id) {
		return false, nil
	}
	tag, err := t.tx.Exec(ctx, `UPDATE `+table+` SET last_used_at = $1
		WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)`, ms(at), id, ms(at.Add(-licentia.LastUseEvery)))
	if err != nil {
		return false, fmt.Errorf("note use of %s: %w", table, err)
	}
	return tag.RowsAffected() == 1, nil
}
