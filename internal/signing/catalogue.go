package signing

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/cache"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

// RefreshInterval is how often a process reloads the product catalogue. The
// contract gives other processes 30 seconds to see a rotation or a
// retirement; reloading every 10 leaves room for a slow or failed load.
const RefreshInterval = 10 * time.Second

// Catalogue is every product of every organization with the public keys it
// accepts, held in memory to verify licence keys without a query. The
// process that changes a product refreshes it at once; others within
// RefreshInterval.
type Catalogue struct {
	store store.Reader
	clock clock.Clock
	log   *slog.Logger

	mu       sync.RWMutex
	verifier *sdk.Verifier
	products map[string]*licentia.Product
	loaded   time.Time // when the installed load started

	loadMu  sync.Mutex // guards what follows
	started uint64     // loads started so far: each load's number
	running *load      // the load in progress, nil when none
	last    *load      // the load that finished last

	verified *cache.Map[string, verifiedKey]
}

// verifiedKey is a licence key that verified, and the public key that
// signed it.
type verifiedKey struct {
	productID, licenceID string
	pub                  ed25519.PublicKey
}

// maxVerified bounds the keys remembered as verified: about 250 bytes
// each, 12 MB in all. Applications check the same key again and again, and
// the verification is most of the CPU of a status check.
const maxVerified = 50_000

// missRefresh is how often a key that fails verification may reload the
// catalogue early: a product created or rotated on another process a moment
// ago is found at once, and a stream of bad keys costs at most one load a
// second.
const missRefresh = time.Second

// NewCatalogue returns an empty catalogue; call Refresh before use.
func NewCatalogue(st store.Reader, clk clock.Clock, log *slog.Logger) *Catalogue {
	v, _ := sdk.NewVerifier()
	return &Catalogue{store: st, clock: clk, log: log, verifier: v, products: map[string]*licentia.Product{},
		verified: cache.New[string, verifiedKey](maxVerified)}
}

// load is one reload of the catalogue. Callers that wait for it share its
// outcome once done is closed.
type load struct {
	seq  uint64
	done chan struct{}
	err  error
	// cancelled: err came from the context of the caller that ran the
	// load, which says nothing about the store to the callers that waited.
	cancelled bool
}

// Refresh reloads every product from the store and returns once a load
// that started after the call has been installed: a caller that has just
// changed a product, or holds a key that did not verify, must see data
// read after that moment. Loads run one at a time, so a load that started
// earlier, and read older data, can never install it over a newer one's; a
// product created a moment ago would vanish again and its genuine keys
// answer licence_key_invalid. A call that finds a load running waits for
// it, then shares the next load with every other call that waited.
func (c *Catalogue) Refresh(ctx context.Context) error {
	c.loadMu.Lock()
	want := c.started + 1
	for {
		if l := c.last; l != nil && l.seq >= want && !l.cancelled {
			c.loadMu.Unlock()
			return l.err
		}
		l := c.running
		if l == nil {
			return c.runLoad(ctx)
		}
		c.loadMu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return fmt.Errorf("refresh catalogue: %w", ctx.Err())
		}
		c.loadMu.Lock()
	}
}

// runLoad starts a load, runs it and installs its result. Called with
// c.loadMu held and no load running; it unlocks c.loadMu.
func (c *Catalogue) runLoad(ctx context.Context) error {
	c.started++
	l := &load{seq: c.started, done: make(chan struct{})}
	c.running = l
	c.loadMu.Unlock()
	defer func() {
		c.loadMu.Lock()
		c.running, c.last = nil, l
		c.loadMu.Unlock()
		close(l.done)
	}()
	l.err = c.reload(ctx)
	l.cancelled = l.err != nil && ctx.Err() != nil
	return l.err
}

