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
