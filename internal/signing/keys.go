package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// signingKeyAAD binds a sealed signing key to its product and key id.
func signingKeyAAD(productID, keyID string) []byte {
	return []byte("licentia/signing-key/v1\x00" + productID + "\x00" + keyID)
}

// NewProductKey generates a signing key for productID from the OS random
// source and seals its private part under m.
func NewProductKey(m *MasterKey, productID string, now time.Time) (*licentia.ProductKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate signing key: %w", err)
	}
	id := licentia.NewID()
	return &licentia.ProductKey{
		ID:                id,
		ProductID:         productID,
		PublicKey:         pub,
		Fingerprint:       sdk.Fingerprint(pub),
		Sealed:            m.Seal(priv.Seed(), signingKeyAAD(productID, id)),
		MasterFingerprint: m.Fingerprint(),
		Status:            licentia.KeyCurrent,
		CreatedAt:         now,
	}, nil
}

// OpenProductKey unseals a product key's private part and checks that it
// matches the public key recorded beside it.
func OpenProductKey(m *MasterKey, k *licentia.ProductKey) (ed25519.PrivateKey, error) {
	seed, err := m.Open(k.Sealed, signingKeyAAD(k.ProductID, k.ID))
	if err != nil {
		return nil, err
	}
	if len(seed) != ed25519.SeedSize {
		return nil, ErrUnseal
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if !priv.Public().(ed25519.PublicKey).Equal(k.PublicKey) {
		return nil, ErrUnseal
	}
	return priv, nil
}

// Reseal re-encrypts a product key from one master key to another, for
// master-key rotation.
func Reseal(from, to *MasterKey, k *licentia.ProductKey) ([]byte, error) {
	seed, err := from.Open(k.Sealed, signingKeyAAD(k.ProductID, k.ID))
	if err != nil {
		return nil, fmt.Errorf("reseal key %s of product %s: %w", k.ID, k.ProductID, err)
	}
	return to.Seal(seed, signingKeyAAD(k.ProductID, k.ID)), nil
}
