package sdk_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

func TestCheckAtMostOnceADay(t *testing.T) {
	fx := activated(t)
	for _, step := range []time.Duration{time.Minute, time.Hour, 23*time.Hour - time.Minute - time.Second} {
		fx.clock.Advance(step)
		st, err := fx.client.Check(t.Context())
		if err != nil {
			t.Fatalf("Check() = %v", err)
		}
		mustValid(t, st)
	}
	if n := fx.server.count("/v1/activations/status"); n != 0 {
		t.Fatalf("status requests within 24 h = %d, want 0", n)
	}
	fx.clock.Advance(time.Second) // 24 h after the activation
	st, err := fx.client.Check(t.Context())
	if err != nil {
		t.Fatalf("Check() = %v", err)
	}
	mustValid(t, st)
	if n := fx.server.count("/v1/activations/status"); n != 1 {
		t.Errorf("status requests at 24 h = %d, want 1", n)
	}
	if !st.CheckedAt.Equal(fx.clock.Now()) || !st.NextCheckAt.Equal(fx.clock.Now().Add(sdk.CheckInterval)) || st.Stale {
		t.Errorf("State() = %+v, want checked now, next in 24 h, not stale", st)
	}
	if _, err := fx.client.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := fx.server.count("/v1/activations/status"); n != 1 {
		t.Errorf("status requests after a second Check = %d, want 1", n)
	}
}

// Only a signed verdict of a revoked or expired licence locks; a later
// signed verdict of a reinstated one unlocks.
func TestSignedVerdictLocks(t *testing.T) {
	for _, tt := range []struct {
		state  string
		reason sdk.Reason
	}{
		{sdk.StateRevoked, sdk.ReasonRevoked},
		{sdk.StateExpired, sdk.ReasonExpired},
	} {
		t.Run(tt.state, func(t *testing.T) {
			fx := activated(t)
			fx.server.setState(tt.state)
			fx.clock.Advance(sdk.CheckInterval)
			st, err := fx.client.Check(t.Context())
			if err != nil {
				t.Fatalf("Check() = %v", err)
			}
			wantLocked(t, st, tt.reason)
			if st.Stale || st.Verdict.State != tt.state {
				t.Errorf("State() = %+v, want a fresh %s verdict", st, tt.state)
			}
			wantLocked(t, newClient(t, fx.server, fx.path).State(), tt.reason)

			fx.server.setState(sdk.StateActive)
			fx.clock.Advance(sdk.CheckInterval)
			st, err = fx.client.Check(t.Context())
			if err != nil {
				t.Fatalf("Check() after reinstatement = %v", err)
			}
			mustValid(t, st)
		})
	}
}

