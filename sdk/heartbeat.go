package sdk

import (
	"context"
	"time"
)

// idleWait is how long Heartbeats waits when Check cannot go online (no key
// yet, or a key refused offline) before it looks again.
const idleWait = time.Minute

// HeartbeatInterval is the product's heartbeat interval, from the last
// answer that brought a verdict; 0 when the product asks for none.
func (c *Client) HeartbeatInterval() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Duration(c.rec.HeartbeatInterval) * time.Second
}

// Heartbeats runs Check each time it is due until ctx ends, and returns
// ctx's error. For a product with heartbeat leases Check is due at the
// product's interval, so this machine keeps its seat (the server frees a
// seat not checked for twice the interval) and its verdicts stay valid;
// for any other product it is due once a day. Failures follow Check's
// backoff and are reported by State. Run it in its own goroutine:
//
//	go client.Heartbeats(ctx)
func (c *Client) Heartbeats(ctx context.Context) error {
	for {
		now := c.now()
		wait := c.State().NextCheckAt.Sub(now)
		if wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-c.after(wait):
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		before := c.State()
		if _, err := c.Check(ctx); err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		// A Check that could not go online leaves the next check where it
		// was: wait a while rather than ask again at once.
		if after := c.State(); !after.NextCheckAt.After(c.now()) && after.CheckedAt.Equal(before.CheckedAt) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-c.after(idleWait):
			}
		}
	}
}
