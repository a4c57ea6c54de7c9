package signing_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/sdk"
)

// fixture is a real SQLite store with one organization, a master key and a
// catalogue over the store.
type fixture struct {
	clk *clock.Fake
	st  store.Store
	m   *signing.MasterKey
	org *licentia.Organization
	cat *signing.Catalogue
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clk: clock.NewFake(base), st: storetest.OpenSQLite(t), m: newMasterKey(t, 1)}
	f.org = &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree, CreatedAt: base}
	f.inTx(t, func(tx store.Tx) error { return tx.CreateOrganization(t.Context(), f.org) })
	f.cat = signing.NewCatalogue(f.st, f.clk, slog.New(slog.DiscardHandler))
	return f
}

func (f *fixture) inTx(t *testing.T, fn func(tx store.Tx) error) {
	t.Helper()
	if err := f.st.InTx(t.Context(), fn); err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
}

func (f *fixture) refresh(t *testing.T) {
	t.Helper()
	if err := f.cat.Refresh(t.Context()); err != nil {
		t.Fatalf("Refresh() error = %v", err)
	}
}

// createProduct stores a product with a fresh current key and returns it with
// that key's private part.
func (f *fixture) createProduct(t *testing.T, id, prefix string) (*licentia.Product, ed25519.PrivateKey) {
	t.Helper()
	k := newProductKey(t, f.m, id)
	p := productWith(id, prefix, k)
	p.OrgID = f.org.ID
	f.inTx(t, func(tx store.Tx) error { return tx.CreateProduct(t.Context(), p) })
	return p, openProductKey(t, f.m, k)
}

// rotate adds a new current key to p, marking the old current one previous,
// as admin.RotateSigningKey does; it returns the new key.
func (f *fixture) rotate(t *testing.T, p *licentia.Product) (*licentia.ProductKey, ed25519.PrivateKey) {
	t.Helper()
	old := p.CurrentKey()
	k := newProductKey(t, f.m, p.ID)
	f.inTx(t, func(tx store.Tx) error {
		if err := tx.SetProductKeyStatus(t.Context(), p.ID, old.ID, licentia.KeyPrevious, nil); err != nil {
			return err
		}
		return tx.AddProductKey(t.Context(), k)
	})
	old.Status = licentia.KeyPrevious
	p.Keys = append(p.Keys, *k)
	return k, openProductKey(t, f.m, k)
}

func (f *fixture) retire(t *testing.T, p *licentia.Product, k *licentia.ProductKey) {
	t.Helper()
	at := base.Add(time.Hour)
	f.inTx(t, func(tx store.Tx) error {
		return tx.SetProductKeyStatus(t.Context(), p.ID, k.ID, licentia.KeyRetired, &at)
	})
}

// licenceKey signs a licence key of p under priv, as the service derives it.
func licenceKey(t testing.TB, p *licentia.Product, priv ed25519.PrivateKey, licenceID string) string {
	t.Helper()
	key, err := sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, licenceID)
	if err != nil {
		t.Fatalf("SignLicenceKey() error = %v", err)
	}
	return key
}

// wantValid fails unless key verifies for product p and licence licenceID.
func wantValid(t *testing.T, c *signing.Catalogue, name, key string, p *licentia.Product, licenceID string) {
	t.Helper()
	got, id, err := c.VerifyLicenceKey(context.Background(), key)
	if err != nil || got == nil || got.ID != p.ID || got.OrgID != p.OrgID || id != licenceID {
		t.Errorf("VerifyLicenceKey(%s) = product %s, %q, %v, want product %s, licence %s", name, productID(got), id, err, p.ID, licenceID)
	}
}

// productID names p in messages, which need not print its keys.
func productID(p *licentia.Product) string {
	if p == nil {
		return "<nil>"
	}
	return p.ID
}

// wantInvalid fails unless key answers the licentia code want.
func wantInvalid(t *testing.T, c *signing.Catalogue, name, key string, want licentia.Code) {
	t.Helper()
	got, id, err := c.VerifyLicenceKey(context.Background(), key)
	if got != nil || id != "" {
		t.Errorf("VerifyLicenceKey(%s) = product %s, %q, want nil, \"\"", name, productID(got), id)
	}
	wantCode(t, "VerifyLicenceKey("+name+")", err, want)
}

