package sdk_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

const fxActivation = "5f0c9a7e-3b1d-4c8e-a2f6-000000000001"

// offlineAnswer is the answer the service gives to the fixture's offline
// request on machineID, its verdict issued at issued.
func offlineAnswer(t testing.TB, machineID string, issued time.Time) []byte {
	t.Helper()
	priv := seedKey("client/photo/current")
	until := issued.Add(fxValidity)
	verdict, err := sdk.SignVerdict(priv, "", sdk.Verdict{LicenceID: fxLicence, ProductID: fxProduct, MachineID: machineID,
		ActivationID: ptr(fxActivation), State: sdk.StateActive, Major: 3,
		LimitKind: "machines", LimitCount: 2, IssuedAt: *fmtTime(&issued), ValidUntil: *fmtTime(&until)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(map[string]any{
		"activation": map[string]any{"id": fxActivation, "licence_id": fxLicence, "machine_id": machineID, "label": "Ada's laptop",
			"os": "linux", "app_version": "3.1.0", "activated_at": *fmtTime(&issued), "last_seen_at": *fmtTime(&issued), "deactivated_at": nil},
		"verdict": verdict,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// offlineClient is a client of the fixture's product with no network,
// its record at path.
func offlineClient(t testing.TB, path string, now func() time.Time) *sdk.Client {
	t.Helper()
	c, err := sdk.NewClient(sdk.Config{BaseURL: "https://licensing.example.com", Product: fxProductOf(seedKey("client/photo/current")),
		Major: 3, MachineID: fxMachine, Store: sdk.FileStore(path), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOfflineRequestSurvivesRestart: the request file holds the format
// marker, the key, this machine's id and its description; the pending
// request is kept in the record, so an application restarted between
// writing it and importing the answer still imports it. An answer older
// than the verdict held is refused.
func TestOfflineRequestSurvivesRestart(t *testing.T) {
	now := func() time.Time { return fxStart }
	path := filepath.Join(t.TempDir(), "licence.json")
	key, err := sdk.SignLicenceKey(seedKey("client/photo/current"), "", fxPrefix, fxProduct, fxLicence)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := offlineClient(t, path, now).OfflineRequest(key, fxMachineInfo)
	if err != nil {
		t.Fatalf("OfflineRequest() error = %v", err)
	}
	var req sdk.OfflineRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	if want := (sdk.OfflineRequest{Format: sdk.OfflineRequestFormat, LicenceKey: key, MachineID: fxMachine, Machine: fxMachineInfo}); req != want {
		t.Errorf("request = %+v, want %+v", req, want)
	}

	c := offlineClient(t, path, now)
	if _, err := c.ImportOfflineAnswer(offlineAnswer(t, fxMachine, fxStart)); err != nil {
		t.Fatalf("ImportOfflineAnswer() after a restart error = %v", err)
	}
	mustValid(t, c.State())

	if _, err := c.OfflineRequest(key, fxMachineInfo); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ImportOfflineAnswer(offlineAnswer(t, fxMachine, fxStart.Add(-time.Hour))); !errors.Is(err, sdk.ErrVerdictOutdated) {
		t.Errorf("ImportOfflineAnswer() of an older answer error = %v, want ErrVerdictOutdated", err)
	}
	mustValid(t, c.State())
}

// FuzzImportOfflineAnswer: no file imports without a good signature over
// a verdict for this machine and the requested licence; a refused file
// leaves the application without a licence, as it was.
func FuzzImportOfflineAnswer(f *testing.F) {
	f.Add(offlineAnswer(f, fxMachine, fxStart))
	f.Add(offlineAnswer(f, "machine-b", fxStart))
	f.Add([]byte(`{"activation":{},"verdict":"v1.e30.AAAA"}`))
	f.Add([]byte(`{"verdict":null,"verdict":"v1..","extra":[1,2]}`))
	f.Add([]byte(`[]`))
	key, err := sdk.SignLicenceKey(seedKey("client/photo/current"), "", fxPrefix, fxProduct, fxLicence)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		c := offlineClient(t, filepath.Join(t.TempDir(), "licence.json"), func() time.Time { return fxStart })
		if _, err := c.OfflineRequest(key, fxMachineInfo); err != nil {
			t.Fatal(err)
		}
		_, err := c.ImportOfflineAnswer(answer)
		st := c.State()
		if err != nil {
			if st.Valid || st.Reason != sdk.ReasonNoLicence {
				t.Errorf("refused answer %q: State() = %+v, want no licence", answer, st)
			}
			return
		}
		v := st.Verdict
		if v == nil || v.MachineID != fxMachine || v.LicenceID != fxLicence || v.ActivationID == nil {
			t.Errorf("answer %q imported with verdict %+v", answer, v)
		}
	})
}
