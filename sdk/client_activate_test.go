package sdk_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

func TestActivateTakesSeatThenRefreshesIt(t *testing.T) {
	fx := newFixture(t)
	a, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
	if err != nil {
		t.Fatalf("Activate() = %v", err)
	}
	if !a.Created || a.MachineID != fxMachine || a.LicenceID != fxLicence || a.Label != fxMachineInfo.Label {
		t.Errorf("Activate() = %+v, want a new seat (201) for %s", a, fxMachine)
	}
	st := fx.client.State()
	mustValid(t, st)
	if !st.Seated || st.Stale || st.LastError != nil || st.LicenceID != fxLicence || !st.CheckedAt.Equal(fxStart) {
		t.Errorf("State() = %+v, want seated, fresh, checked now", st)
	}
	if st.Verdict.MachineID != fxMachine || st.Verdict.State != sdk.StateActive {
		t.Errorf("State() Verdict = %+v", st.Verdict)
	}

	a, err = fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
	if err != nil {
		t.Fatalf("Activate() again = %v", err)
	}
	if a.Created {
		t.Error("Activate() again Created = true, want false (200: the machine already held a seat)")
	}
	if n := fx.server.count("/v1/activations"); n != 2 {
		t.Errorf("activation requests = %d, want 2", n)
	}
}

// The key is the customer's to type: whitespace, case and dashes do not
// matter, as docs/licence-key-format.md says.
func TestActivateAcceptsKeyAsTyped(t *testing.T) {
	fx := newFixture(t)
	typed := "  " + strings.ToLower(strings.ReplaceAll(fx.server.key(t), "-", "")) + "\n"
	if _, err := fx.client.Activate(t.Context(), typed, fxMachineInfo); err != nil {
		t.Fatalf("Activate() = %v", err)
	}
	mustValid(t, fx.client.State())
}

func TestActivateSurvivesRestart(t *testing.T) {
	fx := activated(t)
	before := fx.client.State()
	again := newClient(t, fx.server, fx.path)
	st := again.State()
	mustValid(t, st)
	if st.Verdict.IssuedAt != before.Verdict.IssuedAt || !st.CheckedAt.Equal(before.CheckedAt) {
		t.Errorf("after restart State() = %+v, want %+v", st, before)
	}
	if _, err := again.Check(t.Context()); err != nil {
		t.Fatalf("Check() = %v", err)
	}
	if n := fx.server.count(""); n != 1 {
		t.Errorf("requests = %d, want 1 (the activation; the check is not due)", n)
	}
}

// A key that fails offline verification is refused without a request, and
// a stored key this build no longer accepts locks without one.
func TestKeyFailingOfflineVerification(t *testing.T) {
	fx := newFixture(t)
	key := fx.server.key(t)
	notes := mustSign(t, seedKey("client/notes"), "", "NOTES", "notes", fxLicence)
	for _, tt := range []struct {
		name, key string
		want      error
	}{
		{"edited", key[:len(key)-3] + flip(key[len(key)-3]) + key[len(key)-2:], sdk.ErrLicenceKeyInvalid},
		{"unknown signer", mustSign(t, seedKey("client/stranger"), "", fxPrefix, fxProduct, fxLicence), sdk.ErrLicenceKeyInvalid},
		{"another product's key", notes, sdk.ErrLicenceKeyInvalid},
		{"garbage", "hello", sdk.ErrLicenceKeyInvalid},
		{"empty", "", sdk.ErrLicenceKeyInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := fx.client.Activate(t.Context(), tt.key, fxMachineInfo); !errors.Is(err, tt.want) {
				t.Errorf("Activate() = %v, want %v", err, tt.want)
			}
			wantLocked(t, fx.client.State(), sdk.ReasonNoLicence)
		})
	}
	if n := fx.server.count(""); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}

	t.Run("stored key no longer accepted", func(t *testing.T) {
		fx := activated(t)
		rebuilt := newClient(t, fx.server, fx.path, func(c *sdk.Config) {
			c.Product.PublicKeys = pubs(seedKey("client/photo/next")) // the signer's key was dropped
		})
		wantLocked(t, rebuilt.State(), sdk.ReasonKeyInvalid)
		fx.clock.Advance(30 * 24 * time.Hour)
		if _, err := rebuilt.Check(t.Context()); err != nil {
			t.Errorf("Check() = %v", err)
		}
		if n := fx.server.count(""); n != 1 {
			t.Errorf("requests = %d, want 1 (the activation only)", n)
		}
	})
}

