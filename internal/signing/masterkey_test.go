package signing_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/signing"
)

// rawKey returns 32 bytes that differ for each fill, so tests can build
// two distinct master keys and know their bytes.
func rawKey(fill byte) []byte {
	raw := make([]byte, signing.MasterKeySize)
	for i := range raw {
		raw[i] = fill + byte(i)
	}
	return raw
}

func newMasterKey(t testing.TB, fill byte) *signing.MasterKey {
	t.Helper()
	m, err := signing.NewMasterKey(rawKey(fill))
	if err != nil {
		t.Fatalf("NewMasterKey() error = %v", err)
	}
	return m
}

func TestNewMasterKeySize(t *testing.T) {
	for _, n := range []int{0, 1, 16, 31, 33, 64} {
		if _, err := signing.NewMasterKey(make([]byte, n)); err == nil {
			t.Errorf("NewMasterKey(%d bytes) error = nil, want one", n)
		}
	}
	if _, err := signing.NewMasterKey(make([]byte, signing.MasterKeySize)); err != nil {
		t.Errorf("NewMasterKey(%d bytes) error = %v", signing.MasterKeySize, err)
	}
}

func TestMasterKeyFingerprint(t *testing.T) {
	a, again, b := newMasterKey(t, 1), newMasterKey(t, 1), newMasterKey(t, 2)
	if a.Fingerprint() != again.Fingerprint() {
		t.Errorf("Fingerprint() = %q and %q for the same bytes, want equal", a.Fingerprint(), again.Fingerprint())
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Errorf("Fingerprint() = %q for different keys, want different", a.Fingerprint())
	}
	if len(a.Fingerprint()) != 16 {
		t.Errorf("Fingerprint() = %q, want 16 hexadecimal characters", a.Fingerprint())
	}
	// The fingerprint is a hash under a label, so no part of it is the
	// key's bytes in any spelling.
	raw := rawKey(1)
	for _, spelling := range []string{hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)),
		base64.StdEncoding.EncodeToString(raw), string(raw)} {
		if strings.Contains(spelling, a.Fingerprint()) || strings.Contains(a.Fingerprint(), spelling) {
			t.Errorf("Fingerprint() = %q overlaps the key %q", a.Fingerprint(), spelling)
		}
	}
}

func TestSealOpen(t *testing.T) {
	m := newMasterKey(t, 1)
	plaintext := []byte("a secret \x00 with a zero byte")
	aad := []byte("product/photo-editor")
	sealed := m.Seal(plaintext, aad)
	got, err := m.Open(sealed, aad)
	if err != nil || !bytes.Equal(got, plaintext) {
		t.Fatalf("Open(Seal()) = %q, %v, want %q, nil", got, err, plaintext)
	}
	if bytes.Contains(sealed, plaintext) {
		t.Errorf("Seal() = %x holds the plaintext", sealed)
	}
	if again := m.Seal(plaintext, aad); bytes.Equal(again, sealed) {
		t.Errorf("Seal() twice = %x both times, want a fresh nonce each time", sealed)
	}
	empty, err := m.Open(m.Seal(nil, aad), aad)
	if err != nil || len(empty) != 0 {
		t.Errorf("Open(Seal(nil)) = %q, %v, want empty, nil", empty, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	m := newMasterKey(t, 1)
	aad := []byte("product/photo-editor")
	sealed := m.Seal([]byte("a secret"), aad)
	for _, tt := range []struct {
		name   string
		m      *signing.MasterKey
		sealed []byte
		aad    []byte
	}{
		{name: "another master key", m: newMasterKey(t, 2), sealed: sealed, aad: aad},
		// A ciphertext copied to another product's row does not open there.
		{name: "another aad", m: m, sealed: sealed, aad: []byte("product/notes")},
		{name: "no aad", m: m, sealed: sealed, aad: nil},
		{name: "nil", m: m, sealed: nil, aad: aad},
		{name: "appended byte", m: m, sealed: append(bytes.Clone(sealed), 0), aad: aad},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.Open(tt.sealed, tt.aad)
			if !errors.Is(err, signing.ErrUnseal) || got != nil {
				t.Errorf("Open() = %q, %v, want nil, ErrUnseal", got, err)
			}
		})
	}
	t.Run("flipped byte", func(t *testing.T) {
		for i := range sealed {
			damaged := bytes.Clone(sealed)
			damaged[i] ^= 0x01
			if got, err := m.Open(damaged, aad); !errors.Is(err, signing.ErrUnseal) {
				t.Errorf("Open(byte %d flipped) = %q, %v, want ErrUnseal", i, got, err)
			}
		}
	})
	t.Run("truncated", func(t *testing.T) {
		for n := range len(sealed) {
			if got, err := m.Open(sealed[:n], aad); !errors.Is(err, signing.ErrUnseal) {
				t.Errorf("Open(first %d bytes) = %q, %v, want ErrUnseal", n, got, err)
			}
		}
	})
}

