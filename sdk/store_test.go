package sdk_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/sdk"
)

func TestFileStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "licence.json")
	s := sdk.FileStore(path)
	if _, err := s.Load(); !errors.Is(err, sdk.ErrNoRecord) {
		t.Fatalf("Load() before Save = %v, want ErrNoRecord", err)
	}
	want := &sdk.Record{
		Format: sdk.RecordFormat, LicenceKey: "PHOTO_ABCDE", Machine: fxMachineInfo, Verdict: "v1.x.y", Activated: true,
		CheckedAt: fxStart, Failures: 2, NextAttemptAt: fxStart.Add(10 * time.Minute),
		RateLimitedUntil: fxStart.Add(time.Minute), LastError: "licentia: 500 internal_error",
	}
	if err := s.Save(want); err != nil {
		t.Fatalf("Save() = %v", err)
	}
	got, err := sdk.FileStore(path).Load()
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("record mode = %o, want 600: it holds the licence key", mode)
		}
	}
}

// Save replaces the file whole through a temporary file and a rename: a
// failed Save leaves the previous record and no temporary file behind.
func TestFileStoreAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "licence.json")
	s := sdk.FileStore(path)
	long := &sdk.Record{LicenceKey: strings.Repeat("K", 4000), Verdict: strings.Repeat("v", 4000)}
	short := &sdk.Record{LicenceKey: "PHOTO_SHORT"}
	for _, r := range []*sdk.Record{long, short} {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load()
	if err != nil || got.LicenceKey != "PHOTO_SHORT" || got.Verdict != "" {
		t.Fatalf("Load() = %+v, %v, want the short record whole (no tail of the long one)", got, err)
	}
	wantOnly(t, dir, "licence.json")

	// A directory in the record's place makes the rename fail.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "inner"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := sdk.FileStore(blocked).Save(short); err == nil {
		t.Fatal("Save() over a directory = nil error")
	}
	wantOnly(t, dir, "blocked", "licence.json")
}

func wantOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("files in %s (-want +got):\n%s", dir, diff)
	}
}

func TestFileStoreRefusesUnreadable(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"not JSON", "{"},
		{"newer format", `{"format": 2}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "licence.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := sdk.FileStore(path).Load(); err == nil || errors.Is(err, sdk.ErrNoRecord) {
				t.Errorf("Load() = %v, want an error", err)
			}
		})
	}
}

// Unknown fields in a record, written by a later version of the SDK, are
// ignored.
func TestFileStoreIgnoresUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "licence.json")
	if err := os.WriteFile(path, []byte(`{"format":1,"licence_key":"PHOTO_X","extra":{"a":1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := sdk.FileStore(path).Load()
	if err != nil || r.LicenceKey != "PHOTO_X" {
		t.Errorf("Load() = %+v, %v", r, err)
	}
}