// A 422 is an unsigned answer: a captive portal, a broken proxy or anyone
// on the path can send it. For a key that verifies offline it locks
// nothing: the last signed verdict stands, Status reports the answer, and
// the next day's check asks again.
func TestUnsignedKeyRefusalDoesNotLock(t *testing.T) {
	for _, code := range []string{sdk.CodeLicenceKeyInvalid, sdk.CodeLicenceWrongProduct} {
		t.Run(code, func(t *testing.T) {
			fx := activated(t)
			last := fx.client.State().Verdict
			fx.server.setIntercept(errorAnswer(422, code, nil))
			fx.clock.Advance(sdk.CheckInterval)
			refusedAt := fx.clock.Now()
			st, err := fx.client.Check(t.Context())
			if e, ok := errors.AsType[*sdk.Error](err); !ok || e.Code != code {
				t.Fatalf("Check() = %v, want %s", err, code)
			}
			wantKept(t, st, last)
			if e, ok := errors.AsType[*sdk.Error](st.LastError); !ok || e.Status != 422 || e.Code != code {
				t.Errorf("State() LastError = %v, want the 422 %s", st.LastError, code)
			}
			if want := refusedAt.Add(sdk.CheckInterval); !st.NextCheckAt.Equal(want) {
				t.Errorf("State() NextCheckAt = %v, want the next daily check at %v", st.NextCheckAt, want)
			}
			after := newClient(t, fx.server, fx.path)
			wantKept(t, after.State(), last)

			// Nothing is sent before the next daily check, whatever the
			// server would say.
			fx.server.setIntercept(nil)
			fx.clock.Advance(sdk.CheckInterval - time.Second)
			if _, err := fx.client.Check(t.Context()); err != nil {
				t.Errorf("Check() before the next daily check = %v, want no attempt", err)
			}
			if n := fx.server.count("/v1/activations/status"); n != 1 {
				t.Errorf("status requests = %d, want 1 until the next daily check", n)
			}

			// The next daily check, answered well, clears the report.
			fx.clock.Advance(time.Second)
			st, err = fx.client.Check(t.Context())
			if err != nil {
				t.Fatalf("Check() on the next daily check = %v", err)
			}
			mustValid(t, st)
			if st.Stale || st.LastError != nil || !st.CheckedAt.Equal(fx.clock.Now()) {
				t.Errorf("State() = stale %v, last error %v, checked %v; want fresh, checked now", st.Stale, st.LastError, st.CheckedAt)
			}
			if n := fx.server.count("/v1/activations/status"); n != 2 {
				t.Errorf("status requests = %d, want 2", n)
			}
		})
	}
}

