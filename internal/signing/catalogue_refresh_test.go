package signing_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// gatedReader is a store whose loads, once they have read, can be held
// until the test opens their gate: loads can be made to answer in any order.
type gatedReader struct {
	store.Reader
	mu    sync.Mutex
	gate  chan struct{} // when not nil, a load started now waits for it to close
	loads int
}

// hold makes every load started from now on wait, once it has read, until
// the returned gate is closed.
func (r *gatedReader) hold() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gate = make(chan struct{})
	return r.gate
}

// pass lets loads started from now on answer at once.
func (r *gatedReader) pass() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gate = nil
}

func (r *gatedReader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loads
}

func (r *gatedReader) AllProducts(ctx context.Context) ([]licentia.Product, error) {
	r.mu.Lock()
	r.loads++
	gate := r.gate
	r.mu.Unlock()
	ps, err := r.Reader.AllProducts(ctx)
	if gate == nil {
		return ps, err
	}
	select {
	case <-gate:
		return ps, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestCatalogueOlderLoadNeverInstalled: a load that started before a
// product was created, and answers after a later load, must not put the
// older data back. The product's genuine key would then answer
// licence_key_invalid until a miss may reload, a second later. The later
// refresh is the one the process that created the product runs at once,
// or the one a key that did not verify runs. The fake clock stands
// still, so nothing else reloads; synctest.Wait returns once every
// goroutine is blocked, which tells the test a load is held or waiting.
func TestCatalogueOlderLoadNeverInstalled(t *testing.T) {
	for _, tt := range []struct {
		name  string
		later func(c *signing.Catalogue, key string) error
	}{
		{"refresh after a product change", func(c *signing.Catalogue, _ string) error {
			return c.Refresh(context.Background())
		}},
		{"reload on a key that did not verify", func(c *signing.Catalogue, key string) error {
			_, _, err := c.VerifyLicenceKey(context.Background(), key)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t)
				r := &gatedReader{Reader: f.st}
				c := signing.NewCatalogue(r, f.clk, slog.New(slog.DiscardHandler))
				if err := c.Refresh(t.Context()); err != nil {
					t.Fatalf("Refresh() error = %v", err)
				}
				f.clk.Advance(time.Second) // a miss may reload

				gate := r.hold()
				earlier := make(chan error, 1)
				go func() { earlier <- c.Refresh(context.Background()) }()
				synctest.Wait() // the earlier load has read: no product yet
				r.pass()

				p, priv := f.createProduct(t, "photo-editor", "PHOTO")
				licenceID := licentia.NewID()
				key := licenceKey(t, p, priv, licenceID)
				later := make(chan error, 1)
				go func() { later <- tt.later(c, key) }()
				synctest.Wait()
				close(gate)
				if err := <-earlier; err != nil {
					t.Errorf("earlier Refresh() error = %v", err)
				}
				if err := <-later; err != nil {
					t.Errorf("later call error = %v", err)
				}
				wantValid(t, c, "after both loads", key, p, licenceID)
			})
		})
	}
}

// TestCatalogueRefreshSharesLoads: calls made while a load runs wait for
// it, then share one load that started after all of them.
func TestCatalogueRefreshSharesLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		r := &gatedReader{Reader: f.st}
		c := signing.NewCatalogue(r, f.clk, slog.New(slog.DiscardHandler))
		gate := r.hold()
		go c.Refresh(context.Background())
		synctest.Wait()
		r.pass()

		p, priv := f.createProduct(t, "photo-editor", "PHOTO")
		licenceID := licentia.NewID()
		key := licenceKey(t, p, priv, licenceID)
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if err := c.Refresh(context.Background()); err != nil {
					t.Errorf("Refresh() error = %v", err)
				}
			})
		}
		synctest.Wait()
		close(gate)
		wg.Wait()
		if got := r.count(); got != 2 {
			t.Errorf("loads = %d, want 2: the held one and one shared by the five calls", got)
		}
		wantValid(t, c, "after the shared load", key, p, licenceID)
	})
}

// TestCatalogueRefreshCancelled: a call whose context ends stops waiting,
// and a load that failed only because its caller's context ended is not
// shared as a failure: a caller that waited for it runs its own.
func TestCatalogueRefreshCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		r := &gatedReader{Reader: f.st}
		c := signing.NewCatalogue(r, f.clk, slog.New(slog.DiscardHandler))
		first := r.hold()
		go c.Refresh(context.Background())
		synctest.Wait()

		// Both wait for the first load; whichever runs the next one is
		// held there too, and the other waits for it.
		ctx, cancel := context.WithCancel(context.Background())
		cancelled, kept := make(chan error, 1), make(chan error, 1)
		go func() { cancelled <- c.Refresh(ctx) }()
		go func() { kept <- c.Refresh(context.Background()) }()
		synctest.Wait()
		next := r.hold()
		close(first)
		synctest.Wait()
		r.pass()
		cancel()
		if err := <-cancelled; !errors.Is(err, context.Canceled) {
			t.Errorf("Refresh(cancelled) error = %v, want context.Canceled", err)
		}
		close(next)
		if err := <-kept; err != nil {
			t.Errorf("Refresh() error = %v, want nil", err)
		}
	})
}
