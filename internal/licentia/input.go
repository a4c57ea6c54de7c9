package licentia

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Decoded is embedded in every operation's request struct. A caller that
// reads the request from the wire (the HTTP API, later the console and MCP
// server) records here what it could not read; the operation's Validate
// reports it together with its own rules, in one validation_failed, in the
// order the API has always answered. A caller that builds the struct in Go
// leaves it empty, except to say a field is null (SetNull).
type Decoded struct {
	// Before holds the problems found before any field was read: a path
	// value, an unknown or repeated query parameter, an unknown field, a
	// body that is not one JSON object.
	Before Issues
	// Unread holds, by issue path, why a value that was sent could not be
	// read into its field ("must be a string"); that field stays nil.
	Unread map[string]string
	// Null holds the paths of nullable fields sent as JSON null. Such a
	// field stays nil; where null means something else than not given
	// (clearing a value in a change), the operation reads it here. A
	// caller that builds the struct in Go says so with SetNull.
	Null map[string]bool
}

// Decoding returns the record itself, so a decoder can fill the one a
// request struct embeds.
func (d *Decoded) Decoding() *Decoded { return d }

// Unreadable records that the value sent at path could not be read.
func (d *Decoded) Unreadable(path, message string) {
	if d.Unread == nil {
		d.Unread = map[string]string{}
	}
	d.Unread[path] = message
}

// SetNull records that the nullable field at path was given as null.
func (d *Decoded) SetNull(path string) {
	if d.Null == nil {
		d.Null = map[string]bool{}
	}
	d.Null[path] = true
}

// IsNull reports whether the field at path was given as null.
func (d *Decoded) IsNull(path string) bool { return d.Null[path] }

// InputField describes one field of a request struct, read once per type
// from its tags:
//
//	Email      *string `json:"email" input:"required"`
//	LimitCount *int64  `json:"limit_count" input:"min=1,max=4294967295"`
//	ProductID  *string `query:"product_id"`
//
// The json (body) or query (query string) tag is the field's only name;
// the input tag says what a schema can say of it: required, nullable (a
// JSON null reads as not given), and for an integer its range.
type InputField struct {
	Name     string
	Path     string // "/name" for a body field, "query.name" for a query parameter
	Query    bool
	Required bool
	Nullable bool
	HasRange bool
	Min, Max int64
	Index    []int
	Type     reflect.Type // the field's type: a pointer or a slice
}

var inputFields sync.Map // reflect.Type -> []InputField

// InputFields returns the fields of the request struct type t (or a pointer
// to one), in declaration order; embedded structs are walked in place.
func InputFields(t reflect.Type) []InputField {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if fs, ok := inputFields.Load(t); ok {
		return fs.([]InputField)
	}
	var fs []InputField
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous || !sf.IsExported() {
			continue
		}
		f := InputField{Index: sf.Index, Type: sf.Type}
		switch name, q := sf.Tag.Get("json"), sf.Tag.Get("query"); {
		case name != "" && name != "-":
			f.Name, f.Path = name, "/"+name
		case q != "":
			f.Name, f.Path, f.Query = q, "query."+q, true
		default:
			continue
		}
		for opt := range strings.SplitSeq(sf.Tag.Get("input"), ",") {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "required":
				f.Required = true
			case "nullable":
				f.Nullable = true
			case "min":
				f.Min, f.HasRange = mustInt(t, sf, v), true
			case "max":
				f.Max, f.HasRange = mustInt(t, sf, v), true
			}
		}
		fs = append(fs, f)
	}
	inputFields.Store(t, fs)
	return fs
}

func mustInt(t reflect.Type, sf reflect.StructField, v string) int64 {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("%s.%s: input tag %q: %v", t, sf.Name, v, err))
	}
	return n
}

// integerRange is the issue of an integer outside [lo, hi].
func integerRange(lo, hi int64) string {
	return fmt.Sprintf("must be an integer from %d to %d", lo, hi)
}

// CheckFields reports, field by field in declaration order, what the
// request struct v (a pointer) says of itself: a value sent but not read
// (from its Decoded), a required field missing, an integer out of its
// range, a time outside CheckTime's years. These are the facts a schema
// states; an operation's own rules follow them in its Validate.
func CheckFields(v any) Issues {
	rv := reflect.ValueOf(v).Elem()
	var unread map[string]string
	if d, ok := v.(interface{ Decoding() *Decoded }); ok {
		unread = d.Decoding().Unread
	}
	var is Issues
	for _, f := range InputFields(rv.Type()) {
		if msg, ok := unread[f.Path]; ok {
			is.Add(f.Path, "%s", msg)
			continue
		}
		fv := rv.FieldByIndex(f.Index)
		switch {
		case fv.IsNil():
			if f.Required {
				is.Add(f.Path, "is required")
			}
		case f.HasRange && fv.Elem().Kind() == reflect.Int64:
			if n := fv.Elem().Int(); n < f.Min || n > f.Max {
				is.Add(f.Path, "%s", integerRange(f.Min, f.Max))
			}
		case f.IsTimeField():
			if msg := CheckTime(fv.Elem().Interface().(time.Time)); msg != "" {
				is.Add(f.Path, "%s", msg)
			}
		}
	}
	return is
}

// Of returns the issues at the given paths, in their order in is.
func (is Issues) Of(paths ...string) Issues {
	var out Issues
	for _, i := range is {
		for _, p := range paths {
			if i.Path == p {
				out = append(out, i)
			}
		}
	}
	return out
}

// CheckString adds the issue rule finds in an optional string, if any.
func (is *Issues) CheckString(path string, v *string, rule func(string) string) {
	if v == nil {
		return
	}
	if msg := rule(*v); msg != "" {
		is.Add(path, "%s", msg)
	}
}

// timeType is the type of a time field's value.
var timeType = reflect.TypeFor[time.Time]()

// IsTimeField reports whether f holds a time, read from an RFC 3339 string.
func (f InputField) IsTimeField() bool {
	return f.Type.Kind() == reflect.Pointer && f.Type.Elem() == timeType
}