// A 422 when the customer enters a key fails the activation with the
// server's error, but nothing locks: the licence held stays, and a key
// entered with no licence to keep waits for the next day's check.
func TestActivateUnsignedKeyRefusal(t *testing.T) {
	refuse := errorAnswer(422, sdk.CodeLicenceKeyInvalid, nil)
	t.Run("the key held", func(t *testing.T) {
		fx := activated(t)
		last := fx.client.State().Verdict
		fx.server.setIntercept(refuse)
		_, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
		if e, ok := errors.AsType[*sdk.Error](err); !ok || e.Code != sdk.CodeLicenceKeyInvalid {
			t.Fatalf("Activate() = %v, want licence_key_invalid", err)
		}
		wantKept(t, fx.client.State(), last)
		wantKept(t, newClient(t, fx.server, fx.path).State(), last)
	})
	t.Run("a fresh install", func(t *testing.T) {
		fx := newFixture(t)
		fx.server.setIntercept(refuse)
		_, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
		if e, ok := errors.AsType[*sdk.Error](err); !ok || e.Code != sdk.CodeLicenceKeyInvalid {
			t.Fatalf("Activate() = %v, want licence_key_invalid", err)
		}
		st := fx.client.State()
		wantLocked(t, st, sdk.ReasonNotActivated)
		if st.LastError == nil {
			t.Error("State() LastError = nil, want the 422")
		}
		fx.server.setIntercept(nil)
		fx.clock.Advance(sdk.CheckInterval - time.Second)
		if _, err := fx.client.Check(t.Context()); err != nil {
			t.Errorf("Check() before the next daily check = %v, want no attempt", err)
		}
		fx.clock.Advance(time.Second)
		if _, err := newClient(t, fx.server, fx.path).Check(t.Context()); err != nil {
			t.Fatalf("Check() on the next daily check = %v", err)
		}
		if n := fx.server.count("/v1/activations"); n != 2 {
			t.Errorf("activation requests = %d, want 2", n)
		}
		mustValid(t, newClient(t, fx.server, fx.path).State())
	})
	t.Run("a record an earlier version locked", func(t *testing.T) {
		fx := activated(t)
		last := fx.client.State().Verdict
		b, err := os.ReadFile(fx.path)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		rec["key_refused"] = true
		if b, err = json.Marshal(rec); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fx.path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		st := newClient(t, fx.server, fx.path).State()
		mustValid(t, st)
		if st.Verdict == nil || st.Verdict.IssuedAt != last.IssuedAt {
			t.Errorf("State() Verdict = %+v, want the last one (%+v)", st.Verdict, last)
		}
	})
}

// Client guidance: 400, 403 and 422 are not sent again unchanged.
func TestActivateDoesNotResendRefusals(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		code   string
	}{
		{"400", 400, sdk.CodeValidationFailed},
		{"422", 422, sdk.CodeLicenceKeyInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			fx.server.setIntercept(errorAnswer(tt.status, tt.code, nil))
			for range 3 {
				if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); err == nil {
					t.Fatal("Activate() = nil error")
				}
			}
			if n := fx.server.count(""); n != 1 {
				t.Errorf("requests = %d, want 1", n)
			}
			// Changing the request sends it.
			m := fxMachineInfo
			m.Label = "renamed"
			_, _ = fx.client.Activate(t.Context(), fx.server.key(t), m)
			if n := fx.server.count(""); n != 2 {
				t.Errorf("requests after a change = %d, want 2", n)
			}
		})
	}
}

func TestSeatLimitReached(t *testing.T) {
	fx := newFixture(t)
	other := newClient(t, fx.server, "", func(c *sdk.Config) { c.MachineID = "machine-b" })
	third := newClient(t, fx.server, "", func(c *sdk.Config) { c.MachineID = "machine-c" })
	for _, c := range []*sdk.Client{fx.client, other} {
		if _, err := c.Activate(t.Context(), fx.server.key(t), fxMachineInfo); err != nil {
			t.Fatal(err)
		}
	}
	_, err := third.Activate(t.Context(), fx.server.key(t), fxMachineInfo)
	e, ok := errors.AsType[*sdk.Error](err)
	if !ok || e.Status != 409 || e.Code != sdk.CodeSeatLimitReached || e.Details["limit"] != float64(2) || e.Details["active"] != float64(2) {
		t.Fatalf("Activate() = %v (%+v), want 409 seat_limit_reached with limit and active", err, e)
	}
	wantLocked(t, third.State(), sdk.ReasonNotActivated)

	// Once a seat is freed, entering the key again takes it.
	if changed, err := other.Deactivate(t.Context()); err != nil || !changed {
		t.Fatalf("Deactivate() = %v, %v", changed, err)
	}
	if _, err := third.Activate(t.Context(), fx.server.key(t), fxMachineInfo); err != nil {
		t.Fatalf("Activate() after a seat was freed = %v", err)
	}
	mustValid(t, third.State())
}

