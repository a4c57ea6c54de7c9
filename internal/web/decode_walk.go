package web

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

// maxDepth is the deepest nesting of objects and arrays a body may have. No
// body of the contract needs more than a few levels; without a bound, a
// 64 KB body of brackets makes any walk that keeps state per level costly.
const maxDepth = 32

// smallObject is the number of names an object may have before the walk
// looks up its names in a map rather than comparing them one by one.
const smallObject = 16

const (
	msgNotJSON      = "the body is not valid JSON"
	msgTrailingData = "the body holds data after the JSON value"
	msgTooDeep      = "is nested deeper than 32 levels"
	msgBadUTF8      = "must be valid UTF-8"
	msgBadUTF8Name  = "holds a name that is not valid UTF-8"
	msgDuplicate    = "duplicate field"
)

// walk checks raw byte by byte, as encoding/json's grammar reads it, and
// keeps only what issues need: the path of the value being read, as
// segments, and the names of the open objects. A JSON pointer is built only
// when an issue is reported, so a walk costs no allocation per token or
// level.
type walk struct {
	raw    []byte
	i      int
	issues licentia.Issues
	fatal  bool   // the walk stopped; issues ends with why
	path   []seg  // one segment per open container
	names  []name // names of the open objects, innermost last
	seen   map[objectName]struct{}
	nobj   int // objects opened so far; an object's number keys seen
}

// seg is one step of a JSON pointer: an object's name or an array's index.
type seg struct {
	name  []byte
	index int
	array bool
}

// name is a decoded object name; it aliases raw when it holds no escape.
type name []byte

type objectName struct {
	object int
	name   string
}

// walkTokens checks that raw is one JSON value, at most maxDepth deep, with
// valid UTF-8 in every string and no duplicate name in any object. It
// returns every issue; fatal reports that the walk stopped at the last one
// (a syntax error, trailing data or too deep), after which raw must not be
// read further.
func walkTokens(raw []byte) (issues licentia.Issues, fatal bool) {
	w := &walk{raw: raw}
	w.value(1)
	if !w.fatal {
		w.space()
		if w.i < len(w.raw) {
			w.stop("", msgTrailingData)
		}
	}
	return w.issues, w.fatal
}

// stop reports a fatal issue.
func (w *walk) stop(path, msg string) {
	w.issues = append(w.issues, licentia.Issue{Path: path, Message: msg})
	w.fatal = true
}

// report adds an issue at the current path.
func (w *walk) report(msg string) {
	w.issues = append(w.issues, licentia.Issue{Path: w.pointer(), Message: msg})
}

// pointer is the JSON pointer of the value being read.
func (w *walk) pointer() string {
	var b strings.Builder
	n := 0
	for _, s := range w.path {
		n += 1 + len(s.name) + 4
	}
	b.Grow(n)
	for _, s := range w.path {
		b.WriteByte('/')
		if s.array {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			pointerEscaper.WriteString(&b, string(s.name))
		}
	}
	return b.String()
}

