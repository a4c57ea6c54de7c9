package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
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

// TestObservedAccessLine: the access-log line carries the request's
// method, route pattern, status, duration and id, under the time of the
// request's end by the clock, the level and the message, and nothing else.
func TestObservedAccessLine(t *testing.T) {
	var log bytes.Buffer
	fake := clock.NewFake(time.Unix(0, 0))
	o := web.Observed{Log: slog.New(slog.NewJSONHandler(&log, nil)), Clock: fake, Server: "api", Message: "request"}
	o.Serve(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/activations/status", nil), "req-1",
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			web.Matched(w, "POST /v1/activations/status")
			fake.Advance(1500 * time.Microsecond)
			w.WriteHeader(http.StatusTeapot)
		}))
	var line map[string]any
	if err := json.Unmarshal(log.Bytes(), &line); err != nil {
		t.Fatalf("access log %q: %v", log.String(), err)
	}
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["time"]))
	if err != nil || !at.Equal(time.Unix(0, 0).Add(1500*time.Microsecond)) {
		t.Errorf("time %v (%v), want the clock's 1970-01-01T00:00:00.0015Z", line["time"], err)
	}
	delete(line, "time")
	want := map[string]any{"level": "INFO", "msg": "request", "method": "POST", "pattern": "POST /v1/activations/status",
		"status": float64(http.StatusTeapot), "duration_ms": 1.5, "request_id": "req-1"}
	if !maps.Equal(line, want) {
		t.Errorf("access log line %v, want %v", line, want)
	}
}

// BenchmarkObservedServe measures what Observed adds to a request that
// matched its route: the status writer, the access-log line (to a JSON
// handler, as serve logs) and the metrics, off.
func BenchmarkObservedServe(b *testing.B) {
	o := web.Observed{Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Clock: clock.System{}, Server: "api", Message: "request"}
	r := httptest.NewRequest("POST", "/v1/activations/status", nil)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.Matched(w, "POST /v1/activations/status")
		w.WriteHeader(http.StatusOK)
	})
	// One recorder for every request: the handler writes no body, and
	// the status each request answers is Observed's own to remember.
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		o.Serve(w, r, "req-1", next)
	}
}
