package sdk_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/licentia/licentia/sdk"
)

const testLicenceID = "0b7d4f1e-8c2a-4e6b-9f3d-5a1c7e9b2d4f"

func testVerifier(t testing.TB) (*sdk.Verifier, string) {
	cur, other := seedKey("vector/photo/current"), seedKey("vector/notes/current")
	v, err := sdk.NewVerifier(
		sdk.Product{ID: "photo-editor", KeyPrefix: "PHOTO", PublicKeys: pubs(cur)},
		sdk.Product{ID: "notes", KeyPrefix: "NT2", PublicKeys: pubs(other)},
	)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sdk.SignLicenceKey(cur, "", "PHOTO", "photo-editor", testLicenceID)
	if err != nil {
		t.Fatal(err)
	}
	return v, key
}

func TestSignLicenceKeyIsDeterministic(t *testing.T) {
	priv := seedKey("vector/photo/current")
	a, _ := sdk.SignLicenceKey(priv, "", "PHOTO", "photo-editor", testLicenceID)
	b, _ := sdk.SignLicenceKey(priv, "", "PHOTO", "photo-editor", testLicenceID)
	if a != b {
		t.Errorf("SignLicenceKey() twice = %q, %q; want the same string", a, b)
	}
	if !strings.HasPrefix(a, "PHOTO_") {
		t.Errorf("key %q does not begin with its prefix and separator", a)
	}
}

// TestEveryEditIsRefused changes each character of a valid key to every
// other character a key can hold and expects licence_key_invalid, or
// licence_wrong_product where the prefix becomes another product's.
func TestEveryEditIsRefused(t *testing.T) {
	v, key := testVerifier(t)
	if _, err := v.VerifyLicenceKey(key); err != nil {
		t.Fatalf("VerifyLicenceKey(valid) = %v", err)
	}
	const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_"
	for i := range len(key) {
		for _, c := range []byte(chars) {
			if c == key[i] {
				continue
			}
			edited := key[:i] + string(c) + key[i+1:]
			_, err := v.VerifyLicenceKey(edited)
			switch {
			case err == nil:
				t.Fatalf("edit at %d to %q verified: %q", i, c, edited)
			case errors.Is(err, sdk.ErrLicenceWrongProduct) && i >= len("PHOTO"):
				t.Fatalf("edit at %d outside the prefix gave wrong product", i)
			}
		}
	}
}

func TestVerifyLicenceKey(t *testing.T) {
	v, key := testVerifier(t)
	for _, tt := range []struct {
		name string
		key  string
		want error
	}{
		{"upper case", key, nil},
		{"lower case", strings.ToLower(key), nil},
		{"no dashes", strings.ReplaceAll(key, "-", ""), nil},
		{"other grouping", regroup(key, 4), nil},
		{"surrounding whitespace", "\t " + key + " \r\n", nil},
		{"inner space", key[:10] + " " + key[10:], sdk.ErrLicenceKeyInvalid},
		{"extra character", key + "0", sdk.ErrLicenceKeyInvalid},
		{"look-alike O for 0", strings.Replace(key, "0", "O", 1), sdk.ErrLicenceKeyInvalid},
		{"prefix of notes", "NT2" + key[5:], sdk.ErrLicenceWrongProduct},
		{"very long", key + strings.Repeat("0", 1000), sdk.ErrLicenceKeyInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.VerifyLicenceKey(tt.key)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("VerifyLicenceKey() = %v, want %v", err, tt.want)
			}
		})
	}
}

func regroup(key string, n int) string {
	prefix, body, _ := strings.Cut(key, "_")
	body = strings.ReplaceAll(body, "-", "")
	var parts []string
	for i := 0; i < len(body); i += n {
		parts = append(parts, body[i:min(i+n, len(body))])
	}
	return prefix + "_" + strings.Join(parts, "-")
}

func FuzzParseLicenceKey(f *testing.F) {
	v, key := testVerifier(f)
	for _, s := range []string{key, strings.ToLower(key), "", "PHOTO_", "PHOTO_0", "A_" + strings.Repeat("Z", 143), "__--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := sdk.ParseLicenceKey(s)
		if err == nil && !sdk.IsKeyPrefix(k.Prefix) {
			t.Fatalf("parsed a key with prefix %q", k.Prefix)
		}
		got, err := v.VerifyLicenceKey(s)
		if err == nil && got.LicenceID != testLicenceID {
			t.Fatalf("fuzzed key %q verified for licence %s", s, got.LicenceID)
		}
	})
}

func BenchmarkSignLicenceKey(b *testing.B) {
	priv := seedKey("vector/photo/current")
	for b.Loop() {
		if _, err := sdk.SignLicenceKey(priv, "", "PHOTO", "photo-editor", testLicenceID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyLicenceKey(b *testing.B) {
	v, key := testVerifier(b)
	for b.Loop() {
		if _, err := v.VerifyLicenceKey(key); err != nil {
			b.Fatal(err)
		}
	}
}
