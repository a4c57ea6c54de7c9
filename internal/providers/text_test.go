package providers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

func TestIsText(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"ASCII", `{"email":"ada@example.com"}`, true},
		{"UTF-8", `{"email":"adélaïde@exämple.com","name":"😀"}`, true},
		{"a pair of surrogate escapes", `{"email":"\ud83d\ude00@example.com"}`, true},
		{"upper-case escapes", `{"email":"\uD83D\uDE00@example.com"}`, true},
		{"other escapes", `{"a":"\u00e9\n\t\"\\\/"}`, true},
		{"an escaped backslash before u", `{"a":"\\ud800"}`, true},
		{"a replacement character sent as one", `{"a":"\ufffd�"}`, true},
		{"bytes that are not UTF-8", "{\"email\":\"\xff\xfe@example.com\"}", false},
		{"a character cut short", "{\"a\":\"ab\xc3\"}", false},
		{"an encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", false},
		{"an overlong form", "{\"a\":\"\xc0\xaf\"}", false},
		{"a lone high surrogate escape", `{"a":"\ud800"}`, false},
		{"a lone low surrogate escape", `{"a":"\udc00"}`, false},
		{"a high surrogate escape before a character", `{"a":"\ud800x"}`, false},
		{"two high surrogate escapes", `{"a":"\ud800\ud800\udc00"}`, false},
		{"a high surrogate escape at the end", `\ud800`, false},
		{"a high surrogate escape before a short one", `"\ud800\udc0"`, false},
		{"a backslash at the end", `"\`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := providers.IsText([]byte(tt.in)); got != tt.want {
				t.Errorf("IsText(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// replacementEscape is how JSON may spell U+FFFD itself.
var replacementEscape = regexp.MustCompile(`(?i)\\ufffd`)

// FuzzIsText: a body IsText accepts decodes without a replacement
// character the body did not hold itself, as a character or an escape.
func FuzzIsText(f *testing.F) {
	for _, s := range []string{`{"email":"ada@example.com"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"a":"\\ud800"}`, `{"a":"\ufffd"}`, `["\udc00\ud800"]`, `{"\ud800":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if !providers.IsText(b) || json.Unmarshal(b, &v) != nil {
			return
		}
		held := bytes.Count(b, []byte("\uFFFD")) + len(replacementEscape.FindAll(b, -1))
		if got := replacements(v); got > held {
			t.Fatalf("IsText(%q) = true, but it decodes with %d replacement characters, %d sent", b, got, held)
		}
	})
}

// replacements counts U+FFFD in every string and name of v.
func replacements(v any) int {
	switch v := v.(type) {
	case string:
		return strings.Count(v, "\uFFFD")
	case []any:
		n := 0
		for _, e := range v {
			n += replacements(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += strings.Count(k, "\uFFFD") + replacements(e)
		}
		return n
	}
	return 0
}

// TestAPIGetInvalidText: an answer holding text that is not valid UTF-8
// is ErrTextInvalid, a failure of the provider (ErrUnavailable) to callers
// that do not look for it, and is not decoded with replacement characters.
func TestAPIGetInvalidText(t *testing.T) {
	for name, body := range map[string]string{"bytes": "{\"email\":\"\xff@example.com\"}", "escape": `{"email":"\udc00@example.com"}`} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(body))
			}))
			defer srv.Close()
			api := providers.API{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Second}}
			var into struct {
				Email string `json:"email"`
			}
			err := api.Get(t.Context(), "key", "/customers/ctm_1", nil, &into)
			if !errors.Is(err, providers.ErrTextInvalid) || !errors.Is(err, providers.ErrUnavailable) {
				t.Errorf("Get() error = %v, want ErrTextInvalid and ErrUnavailable", err)
			}
			if into.Email != "" {
				t.Errorf("Get() decoded email %q, want nothing decoded", into.Email)
			}

			// Under a watch the answer is read, the text marked U+FFFD for
			// the caller to leave unstored, and the watch knows.
			ctx, watch := providers.WatchText(t.Context())
			if err := api.Get(ctx, "key", "/customers/ctm_1", nil, &into); err != nil {
				t.Fatalf("Get() under a watch: %v", err)
			}
			if !watch.Invalid() || into.Email != "\ufffd@example.com" {
				t.Errorf("Get() under a watch: email %q, noted %v; want U+FFFD@example.com, noted", into.Email, watch.Invalid())
			}
		})
	}
}

// TestWatchTextQuiet: a watch over an answer of valid text notes nothing.
func TestWatchTextQuiet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"email":"\ufffd@example.com"}`))
	}))
	defer srv.Close()
	api := providers.API{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Second}}
	ctx, watch := providers.WatchText(t.Context())
	var into struct {
		Email string `json:"email"`
	}
	if err := api.Get(ctx, "key", "/customers/ctm_1", nil, &into); err != nil || watch.Invalid() {
		t.Errorf("Get() = %v, noted %v; want nil, not noted", err, watch.Invalid())
	}
}
