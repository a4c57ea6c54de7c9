package httpapi_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/sdk"
)

// newSDKClient is an application of desk-app (major 3) on machineID,
// talking to the env's server over loopback, keeping its record in a file.
func (e *actEnv) newSDKClient(t *testing.T, machineID string) *sdk.Client {
	t.Helper()
	return e.newSDKClientAt(t, machineID, filepath.Join(t.TempDir(), "licence.json"))
}

// newSDKClientAt is newSDKClient keeping its record at path, built with the
// product's public key of now.
func (e *actEnv) newSDKClientAt(t *testing.T, machineID, path string) *sdk.Client {
	t.Helper()
	p, _ := e.shipped(t, "desk-app")
	c, err := sdk.NewClient(sdk.Config{
		BaseURL:    e.srv.URL,
		HTTPClient: e.srv.Client(),
		Product:    p,
		Major:      3,
		MachineID:  machineID,
		Store:      sdk.FileStore(path),
		Now:        e.clock.Now,
	})
	if err != nil {
		t.Fatalf("NewClient() error = %v", err)
	}
	return c
}

// TestSDKAgainstServer: the application SDK against the real service:
// activate, check once a day, a revocation through the administration API
// locks the application by its signed verdict, and deactivation frees the
// seat for another machine.
func TestSDKAgainstServer(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	app := e.newSDKClient(t, "sdk-machine-a")
	machine := sdk.Machine{Label: "Ada's laptop", OS: "linux", AppVersion: "3.1.0"}

	a, err := app.Activate(t.Context(), issued.LicenceKey, machine)
	if err != nil {
		t.Fatalf("Activate() error = %v", err)
	}
	if !a.Created || a.LicenceID != issued.Licence.ID || a.MachineID != "sdk-machine-a" {
		t.Errorf("Activate() = %+v, want a new seat of %s on sdk-machine-a", a, issued.Licence.ID)
	}
	wantState(t, app.State(), true, "", true)

	other := e.newSDKClient(t, "sdk-machine-b")
	_, err = other.Activate(t.Context(), issued.LicenceKey, machine)
	if se, ok := errors.AsType[*sdk.Error](err); !ok || se.Code != sdk.CodeSeatLimitReached {
		t.Errorf("Activate() on a second machine of a one-machine licence error = %v, want seat_limit_reached", err)
	}

	e.clock.Advance(sdk.CheckInterval + time.Minute)
	st, err := app.Check(t.Context())
	if err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	wantState(t, st, true, "", true)
	if st.CheckedAt != e.clock.Now() {
		t.Errorf("CheckedAt = %v, want the check just made at %v", st.CheckedAt, e.clock.Now())
	}

	e.change(t, issued.Licence.ID, "revoke", "chargeback")
	e.clock.Advance(sdk.CheckInterval + time.Minute)
	st, err = app.Check(t.Context())
	if err != nil {
		t.Fatalf("Check() after the revocation error = %v", err)
	}
	wantState(t, st, false, sdk.ReasonRevoked, true)
	if st.Verdict == nil || st.Verdict.State != sdk.StateRevoked || st.Verdict.LicenceID != issued.Licence.ID {
		t.Errorf("verdict = %+v, want a signed revoked verdict for the licence", st.Verdict)
	}

	changed, err := app.Deactivate(t.Context())
	if err != nil || !changed {
		t.Fatalf("Deactivate() = %v, %v; want true, nil", changed, err)
	}
	if got := app.State(); got.Valid || got.Reason != sdk.ReasonNoLicence {
		t.Errorf("State() after Deactivate = %+v, want no licence", got)
	}
	e.change(t, issued.Licence.ID, "reinstate", "resolved")
	e.clock.Advance(time.Minute)
	if a, err := other.Activate(t.Context(), issued.LicenceKey, sdk.Machine{Label: "Bob's desktop", OS: "windows", AppVersion: "3.1.0"}); err != nil || !a.Created {
		t.Errorf("Activate() on the second machine after the seat was freed = %+v, %v; want a new seat", a, err)
	}
	if n := e.live(t, issued.Licence.ID); n != 1 {
		t.Errorf("%d live activations, want 1", n)
	}
	e.run(t, scenario{call: statusCall(issued.LicenceKey, "sdk-machine-b"), wantStatus: http.StatusOK})
}

