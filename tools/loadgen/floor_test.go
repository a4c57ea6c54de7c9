package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// checkVerdict checks that body is {"verdict": payload.signature} with a
// JSON payload naming machine and a 64-byte Ed25519 signature.
func checkVerdict(t *testing.T, body []byte, machine string) {
	t.Helper()
	var out struct {
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	p, s, ok := strings.Cut(out.Verdict, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	sig, err2 := base64.RawURLEncoding.DecodeString(s)
	if !ok || err1 != nil || err2 != nil || len(sig) != 64 {
		t.Fatalf("verdict %q is not payload.signature", out.Verdict)
	}
	var v struct {
		MachineID string `json:"machine_id"`
	}
	if err := json.Unmarshal(payload, &v); err != nil || v.MachineID != machine {
		t.Errorf("verdict payload %s, want machine_id %q", payload, machine)
	}
}

func TestFloorHandler(t *testing.T) {
	h := floorHandler()
	for _, tt := range []struct {
		name, body string
		status     int
	}{
		{"status", `{"licence_key":"K","machine_id":"m1"}`, 200},
		{"activation", `{"licence_key":"K","machine_id":"m1","label":"l","os":"linux","app_version":"1.0.0"}`, 200},
		{"unknown field", `{"licence_key":"K","machine_id":"m1","extra":1}`, 422},
		{"no machine", `{"licence_key":"K"}`, 422},
		{"not JSON", `{`, 422},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/activations/status", strings.NewReader(tt.body)))
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.status == 200 {
				checkVerdict(t, w.Body.Bytes(), "m1")
			}
		})
	}
}

func TestEmptyHandler(t *testing.T) {
	h := emptyHandler()
	var first []byte
	for i, body := range []string{`{"licence_key":"K","machine_id":"m1"}`, `{"licence_key":"other","machine_id":"m2","label":"l"}`, ``} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/activations/status", strings.NewReader(body)))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("answer to %q: %d %q", body, w.Code, w.Header().Get("Content-Type"))
		}
		checkVerdict(t, w.Body.Bytes(), emptyMachine)
		if i == 0 {
			first = w.Body.Bytes()
		} else if !bytes.Equal(w.Body.Bytes(), first) {
			t.Errorf("answer to %q = %s, want the answer made once, %s", body, w.Body, first)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/activations/status", strings.NewReader(strings.Repeat(" ", 64<<10+1))))
	if w.Code != http.StatusUnprocessableEntity {
		t.Errorf("answer to a body over 64 KB: %d, want 422", w.Code)
	}
}
