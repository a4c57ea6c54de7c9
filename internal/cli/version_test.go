package cli_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/build"
	"github.com/licentia/licentia/internal/cli"
)

// TestVersion: `licentia version` prints the binary's build information as
// one JSON object with exactly the fields /healthz answers with.
func TestVersion(t *testing.T) {
	h := newHarness(t)
	got := h.ok(t, "version")
	b := build.Read()
	want := map[string]any{"version": b.Version, "commit": b.Commit, "go": b.Go, "built": b.Built, "modified": b.Modified}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("licentia version mismatch (-want +got):\n%s", diff)
	}
	h.fail(t, "validation_failed", "version", "--short")
}

// TestServeLogsBuild: the start-up line says which build is listening, so
// the log of a fleet tells which process runs which version.
func TestServeLogsBuild(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	var stderr strings.Builder
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, &stderr))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	app.Close()
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		var entry struct {
			Msg   string         `json:"msg"`
			Build map[string]any `json:"build"`
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "licentia listening" {
			continue
		}
		b := build.Read()
		want := map[string]any{"version": b.Version, "commit": b.Commit, "go": b.Go, "built": b.Built, "modified": b.Modified}
		if diff := cmp.Diff(want, entry.Build); diff != "" {
			t.Errorf("start-up line's build mismatch (-want +got):\n%s", diff)
		}
		return
	}
	t.Errorf("no \"licentia listening\" line in the log:\n%s", stderr.String())
}
