package signing

import (
	"crypto/ed25519"
	"log/slog"
	"sync"

	"github.com/licentia/licentia/internal/licentia"
)

// Keyring holds the master keys this process knows, and the private keys it
// has opened. Opened keys are cached in memory: a key id's private key never
// changes, and reading it again would cost a decryption per signature.
// Because it holds private keys, it prints and logs as REDACTED.
//
// After a master-key rotation the database names a new key: a Keyring made
// with NewKeyringFile then reads its key file again, so a running process
// follows a rotation without a restart.
type Keyring struct {
	mu      sync.RWMutex
	current *MasterKey
	masters map[string]*MasterKey // by fingerprint, every key seen
	path    string
	opened  map[string]ed25519.PrivateKey
}

// String returns REDACTED; fmt would otherwise print every opened key.
func (*Keyring) String() string { return "REDACTED" }

// GoString returns REDACTED, for %#v.
func (*Keyring) GoString() string { return "REDACTED" }

// LogValue keeps the opened keys out of structured logs.
func (*Keyring) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// NewKeyring returns a Keyring; master may be nil when no master key could be
// loaded, and then every operation that needs it answers 503.
func NewKeyring(master *MasterKey) *Keyring {
	return NewKeyringFile(master, "")
}

// NewKeyringFile is NewKeyring for a master key read from path, which is read
// again when the database names a key this process does not know.
func NewKeyringFile(master *MasterKey, path string) *Keyring {
	r := &Keyring{current: master, masters: map[string]*MasterKey{}, path: path, opened: map[string]ed25519.PrivateKey{}}
	if master != nil {
		r.masters[master.Fingerprint()] = master
	}
	return r
}

var errNotConfigured = licentia.Errorf(licentia.CodeSigningKeysNotConfigured, "Signing keys are not configured on this service: the master key cannot be loaded.")

// Master returns the current master key, or signing_keys_not_configured.
func (r *Keyring) Master() (*MasterKey, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.current == nil {
		return nil, errNotConfigured
	}
	return r.current, nil
}

// SealingKey returns the master key new secrets are sealed under: the one
// whose fingerprint the database records (recorded; "" when none is), read
// again from the key file after a rotation. Without it: 503
// signing_keys_not_configured.
func (r *Keyring) SealingKey(recorded string) (*MasterKey, error) {
	m, err := r.Master()
	if err != nil || recorded == "" || m.Fingerprint() == recorded {
		return m, err
	}
	m = r.lookup(recorded)
	if m == nil {
		return nil, errNotConfigured
	}
	r.mu.Lock()
	r.current = m
	r.mu.Unlock()
	return m, nil
}

// lookup returns the master key with fingerprint fp, reading the key file
// again when it is not known yet.
func (r *Keyring) lookup(fp string) *MasterKey {
	r.mu.RLock()
	m, ok := r.masters[fp]
	r.mu.RUnlock()
	if ok || r.path == "" {
		return m
	}
	m, err := LoadMasterKey(r.path)
	if err != nil || m.Fingerprint() != fp {
		return nil
	}
	r.mu.Lock()
	r.masters[fp] = m
	r.mu.Unlock()
	return m
}

const errCannotSign = "The product cannot sign now."

// Private returns the private key of k, or product_unavailable when it
// cannot be opened (no master key, a master key this process cannot find,
// damage).
func (r *Keyring) Private(k *licentia.ProductKey) (ed25519.PrivateKey, error) {
	r.mu.RLock()
	priv, ok := r.opened[k.ID]
	r.mu.RUnlock()
	if ok {
		return priv, nil
	}
	m := r.lookup(k.MasterFingerprint)
	if m == nil {
		if m, _ = r.Master(); m == nil {
			return nil, &licentia.Error{Code: licentia.CodeProductUnavailable, Message: errCannotSign, Err: errNotConfigured}
		}
	}
	priv, err := OpenProductKey(m, k)
	if err != nil {
		return nil, &licentia.Error{Code: licentia.CodeProductUnavailable, Message: errCannotSign, Err: err}
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
		return nil, licentia.Errorf(licentia.CodeProductUnavailable, errCannotSign)
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

// MasterFor returns the master key with fingerprint fp, reading the key file
// again when it is new; without one: signing_keys_not_configured.
func (r *Keyring) MasterFor(fp string) (*MasterKey, error) {
	if m := r.lookup(fp); m != nil {
		return m, nil
	}
	return nil, errNotConfigured
}
