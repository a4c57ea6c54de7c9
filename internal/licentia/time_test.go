package licentia_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

func TestFormatTime(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   time.Time
		want string
	}{
		{"whole seconds", time.Date(2026, 11, 22, 1, 16, 13, 0, time.UTC), "2026-11-22T01:16:13.000Z"},
		{"milliseconds", time.Date(2026, 11, 22, 1, 16, 13, 7_000_000, time.UTC), "2026-11-22T01:16:13.007Z"},
		{"nanoseconds truncated", time.Date(2026, 11, 22, 1, 16, 13, 999_999_999, time.UTC), "2026-11-22T01:16:13.999Z"},
		{"other zone converted", time.Date(2026, 11, 22, 2, 16, 13, 0, time.FixedZone("CET", 3600)), "2026-11-22T01:16:13.000Z"},
		{"local midnight is the day before", time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 90*60)), "2025-12-31T22:30:00.000Z"},
		{"epoch", time.Unix(0, 0), "1970-01-01T00:00:00.000Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := licentia.FormatTime(tt.in); got != tt.want {
				t.Errorf("FormatTime(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatTimePtr(t *testing.T) {
	if got := licentia.FormatTimePtr(nil); got != nil {
		t.Errorf("FormatTimePtr(nil) = %q, want nil", *got)
	}
	at := time.Date(2026, 11, 22, 2, 16, 13, 7_654_321, time.FixedZone("CET", 3600))
	got := licentia.FormatTimePtr(&at)
	if got == nil || *got != "2026-11-22T01:16:13.007Z" {
		t.Errorf("FormatTimePtr(%v) = %v, want 2026-11-22T01:16:13.007Z", at, got)
	}
}

func TestTruncateMillis(t *testing.T) {
	at := time.Date(2026, 11, 22, 2, 16, 13, 7_654_321, time.FixedZone("CET", 3600))
	got := licentia.TruncateMillis(at)
	want := time.Date(2026, 11, 22, 1, 16, 13, 7_000_000, time.UTC)
	if got != want {
		t.Errorf("TruncateMillis(%v) = %v, want %v", at, got, want)
	}
}

func TestCheckTime(t *testing.T) {
	const refused = "must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"
	for _, tt := range []struct {
		name string
		in   time.Time
		want string
	}{
		{"the last nanosecond of 1969", time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC), refused},
		{"the epoch", time.Unix(0, 0), ""},
		{"1970 where it is said, 1969 in UTC", time.Date(1970, 1, 1, 0, 30, 0, 0, time.FixedZone("", 3600)), refused},
		{"1969 where it is said, 1970 in UTC", time.Date(1969, 12, 31, 23, 30, 0, 0, time.FixedZone("", -3600)), ""},
		{"the zero time", time.Time{}, refused},
		{"the last nanosecond of 9999", time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), ""},
		{"the first instant of 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), refused},
		{"9999 where it is said, 10000 in UTC", time.Date(9999, 12, 31, 23, 30, 0, 0, time.FixedZone("", -3600)), refused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := licentia.CheckTime(tt.in); got != tt.want {
				t.Errorf("CheckTime(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
