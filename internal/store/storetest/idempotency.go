package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// idemKey is a claim of key by subject at base.
func idemKey(subject, key, token string, at time.Time) *store.IdempotencyKey {
	return &store.IdempotencyKey{Subject: subject, Key: key, RequestHash: []byte("hash-" + token), Token: token,
		CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour), LeaseUntil: at.Add(time.Minute)}
}

// claimKey runs ClaimIdempotencyKey in its own transaction.
func claimKey(t *testing.T, s store.Store, k *store.IdempotencyKey, now time.Time) (*store.IdempotencyKey, bool) {
	t.Helper()
	var held *store.IdempotencyKey
	var ok bool
	err := s.InTx(t.Context(), func(tx store.Tx) error {
		var err error
		held, ok, err = tx.ClaimIdempotencyKey(t.Context(), k, now)
		return err
	})
	if err != nil {
		t.Fatalf("ClaimIdempotencyKey() error = %v", err)
	}
	return held, ok
}

// changed runs fn in its own transaction and returns its bool.
func changed(t *testing.T, s store.Store, fn func(tx store.Tx) (bool, error)) bool {
	t.Helper()
	var ok bool
	err := s.InTx(t.Context(), func(tx store.Tx) error {
		var err error
		ok, err = fn(tx)
		return err
	})
	if err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	return ok
}

// testIdempotencyKeys walks a key through claim, use, answer, expiry and
// clean-up, and checks that a claim is taken over only when it may be.
func testIdempotencyKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	first := idemKey("key:A", "k1", "t1", base)
	if got, ok := claimKey(t, s, first, base); !ok || got != first {
		t.Fatalf("ClaimIdempotencyKey(new) = %v, want claimed", ok)
	}
	// A second claim while the first holds its lease gets the first.
	held, ok := claimKey(t, s, idemKey("key:A", "k1", "t2", base.Add(time.Second)), base.Add(time.Second))
	if ok {
		t.Fatal("ClaimIdempotencyKey(held) claimed, want the held row")
	}
	if diff := cmp.Diff(first, held); diff != "" {
		t.Errorf("held key (-want +got):\n%s", diff)
	}
	// Another subject's key of the same name is its own.
	if _, ok := claimKey(t, s, idemKey("member:B", "k1", "t3", base), base); !ok {
		t.Error("ClaimIdempotencyKey(another subject) not claimed")
	}
	// Only the claim's token uses and answers it.
	if changed(t, s, func(tx store.Tx) (bool, error) { return tx.UseIdempotencyKey(ctx, "key:A", "k1", "t2", base) }) {
		t.Error("UseIdempotencyKey(another token) = true")
	}
	usedAt := base.Add(2 * time.Second)
	for range 2 {
		if !changed(t, s, func(tx store.Tx) (bool, error) { return tx.UseIdempotencyKey(ctx, "key:A", "k1", "t1", usedAt) }) {
			t.Error("UseIdempotencyKey(token) = false")
		}
		usedAt = usedAt.Add(time.Second) // the first use stays
	}
	// Used and unanswered, the key is not taken over when its lease passes:
	// its change committed.
	if _, ok := claimKey(t, s, idemKey("key:A", "k1", "t4", base.Add(time.Hour)), base.Add(time.Hour)); ok {
		t.Error("ClaimIdempotencyKey(used, lease passed) claimed")
	}
	// Nor released.
	if changed(t, s, func(tx store.Tx) (bool, error) { return tx.ReleaseIdempotencyKey(ctx, "key:A", "k1", "t1") }) {
		t.Error("ReleaseIdempotencyKey(used) = true")
	}
	answer := store.IdempotentAnswer{Status: 201, Headers: []byte(`{"Content-Type":"application/json"}`), Body: []byte(`{"id":"x"}` + "\n")}
	if changed(t, s, func(tx store.Tx) (bool, error) { return tx.AnswerIdempotencyKey(ctx, "key:A", "k1", "t2", answer) }) {
		t.Error("AnswerIdempotencyKey(another token) = true")
	}
	if !changed(t, s, func(tx store.Tx) (bool, error) { return tx.AnswerIdempotencyKey(ctx, "key:A", "k1", "t1", answer) }) {
		t.Error("AnswerIdempotencyKey(token) = false")
	}
	if changed(t, s, func(tx store.Tx) (bool, error) {
		return tx.AnswerIdempotencyKey(ctx, "key:A", "k1", "t1", store.IdempotentAnswer{Status: 500})
	}) {
		t.Error("AnswerIdempotencyKey(answered) = true, want the first answer kept")
	}
	got, err := s.IdempotencyKey(ctx, "key:A", "k1")
	if err != nil {
		t.Fatalf("IdempotencyKey() error = %v", err)
	}
	wantUsed := base.Add(2 * time.Second)
	want := *first
	want.UsedAt, want.Answer = &wantUsed, &answer
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("IdempotencyKey() (-want +got):\n%s", diff)
	}
	if _, err := s.IdempotencyKey(ctx, "key:B", "k1"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("IdempotencyKey(missing) error = %v, want not_found", err)
	}
	// Answered, it holds until it expires; then a claim takes it over.
	if _, ok := claimKey(t, s, idemKey("key:A", "k1", "t5", first.ExpiresAt.Add(-time.Millisecond)), first.ExpiresAt.Add(-time.Millisecond)); ok {
		t.Error("ClaimIdempotencyKey(answered, live) claimed")
	}
	again := idemKey("key:A", "k1", "t6", first.ExpiresAt)
	if _, ok := claimKey(t, s, again, first.ExpiresAt); !ok {
		t.Fatal("ClaimIdempotencyKey(expired) not claimed")
	}
	if got, _ := s.IdempotencyKey(ctx, "key:A", "k1"); got == nil || got.Answer != nil || got.UsedAt != nil || got.Token != "t6" {
		t.Errorf("taken-over key = %+v, want a fresh claim", got)
	}

	// An unused claim whose lease passed (its process stopped) is taken
	// over; an unused one may be released.
	if _, ok := claimKey(t, s, idemKey("key:A", "k2", "u1", base), base); !ok {
		t.Fatal("ClaimIdempotencyKey(k2) not claimed")
	}
	if _, ok := claimKey(t, s, idemKey("key:A", "k2", "u2", base.Add(time.Minute)), base.Add(time.Minute)); !ok {
		t.Error("ClaimIdempotencyKey(unused, lease passed) not claimed")
	}
	if changed(t, s, func(tx store.Tx) (bool, error) { return tx.ReleaseIdempotencyKey(ctx, "key:A", "k2", "u1") }) {
		t.Error("ReleaseIdempotencyKey(taken-over token) = true")
	}
	if !changed(t, s, func(tx store.Tx) (bool, error) { return tx.ReleaseIdempotencyKey(ctx, "key:A", "k2", "u2") }) {
		t.Error("ReleaseIdempotencyKey(unused) = false")
	}
	if _, err := s.IdempotencyKey(ctx, "key:A", "k2"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("released key: %v, want not_found", err)
	}

	// Clean-up deletes the keys expired at now: key:A/k1 expires a day
	// after first.ExpiresAt, member:B/k1 at first.ExpiresAt.
	var n int64
	err = s.InTx(ctx, func(tx store.Tx) error {
		n, err = tx.DeleteExpiredIdempotencyKeys(ctx, first.ExpiresAt)
		return err
	})
	if err != nil || n != 1 {
		t.Errorf("DeleteExpiredIdempotencyKeys() = %d, %v, want 1", n, err)
	}
	if _, err := s.IdempotencyKey(ctx, "member:B", "k1"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("expired key: %v, want not_found", err)
	}
	if _, err := s.IdempotencyKey(ctx, "key:A", "k1"); err != nil {
		t.Errorf("live key: %v, want it kept", err)
	}
}