// reload reads every product and installs them. Only runLoad calls it, one
// load at a time.
func (c *Catalogue) reload(ctx context.Context) error {
	started := c.clock.Now()
	ps, err := c.store.AllProducts(ctx)
	if err != nil {
		return fmt.Errorf("refresh catalogue: %w", err)
	}
	byID := make(map[string]*licentia.Product, len(ps))
	entries := make([]sdk.Product, 0, len(ps))
	for i := range ps {
		p := &ps[i]
		byID[p.ID] = p
		entries = append(entries, VerifierProduct(p))
	}
	v, err := sdk.NewVerifier(entries...)
	if err != nil {
		return fmt.Errorf("refresh catalogue: %w", err)
	}
	c.mu.Lock()
	c.verifier, c.products, c.loaded = v, byID, started
	c.mu.Unlock()
	return nil
}

// Run refreshes the catalogue every RefreshInterval until ctx is done. A
// failed refresh keeps the last catalogue and is logged.
func (c *Catalogue) Run(ctx context.Context) {
	t := time.NewTicker(RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.Refresh(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("catalogue refresh failed", "error", err.Error())
			}
		}
	}
}

// VerifierProduct is what offline verification needs of a product: the keys
// it accepts (current and previous, never retired).
func VerifierProduct(p *licentia.Product) sdk.Product {
	out := sdk.Product{ID: p.ID, KeyPrefix: p.KeyPrefix, LicenceDomain: p.LicenceSigningDomain, VerdictDomain: p.VerdictSigningDomain}
	for _, k := range p.AcceptedKeys() {
		out.PublicKeys = append(out.PublicKeys, k.PublicKey)
	}
	return out
}

// VerifyLicenceKey checks a licence key and returns its product and licence
// id, or the contract's licence_key_invalid or licence_wrong_product. A key
// that does not verify reloads the catalogue first when the last load
// started missRefresh ago or more; the reload starts after the miss, so it
// sees a product created before the key was sent.
func (c *Catalogue) VerifyLicenceKey(ctx context.Context, key string) (*licentia.Product, string, error) {
	p, id, err := c.verify(key)
	if err == nil {
		return p, id, nil
	}
	c.mu.RLock()
	stale := c.clock.Now().Sub(c.loaded) >= missRefresh
	c.mu.RUnlock()
	if !stale {
		return nil, "", err
	}
	if rerr := c.Refresh(ctx); rerr != nil {
		c.log.Warn("catalogue refresh failed", "error", rerr.Error())
		return nil, "", err
	}
	return c.verify(key)
}

// verify checks key against the current catalogue. A key seen verified
// before is accepted without its signature check only while its product
// still accepts the public key that signed it, so a retirement takes
// effect with the next catalogue load as it does for new keys. Only the
// exact string that verified is remembered: any edit misses.
func (c *Catalogue) verify(key string) (*licentia.Product, string, error) {
	c.mu.RLock()
	v, products := c.verifier, c.products
	c.mu.RUnlock()
	if hit, ok := c.verified.Get(key); ok {
		if p := products[hit.productID]; p != nil && accepts(p, hit.pub) {
			return p, hit.licenceID, nil
		}
		c.verified.Delete(key)
	}
	vk, err := v.VerifyLicenceKey(key)
	switch {
	case errors.Is(err, sdk.ErrLicenceWrongProduct):
		return nil, "", licentia.Errorf(licentia.CodeLicenceWrongProduct, "The licence key belongs to another product.")
	case err != nil:
		return nil, "", licentia.Errorf(licentia.CodeLicenceKeyInvalid, "The licence key is not valid.")
	}
	c.verified.Put(key, verifiedKey{productID: vk.ProductID, licenceID: vk.LicenceID, pub: vk.PublicKey})
	return products[vk.ProductID], vk.LicenceID, nil
}

// accepts reports whether p accepts licence keys signed with pub: its
// current or a previous key, never a retired one.
func accepts(p *licentia.Product, pub ed25519.PublicKey) bool {
	for _, k := range p.Keys {
		if (k.Status == licentia.KeyCurrent || k.Status == licentia.KeyPrevious) && pub.Equal(k.PublicKey) {
			return true
		}
	}
	return false
}

// Product returns a product by id from the catalogue, or nil.
func (c *Catalogue) Product(id string) *licentia.Product {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.products[id]
}
