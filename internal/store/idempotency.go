package store

import (
	"context"
	"time"
)

// IdempotencyKey is a caller's Idempotency-Key and what became of the first
// request that sent it.
type IdempotencyKey struct {
	// Subject is the caller the key belongs to: "key:<api key id>", or
	// "member:<member id>" for an AI assistant.
	Subject string
	Key     string
	// RequestHash is the SHA-256 of the first request's method, path and
	// body; another request with the key is refused.
	RequestHash []byte
	// Token names one claim of the key, so that a request whose claim was
	// taken over neither marks nor answers the new one.
	Token      string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LeaseUntil time.Time
	// UsedAt is set in the transaction of the first request's change, so a
	// change and the key's use commit together.
	UsedAt *time.Time
	// Answer is the first request's answer, nil until it is stored.
	Answer *IdempotentAnswer
}

// IdempotentAnswer is the answer a key replays.
type IdempotentAnswer struct {
	Status int
	// Headers are the header fields worth replaying, as JSON.
	Headers []byte
	Body    []byte
}

type commitHookKey struct{}

// WithCommitHook returns ctx carrying hook: every InTx run under the
// returned context calls hook in its transaction after fn succeeds and
// before the commit, so what hook writes commits with fn's changes or not at
// all. An operation that runs several transactions runs hook in each.
func WithCommitHook(ctx context.Context, hook func(ctx context.Context, tx Tx) error) context.Context {
	return context.WithValue(ctx, commitHookKey{}, hook)
}

// BeforeCommit returns fn followed by ctx's commit hook, if any. Every
// engine's InTx runs the transaction's work through it.
func BeforeCommit(ctx context.Context, fn func(Tx) error) func(Tx) error {
	hook, _ := ctx.Value(commitHookKey{}).(func(context.Context, Tx) error)
	if hook == nil {
		return fn
	}
	return func(tx Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return hook(ctx, tx)
	}
}