func TestCatalogueVerifyLicenceKey(t *testing.T) {
	f := newFixture(t)
	photo, photoPriv := f.createProduct(t, "photo-editor", "PHOTO")
	notes, notesPriv := f.createProduct(t, "notes", "NT2")
	licenceID := licentia.NewID()
	photoKey := licenceKey(t, photo, photoPriv, licenceID)
	notesKey := licenceKey(t, notes, notesPriv, licenceID)

	// A catalogue never loaded loads on the first key it cannot verify.
	wantValid(t, f.cat, "before Refresh", photoKey, photo, licenceID)
	f.refresh(t)

	wantValid(t, f.cat, "photo", photoKey, photo, licenceID)
	wantValid(t, f.cat, "notes", notesKey, notes, licenceID)
	wantValid(t, f.cat, "lower case, no dashes", strings.ToLower(strings.ReplaceAll(photoKey, "-", "")), photo, licenceID)
	if got := f.cat.Product(photo.ID); got == nil || got.ID != photo.ID || len(got.Keys) != 1 {
		t.Errorf("Product(%s) = %s, want it with its key", photo.ID, productID(got))
	}
	if got := f.cat.Product("missing"); got != nil {
		t.Errorf("Product(missing) = %s, want nil", got.ID)
	}

	// The prefix is not signed: notes' valid payload behind photo's prefix
	// is recognised as belonging to notes.
	_, body, _ := strings.Cut(notesKey, "_")
	wantInvalid(t, f.cat, "notes payload behind PHOTO", "PHOTO_"+body, licentia.CodeLicenceWrongProduct)

	// The same payload signed by a key no product accepts.
	_, stranger, _ := ed25519.GenerateKey(nil)
	edited := []byte(photoKey)
	edited[len(edited)-10] ^= 'A' ^ 'B'
	for _, tt := range []struct{ name, key string }{
		{"empty", ""},
		{"garbage", "garbage"},
		{"prefix only", "PHOTO_"},
		{"unknown prefix", "ZZZ_" + strings.SplitN(photoKey, "_", 2)[1]},
		{"edited", string(edited)},
		{"unknown signer", licenceKey(t, photo, stranger, licenceID)},
		{"another domain", mustSign(t, photoPriv, "other.example.com", photo.KeyPrefix, photo.ID, licenceID)},
	} {
		wantInvalid(t, f.cat, tt.name, tt.key, licentia.CodeLicenceKeyInvalid)
	}
}

func mustSign(t testing.TB, priv ed25519.PrivateKey, domain, prefix, productID, licenceID string) string {
	t.Helper()
	key, err := sdk.SignLicenceKey(priv, domain, prefix, productID, licenceID)
	if err != nil {
		t.Fatalf("SignLicenceKey() error = %v", err)
	}
	return key
}

// TestCatalogueRotation follows a key from current through previous to
// retired. The catalogue is a cache: each change shows only after Refresh,
// which another process runs on its timer.
func TestCatalogueRotation(t *testing.T) {
	f := newFixture(t)
	p, oldPriv := f.createProduct(t, "photo-editor", "PHOTO")
	oldKey := p.CurrentKey()
	f.refresh(t)
	licenceID := licentia.NewID()
	before := licenceKey(t, p, oldPriv, licenceID)
	wantValid(t, f.cat, "old key", before, p, licenceID)

	newKey, newPriv := f.rotate(t, p)
	after := licenceKey(t, p, newPriv, licenceID)
	if after == before {
		t.Fatal("licence keys under two signing keys are equal")
	}
	wantInvalid(t, f.cat, "new key before Refresh", after, licentia.CodeLicenceKeyInvalid)
	f.refresh(t)
	wantValid(t, f.cat, "old key, previous", before, p, licenceID)
	wantValid(t, f.cat, "new key, current", after, p, licenceID)
	if got := f.cat.Product(p.ID).CurrentKey(); got == nil || got.ID != newKey.ID {
		t.Errorf("Product().CurrentKey() is not the new key %s", newKey.ID)
	}

	f.retire(t, p, oldKey)
	wantValid(t, f.cat, "old key, retired, before Refresh", before, p, licenceID)
	f.refresh(t)
	wantInvalid(t, f.cat, "old key, retired", before, licentia.CodeLicenceKeyInvalid)
	wantValid(t, f.cat, "new key after retirement", after, p, licenceID)
}

// TestCatalogueRemembersOnlyWhatVerified checks the catalogue's memory of
// verified keys: after a key verified, every one-character edit of it is
// still refused, and the same key in lower case verifies on its own merit.
func TestCatalogueRemembersOnlyWhatVerified(t *testing.T) {
	f := newFixture(t)
	p, priv := f.createProduct(t, "photo-editor", "PHOTO")
	f.refresh(t)
	licenceID := licentia.NewID()
	key := licenceKey(t, p, priv, licenceID)
	for range 3 {
		wantValid(t, f.cat, "key", key, p, licenceID)
	}
	sep := strings.IndexByte(key, '_')
	for i := sep + 1; i < len(key); i++ {
		if key[i] == '-' {
			continue
		}
		repl := byte('A')
		if key[i] == 'A' {
			repl = 'B'
		}
		edited := key[:i] + string(repl) + key[i+1:]
		if _, _, err := f.cat.VerifyLicenceKey(context.Background(), edited); err == nil {
			t.Fatalf("edit at %d verified: %s", i, edited)
		}
	}
	wantValid(t, f.cat, "key in lower case", strings.ToLower(key), p, licenceID)
	wantValid(t, f.cat, "key again", key, p, licenceID)
}