func TestLoadMasterKey(t *testing.T) {
	dir := t.TempDir()
	_, err := signing.LoadMasterKey(filepath.Join(dir, "missing.key"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadMasterKey(missing) error = %v, want fs.ErrNotExist", err)
	}

	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, rawKey(1)[:31], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.LoadMasterKey(short); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadMasterKey(31 bytes) error = %v, want a size error", err)
	}

	good := filepath.Join(dir, "good.key")
	if err := os.WriteFile(good, rawKey(1), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := signing.LoadMasterKey(good)
	if err != nil {
		t.Fatalf("LoadMasterKey() error = %v", err)
	}
	if want := newMasterKey(t, 1).Fingerprint(); m.Fingerprint() != want {
		t.Errorf("LoadMasterKey().Fingerprint() = %q, want %q", m.Fingerprint(), want)
	}
}

func TestGenerateMasterKeyFile(t *testing.T) {
	// The directory does not exist yet: GenerateMasterKeyFile creates it.
	path := filepath.Join(t.TempDir(), "data", "master.key")
	m, err := signing.GenerateMasterKeyFile(path)
	if err != nil {
		t.Fatalf("GenerateMasterKeyFile() error = %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != signing.MasterKeySize || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file size %d, mode %v, want %d, 0600", fi.Size(), fi.Mode().Perm(), signing.MasterKeySize)
	}
	loaded, err := signing.LoadMasterKey(path)
	if err != nil || loaded.Fingerprint() != m.Fingerprint() {
		t.Errorf("LoadMasterKey(generated) = %v, %v, want fingerprint %s", loaded, err, m.Fingerprint())
	}
	before, _ := os.ReadFile(path)

	_, err = signing.GenerateMasterKeyFile(path)
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("GenerateMasterKeyFile(existing) error = %v, want fs.ErrExist", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("GenerateMasterKeyFile(existing) changed the file")
	}

	other, err := signing.GenerateMasterKeyFile(filepath.Join(t.TempDir(), "master.key"))
	if err != nil || other.Fingerprint() == m.Fingerprint() {
		t.Errorf("GenerateMasterKeyFile() twice = fingerprints %s and %v (%v), want random keys", m.Fingerprint(), other, err)
	}
}

func TestMasterKeyRedacted(t *testing.T) {
	raw := rawKey(1)
	m := newMasterKey(t, 1)
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q"} {
		got := fmt.Sprintf(verb, m)
		if !strings.Contains(got, "REDACTED") || strings.Contains(got, "aead") {
			t.Errorf("Sprintf(%q, key) = %q, want REDACTED", verb, got)
		}
	}
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		got := fmt.Sprintf(verb, struct{ Key *signing.MasterKey }{m})
		if !strings.Contains(got, "REDACTED") || strings.Contains(got, "aead") {
			t.Errorf("Sprintf(%q, struct{key}) = %q, want REDACTED", verb, got)
		}
	}

	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("loaded", "master_key", m, slog.Any("any", m), slog.Group("g", "key", m))
	got := buf.String()
	if n := strings.Count(got, `"REDACTED"`); n != 3 {
		t.Errorf("JSON log = %s, want REDACTED three times, got %d", got, n)
	}
	for _, secret := range []string{hex.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw)} {
		if strings.Contains(got, secret) {
			t.Errorf("JSON log = %s holds the key", got)
		}
	}
}

func TestMasterKeyTag(t *testing.T) {
	a, again, b := newMasterKey(t, 1), newMasterKey(t, 1), newMasterKey(t, 2)
	tag := a.Tag("cursor", []byte("page"))
	if len(tag) != 32 {
		t.Fatalf("Tag() = %d bytes, want 32", len(tag))
	}
	if !bytes.Equal(tag, again.Tag("cursor", []byte("page"))) {
		t.Errorf("Tag() differs between two processes holding the same key, want equal")
	}
	for name, other := range map[string][]byte{
		"another key":     b.Tag("cursor", []byte("page")),
		"another purpose": a.Tag("cursor2", []byte("page")),
		"another value":   a.Tag("cursor", []byte("pagf")),
		// The purpose and the value are kept apart, so neither can be
		// moved into the other.
		"moved separator": a.Tag("cursorp", []byte("age")),
	} {
		if bytes.Equal(tag, other) {
			t.Errorf("Tag() with %s = the same tag, want different", name)
		}
	}
}
