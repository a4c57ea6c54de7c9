package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (r reader) IdempotencyKey(ctx context.Context, subject, key string) (*store.IdempotencyKey, error) {
	k := store.IdempotencyKey{Subject: subject, Key: key}
	var status *int32
	var headers, body []byte
	err := r.q.QueryRow(ctx, `SELECT request_hash, token, created_at, expires_at, lease_until, used_at, status, headers, body
		FROM idempotency_keys WHERE subject = $1 AND idem_key = $2`, subject, key).
		Scan(&k.RequestHash, &k.Token, &k.CreatedAt, &k.ExpiresAt, &k.LeaseUntil, &k.UsedAt, &status, &headers, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Idempotency key")
	}
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	k.CreatedAt, k.ExpiresAt, k.LeaseUntil, k.UsedAt = k.CreatedAt.UTC(), k.ExpiresAt.UTC(), k.LeaseUntil.UTC(), utcPtr(k.UsedAt)
	if status != nil {
		k.Answer = &store.IdempotentAnswer{Status: int(*status), Headers: headers, Body: body}
	}
	return &k, nil
}

// ClaimIdempotencyKey decides races in the insert: a second claim of one
// key waits for the first's row lock, then finds the row it may not take
// over, and reads it as committed.
func (t *tx) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, now time.Time) (*store.IdempotencyKey, bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO idempotency_keys
		(subject, idem_key, request_hash, token, created_at, expires_at, lease_until) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (subject, idem_key) DO UPDATE SET request_hash = excluded.request_hash, token = excluded.token,
			created_at = excluded.created_at, expires_at = excluded.expires_at, lease_until = excluded.lease_until,
			used_at = NULL, status = NULL, headers = NULL, body = NULL
		WHERE idempotency_keys.expires_at <= $8
			OR (idempotency_keys.used_at IS NULL AND idempotency_keys.status IS NULL AND idempotency_keys.lease_until <= $8)`,
		k.Subject, k.Key, k.RequestHash, k.Token, ms(k.CreatedAt), ms(k.ExpiresAt), ms(k.LeaseUntil), ms(now))
	if err != nil {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return k, true, nil
	}
	held, err := t.IdempotencyKey(ctx, k.Subject, k.Key)
	if err != nil {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	return held, false, nil
}

func (t *tx) UseIdempotencyKey(ctx context.Context, subject, key, token string, at time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE idempotency_keys SET used_at = COALESCE(used_at, $1)
		WHERE subject = $2 AND idem_key = $3 AND token = $4`, ms(at), subject, key, token)
	if err != nil {
		return false, fmt.Errorf("use idempotency key: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (t *tx) AnswerIdempotencyKey(ctx context.Context, subject, key, token string, a store.IdempotentAnswer) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE idempotency_keys SET status = $1, headers = $2, body = $3
		WHERE subject = $4 AND idem_key = $5 AND token = $6 AND status IS NULL`, a.Status, a.Headers, a.Body, subject, key, token)
	if err != nil {
		return false, fmt.Errorf("answer idempotency key: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (t *tx) ReleaseIdempotencyKey(ctx context.Context, subject, key, token string) (bool, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE subject = $1 AND idem_key = $2 AND token = $3 AND used_at IS NULL AND status IS NULL`, subject, key, token)
	if err != nil {
		return false, fmt.Errorf("release idempotency key: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (t *tx) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, ms(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	return tag.RowsAffected(), nil
}