// Activating a revoked licence answers 403; the client asks the status
// route, and the signed verdict there is what locks.
func TestActivateRevokedLicenceConfirmedBySignedVerdict(t *testing.T) {
	fx := newFixture(t)
	fx.server.setState(sdk.StateRevoked)
	_, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
	if e, ok := errors.AsType[*sdk.Error](err); !ok || e.Code != sdk.CodeLicenceRevoked {
		t.Fatalf("Activate() = %v, want 403 licence_revoked", err)
	}
	wantLocked(t, fx.client.State(), sdk.ReasonRevoked)
	if n := fx.server.count("/v1/activations/status"); n != 1 {
		t.Errorf("status requests = %d, want 1", n)
	}
	// A confirmed 403 is not sent again unchanged.
	_, _ = fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
	if n := fx.server.count(""); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

// An error body is not signed: a man in the middle can send a 403. It
// locks nothing unless the status route's signed verdict agrees.
func TestUnsignedRefusalDoesNotLock(t *testing.T) {
	forged := errorAnswer(403, sdk.CodeLicenceRevoked, nil)
	t.Run("on activation, status says active", func(t *testing.T) {
		fx := activated(t)
		fx.server.setIntercept(onPath("/v1/activations", forged))
		_, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
		if !errors.Is(err, sdk.ErrUnconfirmed) {
			t.Fatalf("Activate() = %v, want ErrUnconfirmed", err)
		}
		mustValid(t, fx.client.State())
		if n := fx.server.count("/v1/activations/status"); n != 1 {
			t.Errorf("status requests = %d, want 1", n)
		}
		// Unconfirmed, so not remembered as a refusal: the customer may try again.
		fx.server.setIntercept(nil)
		if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); err != nil {
			t.Errorf("Activate() again = %v", err)
		}
	})
	t.Run("on activation and status", func(t *testing.T) {
		fx := activated(t)
		last := fx.client.State().Verdict
		fx.server.setIntercept(forged)
		if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); !errors.Is(err, sdk.ErrUnconfirmed) {
			t.Fatalf("Activate() = %v, want ErrUnconfirmed", err)
		}
		wantKept(t, fx.client.State(), last)
	})
	t.Run("on the daily check", func(t *testing.T) {
		fx := activated(t)
		last := fx.client.State().Verdict
		fx.server.setIntercept(forged)
		fx.clock.Advance(sdk.CheckInterval)
		st, err := fx.client.Check(t.Context())
		if err == nil {
			t.Fatal("Check() = nil error")
		}
		wantKept(t, st, last)
	})
	t.Run("status rate limited while confirming", func(t *testing.T) {
		fx := activated(t)
		fx.server.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/v1/activations" {
				return forged(w, r)
			}
			return errorAnswer(429, sdk.CodeRateLimited, map[string]string{"Retry-After-public": "90"})(w, r)
		})
		_, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
		if !errors.Is(err, sdk.ErrUnconfirmed) {
			t.Fatalf("Activate() = %v, want ErrUnconfirmed", err)
		}
		st := fx.client.State()
		mustValid(t, st)
		if want := fx.clock.Now().Add(90 * time.Second); st.NextCheckAt.Before(want) {
			t.Errorf("State() NextCheckAt = %v, want no earlier than the 429's wait, %v", st.NextCheckAt, want)
		}
		if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); !errors.Is(err, sdk.ErrRetryLater) {
			t.Errorf("Activate() during the wait = %v, want ErrRetryLater", err)
		}
	})
	t.Run("fresh install", func(t *testing.T) {
		fx := newFixture(t)
		fx.server.setIntercept(forged)
		_, _ = fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
		if st := fx.client.State(); st.Reason == sdk.ReasonRevoked {
			t.Errorf("State() Reason = %q from an unsigned 403", st.Reason)
		}
	})
}

// The licence's own signed expiry locks offline, with no request and even
// while the server cannot be reached.
func TestLicenceExpiryLocksOffline(t *testing.T) {
	clock := &testClock{t: fxStart}
	f := newFakeServer(t, clock)
	exp := fxStart.Add(3 * 24 * time.Hour)
	f.licence().expiresAt = &exp
	c := newClient(t, f, "")
	if _, err := c.Activate(t.Context(), f.key(t), fxMachineInfo); err != nil {
		t.Fatal(err)
	}
	f.setIntercept(errorAnswer(500, sdk.CodeInternalError, nil))
	clock.Advance(3*24*time.Hour - time.Millisecond)
	mustValid(t, c.State())
	clock.Advance(time.Millisecond)
	wantLocked(t, c.State(), sdk.ReasonExpired)
	if n := f.count("/v1/activations/status"); n != 0 {
		t.Errorf("status requests = %d, want 0: expiry is judged offline", n)
	}
}

// A trial's verdict is valid at most a day past the trial's end, and the
// trial's end (its expires_at) locks offline like any expiry.
func TestTrialVerdict(t *testing.T) {
	clock := &testClock{t: fxStart}
	f := newFakeServer(t, clock)
	end := fxStart.Add(2 * 24 * time.Hour)
	l := f.licence()
	l.state, l.trialEndsAt, l.expiresAt = sdk.StateTrial, &end, &end
	c := newClient(t, f, "")
	if _, err := c.Activate(t.Context(), f.key(t), fxMachineInfo); err != nil {
		t.Fatal(err)
	}
	st := c.State()
	mustValid(t, st)
	until, _ := st.Verdict.ValidUntilTime()
	if st.Verdict.State != sdk.StateTrial || until.After(end.Add(24*time.Hour)) {
		t.Errorf("trial verdict = %+v, want state trial, valid_until at most a day past %s", st.Verdict, end)
	}
	clock.Advance(2 * 24 * time.Hour)
	wantLocked(t, c.State(), sdk.ReasonExpired)
}