// testIdempotencyClaimRace: of ten claims of one key at once, exactly one
// wins, and the others are given its row.
func testIdempotencyClaimRace(t *testing.T, s store.Store) {
	const n = 10
	var wg sync.WaitGroup
	won := make([]bool, n)
	held := make([]*store.IdempotencyKey, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = s.InTx(context.WithoutCancel(t.Context()), func(tx store.Tx) error {
				var err error
				held[i], won[i], err = tx.ClaimIdempotencyKey(t.Context(), idemKey("key:A", "race", string(rune('a'+i)), base), base)
				return err
			})
		})
	}
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		if won[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("winners = %d, want 1", winners)
	}
	stored, err := s.IdempotencyKey(t.Context(), "key:A", "race")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if held[i].Token != stored.Token {
			t.Errorf("claim %d got token %q, want the winner's %q", i, held[i].Token, stored.Token)
		}
	}
}

// testCommitHook: a transaction run under WithCommitHook runs the hook in
// itself, so the key is used with the change or not at all.
func testCommitHook(t *testing.T, s store.Store) {
	claimKey(t, s, idemKey("key:A", "hook", "t1", base), base)
	use := func(token string) func(ctx context.Context, tx store.Tx) error {
		return func(ctx context.Context, tx store.Tx) error {
			ok, err := tx.UseIdempotencyKey(ctx, "key:A", "hook", token, base)
			if err == nil && !ok {
				err = licentia.Errorf(licentia.CodeIdempotencyKeyInUse, "lost")
			}
			return err
		}
	}
	// The hook refuses: the change rolls back with it.
	ctx := store.WithCommitHook(t.Context(), use("other"))
	err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetSetting(ctx, "hook_test", "lost") })
	if licentia.ErrorCode(err) != licentia.CodeIdempotencyKeyInUse {
		t.Fatalf("InTx(hook refuses) error = %v, want idempotency_key_in_use", err)
	}
	if v, _ := s.Setting(t.Context(), "hook_test"); v != "" {
		t.Errorf("setting after a refused hook = %q, want none", v)
	}
	// The change fails: the hook does not run, the key stays unused.
	ctx = store.WithCommitHook(t.Context(), use("t1"))
	boom := errors.New("boom")
	if err := s.InTx(ctx, func(tx store.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("InTx(failing) error = %v", err)
	}
	if k, _ := s.IdempotencyKey(t.Context(), "key:A", "hook"); k == nil || k.UsedAt != nil {
		t.Errorf("key after a failed change = %+v, want unused", k)
	}
	// The change commits, and with it the key's use.
	if err := s.InTx(ctx, func(tx store.Tx) error { return tx.SetSetting(ctx, "hook_test", "done") }); err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	if v, _ := s.Setting(t.Context(), "hook_test"); v != "done" {
		t.Errorf("setting = %q, want done", v)
	}
	if k, _ := s.IdempotencyKey(t.Context(), "key:A", "hook"); k == nil || k.UsedAt == nil {
		t.Errorf("key after the change = %+v, want used", k)
	}
}
