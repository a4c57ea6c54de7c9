package sdk_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

// answerVerdict is an intercept answering the status route with a verdict.
func answerVerdict(v string) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		writeJSONAnswer(w, 200, map[string]string{"verdict": v})
		return true
	}
}

// fixtureVerdict is a verdict the fake server could sign now, changed by edit.
func fixtureVerdict(t *testing.T, fx *fixture, edit func(*sdk.Verdict)) sdk.Verdict {
	t.Helper()
	now := fx.clock.Now()
	until := now.Add(fxValidity)
	v := sdk.Verdict{LicenceID: fxLicence, ProductID: fxProduct, MachineID: fxMachine,
		ActivationID: ptr("5f0c9a7e-3b1d-4c8e-a2f6-000000000001"), State: sdk.StateActive, Major: 3,
		LimitKind: "machines", LimitCount: 2, IssuedAt: *fmtTime(&now), ValidUntil: *fmtTime(&until)}
	edit(&v)
	return v
}

// A verdict replayed from another machine, licence or product, signed by
// another key, or edited, is refused: the last good result is kept and the
// error reported.
func TestForeignOrTamperedVerdictRefused(t *testing.T) {
	for _, tt := range []struct {
		name    string
		verdict func(t *testing.T, fx *fixture) string
		want    error
	}{
		{"another machine's", func(t *testing.T, fx *fixture) string {
			return sign(t, fx, fixtureVerdict(t, fx, func(v *sdk.Verdict) { v.MachineID = "machine-b"; v.State = sdk.StateRevoked }))
		}, sdk.ErrVerdictMismatch},
		{"another licence's", func(t *testing.T, fx *fixture) string {
			return sign(t, fx, fixtureVerdict(t, fx, func(v *sdk.Verdict) {
				v.LicenceID = "7a1f3c2e-9b4d-4e8f-a6c1-2d5e8f0b3a7c"
				v.State = sdk.StateExpired
			}))
		}, sdk.ErrVerdictMismatch},
		{"another product's", func(t *testing.T, fx *fixture) string {
			return sign(t, fx, fixtureVerdict(t, fx, func(v *sdk.Verdict) { v.ProductID = "notes"; v.State = sdk.StateRevoked }))
		}, sdk.ErrVerdictInvalid},
		{"signed by another product's key", func(t *testing.T, fx *fixture) string {
			s, err := sdk.SignVerdict(seedKey("client/notes"), "", fixtureVerdict(t, fx, func(v *sdk.Verdict) { v.State = sdk.StateRevoked }))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, sdk.ErrVerdictInvalid},
		{"edited", func(t *testing.T, fx *fixture) string {
			good := sign(t, fx, fixtureVerdict(t, fx, func(v *sdk.Verdict) {}))
			return editPayload(t, good, `"active"`, `"revoked"`)
		}, sdk.ErrVerdictInvalid},
		{"not a verdict", func(t *testing.T, fx *fixture) string { return "v1.e30.AAAA" }, sdk.ErrVerdictInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := activated(t)
			last := fx.client.State().Verdict
			fx.clock.Advance(sdk.CheckInterval)
			fx.server.setIntercept(answerVerdict(tt.verdict(t, fx)))
			st, err := fx.client.Check(t.Context())
			if !errors.Is(err, tt.want) {
				t.Errorf("Check() = %v, want %v", err, tt.want)
			}
			wantKept(t, st, last)
			if !errors.Is(st.LastError, tt.want) {
				t.Errorf("State() LastError = %v, want %v", st.LastError, tt.want)
			}
		})
	}
}

// An older verdict replayed cannot undo a newer one, such as a revocation.
func TestOlderVerdictReplayRefused(t *testing.T) {
	fx := activated(t)
	old := fx.client.State().Verdict
	oldRaw := sign(t, fx, *old)
	fx.server.setState(sdk.StateRevoked)
	fx.clock.Advance(sdk.CheckInterval)
	if st, _ := fx.client.Check(t.Context()); st.Reason != sdk.ReasonRevoked {
		t.Fatalf("Check() Reason = %q, want revoked", st.Reason)
	}
	fx.server.setIntercept(answerVerdict(oldRaw))
	fx.clock.Advance(sdk.CheckInterval)
	st, err := fx.client.Check(t.Context())
	if !errors.Is(err, sdk.ErrVerdictOutdated) {
		t.Errorf("Check() = %v, want ErrVerdictOutdated", err)
	}
	wantLocked(t, st, sdk.ReasonRevoked)
}

