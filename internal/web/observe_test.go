package web_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/web"
)

// TestObservedMatched: a handler that names its route pattern spares the
// second look-up, and the access log names that pattern; without it, the
// Pattern function is asked.
func TestObservedMatched(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
		asked   bool
	}{
		{"matched", func(w http.ResponseWriter, r *http.Request) {
			web.Matched(w, "POST /v1/activations/status")
			w.WriteHeader(http.StatusOK)
		}, "POST /v1/activations/status", false},
		{"matched none", func(w http.ResponseWriter, r *http.Request) {
			web.Matched(w, "")
			w.WriteHeader(http.StatusNotFound)
		}, "", false},
		{"not told", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }, "GET /looked-up", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			asked := false
			o := web.Observed{Log: slog.New(slog.NewJSONHandler(&log, nil)), Clock: clock.NewFake(time.Unix(0, 0)), Server: "api", Message: "request",
				Pattern: func(*http.Request) string { asked = true; return "GET /looked-up" }}
			o.Serve(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/activations/status", nil), "req-1", c.handler)
			var line struct {
				Pattern string `json:"pattern"`
			}
			if err := json.Unmarshal(log.Bytes(), &line); err != nil {
				t.Fatalf("access log %q: %v", log.String(), err)
			}
			if line.Pattern != c.want || asked != c.asked {
				t.Errorf("access log pattern %q, Pattern asked %v; want %q, %v", line.Pattern, asked, c.want, c.asked)
			}
		})
	}
}
