package web

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
)

// Request is an operation's request struct: it embeds licentia.Decoded and
// names its fields by json (body) and query (query string) tags.
type Request interface {
	Decoding() *licentia.Decoded
}

// DecodeFile reads raw, a route's JSON body uploaded as a file, into in,
// an operation's request struct, with the same strict rules as the route:
// the console's customer page takes the offline activation request file
// this way. A file over MaxBody is 413 payload_too_large.
func DecodeFile(raw []byte, in interface{ Decoding() *licentia.Decoded }) error {
	if len(raw) > MaxBody {
		return ErrTooLarge
	}
	r, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return Decode(r, nil, in)
}

// Decode reads r into in, an operation's request struct, and records in it
// what could not be read; the operation's Validate reports that with its own
// rules. before holds the path's issues, which come first. Query parameters
// are read by in's query tags (any other is unknown); the body, when in has
// body fields, by its json tags: strictly (see parseBody), then field by
// field. Only a body over MaxBody or one the client does not finish sending
// is an error.
func Decode(r *http.Request, before licentia.Issues, in Request) error {
	is := before
	t := reflect.TypeOf(in)
	fields := licentia.InputFields(t)
	queryNames, bodyNames := namesOf(t, fields)
	d := in.Decoding()
	rv := reflect.ValueOf(in).Elem()
	q := ReadQuery(r, &is, queryNames...)
	var b *Body
	if len(bodyNames) > 0 {
		var err error
		if b, err = ReadBody(r, &is, bodyNames...); err != nil {
			return err
		}
	}
	d.Before = is
	for _, f := range fields {
		if f.Query {
			if v, ok := q.Get(f.Name); ok {
				setQuery(d, f, rv.FieldByIndex(f.Index), v)
			}
			continue
		}
		if raw, ok := b.fields[f.Name]; ok {
			setBody(d, f, rv.FieldByIndex(f.Index), raw)
		}
	}
	return nil
}

// names are a request type's query and body field names.
type names struct{ query, body []string }

var namesByType sync.Map // reflect.Type -> names

// namesOf splits fields, those of t, into query and body names, once per
// type: every request of a route asks for the same split.
func namesOf(t reflect.Type, fields []licentia.InputField) (query, body []string) {
	if n, ok := namesByType.Load(t); ok {
		return n.(names).query, n.(names).body
	}
	var n names
	for _, f := range fields {
		if f.Query {
			n.query = append(n.query, f.Name)
		} else {
			n.body = append(n.body, f.Name)
		}
	}
	namesByType.Store(t, n)
	return n.query, n.body
}

// rfc3339 is the issue of a time that is not RFC 3339 with an offset.
const rfc3339 = "must be an RFC 3339 time with an offset"

// setQuery reads a query parameter into its field: a string, a time, or an
// integer written in decimal (an integer past int64 reads as the nearest,
// which the field's range refuses, as in a body).
func setQuery(d *licentia.Decoded, f licentia.InputField, fv reflect.Value, v string) {
	if f.IsTimeField() {
		setTime(d, f, fv, v)
		return
	}
	p := reflect.New(f.Type.Elem())
	if p.Elem().Kind() == reflect.Int64 {
		if !integerRE.MatchString(v) {
			d.Unreadable(f.Path, "must be an integer")
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			n = math.MaxInt64
			if v[0] == '-' {
				n = math.MinInt64
			}
		}
		p.Elem().SetInt(n)
		fv.Set(p)
		return
	}
	p.Elem().SetString(v)
	fv.Set(p)
}

// setTime reads an RFC 3339 time into its field, in UTC.
func setTime(d *licentia.Decoded, f licentia.InputField, fv reflect.Value, v string) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		d.Unreadable(f.Path, rfc3339)
		return
	}
	fv.Set(reflect.ValueOf(new(t.UTC())))
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

var integerRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// setBody reads a body field's JSON value into its field by the field's
// type; a value of the wrong type leaves it nil and is recorded in d.
// JSON null is of no field's type; a nullable field reads it as not given,
// and d records that it was null.
func setBody(d *licentia.Decoded, f licentia.InputField, fv reflect.Value, raw json.RawMessage) {
	null := string(raw) == "null"
	if null && f.Nullable {
		d.SetNull(f.Path)
		return
	}
	if f.Type.Kind() == reflect.Slice {
		// An array of strings, or of elements that read themselves (and
		// keep their own problems); [] reads as given and empty, not nil.
		v := reflect.New(f.Type)
		if null || json.Unmarshal(raw, v.Interface()) != nil {
			msg := "must be an array of strings"
			if reflect.PointerTo(f.Type.Elem()).Implements(unmarshalerType) {
				msg = "must be an array"
			}
			d.Unreadable(f.Path, msg)
			return
		}
		fv.Set(v.Elem())
		return
	}
	if f.Type.Kind() == reflect.Map {
		// An object of strings (an activation's components); {} reads as
		// given and empty, not nil.
		v := reflect.New(f.Type)
		if null || json.Unmarshal(raw, v.Interface()) != nil || v.Elem().IsNil() {
			d.Unreadable(f.Path, "must be an object of strings")
			return
		}
		fv.Set(v.Elem())
		return
	}
	if f.IsTimeField() {
		var s string
		if null || json.Unmarshal(raw, &s) != nil {
			d.Unreadable(f.Path, "must be a string")
			return
		}
		setTime(d, f, fv, s)
		return
	}
	p := reflect.New(f.Type.Elem())
	switch p.Elem().Kind() {
	case reflect.String:
		if s, ok := plainString(raw); ok {
			p.Elem().SetString(s)
		} else if null || json.Unmarshal(raw, p.Interface()) != nil {
			d.Unreadable(f.Path, "must be a string")
			return
		}
	case reflect.Bool:
		if null || json.Unmarshal(raw, p.Interface()) != nil {
			d.Unreadable(f.Path, "must be a boolean")
			return
		}
	case reflect.Int64:
		// The contract says integer: fractions and exponents are refused.
		if !integerRE.Match(raw) {
			d.Unreadable(f.Path, "must be an integer")
			return
		}
		// An integer past int64 is out of any field's range: it reads as
		// the nearest int64, which the range refuses.
		if json.Unmarshal(raw, p.Interface()) != nil {
			n := int64(1<<63 - 1)
			if raw[0] == '-' {
				n = -1 << 63
			}
			p.Elem().SetInt(n)
		}
	default:
		panic("web: no decoding for a field of type " + f.Type.String())
	}
	fv.Set(p)
}

// plainString is the value of raw, a JSON string with no escape, no control
// byte and valid UTF-8, as json.Unmarshal reads it, without its
// reflection: most strings of a body are such. False for any other.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}
