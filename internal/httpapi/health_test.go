package httpapi_test

import (
	"encoding/json"
	"net/http"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/build"
)

// TestHealthzBuild: /healthz names the build the process runs, the one it
// was given, or without one the running binary's own.
func TestHealthzBuild(t *testing.T) {
	release := build.Info{Version: "v1.2.0", Commit: "0123456789abcdef0123456789abcdef01234567", Go: "go1.26.0",
		Built: "2026-11-20T07:00:00.000Z"}
	for _, tt := range []struct {
		name  string
		build build.Info
		want  map[string]any
	}{
		{
			name: "release build", build: release,
			want: map[string]any{"status": "ok", "build": map[string]any{"version": "v1.2.0",
				"commit": "0123456789abcdef0123456789abcdef01234567", "go": "go1.26.0", "built": "2026-11-20T07:00:00.000Z", "modified": false}},
		},
		{
			name: "the running binary", build: build.Info{},
			want: map[string]any{"status": "ok", "build": map[string]any{"version": build.Read().Version,
				"commit": build.Read().Commit, "go": runtime.Version(), "built": build.Read().Built, "modified": build.Read().Modified}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnvWith(t, envOptions{build: tt.build})
			r := e.do(t, "GET", "/healthz", "", nil, nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET /healthz status = %d, want 200", r.status)
			}
			var got map[string]any
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("GET /healthz body %s: %v", r.body, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET /healthz mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// healthBody is the answer of /healthz for a server running b.
func healthBody(t *testing.T, b build.Info) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"status": "ok", "build": map[string]any{
		"version": b.Version, "commit": b.Commit, "go": b.Go, "built": b.Built, "modified": b.Modified}})
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
