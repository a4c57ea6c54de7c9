package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

const licenceID = "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f"

// server answers the activation routes for one licence, signing verdicts
// as the real server does.
func server(t *testing.T, priv ed25519.PrivateKey, product sdk.Product) *httptest.Server {
	v, err := sdk.NewVerifier(product)
	if err != nil {
		t.Fatal(err)
	}
	verdict := func(machineID string) string {
		now := time.Now().UTC() // the client judges with the system clock
		id := "5f0c9a7e-3b1d-4c8e-a2f6-9d4b7e1c3a5f"
		s, err := sdk.SignVerdict(priv, "", sdk.Verdict{LicenceID: licenceID, ProductID: product.ID, MachineID: machineID,
			ActivationID: &id, State: sdk.StateActive, Major: 1, LimitKind: "machines", LimitCount: 1,
			IssuedAt: now.Format("2006-01-02T15:04:05.000Z"), ValidUntil: now.Add(7 * 24 * time.Hour).Format("2006-01-02T15:04:05.000Z")})
		if err != nil {
			t.Error(err)
		}
		return s
	}
	body := func(r *http.Request) (string, bool) {
		var b struct {
			LicenceKey string `json:"licence_key"`
			MachineID  string `json:"machine_id"`
		}
		if json.NewDecoder(r.Body).Decode(&b) != nil {
			return "", false
		}
		_, err := v.VerifyLicenceKey(b.LicenceKey)
		return b.MachineID, err == nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/activations", func(w http.ResponseWriter, r *http.Request) {
		m, ok := body(r)
		if !ok {
			http.Error(w, `{"error":{"code":"licence_key_invalid"}}`, 422)
			return
		}
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(map[string]any{"activation": map[string]string{"machine_id": m}, "verdict": verdict(m)})
	})
	mux.HandleFunc("POST /v1/activations/status", func(w http.ResponseWriter, r *http.Request) {
		m, _ := body(r)
		json.NewEncoder(w).Encode(map[string]string{"verdict": verdict(m)})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRun(t *testing.T) {
	seed := sha256.Sum256([]byte("example/photo"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	pub := priv.Public().(ed25519.PublicKey)
	product := sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: []ed25519.PublicKey{pub}}
	srv := server(t, priv, product)
	key, err := sdk.SignLicenceKey(priv, "", "PHOTO", "photo-editor", licenceID)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-server", srv.URL, "-product-id", "photo-editor", "-prefix", "PHOTO",
		"-public-key", hex.EncodeToString(pub), "-state-file", filepath.Join(t.TempDir(), "licence.json"), "-machine-id", "machine-a"}

	var out, errOut bytes.Buffer
	if code := run(t.Context(), append(args, "-key", key), &out, &errOut); code != exitValid {
		t.Fatalf("run(-key) = %d, want %d; stdout:\n%s\nstderr:\n%s", code, exitValid, &out, &errOut)
	}
	if !strings.Contains(out.String(), "activated: a seat was taken") || !strings.Contains(out.String(), "licence: valid") {
		t.Errorf("run(-key) printed:\n%s", &out)
	}

	out.Reset()
	if code := run(t.Context(), args, &out, &errOut); code != exitValid || !strings.Contains(out.String(), "licence: valid") {
		t.Errorf("run() again = %d, printed:\n%s", code, &out)
	}

	out.Reset()
	if code := run(t.Context(), []string{"-server", srv.URL}, &out, &errOut); code != exitProblem {
		t.Errorf("run() without the product = %d, want %d", code, exitProblem)
	}
}
