package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/store"
)

// A claim whose answer or release could not be written when its request
// ended (the database restarting, a full disk) holds its key until its
// lease passes, and every retry meanwhile answers 409
// idempotency_key_in_use although nothing may have been written. The
// server keeps such claims and settles them again: at once when a retry
// with the same key reaches it, and otherwise from serve's background step
// (SettleIdempotencyKeys), every 1, 2, 4 then 8 seconds, until the database
// takes it or the claim's lease ends, past which the key is free anyway.
const (
	settleFirstWait = time.Second
	settleMaxWait   = 8 * time.Second
	// maxUnsettled bounds the claims kept (and the answers they hold)
	// through a long outage; a claim past it waits for its lease.
	maxUnsettled = 1000
)

// unsettled holds the claims to settle again, by subject and key.
type unsettled struct {
	mu     sync.Mutex
	claims map[string]*unsettledClaim
}

// unsettledClaim is a claim and what to write for it: its answer, or its
// release when answer is nil.
type unsettledClaim struct {
	key    *store.IdempotencyKey
	answer *store.IdempotentAnswer
	next   time.Time
	wait   time.Duration
}

func claimID(subject, key string) string { return subject + "\x00" + key }

// add keeps the claim k to settle again from now on, and reports whether
// it was kept.
func (u *unsettled) add(k *store.IdempotencyKey, a *store.IdempotentAnswer, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.claims) >= maxUnsettled {
		return false
	}
	if u.claims == nil {
		u.claims = map[string]*unsettledClaim{}
	}
	u.claims[claimID(k.Subject, k.Key)] = &unsettledClaim{key: k, answer: a, next: now.Add(settleFirstWait), wait: settleFirstWait}
	return true
}

// take removes and returns the claim of subject's key, or nil.
func (u *unsettled) take(subject, key string) *unsettledClaim {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := claimID(subject, key)
	c := u.claims[id]
	delete(u.claims, id)
	return c
}

// due removes and returns the claims whose next try has come, and drops
// those whose lease has ended.
func (u *unsettled) due(now time.Time) []*unsettledClaim {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []*unsettledClaim
	for id, c := range u.claims {
		switch {
		case !now.Before(c.key.LeaseUntil):
			delete(u.claims, id)
		case !now.Before(c.next):
			delete(u.claims, id)
			out = append(out, c)
		}
	}
	return out
}

// put keeps c again, unless the key has been claimed since.
func (u *unsettled) put(c *unsettledClaim) {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := claimID(c.key.Subject, c.key.Key)
	if _, ok := u.claims[id]; !ok {
		u.claims[id] = c
	}
}

// settleNow settles the kept claim of subject's key, if any. Should the
// database still fail, the claim is kept for the background step and the
// request's own claim fails the same way.
func (s *Server) settleNow(ctx context.Context, subject, key string) {
	c := s.unsettled.take(subject, key)
	if c == nil {
		return
	}
	if err := s.writeSettlement(ctx, c.key, c.answer); err != nil {
		s.unsettled.put(c)
	}
}

// SettleIdempotencyKeys is serve's background step for the claims that
// could not be settled when their requests ended: it writes each one whose
// next try has come, and returns the database's error at the first that
// fails, which waits twice as long (up to 8 seconds) before its next try.
// A claim whose lease has ended is let go untried.
func (s *Server) SettleIdempotencyKeys(ctx context.Context) error {
	now := s.clock.Now()
	due := s.unsettled.due(now)
	for i, c := range due {
		err := s.writeSettlement(ctx, c.key, c.answer)
		if err == nil {
			continue
		}
		// The database is still failing: the claims not tried wait for
		// the next step rather than each failing now.
		c.wait = min(2*c.wait, settleMaxWait)
		c.next = now.Add(c.wait)
		for _, rest := range due[i:] {
			s.unsettled.put(rest)
		}
		return err
	}
	return nil
}