// TestSDKRetiredSigningKey: once the key that signed a licence key is
// retired, the server answers the daily check 422 licence_key_invalid. That
// answer is unsigned, so an installed application keeps running on its
// signed verdict and reports the answer; it checks again the next day. The
// retirement reaches the application with a build that no longer carries
// the retired public key: the stored key then fails offline verification,
// which locks.
func TestSDKRetiredSigningKey(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	path := filepath.Join(t.TempDir(), "licence.json")
	app := e.newSDKClientAt(t, "sdk-machine-a", path)
	if _, err := app.Activate(t.Context(), issued.LicenceKey, sdk.Machine{Label: "Ada's laptop", OS: "linux", AppVersion: "3.1.0"}); err != nil {
		t.Fatalf("Activate() error = %v", err)
	}

	e.rotate(t, e.allKey, "desk-app", map[string]any{"keep_previous": false})
	e.clock.Advance(signing.RefreshInterval)
	e.refreshCatalogue(t)
	e.clock.Advance(sdk.CheckInterval)
	checked := e.clock.Now()
	st, err := app.Check(t.Context())
	if se, ok := errors.AsType[*sdk.Error](err); !ok || se.Status != http.StatusUnprocessableEntity || se.Code != sdk.CodeLicenceKeyInvalid {
		t.Fatalf("Check() after the retirement error = %v, want 422 licence_key_invalid", err)
	}
	if !st.Valid || st.Reason != "" || !st.Stale || st.LastError == nil || st.Verdict == nil {
		t.Errorf("status = valid %v, reason %q, stale %v, error %v; want valid on the last verdict, stale, the 422 reported",
			st.Valid, st.Reason, st.Stale, st.LastError)
	}
	if want := checked.Add(sdk.CheckInterval); !st.NextCheckAt.Equal(want) {
		t.Errorf("NextCheckAt = %v, want the next daily check at %v", st.NextCheckAt, want)
	}

	rebuilt := e.newSDKClientAt(t, "sdk-machine-a", path)
	if got := rebuilt.State(); got.Valid || got.Reason != sdk.ReasonKeyInvalid {
		t.Errorf("State() of a build without the retired key = valid %v, reason %q; want licence_key_invalid", got.Valid, got.Reason)
	}
}

func wantState(t *testing.T, st sdk.Status, valid bool, reason sdk.Reason, seated bool) {
	t.Helper()
	if st.Valid != valid || st.Reason != reason || st.Seated != seated || st.Stale {
		t.Errorf("status = valid %v, reason %q, seated %v, stale %v (error %v); want valid %v, reason %q, seated %v, fresh",
			st.Valid, st.Reason, st.Seated, st.Stale, st.LastError, valid, reason, seated)
	}
}

// TestSDKSendsComponents: the SDK's activation request carries the
// configured component hashes: the server stores them (the activation
// lists their names), and a new machine id with the same components
// rebinds the activation under a match rule instead of taking a seat.
func TestSDKSendsComponents(t *testing.T) {
	e := newActEnv(t)
	e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: e.allKey, body: map[string]any{"machine_match": "most"}},
		wantStatus: http.StatusOK})
	e.refreshCatalogue(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	components := sdk.Components("desk-app")
	if len(components) == 0 {
		components = map[string]string{"board": strings.Repeat("a", 64), "disk": strings.Repeat("b", 64)}
	}
	p, _ := e.shipped(t, "desk-app")
	app := func(machineID string) *sdk.Client {
		c, err := sdk.NewClient(sdk.Config{BaseURL: e.srv.URL, HTTPClient: e.srv.Client(), Product: p, Major: 3, MachineID: machineID,
			Components: components, Store: sdk.FileStore(filepath.Join(t.TempDir(), "licence.json")), Now: e.clock.Now})
		if err != nil {
			t.Fatalf("NewClient() error = %v", err)
		}
		return c
	}
	machine := sdk.Machine{Label: "Ada", OS: "linux", AppVersion: "3.1.0"}
	a, err := app("before-upgrade").Activate(t.Context(), issued.LicenceKey, machine)
	if err != nil {
		t.Fatalf("Activate() error = %v", err)
	}
	got := decodeStrict[readView](t, e.run(t, scenario{call: call{method: "GET", path: licencePath(issued.Licence.ID, ""), key: e.allKey},
		wantStatus: http.StatusOK}).body)
	if len(got.Activations) != 1 || len(got.Activations[0].Components) != len(components) {
		t.Fatalf("stored activation components = %v, want the %d names sent", got.Activations, len(components))
	}
	e.clock.Advance(time.Minute)
	rebound, err := app("after-upgrade").Activate(t.Context(), issued.LicenceKey, machine)
	if err != nil {
		t.Fatalf("Activate() with a new machine id and the same components error = %v", err)
	}
	if rebound.ID != a.ID || rebound.Created {
		t.Errorf("new machine id: activation %s created %v, want %s rebound", rebound.ID, rebound.Created, a.ID)
	}
}
