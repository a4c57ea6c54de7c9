package signing_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/sdk"
)

// base is the time tests create keys at; the package reads no clock.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newProductKey(t testing.TB, m *signing.MasterKey, productID string) *licentia.ProductKey {
	t.Helper()
	k, err := signing.NewProductKey(m, productID, base)
	if err != nil {
		t.Fatalf("NewProductKey() error = %v", err)
	}
	return k
}

func openProductKey(t testing.TB, m *signing.MasterKey, k *licentia.ProductKey) ed25519.PrivateKey {
	t.Helper()
	priv, err := signing.OpenProductKey(m, k)
	if err != nil {
		t.Fatalf("OpenProductKey() error = %v", err)
	}
	return priv
}

func TestNewProductKey(t *testing.T) {
	m := newMasterKey(t, 1)
	k := newProductKey(t, m, "photo-editor")
	if k.ProductID != "photo-editor" || k.Status != licentia.KeyCurrent || !k.CreatedAt.Equal(base) || k.RetiredAt != nil {
		t.Errorf("NewProductKey() = product %q, status %q, created %v, retired %v, want photo-editor, current, %v, nil",
			k.ProductID, k.Status, k.CreatedAt, k.RetiredAt, base)
	}
	if k.MasterFingerprint != m.Fingerprint() || k.Fingerprint != sdk.Fingerprint(k.PublicKey) {
		t.Errorf("NewProductKey() fingerprints = %q, master %q, want %q, %q",
			k.Fingerprint, k.MasterFingerprint, sdk.Fingerprint(k.PublicKey), m.Fingerprint())
	}
	priv := openProductKey(t, m, k)
	if !priv.Public().(ed25519.PublicKey).Equal(k.PublicKey) {
		t.Errorf("OpenProductKey() public key = %x, want %x", priv.Public(), k.PublicKey)
	}
	if bytes.Contains(k.Sealed, priv.Seed()) || bytes.Contains(k.Sealed, priv) {
		t.Errorf("NewProductKey() sealed blob holds the private key")
	}
	if other := newProductKey(t, m, "photo-editor"); other.ID == k.ID || other.PublicKey.Equal(k.PublicKey) {
		t.Errorf("NewProductKey() twice = the same id or key, want fresh ones")
	}
}

func TestOpenProductKeyRefuses(t *testing.T) {
	m := newMasterKey(t, 1)
	k := newProductKey(t, m, "photo-editor")
	otherProduct := newProductKey(t, m, "notes")

	// Product A's sealed blob copied onto product B's row (same key id, so
	// only the product id differs) does not open.
	moved := *otherProduct
	moved.ID = k.ID
	moved.Sealed = k.Sealed
	moved.PublicKey = k.PublicKey

	// The blob of another key id of the same product does not open either.
	renamed := *k
	renamed.ID = licentia.NewID()

	tampered := *k
	tampered.PublicKey = bytes.Clone(k.PublicKey)
	tampered.PublicKey[0] ^= 0x01

	damaged := *k
	damaged.Sealed = bytes.Clone(k.Sealed)
	damaged.Sealed[len(damaged.Sealed)-1] ^= 0x01

	for _, tt := range []struct {
		name string
		m    *signing.MasterKey
		k    *licentia.ProductKey
	}{
		{"another product", m, &moved},
		{"another key id", m, &renamed},
		{"tampered public key", m, &tampered},
		{"damaged sealed blob", m, &damaged},
		{"another master key", newMasterKey(t, 2), k},
	} {
		t.Run(tt.name, func(t *testing.T) {
			priv, err := signing.OpenProductKey(tt.m, tt.k)
			if !errors.Is(err, signing.ErrUnseal) || priv != nil {
				t.Errorf("OpenProductKey() = %x, %v, want nil, ErrUnseal", priv, err)
			}
		})
	}
}

// TestSealedKeyPlace pins the place a signing key is sealed to: keys at rest
// were sealed with this aad, so changing it would lock every product out of
// its keys. A blob of the wrong size in the right place still does not open.
func TestSealedKeyPlace(t *testing.T) {
	m := newMasterKey(t, 1)
	k := newProductKey(t, m, "photo-editor")
	seed := openProductKey(t, m, k).Seed()
	aad := []byte("licentia/signing-key/v1\x00photo-editor\x00" + k.ID)
	if got, err := m.Open(k.Sealed, aad); err != nil || !bytes.Equal(got, seed) {
		t.Errorf("Open(sealed, pinned aad) = %x, %v, want the seed", got, err)
	}

	short := *k
	short.Sealed = m.Seal(seed[:16], aad)
	if got, err := signing.OpenProductKey(m, &short); !errors.Is(err, signing.ErrUnseal) {
		t.Errorf("OpenProductKey(16-byte seed) = %x, %v, want ErrUnseal", got, err)
	}
}

func mustReseal(t testing.TB, from, to *signing.MasterKey, k *licentia.ProductKey) []byte {
	t.Helper()
	sealed, err := signing.Reseal(from, to, k)
	if err != nil {
		t.Fatalf("Reseal() error = %v", err)
	}
	return sealed
}

func TestReseal(t *testing.T) {
	from, to := newMasterKey(t, 1), newMasterKey(t, 2)
	k := newProductKey(t, from, "photo-editor")
	want := openProductKey(t, from, k)

	moved := *k
	moved.Sealed = mustReseal(t, from, to, k)
	moved.MasterFingerprint = to.Fingerprint()
	if got := openProductKey(t, to, &moved); !got.Equal(want) {
		t.Errorf("OpenProductKey(new master) = another private key")
	}
	if _, err := signing.OpenProductKey(from, &moved); !errors.Is(err, signing.ErrUnseal) {
		t.Errorf("OpenProductKey(old master, resealed) error = %v, want ErrUnseal", err)
	}
	// The original row is untouched: Reseal returns a new blob.
	if got := openProductKey(t, from, k); !got.Equal(want) {
		t.Errorf("OpenProductKey(old master, original) = another private key")
	}

	if _, err := signing.Reseal(to, from, k); !errors.Is(err, signing.ErrUnseal) {
		t.Errorf("Reseal(wrong from) error = %v, want ErrUnseal", err)
	}
}
