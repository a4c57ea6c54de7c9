// Package build describes the running binary: its version, the commit it was
// built from and the Go release that built it, for `licentia version`, the
// start-up log and /healthz.
package build

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// Set by release builds with -ldflags "-X ...": a build from a source archive
// or a container context without .git has no version control information.
var (
	version string
	commit  string
	built   string
)

// Info is the build information of a binary.
type Info struct {
	// Version is the release version (v1.2.0), the main module's version
	// that Go derives from the repository, or "devel".
	Version string `json:"version"`
	// Commit is the full revision, or "" when unknown.
	Commit string `json:"commit"`
	// Go is the Go release the binary was built with.
	Go string `json:"go"`
	// Built is the commit's time in licentia.TimeFormat (so that rebuilding
	// one commit gives one answer), or "" when unknown.
	Built string `json:"built"`
	// Modified reports whether the working tree had uncommitted changes.
	Modified bool `json:"modified"`
}

// Read returns the running binary's build information.
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, version, commit, built)
}

// fromBuildInfo combines Go's build information with the release
// variables, which take precedence when set.
func fromBuildInfo(bi *debug.BuildInfo, version, commit, built string) Info {
	info := Info{Version: "devel", Go: runtime.Version()}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v
		}
		if bi.GoVersion != "" {
			info.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.Built = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		info.Version = version
	}
	if commit != "" {
		info.Commit = commit
	}
	if built != "" {
		info.Built = built
	}
	info.Built = normalizeTime(info.Built)
	return info
}

// normalizeTime writes an RFC 3339 time in the one format of answers, and
// drops what does not parse rather than show it.
func normalizeTime(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return ""
	}
	return licentia.FormatTime(t)
}

// LogValue groups the fields in the start-up log line.
func (i Info) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("version", i.Version),
		slog.String("commit", i.Commit),
		slog.String("go", i.Go),
		slog.String("built", i.Built),
		slog.Bool("modified", i.Modified),
	)
}