// A key the server cannot be asked about yet is kept, and Check activates
// it once the server answers; until then there is no seat, so no run.
func TestKeyEnteredOffline(t *testing.T) {
	fx := newFixture(t)
	fx.server.setIntercept(errorAnswer(503, sdk.CodeProductUnavailable, nil))
	if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); err == nil {
		t.Fatal("Activate() = nil error during an outage")
	}
	st := fx.client.State()
	wantLocked(t, st, sdk.ReasonNotActivated)
	if st.LicenceID != fxLicence || st.LastError == nil {
		t.Errorf("State() = %+v, want the key kept with the error", st)
	}
	fx.server.setIntercept(nil)
	fx.clock.Advance(st.NextCheckAt.Sub(fx.clock.Now()))
	st, err := fx.client.Check(t.Context())
	if err != nil {
		t.Fatalf("Check() = %v", err)
	}
	mustValid(t, st)
	if n := fx.server.count("/v1/activations"); n != 2 {
		t.Errorf("activation requests = %d, want 2", n)
	}
}

// A key that fails or cannot be checked never displaces a working licence.
func TestNewKeyDoesNotDisplaceWorkingLicence(t *testing.T) {
	fx := activated(t)
	otherLicence := "7a1f3c2e-9b4d-4e8f-a6c1-2d5e8f0b3a7c"
	otherKey := mustSign(t, fx.server.priv, "", fxPrefix, fxProduct, otherLicence)
	for _, tt := range []struct {
		name      string
		intercept func(http.ResponseWriter, *http.Request) bool
	}{
		{"unknown licence", nil},
		{"outage", errorAnswer(500, sdk.CodeInternalError, nil)},
		{"refused", errorAnswer(403, sdk.CodeLicenceRevoked, nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx.server.setIntercept(tt.intercept)
			if _, err := fx.client.Activate(t.Context(), otherKey, fxMachineInfo); err == nil {
				t.Fatal("Activate() = nil error")
			}
			st := fx.client.State()
			mustValid(t, st)
			if st.LicenceID != fxLicence {
				t.Errorf("State() LicenceID = %s, want %s kept", st.LicenceID, fxLicence)
			}
		})
	}
}

func TestDeactivate(t *testing.T) {
	fx := activated(t)
	changed, err := fx.client.Deactivate(t.Context())
	if err != nil || !changed {
		t.Fatalf("Deactivate() = %v, %v, want true, nil", changed, err)
	}
	wantLocked(t, fx.client.State(), sdk.ReasonNoLicence)
	wantLocked(t, newClient(t, fx.server, fx.path).State(), sdk.ReasonNoLicence)

	t.Run("failure keeps the licence", func(t *testing.T) {
		fx := activated(t)
		fx.server.setIntercept(errorAnswer(500, sdk.CodeInternalError, nil))
		if _, err := fx.client.Deactivate(t.Context()); err == nil {
			t.Fatal("Deactivate() = nil error")
		}
		mustValid(t, fx.client.State())
	})
}

func TestNewerMajorRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		major int
		valid bool
	}{
		{"same major", 3, true},
		{"older application", 2, true},
		{"newer application", 4, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := activated(t)
			st := newClient(t, fx.server, fx.path, func(c *sdk.Config) { c.Major = tt.major }).State()
			if st.Valid != tt.valid {
				t.Errorf("State() Valid = %v (%q), want %v", st.Valid, st.Reason, tt.valid)
			}
			if !tt.valid && st.Reason != sdk.ReasonNewerMajor {
				t.Errorf("State() Reason = %q, want %q", st.Reason, sdk.ReasonNewerMajor)
			}
		})
	}
}

// A record copied to another machine does not carry the licence: its
// verdict names the first machine. The next Check activates this one.
func TestRecordCopiedToAnotherMachine(t *testing.T) {
	fx := activated(t)
	copied := newClient(t, fx.server, fx.path, func(c *sdk.Config) { c.MachineID = "machine-b" })
	st := copied.State()
	wantLocked(t, st, sdk.ReasonNotActivated)
	if !errors.Is(st.LastError, sdk.ErrVerdictMismatch) {
		t.Errorf("State() LastError = %v, want ErrVerdictMismatch", st.LastError)
	}
	st, err := copied.Check(t.Context())
	if err != nil {
		t.Fatalf("Check() = %v", err)
	}
	mustValid(t, st)
	if st.Verdict.MachineID != "machine-b" {
		t.Errorf("State() Verdict.MachineID = %s, want machine-b", st.Verdict.MachineID)
	}
}
