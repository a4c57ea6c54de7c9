package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

func offlineCall(body any) call {
	return call{method: "POST", path: "/v1/activations/offline", body: body}
}

// TestActivateOffline: the request file the SDK writes, posted as it is,
// takes a seat (201) with the same answer, audit entry and event as an
// online activation; posted again it answers 200 with the same seat; the
// format marker may be left out and is refused when it names another
// format, along with every other problem at once.
func TestActivateOffline(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 2}))
	n := len(e.events(t, e.org.ID))
	app := e.newSDKClient(t, "offline-a")
	file, err := app.OfflineRequest(issued.LicenceKey, sdk.Machine{Label: "Ada's laptop", OS: "linux", AppVersion: "3.1.0"})
	if err != nil {
		t.Fatalf("OfflineRequest() error = %v", err)
	}
	created := e.run(t, scenario{call: offlineCall(file), wantStatus: http.StatusCreated})
	got := decodeStrict[activatedView](t, created.body)
	if got.Activation.MachineID != "offline-a" || got.Activation.LicenceID != issued.Licence.ID || got.Activation.Label != "Ada's laptop" {
		t.Errorf("activation = %+v, want offline-a of %s labelled Ada's laptop", got.Activation, issued.Licence.ID)
	}
	v := e.verdict(t, "desk-app", got.Verdict)
	if v.ActivationID == nil || *v.ActivationID != got.Activation.ID || v.MachineID != "offline-a" || v.State != "active" {
		t.Errorf("verdict = %+v, want active for activation %s on offline-a", v, got.Activation.ID)
	}
	e.wantTrail(t, issued.Licence.ID, n, "activation.created")

	again := decodeStrict[activatedView](t, e.run(t, scenario{call: offlineCall(file), wantStatus: http.StatusOK}).body)
	if again.Activation.ID != got.Activation.ID {
		t.Errorf("second answer activation %s, want the same seat %s", again.Activation.ID, got.Activation.ID)
	}
	e.run(t, scenario{call: offlineCall(activateBody(issued.LicenceKey, "offline-b", nil)), wantStatus: http.StatusCreated})

	for _, tt := range []struct {
		name    string
		body    any
		details map[string]any
	}{
		{"another format", activateBody(issued.LicenceKey, "offline-c", map[string]any{"format": "licentia-offline-activation-request/2"}),
			issues("/format", "must be "+sdk.OfflineRequestFormat)},
		{"format not a string", activateBody(issued.LicenceKey, "offline-c", map[string]any{"format": 1}), issues("/format", "must be a string")},
		{"format null", activateBody(issued.LicenceKey, "offline-c", map[string]any{"format": nil}), issues("/format", "must be a string")},
		{"every problem at once", activateBody("", "no spaces", map[string]any{"format": "x", "os": absent, "extra": 1}),
			issues("/extra", "unknown field", "/format", "must be "+sdk.OfflineRequestFormat, "/licence_key", "must be 1 to 1024 characters",
				"/machine_id", "must be 1 to 128 of A-Z a-z 0-9 . _ : -", "/os", "is required")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := e.snapshot(t, e.org.ID, issued.Licence.ID)
			c := offlineCall(tt.body)
			c.invalid = true
			e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: tt.details})
			e.wantUnchanged(t, e.org.ID, issued.Licence.ID, before)
		})
	}
	t.Run("seat limit", func(t *testing.T) {
		e.run(t, scenario{call: offlineCall(activateBody(issued.LicenceKey, "offline-c", nil)), wantStatus: http.StatusConflict,
			wantCode: licentia.CodeSeatLimitReached, wantDetails: map[string]any{"limit": 2.0, "active": 2.0, "limit_kind": "machines"}})
	})
}

