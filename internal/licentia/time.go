package licentia

import "time"

// TimeFormat is the one format of times in answers and webhook bodies: UTC,
// RFC 3339, exactly three fractional digits and Z.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// FormatTimePtr formats an optional time in TimeFormat; nil stays nil, so
// an unset time is written as JSON null.
func FormatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := FormatTime(*t)
	return &s
}

// TruncateMillis returns t in UTC at millisecond precision: times are stored
// and shown to the millisecond, so a time kept in memory compares equal to
// the same time read back.
func TruncateMillis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// CheckTime returns why t is not a time a client may send, or "" when it
// is: from 1970-01-01T00:00:00Z to the end of the year 9999, in UTC. A
// time past 9999 cannot be written in RFC 3339's four-digit year, and one
// before 1970 would go out as a year 0 or a negative Unix time that
// clients and webhook receivers read differently, if at all; no licence,
// key or count of the service lies outside these years. Every time input
// uses this rule, whatever door it comes in by.
func CheckTime(t time.Time) string {
	if y := t.UTC().Year(); y < 1970 || y > 9999 {
		return "must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z"
	}
	return ""
}
