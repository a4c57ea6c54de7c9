package auth

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// noteUse writes a key's (kind "key") or grant's last use at now, unless
// the row read to authenticate the request (last) says it was written less
// than a minute ago: the hot path then writes nothing. Requests that race
// past that check run one conditional UPDATE each, of which only the first
// writes (store.Tx.NoteAPIKeyUse). A failure to write is not the caller's:
// the request goes on, and a later one writes.
func (a *Authenticator) noteUse(ctx context.Context, kind, id string, last *time.Time, now time.Time) {
	if last != nil && now.Sub(*last) < licentia.LastUseEvery {
		return
	}
	_ = a.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if kind == "key" {
			_, err = tx.NoteAPIKeyUse(ctx, id, now)
		} else {
			_, err = tx.NoteGrantUse(ctx, id, now)
		}
		return err
	})
}
