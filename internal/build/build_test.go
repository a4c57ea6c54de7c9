package build

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.1",
		Main:      debug.Module{Path: "github.com/licentia/licentia", Version: "v0.0.0-20261126201500-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-26T20:15:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tt := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		version, commit, when string
		want                  Info
	}{
		{
			name: "version control information",
			bi:   vcs,
			want: Info{Version: "v0.0.0-20261126201500-0123456789ab+dirty", Commit: "0123456789abcdef0123456789abcdef01234567",
				Go: "go1.26.1", Built: "2026-11-26T20:15:00.000Z", Modified: true},
		},
		{
			name: "release variables take precedence",
			bi:   vcs, version: "v1.2.0", commit: "fedcba9876543210fedcba9876543210fedcba98", when: "2026-11-20T08:00:00+01:00",
			want: Info{Version: "v1.2.0", Commit: "fedcba9876543210fedcba9876543210fedcba98",
				Go: "go1.26.1", Built: "2026-11-20T07:00:00.000Z", Modified: true},
		},
		{
			name: "a build without version control",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/licentia/licentia", Version: "(devel)"}},
			want: Info{Version: "devel", Go: "go1.26.1"},
		},
		{
			name: "no build information",
			want: Info{Version: "devel", Go: runtime.Version()},
		},
		{
			name: "a time that does not parse is dropped",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.1"}, when: "yesterday",
			want: Info{Version: "devel", Go: "go1.26.1"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi, tt.version, tt.commit, tt.when)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fromBuildInfo() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRead reads the test binary's own information: Go's release is always
// known, and nothing else is invented.
func TestRead(t *testing.T) {
	got := Read()
	if got.Go != runtime.Version() {
		t.Errorf("Read().Go = %q, want %q", got.Go, runtime.Version())
	}
	if got.Version == "" {
		t.Errorf("Read().Version is empty, want a version or devel")
	}
}
