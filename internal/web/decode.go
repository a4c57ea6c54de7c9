package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
)

// MaxBody is the largest request body read: 64 KB = 65,536 bytes.
const MaxBody = 65536

// ErrTooLarge refuses a body over MaxBody: 413 payload_too_large.
var ErrTooLarge = licentia.Errorf(licentia.CodePayloadTooLarge, "The request body is over 65,536 bytes.")

// LimitBody refuses a body whose declared length is over MaxBody without
// reading it, and caps the reading of any other at MaxBody.
func LimitBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength > MaxBody {
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	return true
}

// Body is a request body parsed strictly: encoding/json matches names
// case-insensitively, keeps the last of duplicate names and replaces invalid
// UTF-8 with U+FFFD, so the body is first checked (exact names, no
// duplicates, no trailing data, valid UTF-8, at most maxDepth levels), then
// read field by field. Every problem is added to issues, so all
// are reported at once.
type Body struct {
	fields map[string]json.RawMessage
	issues *licentia.Issues
}

// ReadBody reads and checks the body of r against the allowed field names.
// An empty body reads as {}. A body over MaxBody, or one the client does not
// finish sending, is an error; every other problem is an issue.
func ReadBody(r *http.Request, issues *licentia.Issues, allowed ...string) (*Body, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, ErrTooLarge
		}
		return nil, UnfinishedBody(err)
	}
	return parseBody(raw, issues, allowed...), nil
}

// UnfinishedBody is the error for a body the client did not send in full.
// The body is read from the client's connection, so a read that fails is
// the client's doing: the connection closed before the body's end (400), or
// the read deadline passed first (408; the write deadline outlasts it, see
// httpapi.WriteTimeout, so the answer can still be sent).
func UnfinishedBody(err error) error {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return &licentia.Error{Code: licentia.CodeRequestTimeout, Message: "The body did not arrive before the read deadline.", Err: err}
	}
	return &licentia.Error{
		Code:    licentia.CodeValidationFailed,
		Message: "The request is not valid.",
		Details: map[string]any{"issues": []licentia.Issue{{Path: "", Message: "the body ended before it was complete"}}},
		Err:     err,
	}
}

// parseBody checks raw and returns its fields; it never fails, it adds issues.
func parseBody(raw []byte, issues *licentia.Issues, allowed ...string) *Body {
	// fields stays nil, which reads as empty, until the body yields some.
	b := &Body{issues: issues}
	if len(bytes.TrimSpace(raw)) == 0 {
		return b
	}
	plain := plainJSON(raw)
	if !plain {
		found, fatal := walkTokens(raw)
		*issues = append(*issues, found...)
		if fatal {
			return b
		}
	}
	var split bool
	if plain {
		b.fields, split = plainFields(raw)
	}
	// Unmarshal sets the map to nil for a JSON null, so nil is refused too.
	if !split && (json.Unmarshal(raw, &b.fields) != nil || b.fields == nil) {
		b.fields = nil
		issues.Add("", "the body must be a JSON object")
		return b
	}
	names := make([]string, 0, len(b.fields))
	for name := range b.fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			issues.Add(pointer(name), "unknown field")
			delete(b.fields, name)
		}
	}
	return b
}

// plainMaxNames bounds the names of one object that plainJSON compares
// pairwise; an object with more takes the walk, which keeps them in a map.
const plainMaxNames = 32

// plainMaxDigits is the longest number plainJSON passes.
const plainMaxDigits = 15