// TestSDKOfflineActivation: an application that never reaches the server
// writes a request file, the file is posted from another machine, and the
// application imports the answer: it then runs as after an online
// activation, its record surviving a restart. An answer edited, for
// another machine, for another licence, oversized or not JSON is refused
// and leaves the application as it was.
func TestSDKOfflineActivation(t *testing.T) {
	t.Parallel()
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 5}))
	other := e.issue(t, e.allKey, issueBody(nil))
	path := filepath.Join(t.TempDir(), "licence.json")
	app := e.newSDKClientAt(t, "air-gapped", path)
	machine := sdk.Machine{Label: "Lab controller", OS: "linux", AppVersion: "3.1.0"}

	if _, err := app.ImportOfflineAnswer([]byte(`{}`)); !errors.Is(err, sdk.ErrNoOfflineRequest) {
		t.Errorf("ImportOfflineAnswer() before a request error = %v, want ErrNoOfflineRequest", err)
	}
	if _, err := app.OfflineRequest("DESK_not-a-key", machine); !errors.Is(err, sdk.ErrLicenceKeyInvalid) {
		t.Errorf("OfflineRequest() of a bad key error = %v, want ErrLicenceKeyInvalid", err)
	}
	reqPath := filepath.Join(t.TempDir(), "request.json")
	if err := app.WriteOfflineRequest(reqPath, issued.LicenceKey, machine); err != nil {
		t.Fatalf("WriteOfflineRequest() error = %v", err)
	}
	file := readFile(t, reqPath)
	var req sdk.OfflineRequest
	if err := json.Unmarshal(file, &req); err != nil {
		t.Fatal(err)
	}
	want := sdk.OfflineRequest{Format: sdk.OfflineRequestFormat, LicenceKey: issued.LicenceKey, MachineID: "air-gapped", Machine: machine}
	if req != want {
		t.Errorf("request file = %+v, want %+v", req, want)
	}
	if st := app.State(); st.Valid {
		t.Errorf("State() before the import = %+v, want not valid", st)
	}

	answer := e.run(t, scenario{call: offlineCall(file), wantStatus: http.StatusCreated}).body
	anotherMachine := e.run(t, scenario{call: offlineCall(activateBody(issued.LicenceKey, "elsewhere", nil)), wantStatus: http.StatusCreated}).body
	anotherLicence := e.run(t, scenario{call: offlineCall(activateBody(other.LicenceKey, "air-gapped", nil)), wantStatus: http.StatusCreated}).body
	var ans map[string]any
	if err := json.Unmarshal(answer, &ans); err != nil {
		t.Fatal(err)
	}
	edited := func(edit func(map[string]any)) []byte {
		m := map[string]any{}
		raw, _ := json.Marshal(ans)
		_ = json.Unmarshal(raw, &m)
		edit(m)
		out, _ := json.Marshal(m)
		return out
	}
	verdict := ans["verdict"].(string)
	for _, tt := range []struct {
		name   string
		answer []byte
		want   error
	}{
		{"verdict tampered", edited(func(m map[string]any) { m["verdict"] = tamper(t, verdict) }), sdk.ErrVerdictInvalid},
		{"activation of another machine", edited(func(m map[string]any) { m["activation"].(map[string]any)["machine_id"] = "elsewhere" }), sdk.ErrVerdictMismatch},
		{"activation of another seat", edited(func(m map[string]any) { m["activation"].(map[string]any)["id"] = someID }), sdk.ErrVerdictMismatch},
		{"answer for another machine", anotherMachine, sdk.ErrVerdictMismatch},
		{"answer for another licence", anotherLicence, sdk.ErrVerdictMismatch},
		{"no verdict", edited(func(m map[string]any) { delete(m, "verdict") }), sdk.ErrBadAnswer},
		{"not JSON", []byte("verdict"), sdk.ErrBadAnswer},
		{"trailing data", append(bytes.Clone(answer), "{}"...), sdk.ErrBadAnswer},
		{"oversized", append(bytes.Clone(answer), bytes.Repeat([]byte(" "), sdk.MaxOfflineFile)...), sdk.ErrBadAnswer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := app.ImportOfflineAnswer(tt.answer); !errors.Is(err, tt.want) {
				t.Errorf("ImportOfflineAnswer() error = %v, want %v", err, tt.want)
			}
			if st := app.State(); st.Valid || st.Reason != sdk.ReasonNoLicence {
				t.Errorf("State() after a refused import = %+v, want no licence", st)
			}
		})
	}

	ansPath := filepath.Join(t.TempDir(), "answer.json")
	if err := os.WriteFile(ansPath, answer, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := app.ImportOfflineAnswerFile(ansPath)
	if err != nil {
		t.Fatalf("ImportOfflineAnswerFile() error = %v", err)
	}
	if a.MachineID != "air-gapped" || a.LicenceID != issued.Licence.ID {
		t.Errorf("ImportOfflineAnswerFile() = %+v, want the seat of %s on air-gapped", a, issued.Licence.ID)
	}
	wantState(t, app.State(), true, "", true)
	if _, err := app.ImportOfflineAnswer(answer); !errors.Is(err, sdk.ErrNoOfflineRequest) {
		t.Errorf("ImportOfflineAnswer() twice error = %v, want ErrNoOfflineRequest", err)
	}
	restarted := e.newSDKClientAt(t, "air-gapped", path)
	wantState(t, restarted.State(), true, "", true)
	if st := restarted.State(); st.Verdict == nil || st.Verdict.LicenceID != issued.Licence.ID || st.CheckedAt != e.clock.Now() {
		t.Errorf("State() after a restart = %+v, want the imported verdict checked now", st)
	}
}

// tamper rewrites a verdict's payload, well encoded, under its original
// signature: the validity moved a year on.
func tamper(t *testing.T, verdict string) string {
	t.Helper()
	parts := strings.Split(verdict, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["valid_until"] = "2099-01-01T00:00:00.000Z"
	edited, _ := json.Marshal(m)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(edited) + "." + parts[2]
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
