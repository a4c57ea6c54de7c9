package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

func TestParseBody(t *testing.T) {
	issue := func(path, message string) licentia.Issue { return licentia.Issue{Path: path, Message: message} }
	for _, tt := range []struct {
		name       string
		raw        string
		allowed    []string
		wantIssues licentia.Issues
		wantFields []string
	}{
		{name: "empty body reads as {}", raw: ""},
		{name: "blank body reads as {}", raw: " \n\t"},
		{name: "empty object", raw: "{}"},
		{name: "known fields", raw: `{"email":"a@b.example","n":1}`, allowed: []string{"email", "n"}, wantFields: []string{"email", "n"}},
		{
			name: "case-changed name is unknown", raw: `{"Email":"a@b.example"}`, allowed: []string{"email"},
			wantIssues: licentia.Issues{issue("/Email", "unknown field")},
		},
		{
			name: "unknown names in order", raw: `{"z":1,"email":"a","a":2}`, allowed: []string{"email"},
			wantIssues: licentia.Issues{issue("/a", "unknown field"), issue("/z", "unknown field")}, wantFields: []string{"email"},
		},
		{
			name: "duplicate name", raw: `{"email":"a@b.example","email":"c@d.example"}`, allowed: []string{"email"},
			wantIssues: licentia.Issues{issue("/email", "duplicate field")}, wantFields: []string{"email"},
		},
		{
			name: "duplicate through an escape", raw: `{"email":"a","\u0065mail":"b"}`, allowed: []string{"email"},
			wantIssues: licentia.Issues{issue("/email", "duplicate field")}, wantFields: []string{"email"},
		},
		{
			name: "nested duplicate", raw: `{"a":{"b":1,"b":2}}`, allowed: []string{"a"},
			wantIssues: licentia.Issues{issue("/a/b", "duplicate field")}, wantFields: []string{"a"},
		},
		{
			name: "duplicate inside an array", raw: `{"a":[1,{"b":{"c":1,"c":2}}]}`, allowed: []string{"a"},
			wantIssues: licentia.Issues{issue("/a/1/b/c", "duplicate field")}, wantFields: []string{"a"},
		},
		{
			name: "same name in sibling objects is fine", raw: `{"a":[{"b":1},{"b":2}],"c":{"b":3}}`, allowed: []string{"a", "c"},
			wantFields: []string{"a", "c"},
		},
		{
			name: "pointer escapes", raw: `{"a/b":1,"a/b":2,"m~n":3}`,
			wantIssues: licentia.Issues{issue("/a~1b", "duplicate field"), issue("/a~1b", "unknown field"), issue("/m~0n", "unknown field")},
		},
		{
			name: "every duplicate", raw: `{"a":1,"a":2,"b":{"c":1,"c":2},"b":3}`, allowed: []string{"a", "b"},
			wantIssues: licentia.Issues{issue("/a", "duplicate field"), issue("/b/c", "duplicate field"), issue("/b", "duplicate field")},
			wantFields: []string{"a", "b"},
		},
		{name: "trailing object", raw: `{"a":1} {"b":2}`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("", "the body holds data after the JSON value")}},
		{name: "trailing garbage", raw: `{"a":1}x`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("", "the body holds data after the JSON value")}},
		{name: "trailing close", raw: `{"a":1}}`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("", "the body holds data after the JSON value")}},
		{name: "trailing whitespace is fine", raw: "{\"a\":1} \r\n", allowed: []string{"a"}, wantFields: []string{"a"}},
		{name: "syntax error", raw: `{"a":}`, wantIssues: licentia.Issues{issue("", "the body is not valid JSON")}},
		{name: "unterminated", raw: `{"a":1`, wantIssues: licentia.Issues{issue("", "the body is not valid JSON")}},
		{name: "single quotes", raw: `{'a':1}`, wantIssues: licentia.Issues{issue("", "the body is not valid JSON")}},
		{name: "array", raw: `[{"a":1}]`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("", "the body must be a JSON object")}},
		{name: "string", raw: `"a"`, wantIssues: licentia.Issues{issue("", "the body must be a JSON object")}},
		{name: "number", raw: `1`, wantIssues: licentia.Issues{issue("", "the body must be a JSON object")}},
		{name: "true", raw: `true`, wantIssues: licentia.Issues{issue("", "the body must be a JSON object")}},
		{name: "null", raw: `null`, wantIssues: licentia.Issues{issue("", "the body must be a JSON object")}},
		{name: "32 levels", raw: `{"a":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + "}", allowed: []string{"a"}, wantFields: []string{"a"}},
		{
			name: "33 levels", raw: `{"a":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + "}", allowed: []string{"a"},
			wantIssues: licentia.Issues{issue("/a"+strings.Repeat("/0", 31), "is nested deeper than 32 levels")},
		},
		{
			name: "33 levels of objects", raw: strings.Repeat(`{"a/b":`, 33) + "1" + strings.Repeat("}", 33), allowed: []string{"a/b"},
			wantIssues: licentia.Issues{issue(strings.Repeat("/a~1b", 32), "is nested deeper than 32 levels")},
		},
		{
			name: "deep past the second element", raw: `{"a":[1,` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + "]}", allowed: []string{"a"},
			wantIssues: licentia.Issues{issue("/a/1"+strings.Repeat("/0", 30), "is nested deeper than 32 levels")},
		},
		{
			name: "32,768 brackets", raw: strings.Repeat("[", 32768) + strings.Repeat("]", 32768),
			wantIssues: licentia.Issues{issue(strings.Repeat("/0", 32), "is nested deeper than 32 levels")},
		},
		{name: "valid UTF-8 and pairs", raw: `{"a":"é\ud83d\ude00\ufffd` + "\xef\xbf\xbd" + `"}`, allowed: []string{"a"}, wantFields: []string{"a"}},
		{name: "bytes ff fe", raw: "{\"a\":\"x\xff\xfey\"}", allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "overlong slash", raw: "{\"a\":\"\xc0\xaf\"}", allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "encoded surrogate", raw: "{\"a\":\"\xed\xa0\x80\"}", allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "truncated sequence", raw: "{\"a\":\"\xe2\x82\"}", allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "lone high surrogate", raw: `{"a":"\ud800"}`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "unpaired low surrogate", raw: `{"a":"x\udc00"}`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "high then high", raw: `{"a":"\uD800\uD800\uDC00"}`, allowed: []string{"a"}, wantIssues: licentia.Issues{issue("/a", "must be valid UTF-8")}, wantFields: []string{"a"}},
		{name: "escaped backslash is no escape", raw: `{"a":"\\ud800"}`, allowed: []string{"a"}, wantFields: []string{"a"}},
		{
			name: "nested and in arrays", raw: "{\"a\":{\"b\":[\"ok\",\"\xff\"]},\"c\":\"\\udc00\"}", allowed: []string{"a", "c"},
			wantIssues: licentia.Issues{issue("/a/b/1", "must be valid UTF-8"), issue("/c", "must be valid UTF-8")}, wantFields: []string{"a", "c"},
		},
		{
			name: "name not UTF-8", raw: "{\"a\":{\"\xff\":1},\"\\ud800\":2}", allowed: []string{"a"},
			wantIssues: licentia.Issues{issue("/a", "holds a name that is not valid UTF-8"), issue("", "holds a name that is not valid UTF-8"), issue("/\ufffd", "unknown field")},
			wantFields: []string{"a"},
		},
		{
			name: "every problem at once", raw: `{"Email":"x","email":"a@b.example","email":"c@d.example","extra":{"k":1,"k":2}}`, allowed: []string{"email"},
			wantIssues: licentia.Issues{
				issue("/email", "duplicate field"), issue("/extra/k", "duplicate field"),
				issue("/Email", "unknown field"), issue("/extra", "unknown field"),
			},
			wantFields: []string{"email"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var is licentia.Issues
			b := parseBody([]byte(tt.raw), &is, tt.allowed...)
			if diff := cmp.Diff(tt.wantIssues, is); diff != "" {
				t.Errorf("parseBody(%s) issues mismatch (-want +got):\n%s", tt.raw, diff)
			}
			var fields []string
			for name := range b.fields {
				fields = append(fields, name)
			}
			slices.Sort(fields)
			if diff := cmp.Diff(tt.wantFields, fields); diff != "" {
				t.Errorf("parseBody(%s) fields mismatch (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

// fieldsRequest has a field of each type a request struct holds.
type fieldsRequest struct {
	licentia.Decoded
	N *int64     `json:"n" input:"min=1,max=10"`
	S *string    `json:"s" input:"required"`
	B *bool      `json:"b"`
	T *time.Time `json:"t"`
	L []string   `json:"l"`
}

func (in *fieldsRequest) Validate() licentia.Issues {
	return append(slices.Clone(in.Before), licentia.CheckFields(in)...)
}

// TestBodyFields: fields are read with their types; integers refuse a
// fraction or an exponent; every problem is reported at once.
func TestBodyFields(t *testing.T) {
	issue := func(path, message string) licentia.Issue { return licentia.Issue{Path: path, Message: message} }
	for _, tt := range []struct {
		name       string
		raw        string
		wantIssues licentia.Issues
	}{
		{name: "valid", raw: `{"n":7,"s":"x","b":true,"t":"2026-03-02T10:00:00+01:00","l":["a"]}`},
		{name: "fraction", raw: `{"n":7.0,"s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer")}},
		{name: "exponent", raw: `{"n":1e1,"s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer")}},
		{name: "capital exponent", raw: `{"n":1E1,"s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer")}},
		{name: "integer as a string", raw: `{"n":"7","s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer")}},
		{name: "integer null", raw: `{"n":null,"s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer")}},
		{name: "below range", raw: `{"n":0,"s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer from 1 to 10")}},
		{name: "above int64", raw: `{"n":99999999999999999999,"s":"x"}`, wantIssues: licentia.Issues{issue("/n", "must be an integer from 1 to 10")}},
		{name: "string null", raw: `{"s":null}`, wantIssues: licentia.Issues{issue("/s", "must be a string")}},
		{name: "boolean as a string", raw: `{"s":"x","b":"true"}`, wantIssues: licentia.Issues{issue("/b", "must be a boolean")}},
		{name: "time without offset", raw: `{"s":"x","t":"2026-03-02T10:00:00"}`, wantIssues: licentia.Issues{issue("/t", "must be an RFC 3339 time with an offset")}},
		{name: "list of numbers", raw: `{"s":"x","l":[1]}`, wantIssues: licentia.Issues{issue("/l", "must be an array of strings")}},
		{
			name: "every problem at once", raw: `{"N":1,"n":1.5,"b":1,"extra":true}`,
			wantIssues: licentia.Issues{
				issue("/N", "unknown field"), issue("/extra", "unknown field"),
				issue("/n", "must be an integer"), issue("/s", "is required"), issue("/b", "must be a boolean"),
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var in fieldsRequest
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.raw))
			if err := Decode(r, nil, &in); err != nil {
				t.Fatalf("decode(%s) error = %v", tt.raw, err)
			}
			is := in.Validate()
			if diff := cmp.Diff(tt.wantIssues, is); diff != "" {
				t.Errorf("issues of %s mismatch (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

// TestReadBodyLimit: 64 KB is 65,536 bytes. A body of 65,536 bytes is read;
// one byte more is payload_too_large, whether its length is declared (refused
// before reading) or not (refused while reading).
func TestReadBodyLimit(t *testing.T) {
	for _, tt := range []struct {
		name      string
		size      int
		declared  bool
		wantLarge bool
	}{
		{"65,536 bytes declared", 65536, true, false},
		{"65,536 bytes chunked", 65536, false, false},
		{"65,537 bytes declared", 65537, true, true},
		{"65,537 bytes chunked", 65537, false, true},
		{"1 MB chunked", 1 << 20, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := `{"a":"` + strings.Repeat("x", tt.size-8) + `"}`
			r := httptest.NewRequest("POST", "/v1/admin/invitations", io.MultiReader(strings.NewReader(raw)))
			r.ContentLength = -1
			if tt.declared {
				r.ContentLength = int64(len(raw))
			}
			var is licentia.Issues
			var err error
			if !LimitBody(httptest.NewRecorder(), r) {
				err = ErrTooLarge
			} else {
				_, err = ReadBody(r, &is, "a")
			}
			if tt.wantLarge {
				if e, ok := errors.AsType[*licentia.Error](err); !ok || e.Code != licentia.CodePayloadTooLarge {
					t.Errorf("reading %d bytes: error = %v, want payload_too_large", len(raw), err)
				}
				return
			}
			if err != nil || len(is) != 0 {
				t.Errorf("reading %d bytes: error = %v, issues = %v; want the body read", len(raw), err, is)
			}
		})
	}
}

// FuzzParseBody: parseBody never panics, allocates within allocBound of
// its input, keeps only allowed fields, and accepts only a blank body or one
// JSON object of at most 32 levels without duplicate names, whose strings
// are valid UTF-8 with every surrogate escape paired.
func FuzzParseBody(f *testing.F) {
	for _, s := range []string{
		"", " ", "{}", "[]", "null", "1", `"s"`, `{"email":"a@b.example","n":1}`, `{"Email":1}`,
		`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `{"a":1} {}`, `{"a":1}x`, `{"a":`, `{"\u0061":1,"a":2}`,
		`{"n":1.5e3}`, `[[[[[]]]]]`, `{"a":[1,2,{"b":null}],"email":"x"}`, "{\"a\":\"\xff\"}", `{"":1,"":2}`,
		"{\"a\":\"\xed\xa0\x80\xc0\xaf\"}", `{"a":"\ud800"}`, `{"a":"\udc00\ud83d\ude00"}`, "{\"\xfe\":1}",
		`{"a":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + "}",
	} {
		f.Add([]byte(s))
	}
	for _, w := range worstBodies() {
		f.Add(w.raw)
	}
	allowed := []string{"email", "n", "a"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, bound := decodeAlloc(raw), allocBound(len(raw)); got > bound {
			// Retry once: another goroutine may have allocated meanwhile.
			if got = min(got, minDecodeAlloc(raw)); got > bound {
				t.Errorf("parseBody(%.80q) of %d bytes allocated %d bytes, want at most %d", raw, len(raw), got, bound)
			}
		}
		var is licentia.Issues
		b := parseBody(raw, &is, allowed...)
		for name := range b.fields {
			if !slices.Contains(allowed, name) {
				t.Errorf("parseBody(%q) kept field %q", raw, name)
			}
		}
		if len(is) > 0 || len(bytes.TrimSpace(raw)) == 0 {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			t.Errorf("parseBody(%q) accepted a body that is not one JSON object (%v)", raw, err)
		}
		if hasDuplicateName(raw) {
			t.Errorf("parseBody(%q) accepted a duplicate name", raw)
		}
		if d := depth(raw); d > maxDepth {
			t.Errorf("parseBody(%q) accepted a body %d levels deep", raw, d)
		}
		if !utf8.Valid(raw) {
			t.Errorf("parseBody(%q) accepted invalid UTF-8", raw)
		}
		// encoding/json decodes a lone surrogate escape to U+FFFD; unless
		// the body sends U+FFFD itself, none may appear once decoded.
		if !bytes.Contains(raw, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
			var v any
			json.Unmarshal(raw, &v)
			if s := fmt.Sprint(v); strings.ContainsRune(s, utf8.RuneError) {
				t.Errorf("parseBody(%q) accepted a lone surrogate escape", raw)
			}
		}
	})
}

// depth is how deep raw nests its objects and arrays, read with
// encoding/json's decoder, apart from the walk.
func depth(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	deepest, n := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			n++
			deepest = max(deepest, n)
		case json.Delim('}'), json.Delim(']'):
			n--
		}
	}
}

// hasDuplicateName reports whether an object anywhere in raw repeats a name.
// It walks the value recursively, apart from walkTokens.
func hasDuplicateName(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					return false
				}
				if seen[name.(string)] {
					return true
				}
				seen[name.(string)] = true
				if walk() {
					return true
				}
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			dec.Token()
		}
		return false
	}
	return walk()
}

func TestPlainJSON(t *testing.T) {
	many := func(n int, dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		if dup {
			b.WriteString(`,"k0":0`)
		}
		b.WriteString("}")
		return b.String()
	}
	for _, tt := range []struct {
		raw  string
		want bool
	}{
		{`{"licence_key":"ABCD-EFGH","machine_id":"m-1"}`, true},
		{` {"a":{"a":1},"b":[{"a":1},{"a":2}]} `, true},
		{`{"a":"x\"y","b":"\\","c":"é"}`, true}, // escapes and UTF-8 in values only
		{`[1,"a",{"a":[]},null]`, true},
		{`"just a string"`, true},
		{`{"a":{"b":1},"b":2}`, true},
		{`{"a":1,"b":{"a":2}}`, true},
		{many(plainMaxNames, false), true},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":[{"c":1,"c":2}]}}`, false},
		{`{"a":1} {}`, false},
		{`{"a":`, false},
		{``, false},
		{`{"\u0061":1}`, false},
		{`{"é":1}`, false},
		{"{\"\xff\":1,\"\xfe\":2}", false},
		{many(plainMaxNames+1, false), false},
		{many(plainMaxNames, true), false},
		{`1e700`, false},
		{`{"n":1E3}`, false},
		{`{"n":-12345678901234}`, true},
		{`{"n":1234567890123456}`, false},
		{`[-0.5,12.25]`, true},
	} {
		if got := plainJSON([]byte(tt.raw)); got != tt.want {
			t.Errorf("plainJSON(%.60q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

// FuzzPlainJSON: a body plainJSON passes is one the token walk passes too.
func FuzzPlainJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"b":[1,{"a":2,"a":3}]}`, `{"a":"\"}","a":1}`, `[{"x":1},{"x":1}]`, `{"a\\":1,"a\\":2}`,
		"{\"\xff\":1,\"\xfe\":2}", `{"a":1}x`, `{"":1,"":2}`, `{"a":{"b":1},"a":{"b":1}}`, `1e700`,
		`{"n":` + strings.Repeat("9", 400) + `}`, `{"a":"\ud800"}`, `{"a":"\uDbFf\uDC00"}`, "[\"\xed\xa0\x80\"]",
		strings.Repeat("[", 33) + strings.Repeat("]", 33),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !plainJSON(raw) {
			return
		}
		if issues, fatal := walkTokens(raw); len(issues) != 0 || fatal {
			t.Errorf("plainJSON(%q) = true, but the walk finds %v", raw, issues)
		}
	})
}

// FuzzPlainFields: of a body plainJSON passes, plainFields splits the same
// names and values as json.Unmarshal, and refuses what is not an object.
func FuzzPlainFields(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, "{ \"a\" :\t\"x\\\"}\" ,\n\"b\":[1,{\"c\":[]}] , \"d\":null,\"e\":-1.5,\"f\":true}",
		`{"a":{"b":"}"},"c":"]"}`, `[]`, `null`, `"s"`, `1`, ` {"licence_key":"DESK-x","machine_id":"m"} `,
		`{"a":"\u00e9\\"}`, "{\"a\":\"\xc3\xa9\"}", `{"a":[[],[[]],{}],"b":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !plainJSON(raw) {
			return
		}
		got, ok := plainFields(raw)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil || want == nil {
			if ok {
				t.Errorf("plainFields(%q) = %q, true; want false for what is not an object", raw, got)
			}
			return
		}
		if !ok || len(got) != len(want) {
			t.Fatalf("plainFields(%q) = %q, %v; want %q", raw, got, ok, want)
		}
		for name, v := range want {
			if !bytes.Equal(got[name], v) {
				t.Errorf("plainFields(%q)[%q] = %q, want %q", raw, name, got[name], v)
			}
		}
	})
}

// FuzzPlainString: a string plainString reads is the one json.Unmarshal
// reads, and whatever it refuses goes to json.Unmarshal.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"DESK-abc.def"`, `"a\"b"`, `"\u0041"`, "\"\xff\"", "\"\xc3\xa9\"", "\"a\tb\"", `"`, `x`, `"a"b"`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainString(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || got != want {
			t.Errorf("plainString(%q) = %q, but json.Unmarshal reads %q (%v)", raw, got, want, err)
		}
	})
}