func TestMaxOfflineIsOptIn(t *testing.T) {
	for _, tt := range []struct {
		name       string
		maxOffline time.Duration
		offline    time.Duration
		valid      bool
	}{
		{"no limit, a year offline", 0, 365 * 24 * time.Hour, true},
		{"within the limit", 14 * 24 * time.Hour, 14 * 24 * time.Hour, true},
		{"past the limit", 14 * 24 * time.Hour, 14*24*time.Hour + time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := activated(t, func(c *sdk.Config) { c.MaxOffline = tt.maxOffline })
			fx.server.setIntercept(errorAnswer(503, sdk.CodeProductUnavailable, nil))
			fx.clock.Advance(tt.offline)
			st, _ := fx.client.Check(t.Context())
			if st.Valid != tt.valid {
				t.Errorf("Check() Valid = %v (%q), want %v", st.Valid, st.Reason, tt.valid)
			}
			if !tt.valid && st.Reason != sdk.ReasonOfflineTooLong {
				t.Errorf("Check() Reason = %q, want %q", st.Reason, sdk.ReasonOfflineTooLong)
			}
			// A successful check ends it.
			fx.server.setIntercept(nil)
			fx.clock.Advance(sdk.CheckInterval)
			st, err := fx.client.Check(t.Context())
			if err != nil {
				t.Fatalf("Check() = %v", err)
			}
			mustValid(t, st)
		})
	}
}

// A seat freed by the maker is reported; it locks only with RequireSeat.
func TestSeatFreed(t *testing.T) {
	for _, require := range []bool{false, true} {
		fx := activated(t, func(c *sdk.Config) { c.RequireSeat = require })
		fx.server.freeSeat(fxMachine)
		fx.clock.Advance(sdk.CheckInterval)
		st, err := fx.client.Check(t.Context())
		if err != nil {
			t.Fatalf("Check() = %v", err)
		}
		if st.Seated || st.Valid == require {
			t.Errorf("RequireSeat %v: Check() Seated, Valid = %v, %v", require, st.Seated, st.Valid)
		}
		if require && st.Reason != sdk.ReasonSeatFreed {
			t.Errorf("Check() Reason = %q, want %q", st.Reason, sdk.ReasonSeatFreed)
		}
		if n := fx.server.count("/v1/activations"); n != 1 {
			t.Errorf("activation requests = %d, want 1: a freed seat is not taken back", n)
		}
	}
}

// Fields may be added to answers and to the verdict payload; the client
// ignores them (contract, Versioning).
func TestUnknownFieldsIgnored(t *testing.T) {
	fx := newFixture(t)
	priv := fx.server.priv
	payload := `{"format":1,"licence_id":"` + fxLicence + `","product_id":"` + fxProduct + `","machine_id":"` + fxMachine +
		`","activation_id":"5f0c9a7e-3b1d-4c8e-a2f6-000000000001","state":"active","expires_at":null,"trial_ends_at":null,` +
		`"major":3,"limit_kind":"machines","limit_count":2,"issued_at":"2026-11-22T09:00:00.000Z",` +
		`"valid_until":"2026-11-29T09:00:00.000Z","key_fingerprint":"x","bundles":["raw"],"grace":{"days":3}}`
	verdict := signRaw(priv, payload)
	fx.server.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		writeJSONAnswer(w, 201, map[string]any{
			"activation": map[string]any{"id": "5f0c9a7e-3b1d-4c8e-a2f6-000000000001", "licence_id": fxLicence,
				"machine_id": fxMachine, "fingerprint": "new", "activated_at": "2026-11-22T09:00:00.000Z"},
			"verdict": verdict, "links": map[string]string{"renew": "https://example.com"},
		})
		return true
	})
	a, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
	if err != nil {
		t.Fatalf("Activate() = %v", err)
	}
	if !a.Created || a.ID == "" {
		t.Errorf("Activate() = %+v", a)
	}
	mustValid(t, fx.client.State())
}

// signRaw signs payload bytes as a verdict, as SignVerdict does for a
// Verdict value: lets a test sign fields this version does not know.
func signRaw(priv ed25519.PrivateKey, payload string) string {
	msg := []byte(sdk.DefaultVerdictDomain + "\x00verdict\x00" + payload)
	enc := base64.RawURLEncoding
	return "v1." + enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(ed25519.Sign(priv, msg))
}
