// Package signing owns the product signing keys: Ed25519 keys generated from
// the OS random source, sealed at rest with AES-256-GCM under the master
// key, and used to derive licence keys and sign verdicts through the sdk
// package's formats.
package signing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// MasterKeySize is the size of the master key: 32 random bytes in a file.
const MasterKeySize = 32

// MasterKey encrypts every secret at rest. It is never printed or logged:
// String, GoString and LogValue say REDACTED.
type MasterKey struct {
	_           [0]func() // not comparable
	aead        cipher.AEAD
	tagKey      []byte // Tag's HMAC key
	fingerprint string
}

// String returns REDACTED.
func (*MasterKey) String() string { return "REDACTED" }

// GoString returns REDACTED, so %#v does not print the cipher's fields.
func (*MasterKey) GoString() string { return "REDACTED" }

// LogValue keeps the key out of structured logs.
func (*MasterKey) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// Fingerprint names the key without revealing it: the first 8 bytes of a
// SHA-256 over a fixed label and the key, in hex. The database records it so
// a process holding another key refuses to start.
func (m *MasterKey) Fingerprint() string { return m.fingerprint }

// NewMasterKey builds a MasterKey from its 32 bytes. The AES-256-GCM key is
// derived with HKDF, so the raw key is used for nothing else.
func NewMasterKey(raw []byte) (*MasterKey, error) {
	if len(raw) != MasterKeySize {
		return nil, fmt.Errorf("master key must be %d bytes, not %d", MasterKeySize, len(raw))
	}
	sealing, err := hkdf.Key(sha256.New, raw, nil, "licentia/master-key/sealing/v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(sealing)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	tagKey, err := hkdf.Key(sha256.New, raw, nil, "licentia/master-key/tag/v1", 32)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("licentia/master-key/fingerprint/v1\x00"), raw...))
	return &MasterKey{aead: aead, tagKey: tagKey, fingerprint: hex.EncodeToString(sum[:8])}, nil
}

// Tag returns the HMAC-SHA256 of data for purpose, under a key derived from
// the master key. Every process of a service shares the master key, so a
// value one process hands out with its tag (a list cursor) is checked by
// any other; purpose keeps the tags of one use from passing for another's.
func (m *MasterKey) Tag(purpose string, data []byte) []byte {
	h := hmac.New(sha256.New, m.tagKey)
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(data)
	return h.Sum(nil)
}

// LoadMasterKey reads a master key file.
func LoadMasterKey(path string) (*MasterKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read master key: %w", err)
	}
	m, err := NewMasterKey(raw)
	if err != nil {
		return nil, fmt.Errorf("read master key %s: %w", path, err)
	}
	return m, nil
}

// GenerateMasterKeyFile writes 32 random bytes to path with mode 0600,
// refusing to overwrite an existing file (the error wraps fs.ErrExist). The
// file is synced before it returns, because the caller records the key's
// fingerprint in the database next and a key lost to a crash would lock
// every secret sealed under it. A failed write removes the file, so a short
// key is never left behind to block the next attempt.
func GenerateMasterKeyFile(path string) (*MasterKey, error) {
	raw := make([]byte, MasterKeySize)
	rand.Read(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("generate master key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("generate master key: %s already exists: %w", path, fs.ErrExist)
		}
		return nil, fmt.Errorf("generate master key: %w", err)
	}
	_, err = f.Write(raw)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("generate master key: %w", err)
	}
	return NewMasterKey(raw)
}

// Seal encrypts plaintext with AES-256-GCM; aad binds the ciphertext to its
// place (a product id, an endpoint id), so it cannot be moved to another.
// The result is nonce || ciphertext || tag.
func (m *MasterKey) Seal(plaintext, aad []byte) []byte {
	nonce := make([]byte, m.aead.NonceSize(), m.aead.NonceSize()+len(plaintext)+m.aead.Overhead())
	rand.Read(nonce)
	return m.aead.Seal(nonce, nonce, plaintext, aad)
}

// ErrUnseal is returned when a ciphertext does not open: another master key,
// another place, or damage.
var ErrUnseal = errors.New("sealed secret does not open under this master key")

// Open decrypts what Seal produced with the same aad.
func (m *MasterKey) Open(sealed, aad []byte) ([]byte, error) {
	n := m.aead.NonceSize()
	if len(sealed) < n+m.aead.Overhead() {
		return nil, ErrUnseal
	}
	out, err := m.aead.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, ErrUnseal
	}
	return out, nil
}
