package console

import (
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// decoding is an operation's request struct, which embeds
// licentia.Decoded.
type decoding interface {
	Decoding() *licentia.Decoded
}

// decodeForm fills an operation's request struct from a posted form, the
// way the API fills it from JSON: each field by its name, an empty value
// as not given, and a value that cannot be read recorded for the
// operation's Validate to report at the field's path with the rest. So a
// form is held to exactly the rules of the API route.
func decodeForm(vals url.Values, dst decoding) {
	rv := reflect.ValueOf(dst).Elem()
	d := dst.Decoding()
	for _, f := range licentia.InputFields(rv.Type()) {
		fv := rv.FieldByIndex(f.Index)
		if f.Type.Kind() == reflect.Slice {
			var given []string
			for _, v := range vals[f.Name] {
				if v = strings.TrimSpace(v); v != "" {
					given = append(given, v)
				}
			}
			if len(given) == 0 || f.Type.Elem().Kind() != reflect.String {
				continue
			}
			sl := reflect.MakeSlice(f.Type, len(given), len(given))
			for i, v := range given {
				sl.Index(i).SetString(v)
			}
			fv.Set(sl)
			continue
		}
		v := strings.TrimSpace(vals.Get(f.Name))
		if v == "" {
			// A nullable field left empty in a form that has it reads as
			// JSON null does: an edit form clears the setting with it.
			if f.Nullable && vals.Has(f.Name) {
				d.SetNull(f.Path)
			}
			continue
		}
		p := reflect.New(f.Type.Elem())
		switch {
		case f.IsTimeField():
			t, ok := parseFormTime(v)
			if !ok {
				d.Unreadable(f.Path, "must be a date (2026-12-31) or a date and time (2026-12-31T23:59), in UTC")
				continue
			}
			p.Elem().Set(reflect.ValueOf(t))
		case p.Elem().Kind() == reflect.String:
			p.Elem().SetString(v)
		case p.Elem().Kind() == reflect.Int64:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				d.Unreadable(f.Path, "must be a whole number")
				continue
			}
			p.Elem().SetInt(n)
		case p.Elem().Kind() == reflect.Bool:
			b, ok := formBools[strings.ToLower(v)]
			if !ok {
				d.Unreadable(f.Path, "must be yes or no")
				continue
			}
			p.Elem().SetBool(b)
		default:
			continue
		}
		fv.Set(p)
	}
}

// formBools are the values a yes-or-no field takes: a checkbox sends "on".
var formBools = map[string]bool{"true": true, "on": true, "yes": true, "false": false, "off": false, "no": false}

// parseFormTime reads a time from a form: RFC 3339 with an offset, a
// datetime-local value (2026-12-31T23:59, seconds optional) taken as UTC,
// or a date taken as its last minute in UTC, so "until 2026-12-31"
// includes that day.
func parseFormTime(v string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.Add(24*time.Hour - time.Minute), true
	}
	return time.Time{}, false
}

// optional is a form value, or nil when it is empty.
func optional(vals url.Values, name string) *string {
	v := strings.TrimSpace(vals.Get(name))
	if v == "" {
		return nil
	}
	return &v
}
