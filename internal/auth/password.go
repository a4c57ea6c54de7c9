package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password hashing: argon2id with OWASP's first recommended parameters
// (19 MiB, two passes, one lane), written as a PHC string so parameters can
// rise later without invalidating stored hashes.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16

	// MinPasswordLength and MaxPasswordLength bound a new password, in
	// characters and bytes: long enough to resist guessing, short enough
	// that hashing cost does not depend on the caller.
	MinPasswordLength = 10
	MaxPasswordLength = 256
)

// hashing admits a few hashes at a time: each takes 19 MiB, and a burst of
// sign-ins must not take the process's memory with it.
var hashing = make(chan struct{}, 4)

// CheckNewPassword returns a message when pw cannot be a password, or "".
func CheckNewPassword(pw string) string {
	switch {
	case !utf8.ValidString(pw):
		return "must be valid UTF-8"
	case utf8.RuneCountInString(pw) < MinPasswordLength:
		return fmt.Sprintf("must be at least %d characters", MinPasswordLength)
	case len(pw) > MaxPasswordLength:
		return fmt.Sprintf("must be at most %d bytes", MaxPasswordLength)
	}
	return ""
}

// HashPassword hashes pw with a fresh salt into a PHC string.
func HashPassword(ctx context.Context, pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt)
	key, err := derive(ctx, pw, salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	if err != nil {
		return "", err
	}
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// dummyHash is checked when there is no stored hash, so an unknown address
// costs what a known one does and timing does not tell them apart.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// CheckPassword reports whether pw matches the PHC string hash. An empty
// or malformed hash matches nothing, after the same work as a real one.
func CheckPassword(ctx context.Context, hash, pw string) (bool, error) {
	known := hash != ""
	if !known {
		hash = dummyHash
	}
	p, ok := parsePHC(hash)
	if !ok {
		p, _ = parsePHC(dummyHash)
		known = false
	}
	if len(pw) > MaxPasswordLength {
		pw = pw[:MaxPasswordLength]
		known = false
	}
	key, err := derive(ctx, pw, p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(key, p.key) == 1 && known, nil
}

func derive(ctx context.Context, pw string, salt []byte, t, m uint32, threads uint8, n uint32) ([]byte, error) {
	select {
	case hashing <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("password hash: %w", ctx.Err())
	}
	defer func() { <-hashing }()
	return argon2.IDKey([]byte(pw), salt, t, m, threads, n), nil
}

type phc struct {
	time, memory uint32
	threads      uint8
	salt, key    []byte
}

// parsePHC reads "$argon2id$v=19$m=..,t=..,p=..$salt$key", refusing
// parameters past what this package writes, so a stored hash cannot make a
// check cost more than a new one.
func parsePHC(s string) (phc, bool) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return phc{}, false
	}
	var p phc
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &threads); err != nil {
		return phc{}, false
	}
	if p.memory == 0 || p.memory > 64*1024 || p.time == 0 || p.time > 8 || threads == 0 || threads > 4 {
		return phc{}, false
	}
	p.threads = uint8(threads)
	var err1, err2 error
	p.salt, err1 = base64.RawStdEncoding.DecodeString(parts[4])
	p.key, err2 = base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(p.salt) < 8 || len(p.key) < 16 || len(p.key) > 64 {
		return phc{}, false
	}
	return p, true
}

// NewToken returns a random single-use token for a link or a session, 256
// bits in base62, and the SHA-256 hash that is all the database keeps.
func NewToken() (token string, hash []byte) {
	t := randomString(base62Chars, secretLen)
	return t, TokenHash(t)
}

// TokenHash is the stored form of a token: SHA-256 is enough for a random
// 256-bit secret, which no dictionary holds.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