// failingReader is a store whose AllProducts fails while failing is set.
type failingReader struct {
	store.Reader
	mu      sync.Mutex
	failing bool
}

var errStoreDown = errors.New("store down")

func (r *failingReader) setFailing(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing = v
}

func (r *failingReader) AllProducts(ctx context.Context) ([]licentia.Product, error) {
	r.mu.Lock()
	failing := r.failing
	r.mu.Unlock()
	if failing {
		return nil, errStoreDown
	}
	return r.Reader.AllProducts(ctx)
}

func TestCatalogueRefreshFailureKeepsLast(t *testing.T) {
	f := newFixture(t)
	p, priv := f.createProduct(t, "photo-editor", "PHOTO")
	r := &failingReader{Reader: f.st}
	c := signing.NewCatalogue(r, clock.System{}, slog.New(slog.DiscardHandler))
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatalf("Refresh() error = %v", err)
	}
	r.setFailing(true)
	if err := c.Refresh(t.Context()); !errors.Is(err, errStoreDown) {
		t.Errorf("Refresh(store down) error = %v, want errStoreDown", err)
	}
	licenceID := licentia.NewID()
	wantValid(t, c, "after a failed Refresh", licenceKey(t, p, priv, licenceID), p, licenceID)
}

// syncBuffer is a log destination that the Run goroutine writes while the
// test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestCatalogueRun drives Run's ticker with testing/synctest's fake clock.
// The store is opened inside the bubble, so database/sql's goroutines belong
// to it. Its queries are real file I/O, which is not durably blocking: the
// fake clock waits while a query runs and only moves once every goroutine is
// parked on a channel (Run on its ticker, database/sql on its own), so a
// refresh started by a tick always finishes before synctest.Wait returns.
func TestCatalogueRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		photo, photoPriv := f.createProduct(t, "photo-editor", "PHOTO")
		r := &failingReader{Reader: f.st}
		var logs syncBuffer
		// A clock that stands still keeps the early reload on a miss out of
		// the way: only Run's ticker reloads here.
		c := signing.NewCatalogue(r, clock.NewFake(base), slog.New(slog.NewTextHandler(&logs, nil)))
		if err := c.Refresh(t.Context()); err != nil {
			t.Fatalf("Refresh() error = %v", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			c.Run(ctx)
			close(done)
		}()

		// A product created by another process shows after the next tick,
		// not before.
		notes, notesPriv := f.createProduct(t, "notes", "NT2")
		licenceID := licentia.NewID()
		notesKey := licenceKey(t, notes, notesPriv, licenceID)
		time.Sleep(signing.RefreshInterval - time.Nanosecond)
		synctest.Wait()
		wantInvalid(t, c, "notes before the tick", notesKey, licentia.CodeLicenceKeyInvalid)
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		wantValid(t, c, "notes after the tick", notesKey, notes, licenceID)

		// A failed refresh is logged and keeps the last catalogue; the next
		// tick after the store recovers picks up changes again.
		r.setFailing(true)
		photoKey := licenceKey(t, photo, photoPriv, licenceID)
		time.Sleep(signing.RefreshInterval)
		synctest.Wait()
		if got := logs.String(); !strings.Contains(got, "catalogue refresh failed") || !strings.Contains(got, errStoreDown.Error()) {
			t.Errorf("log after a failed refresh = %q, want the failure", got)
		}
		wantValid(t, c, "photo after a failed refresh", photoKey, photo, licenceID)
		f.retire(t, photo, photo.CurrentKey())
		r.setFailing(false)
		time.Sleep(signing.RefreshInterval)
		synctest.Wait()
		wantInvalid(t, c, "photo after retirement and a tick", photoKey, licentia.CodeLicenceKeyInvalid)

		// Cancelling stops Run at once, without waiting for a tick.
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Run() still running after cancel")
		}
	})
}

// A key of a product created elsewhere a moment ago verifies once the last
// load is a second old: a miss reloads the catalogue early, at most once a
// second.
func TestCatalogueReloadsOnMiss(t *testing.T) {
	f := newFixture(t)
	f.refresh(t)
	p, priv := f.createProduct(t, "photo-editor", "PHOTO")
	licenceID := licentia.NewID()
	key := licenceKey(t, p, priv, licenceID)
	wantInvalid(t, f.cat, "within a second of the last load", key, licentia.CodeLicenceKeyInvalid)
	f.clk.Advance(time.Second)
	wantValid(t, f.cat, "a second after the last load", key, p, licenceID)
}