// A fresh install that gets another machine's verdict has no seat.
func TestActivationAnswerForAnotherMachine(t *testing.T) {
	fx := newFixture(t)
	v := sign(t, fx, fixtureVerdict(t, fx, func(v *sdk.Verdict) { v.MachineID = "machine-b" }))
	fx.server.setIntercept(func(w http.ResponseWriter, r *http.Request) bool {
		writeJSONAnswer(w, 201, map[string]any{"activation": map[string]any{}, "verdict": v})
		return true
	})
	if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); !errors.Is(err, sdk.ErrVerdictMismatch) {
		t.Errorf("Activate() = %v, want ErrVerdictMismatch", err)
	}
	wantLocked(t, fx.client.State(), sdk.ReasonNotActivated)
}

// A record whose verdict was edited on disk is set aside at start: the
// application activates again rather than trust it.
func TestEditedRecordSetAside(t *testing.T) {
	fx := activated(t)
	fx.server.setState(sdk.StateRevoked)
	fx.clock.Advance(sdk.CheckInterval)
	if st, _ := fx.client.Check(t.Context()); st.Reason != sdk.ReasonRevoked {
		t.Fatalf("Check() Reason = %q, want revoked", st.Reason)
	}
	b, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	rec := string(b)
	v := fx.client.State().Verdict
	raw := sign(t, fx, *v)
	if !strings.Contains(rec, raw) {
		t.Fatal("record does not hold the verdict")
	}
	edited := editPayload(t, raw, `"revoked"`, `"active"`)
	if err := os.WriteFile(fx.path, []byte(strings.Replace(rec, raw, edited, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	st := newClient(t, fx.server, fx.path).State()
	if st.Valid || !errors.Is(st.LastError, sdk.ErrVerdictInvalid) {
		t.Errorf("State() = %+v, want not valid, the edited verdict set aside", st)
	}
}

func sign(t *testing.T, fx *fixture, v sdk.Verdict) string {
	t.Helper()
	s, err := sdk.SignVerdict(fx.server.priv, "", v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// editPayload replaces old by new in a verdict's payload, keeping its
// signature.
func editPayload(t *testing.T, verdict, old, new string) string {
	t.Helper()
	parts := strings.Split(verdict, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !bytes.Contains(payload, []byte(old)) {
		t.Fatalf("payload %s does not hold %s", payload, old)
	}
	payload = bytes.Replace(payload, []byte(old), []byte(new), 1)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
}

// roundTrip answers every request with one status and body, in memory.
type roundTrip struct {
	status int
	body   []byte
}

func (rt roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: rt.status, Header: http.Header{"Retry-After-Public": {"1"}},
		Body: io.NopCloser(bytes.NewReader(rt.body)), Request: r}, nil
}

// FuzzCheckAnswer: no answer, whatever its status and body, changes the
// result without a good signature: an activated install stays valid, a 422
// included.
func FuzzCheckAnswer(f *testing.F) {
	f.Add(200, []byte(`{"verdict":"v1.e30.AAAA"}`))
	f.Add(403, []byte(`{"error":{"code":"licence_revoked","message":"x","request_id":"r"}}`))
	f.Add(422, []byte(`{"error":{"code":"licence_key_invalid"}}`))
	f.Add(429, []byte(`{"error":{"code":"rate_limited"}}`))
	f.Add(200, []byte(`{"verdict":null,"verdict":"v1..","extra":[1,2]}`))
	f.Add(500, []byte(`<html>`))
	priv := seedKey("client/photo/current")
	key, err := sdk.SignLicenceKey(priv, "", fxPrefix, fxProduct, fxLicence)
	if err != nil {
		f.Fatal(err)
	}
	until := fxStart.Add(fxValidity)
	verdict, err := sdk.SignVerdict(priv, "", sdk.Verdict{LicenceID: fxLicence, ProductID: fxProduct, MachineID: fxMachine,
		ActivationID: ptr("5f0c9a7e-3b1d-4c8e-a2f6-000000000001"), State: sdk.StateActive, Major: 3,
		LimitKind: "machines", LimitCount: 2, IssuedAt: *fmtTime(&fxStart), ValidUntil: *fmtTime(&until)})
	if err != nil {
		f.Fatal(err)
	}
	rec := sdk.Record{LicenceKey: key, Verdict: verdict, Activated: true, CheckedAt: fxStart}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		store := sdk.FileStore(filepath.Join(t.TempDir(), "licence.json"))
		if err := store.Save(&rec); err != nil {
			t.Fatal(err)
		}
		c, err := sdk.NewClient(sdk.Config{BaseURL: "https://licensing.example.com",
			HTTPClient: &http.Client{Transport: roundTrip{status: status, body: body}}, Product: fxProductOf(priv),
			Major: 3, MachineID: fxMachine, Store: store, Now: func() time.Time { return fxStart.Add(30 * 24 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		mustValid(t, c.State())
		st, _ := c.Check(t.Context())
		if !st.Valid {
			t.Errorf("answer %d %q: State() Valid = false (%q)", status, body, st.Reason)
		}
	})
}
