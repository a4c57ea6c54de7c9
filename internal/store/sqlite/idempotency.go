package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (r reader) IdempotencyKey(ctx context.Context, subject, key string) (*store.IdempotencyKey, error) {
	k := store.IdempotencyKey{Subject: subject, Key: key}
	var created, expires, lease int64
	var used, status *int64
	var headers, body []byte
	err := r.q.QueryRowContext(ctx, `SELECT request_hash, token, created_at, expires_at, lease_until, used_at, status, headers, body
		FROM idempotency_keys WHERE subject = ? AND idem_key = ?`, subject, key).
		Scan(&k.RequestHash, &k.Token, &created, &expires, &lease, &used, &status, &headers, &body)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Idempotency key")
	}
	if err != nil {
		return nil, fmt.Errorf("read idempotency key: %w", err)
	}
	k.CreatedAt, k.ExpiresAt, k.LeaseUntil, k.UsedAt = store.FromMillis(created), store.FromMillis(expires),
		store.FromMillis(lease), store.FromMillisPtr(used)
	if status != nil {
		k.Answer = &store.IdempotentAnswer{Status: int(*status), Headers: headers, Body: body}
	}
	return &k, nil
}

// ClaimIdempotencyKey runs on the one writer connection, so of claims
// racing for one key exactly one inserts or takes over the row.
func (t *tx) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, now time.Time) (*store.IdempotencyKey, bool, error) {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO idempotency_keys
		(subject, idem_key, request_hash, token, created_at, expires_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (subject, idem_key) DO UPDATE SET request_hash = excluded.request_hash, token = excluded.token,
			created_at = excluded.created_at, expires_at = excluded.expires_at, lease_until = excluded.lease_until,
			used_at = NULL, status = NULL, headers = NULL, body = NULL
		WHERE idempotency_keys.expires_at <= ?
			OR (idempotency_keys.used_at IS NULL AND idempotency_keys.status IS NULL AND idempotency_keys.lease_until <= ?)`,
		k.Subject, k.Key, k.RequestHash, k.Token, store.Millis(k.CreatedAt), store.Millis(k.ExpiresAt),
		store.Millis(k.LeaseUntil), store.Millis(now), store.Millis(now))
	if err != nil {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return k, true, nil
	}
	held, err := t.IdempotencyKey(ctx, k.Subject, k.Key)
	if err != nil {
		return nil, false, fmt.Errorf("claim idempotency key: %w", err)
	}
	return held, false, nil
}

func (t *tx) UseIdempotencyKey(ctx context.Context, subject, key, token string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE idempotency_keys SET used_at = COALESCE(used_at, ?)
		WHERE subject = ? AND idem_key = ? AND token = ?`, store.Millis(at), subject, key, token)
	if err != nil {
		return false, fmt.Errorf("use idempotency key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func (t *tx) AnswerIdempotencyKey(ctx context.Context, subject, key, token string, a store.IdempotentAnswer) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE idempotency_keys SET status = ?, headers = ?, body = ?
		WHERE subject = ? AND idem_key = ? AND token = ? AND status IS NULL`, a.Status, a.Headers, a.Body, subject, key, token)
	if err != nil {
		return false, fmt.Errorf("answer idempotency key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func (t *tx) ReleaseIdempotencyKey(ctx context.Context, subject, key, token string) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM idempotency_keys
		WHERE subject = ? AND idem_key = ? AND token = ? AND used_at IS NULL AND status IS NULL`, subject, key, token)
	if err != nil {
		return false, fmt.Errorf("release idempotency key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func (t *tx) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, store.Millis(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	return n, nil
}
