package auth_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/auth"
)

// keyRE is the key format of decisions.md: licentia_<12 of [a-z0-9]>_<43 of base62>.
var keyRE = regexp.MustCompile(`^licentia_([a-z0-9]{12})_[0-9A-Za-z]{43}$`)

const validKey = "licentia_abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	prefixChars, secretChars := map[rune]bool{}, map[rune]bool{}
	for range 1000 {
		key, prefix := auth.NewKey()
		s := key.Reveal()
		m := keyRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("NewKey() = %q, want licentia_ + 12 of [a-z0-9] + _ + 43 of base62", s)
		}
		if prefix != m[1] {
			t.Fatalf("NewKey() prefix = %q, want the key's %q", prefix, m[1])
		}
		if got, ok := auth.ParseKey(s); !ok || got != prefix {
			t.Fatalf("ParseKey(NewKey()) = %q, %v, want %q, true", got, ok, prefix)
		}
		if seen[s] {
			t.Fatalf("NewKey() returned %q twice", s)
		}
		seen[s] = true
		for _, r := range prefix {
			prefixChars[r] = true
		}
		for _, r := range s[len("licentia_")+13:] {
			secretChars[r] = true
		}
	}
	// 12,000 prefix and 43,000 secret characters: a draw that never yields
	// part of its alphabet is biased (the chance of a miss by luck is below
	// 1e-140).
	if len(prefixChars) != 36 {
		t.Errorf("prefixes used %d distinct characters, want all 36 of [a-z0-9]", len(prefixChars))
	}
	if len(secretChars) != 62 {
		t.Errorf("secrets used %d distinct characters, want all 62 of base62", len(secretChars))
	}
}

func TestParseKey(t *testing.T) {
	if got, ok := auth.ParseKey(validKey); !ok || got != "abcdefgh0123" {
		t.Errorf("ParseKey(%q) = %q, %v, want abcdefgh0123, true", validKey, got, ok)
	}
	for _, tt := range []struct {
		name string
		key  string
	}{
		{"empty", ""},
		{"marker only", "licentia_"},
		{"upper-case marker", "LICENTIA_abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"other marker", "licentix_abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"no marker", "abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"},
		{"upper case in prefix", "licentia_Abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"symbol in prefix", "licentia_abcdefgh-123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"short prefix", "licentia_abcdefgh012_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefgh"},
		{"long prefix", "licentia_abcdefgh01234_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"},
		{"wrong separator", "licentia_abcdefgh0123-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"short secret", "licentia_abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef"},
		{"long secret", validKey + "h"},
		{"underscore in secret", "licentia_abcdefgh0123_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcde_"},
		{"hyphen in secret", "licentia_abcdefgh0123_0123456789-BCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"base64 plus in secret", "licentia_abcdefgh0123_0123456789+BCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"leading space", " " + validKey[:len(validKey)-1]},
		{"trailing space", validKey + " "},
		{"trailing newline", validKey + "\n"},
		{"NUL in secret", validKey[:len(validKey)-1] + "\x00"},
		{"non-ASCII in secret", validKey[:len(validKey)-2] + "é"},
		{"non-ASCII in prefix", "licentia_abcdefgh01é_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"},
		{"bearer included", "Bearer " + validKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := auth.ParseKey(tt.key); ok || got != "" {
				t.Errorf("ParseKey(%q) = %q, %v, want \"\", false", tt.key, got, ok)
			}
		})
	}
}

func FuzzParseKey(f *testing.F) {
	key, _ := auth.NewKey()
	for _, s := range []string{
		validKey, key.Reveal(), "", "licentia_", "licentia__", validKey + "x", validKey[:len(validKey)-1],
		strings.ToUpper(validKey), strings.Replace(validKey, "_0", "-0", 1), "licentia_abcdefgh0123_" + strings.Repeat("é", 22),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prefix, ok := auth.ParseKey(s)
		m := keyRE.FindStringSubmatch(s)
		if ok != (m != nil) {
			t.Fatalf("ParseKey(%q) ok = %v, want %v (the key format)", s, ok, m != nil)
		}
		if ok && prefix != m[1] {
			t.Fatalf("ParseKey(%q) prefix = %q, want %q", s, prefix, m[1])
		}
		if !ok && prefix != "" {
			t.Fatalf("ParseKey(%q) refused it but returned prefix %q", s, prefix)
		}
	})
}

func TestHash(t *testing.T) {
	want := sha256.Sum256([]byte(validKey))
	got := auth.Hash(validKey)
	if !bytes.Equal(got, want[:]) {
		t.Errorf("Hash(key) = %x, want the SHA-256 of the whole key %x", got, want)
	}
	other, _ := auth.NewKey()
	for _, tt := range []struct {
		name   string
		key    string
		stored []byte
		want   bool
	}{
		{"same key", validKey, want[:], true},
		{"other key", other.Reveal(), want[:], false},
		{"one character changed", validKey[:len(validKey)-1] + "h", want[:], false},
		{"truncated hash", validKey, want[:31], false},
		{"no hash", validKey, nil, false},
		{"hash of the prefix only", validKey, auth.Hash("abcdefgh0123"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := auth.HashMatches(tt.key, tt.stored); got != tt.want {
				t.Errorf("HashMatches() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKeyRedacted checks that a key printed or logged by mistake leaks
// nothing: only Reveal gives the key.
func TestKeyRedacted(t *testing.T) {
	key, prefix := auth.NewKey()
	secret := key.Reveal()
	secretPart := secret[len("licentia_")+len(prefix)+1:]
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s", "%-v"} {
		for name, v := range map[string]any{"value": key, "pointer": &key, "in a struct": struct{ Key auth.Key }{key}} {
			got := fmt.Sprintf(verb, v)
			if strings.Contains(got, secretPart) || !strings.Contains(got, "REDACTED") {
				t.Errorf("Sprintf(%q, %s) = %q, want REDACTED and not the key", verb, name, got)
			}
		}
	}
	if got := fmt.Sprint(key); got != "REDACTED" {
		t.Errorf("Sprint(key) = %q, want REDACTED", got)
	}
	if b, err := json.Marshal(key); err != nil || bytes.Contains(b, []byte(secretPart)) {
		t.Errorf("json.Marshal(key) = %s, %v, want no key", b, err)
	}

	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&buf, nil), slog.NewTextHandler(&buf, nil)} {
		log := slog.New(h)
		log.Info("created", "key", key)
		log.Info("created", slog.Any("key", &key))
		log.Info("created", slog.Group("api_key", slog.Any("key", key), slog.String("prefix", prefix)))
		log.With("key", key).Warn("with")
		log.Error("printed", "msg", fmt.Sprintf("key %v", key))
	}
	out := buf.String()
	if strings.Contains(out, secretPart) {
		t.Errorf("logs contain the key:\n%s", out)
	}
	if n := strings.Count(out, "REDACTED"); n != 10 {
		t.Errorf("logs show REDACTED %d times, want 10:\n%s", n, out)
	}
	if !strings.Contains(out, prefix) {
		t.Errorf("logs lack the prefix %q, which may be logged:\n%s", prefix, out)
	}
}