// plainJSON reports whether raw is one valid JSON value, at most maxDepth
// deep, whose objects have no duplicate names and whose strings are valid
// UTF-8, telling it without allocating. It answers false, and leaves the
// verdict to walkTokens, whenever it cannot be sure: an object with over
// plainMaxNames names, a name with an escape or a byte past ASCII (which the
// walk compares decoded: "\u0061" is "a"), an escaped surrogate, invalid
// UTF-8 anywhere (which encoding/json would replace with U+FFFD).
func plainJSON(raw []byte) bool {
	if !json.Valid(raw) {
		return false
	}
	// For each open container, where its names start in names; -1 for an
	// array. The arrays back both slices for ordinary bodies.
	var openBuf [16]int
	var namesBuf [plainMaxNames][]byte
	open, names := openBuf[:0], namesBuf[:0]
	wantName := false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			if len(open) == maxDepth {
				return false
			}
			open, wantName = append(open, len(names)), true
		case '[':
			if len(open) == maxDepth {
				return false
			}
			open, wantName = append(open, -1), false
		case '}', ']':
			if start := open[len(open)-1]; start >= 0 {
				names = names[:start]
			}
			open, wantName = open[:len(open)-1], false
		case ',':
			wantName = open[len(open)-1] >= 0
		case '"':
			// raw is valid JSON: every string ends, and a backslash
			// always escapes the byte after it.
			j, plain, ascii := i+1, true, true
			for ; raw[j] != '"'; j++ {
				if raw[j] == '\\' {
					plain = false
					// \uD800 to \uDFFF: the walk tells a pair from a lone half.
					if raw[j+1] == 'u' && (raw[j+2]|0x20) == 'd' && raw[j+3] >= '8' {
						return false
					}
					j++
				} else if raw[j] >= utf8.RuneSelf {
					plain, ascii = false, false
				}
			}
			if !ascii && !utf8.Valid(raw[i+1:j]) {
				return false
			}
			if wantName {
				start := open[len(open)-1]
				if !plain || len(names)-start >= plainMaxNames {
					return false
				}
				name := raw[i+1 : j]
				for _, seen := range names[start:] {
					if bytes.Equal(seen, name) {
						return false
					}
				}
				names, wantName = append(names, name), false
			}
			i = j
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			// The walk refuses numbers out of float64's range (1e700):
			// only short ones without exponent are sure to pass.
			j := i
			for j < len(raw) && strings.IndexByte("0123456789+-.eE", raw[j]) >= 0 {
				j++
			}
			if j-i > plainMaxDigits || bytes.ContainsAny(raw[i:j], "eE") {
				return false
			}
			i = j - 1
		}
	}
	return true
}

// plainFields splits raw, which plainJSON passed, into its top-level names
// and values as json.Unmarshal into a map[string]json.RawMessage does,
// without its reflection: plainJSON saw every name plain (no escape, ASCII)
// and none twice. False when raw is not an object.
func plainFields(raw []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(raw, 0)
	if raw[i] != '{' {
		return nil, false
	}
	fields := map[string]json.RawMessage{}
	if i = skipSpace(raw, i+1); raw[i] == '}' {
		return fields, true
	}
	for {
		end := i + 1 + bytes.IndexByte(raw[i+1:], '"')
		name := string(raw[i+1 : end])
		i = skipSpace(raw, skipSpace(raw, end+1)+1) // past the colon
		j := valueEnd(raw, i)
		fields[name] = raw[i:j:j]
		if i = skipSpace(raw, j); raw[i] == '}' {
			return fields, true
		}
		i = skipSpace(raw, i+1) // past the comma
	}
}

// skipSpace is the index of the first byte of raw at or after i that is
// not JSON whitespace.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// valueEnd is the index just after the value of valid JSON raw that
// starts at i.
func valueEnd(raw []byte, i int) int {
	depth := 0
	for ; ; i++ {
		switch raw[i] {
		case '"':
			for i++; raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		default:
			if depth == 0 { // a number, true, false or null
				for i < len(raw) && strings.IndexByte(",}] \t\n\r", raw[i]) < 0 {
					i++
				}
				return i
			}
		}
	}
}

// pointerEscaper escapes a name in a JSON pointer (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer returns the JSON pointer of a top-level field.
func pointer(name string) string {
	return "/" + pointerEscaper.Replace(name)
}