func (w *walk) space() {
	for w.i < len(w.raw) {
		switch w.raw[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value reads one value at depth (the top-level value is at depth 1).
func (w *walk) value(depth int) {
	w.space()
	if w.i >= len(w.raw) {
		w.stop("", msgNotJSON)
		return
	}
	switch c := w.raw[w.i]; {
	case c == '{' || c == '[':
		if depth > maxDepth {
			w.stop(w.pointer(), msgTooDeep)
			return
		}
		if c == '{' {
			w.object(depth)
		} else {
			w.array(depth)
		}
	case c == '"':
		if _, bad := w.str(false); bad && !w.fatal {
			w.report(msgBadUTF8)
		}
	case c == '-' || c >= '0' && c <= '9':
		w.number()
	default:
		w.literal()
	}
}

func (w *walk) object(depth int) {
	w.i++ // {
	w.space()
	if w.i < len(w.raw) && w.raw[w.i] == '}' {
		w.i++
		return
	}
	obj, start := w.nobj, len(w.names)
	w.nobj++
	for {
		w.space()
		if w.i >= len(w.raw) || w.raw[w.i] != '"' {
			w.stop("", msgNotJSON)
			return
		}
		n, bad := w.str(true)
		if w.fatal {
			return
		}
		if bad {
			w.report(msgBadUTF8Name)
		}
		w.path = append(w.path, seg{name: n})
		if w.repeated(obj, start, n) {
			w.report(msgDuplicate)
		}
		w.names = append(w.names, n)
		w.space()
		if w.i >= len(w.raw) || w.raw[w.i] != ':' {
			w.stop("", msgNotJSON)
			return
		}
		w.i++
		w.value(depth + 1)
		if w.fatal {
			return
		}
		w.path = w.path[:len(w.path)-1]
		w.space()
		if w.i >= len(w.raw) {
			w.stop("", msgNotJSON)
			return
		}
		w.i++
		switch w.raw[w.i-1] {
		case ',':
		case '}':
			w.names = w.names[:start]
			return
		default:
			w.stop("", msgNotJSON)
			return
		}
	}
}

// repeated reports whether object obj, whose names start at start, already
// has name n. A small object compares its names; a large one keeps them in
// seen, so that an object of thousands of names costs no more than a map.
func (w *walk) repeated(obj, start int, n name) bool {
	names := w.names[start:]
	if len(names) < smallObject {
		for _, m := range names {
			if bytes.Equal(m, n) {
				return true
			}
		}
		return false
	}
	if w.seen == nil {
		w.seen = map[objectName]struct{}{}
	}
	if len(names) == smallObject {
		for _, m := range names {
			w.seen[objectName{obj, string(m)}] = struct{}{}
		}
	}
	k := objectName{obj, string(n)}
	if _, ok := w.seen[k]; ok {
		return true
	}
	w.seen[k] = struct{}{}
	return false
}

func (w *walk) array(depth int) {
	w.i++ // [
	w.space()
	if w.i < len(w.raw) && w.raw[w.i] == ']' {
		w.i++
		return
	}
	w.path = append(w.path, seg{array: true})
	for {
		w.value(depth + 1)
		if w.fatal {
			return
		}
		w.space()
		if w.i >= len(w.raw) {
			w.stop("", msgNotJSON)
			return
		}
		w.i++
		switch w.raw[w.i-1] {
		case ',':
			w.path[len(w.path)-1].index++
		case ']':
			w.path = w.path[:len(w.path)-1]
			return
		default:
			w.stop("", msgNotJSON)
			return
		}
	}
}

// number reads a number as encoding/json's grammar has it. Like the decoder
// before it, it refuses a number out of float64's range (1e700).
func (w *walk) number() {
	start := w.i
	if w.raw[w.i] == '-' {
		w.i++
	}
	switch {
	case w.i < len(w.raw) && w.raw[w.i] == '0':
		w.i++
	case w.i < len(w.raw) && w.raw[w.i] >= '1' && w.raw[w.i] <= '9':
		w.digits()
	default:
		w.stop("", msgNotJSON)
		return
	}
	if w.i < len(w.raw) && w.raw[w.i] == '.' {
		w.i++
		if !w.digits() {
			w.stop("", msgNotJSON)
			return
		}
	}
	exp := false
	if w.i < len(w.raw) && (w.raw[w.i] == 'e' || w.raw[w.i] == 'E') {
		exp = true
		w.i++
		if w.i < len(w.raw) && (w.raw[w.i] == '+' || w.raw[w.i] == '-') {
			w.i++
		}
		if !w.digits() {
			w.stop("", msgNotJSON)
			return
		}
	}
	if exp || w.i-start > plainMaxDigits {
		if _, err := strconv.ParseFloat(string(w.raw[start:w.i]), 64); err != nil {
			w.stop("", msgNotJSON)
		}
	}
}

// digits reads one or more digits and reports whether there was one.
func (w *walk) digits() bool {
	start := w.i
	for w.i < len(w.raw) && w.raw[w.i] >= '0' && w.raw[w.i] <= '9' {
		w.i++
	}
	return w.i > start
}

func (w *walk) literal() {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(w.raw)-w.i >= len(lit) && string(w.raw[w.i:w.i+len(lit)]) == lit {
			w.i += len(lit)
			return
		}
	}
	w.stop("", msgNotJSON)
}
