package auth

import (
	"context"
	"strings"
	"testing"
)

func TestPasswordRoundTrip(t *testing.T) {
	ctx := context.Background()
	h, err := HashPassword(ctx, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not an argon2id PHC string with the expected parameters", h)
	}
	h2, _ := HashPassword(ctx, "correct horse battery")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: the salt is not fresh")
	}
	for _, tc := range []struct {
		hash, pw string
		want     bool
	}{
		{h, "correct horse battery", true},
		{h, "correct horse batterY", false},
		{h, "", false},
		{"", "correct horse battery", false},
		{dummyHash, "", false},
		{"$argon2id$v=19$m=999999,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "x", false},
		{"$argon2i$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "x", false},
		{"not a hash", "x", false},
	} {
		got, err := CheckPassword(ctx, tc.hash, tc.pw)
		if err != nil || got != tc.want {
			t.Errorf("CheckPassword(%.30q, %q) = %v, %v; want %v", tc.hash, tc.pw, got, err, tc.want)
		}
	}
	// A password one byte past the limit never matches, even against the
	// hash of its first MaxPasswordLength bytes.
	long := strings.Repeat("a", MaxPasswordLength)
	hl, _ := HashPassword(ctx, long)
	if ok, _ := CheckPassword(ctx, hl, long+"a"); ok {
		t.Fatal("an over-long password matched the hash of its prefix")
	}
	if ok, _ := CheckPassword(ctx, hl, long); !ok {
		t.Fatal("a password of the maximum length did not match its own hash")
	}
}

func TestCheckNewPassword(t *testing.T) {
	for pw, ok := range map[string]bool{
		"":                                       false,
		"short":                                  false,
		"ninechars":                              false,
		"tenchars!!":                             true,
		"éééééééééé":                             true, // ten characters, twenty bytes
		strings.Repeat("a", MaxPasswordLength):   true,
		strings.Repeat("a", MaxPasswordLength+1): false,
		"bad utf8 \xff\xfe":                      false,
	} {
		if got := CheckNewPassword(pw) == ""; got != ok {
			t.Errorf("CheckNewPassword(%.20q) accepted = %v, want %v", pw, got, ok)
		}
	}
}

func TestCheckPasswordCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	for range cap(hashing) {
		hashing <- struct{}{}
	}
	defer func() {
		for range cap(hashing) {
			<-hashing
		}
	}()
	cancel()
	if _, err := CheckPassword(ctx, dummyHash, "x"); err == nil {
		t.Fatal("a check waiting for a hashing slot ignored its cancelled context")
	}
}

func TestNewToken(t *testing.T) {
	a, ha := NewToken()
	b, _ := NewToken()
	if a == b || len(a) != secretLen || string(TokenHash(a)) != string(ha) || len(ha) != 32 {
		t.Fatalf("tokens %q %q, hash length %d", a, b, len(ha))
	}
}
