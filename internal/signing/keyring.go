package signing

import (
	"crypto/ed25519"
	"sync"

	"github.com/licentia/licentia/internal/licentia"
)

// Keyring holds the master key, when one could be loaded, and the private
// keys it has opened. Opened keys are cached in memory: a key id's private
// key never changes, and reading it again would cost a decryption per
// signature.
type Keyring struct {
	master *MasterKey
	mu     sync.RWMutex
	opened map[string]ed25519.PrivateKey
}

// NewKeyring returns a Keyring; master may be nil when no master key could be
// loaded, and then every operation that needs it answers 503.
func NewKeyring(master *MasterKey) *Keyring {
	return &Keyring{master: master, opened: map[string]ed25519.PrivateKey{}}
}

var errNotConfigured = licentia.Errorf(licentia.CodeSigningKeysNotConfigured, "Signing keys are not configured on this service: the master key cannot be loaded.")

// Master returns the master key, or signing_keys_not_configured.
func (r *Keyring) Master() (*MasterKey, error) {
	if r.master == nil {
		return nil, errNotConfigured
	}
	return r.master, nil
}

// Private returns the private key of k, or product_unavailable when it
// cannot be opened (no master key, another master key, damage).
func (r *Keyring) Private(k *licentia.ProductKey) (ed25519.PrivateKey, error) {
	r.mu.RLock()
	priv, ok := r.opened[k.ID]
	r.mu.RUnlock()
	if ok {
		return priv, nil
	}
	if r.master == nil {
		return nil, &licentia.Error{Code: licentia.CodeProductUnavailable, Message: "The product cannot sign now.", Err: errNotConfigured}
	}
	priv, err := OpenProductKey(r.master, k)
	if err != nil {
		return nil, &licentia.Error{Code: licentia.CodeProductUnavailable, Message: "The product cannot sign now.", Err: err}
	}
	r.mu.Lock()
	r.opened[k.ID] = priv
	r.mu.Unlock()
	return priv, nil
}

// CurrentPrivate returns the private part of the product's current key.
func (r *Keyring) CurrentPrivate(p *licentia.Product) (ed25519.PrivateKey, error) {
	k := p.CurrentKey()
	if k == nil {
		return nil, licentia.Errorf(licentia.CodeProductUnavailable, "The product cannot sign now.")
	}
	return r.Private(k)
}

// Status says whether the product can sign now: "ok" or "unavailable".
func (r *Keyring) Status(p *licentia.Product) string {
	if _, err := r.CurrentPrivate(p); err != nil {
		return "unavailable"
	}
	return "ok"
}
