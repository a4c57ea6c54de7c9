package storetest

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newProduct returns a product of orgID with one current key, created at base.
func newProduct(orgID, id, prefix string) *licentia.Product {
	return &licentia.Product{
		ID: id, OrgID: orgID, Name: "Product " + id, KeyPrefix: prefix, CurrentMajor: 1,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: base, UpdatedAt: base,
		Keys: []licentia.ProductKey{newProductKey(id, licentia.KeyCurrent, base)},
	}
}

// newProductKey returns a fresh Ed25519 key of productID with a random
// sealed blob that holds a zero byte and invalid UTF-8, so only a byte for
// byte round trip returns it unchanged.
func newProductKey(productID string, status licentia.KeyStatus, created time.Time) licentia.ProductKey {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err)
	}
	return licentia.ProductKey{
		ID: licentia.NewID(), ProductID: productID, PublicKey: pub, Fingerprint: "sha256:" + rand.Text(),
		Sealed: sealedBlob(), MasterFingerprint: "sha256:master", Status: status, CreatedAt: created,
	}
}

func sealedBlob() []byte {
	b := make([]byte, 72)
	rand.Read(b)
	b[0], b[1], b[2] = 0, 0xff, 0xc3
	return b
}

// createProducts stores products in one transaction.
func createProducts(t *testing.T, s store.Store, products ...*licentia.Product) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, p := range products {
			if err := tx.CreateProduct(t.Context(), p); err != nil {
				return err
			}
		}
		return nil
	})
}

// createProduct runs CreateProduct in its own transaction.
func createProduct(t *testing.T, s store.Store, p *licentia.Product) error {
	t.Helper()
	return s.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateProduct(t.Context(), p) })
}

// readProduct reads a product that must exist.
func readProduct(t *testing.T, r store.Reader, orgID, id string) *licentia.Product {
	t.Helper()
	p, err := r.Product(t.Context(), orgID, id)
	if err != nil {
		t.Fatalf("Product(%s) error = %v", id, err)
	}
	return p
}

func testProducts(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	// Written newest first. Two share created_at, so the id breaks the tie,
	// byte for byte: "app-2" sorts before "app1", which a collation ignoring
	// punctuation would put the other way round.
	newest := newProduct(o.ID, "zed", "ZED")
	newest.CreatedAt, newest.UpdatedAt = base.Add(time.Hour), base.Add(2*time.Hour)
	second := newProduct(o.ID, "app1", "APPONE")
	first := newProduct(o.ID, "app-2", "APPTWO")
	// A key history written out of order: retired, previous and current,
	// two of them sharing created_at.
	current := first.Keys[0]
	current.ID = seqID(3)
	retired := newProductKey(first.ID, licentia.KeyRetired, base.Add(-2*time.Hour))
	retired.RetiredAt = ptr(base.Add(-time.Hour))
	previous := newProductKey(first.ID, licentia.KeyPrevious, base)
	previous.ID = seqID(2)
	first.Keys = []licentia.ProductKey{current, retired, previous}
	theirs := newProduct(other.ID, "app0", "THEIRS")
	theirs.CreatedAt = base.Add(30 * time.Minute)
	createProducts(t, s, newest, second, first)
	createProducts(t, s, theirs)

	wantFirst := *first
	wantFirst.Keys = []licentia.ProductKey{retired, previous, current}
	want := []licentia.Product{wantFirst, *second, *newest}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Products(ctx, o.ID)
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("Products() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		for _, p := range want {
			got, err := r.Product(ctx, o.ID, p.ID)
			if diff := cmp.Diff(&p, got); diff != "" || err != nil {
				t.Errorf("Product(%s) error = %v, mismatch (-want +got):\n%s", p.ID, err, diff)
			}
		}
		got, err = r.Products(ctx, other.ID)
		if diff := cmp.Diff([]licentia.Product{*theirs}, got); diff != "" || err != nil {
			t.Errorf("Products(other) error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		got, err = r.AllProducts(ctx)
		if diff := cmp.Diff([]licentia.Product{wantFirst, *second, *theirs, *newest}, got); diff != "" || err != nil {
			t.Errorf("AllProducts() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		_, err = r.Product(ctx, o.ID, "missing")
		wantCode(t, "Product(missing)", err, licentia.CodeProductNotFound)
	})

	none := createOrganization(t, s, "none")
	if got, err := s.Products(ctx, none.ID); got != nil || err != nil {
		t.Errorf("Products(no products) = %+v, %v, want nil, nil", got, err)
	}
}

// testProductIsolation asks for another organization's product by id: it
// answers exactly like a missing one, and is left unchanged.
func testProductIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	theirProduct := newProduct(theirs.ID, "their-app", "THEIRS")
	createProducts(t, s, theirProduct)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		_, missing := r.Product(ctx, mine.ID, "missing")
		wantCode(t, "Product(missing)", missing, licentia.CodeProductNotFound)
		_, err := r.Product(ctx, mine.ID, theirProduct.ID)
		wantSame(t, "Product(theirs)", err, missing)
		if got, err := r.Products(ctx, mine.ID); len(got) != 0 || err != nil {
			t.Errorf("Products(mine) = %+v, %v, want none", got, err)
		}
		if all, since, err := r.CountProducts(ctx, mine.ID, base); all != 0 || since != 0 || err != nil {
			t.Errorf("CountProducts(mine) = %d, %d, %v, want 0, 0, nil", all, since, err)
		}
	})

	update := func(id string) error {
		p := newProduct(mine.ID, id, "MINE")
		p.Name = "Taken over"
		return s.InTx(ctx, func(tx store.Tx) error { return tx.UpdateProduct(ctx, p) })
	}
	missing := update("missing")
	wantCode(t, "UpdateProduct(missing)", missing, licentia.CodeProductNotFound)
	wantSame(t, "UpdateProduct(theirs)", update(theirProduct.ID), missing)

	remove := func(id string) error {
		return s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteProduct(ctx, mine.ID, id) })
	}
	missing = remove("missing")
	wantCode(t, "DeleteProduct(missing)", missing, licentia.CodeProductNotFound)
	wantSame(t, "DeleteProduct(theirs)", remove(theirProduct.ID), missing)

	if diff := cmp.Diff(theirProduct, readProduct(t, s, theirs.ID, theirProduct.ID)); diff != "" {
		t.Errorf("Product(theirs) after another organization's writes mismatch (-want +got):\n%s", diff)
	}
}

func testCountProducts(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	boundary := base.Add(-24 * time.Hour)
	var products []*licentia.Product
	for i, created := range []time.Time{boundary.Add(-time.Millisecond), boundary, base.Add(-time.Hour), base} {
		p := newProduct(o.ID, "app"+string(rune('a'+i)), "APP"+string(rune('A'+i)))
		p.CreatedAt, p.UpdatedAt = created, created
		products = append(products, p)
	}
	createProducts(t, s, append(products, newProduct(other.ID, "theirs", "THEIRS"))...)

	// A product created exactly at since counts as created since.
	for _, tt := range []struct {
		name  string
		since time.Time
		want  int64
	}{
		{"before all", base.Add(-48 * time.Hour), 4},
		{"1 ms before boundary", boundary.Add(-time.Millisecond), 4},
		{"boundary", boundary, 3},
		{"boundary in another zone", boundary.In(time.FixedZone("UTC-7", -7*3600)), 3},
		{"1 ms after boundary", boundary.Add(time.Millisecond), 2},
		{"base", base, 1},
		{"after all", base.Add(time.Millisecond), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				all, since, err := r.CountProducts(t.Context(), o.ID, tt.since)
				if all != 4 || since != tt.want || err != nil {
					t.Errorf("CountProducts() = %d, %d, %v, want 4, %d, nil", all, since, err, tt.want)
				}
			})
		})
	}
	empty := createOrganization(t, s, "empty")
	if all, since, err := s.CountProducts(t.Context(), empty.ID, base); all != 0 || since != 0 || err != nil {
		t.Errorf("CountProducts(no products) = %d, %d, %v, want 0, 0, nil", all, since, err)
	}
}

func testUpdateProduct(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	p := newProduct(o.ID, "app", "APP")
	createProducts(t, s, p)

	// Only name, current_major, machines_per_seat, the heartbeat interval
	// and updated_at change.
	changed := *p
	changed.Name, changed.CurrentMajor, changed.MachinesPerSeat = "Renamed ✓", 3, 7
	changed.UpdatedAt = base.Add(time.Hour)
	tried := changed
	tried.KeyPrefix, tried.LicenceSigningDomain, tried.VerdictSigningDomain = "OTHER", "l.example.org", "v.example.org"
	tried.CreatedAt, tried.Keys = base.Add(time.Minute), nil
	inTx(t, s, func(tx store.Tx) error { return tx.UpdateProduct(ctx, &tried) })

	if diff := cmp.Diff(&changed, readProduct(t, s, o.ID, p.ID)); diff != "" {
		t.Errorf("Product() after UpdateProduct() mismatch (-want +got):\n%s", diff)
	}

	// The heartbeat interval is set, then cleared.
	for _, interval := range []*int64{new(int64(86400)), nil} {
		changed.HeartbeatIntervalSeconds = interval
		inTx(t, s, func(tx store.Tx) error { return tx.UpdateProduct(ctx, &changed) })
		if diff := cmp.Diff(&changed, readProduct(t, s, o.ID, p.ID)); diff != "" {
			t.Errorf("Product() after setting the interval to %v mismatch (-want +got):\n%s", interval, diff)
		}
	}
}

func testProductKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	p, sibling := newProduct(o.ID, "app", "APP"), newProduct(o.ID, "sibling", "SIB")
	createProducts(t, s, p, sibling)
	old := p.Keys[0]
	next := newProductKey(p.ID, licentia.KeyCurrent, base.Add(time.Hour))
	retiredAt := base.Add(2 * time.Hour)

	setStatus := func(productID, keyID string, status licentia.KeyStatus, at *time.Time) error {
		return s.InTx(ctx, func(tx store.Tx) error { return tx.SetProductKeyStatus(ctx, productID, keyID, status, at) })
	}
	// Rotate, then retire the old key, then bring it back: retired_at is set
	// and cleared with the status.
	for _, step := range []struct {
		name      string
		status    licentia.KeyStatus
		retiredAt *time.Time
	}{
		{"previous", licentia.KeyPrevious, nil},
		{"retired", licentia.KeyRetired, &retiredAt},
		{"previous again", licentia.KeyPrevious, nil},
	} {
		t.Run(step.name, func(t *testing.T) {
			inTx(t, s, func(tx store.Tx) error {
				if step.name == "previous" {
					if err := tx.AddProductKey(ctx, &next); err != nil {
						return err
					}
				}
				return tx.SetProductKeyStatus(ctx, p.ID, old.ID, step.status, step.retiredAt)
			})
			wantOld := old
			wantOld.Status, wantOld.RetiredAt = step.status, step.retiredAt
			got := readProduct(t, s, o.ID, p.ID)
			if diff := cmp.Diff([]licentia.ProductKey{wantOld, next}, got.Keys); diff != "" {
				t.Errorf("Product().Keys mismatch (-want +got):\n%s", diff)
			}
		})
	}

	missing := setStatus(p.ID, licentia.NewID(), licentia.KeyRetired, &retiredAt)
	wantCode(t, "SetProductKeyStatus(missing)", missing, licentia.CodePublicKeyNotFound)
	// A key is changed only through its own product.
	wantSame(t, "SetProductKeyStatus(sibling's key)",
		setStatus(p.ID, sibling.Keys[0].ID, licentia.KeyRetired, &retiredAt), missing)
	if diff := cmp.Diff(sibling, readProduct(t, s, o.ID, sibling.ID)); diff != "" {
		t.Errorf("Product(sibling) mismatch (-want +got):\n%s", diff)
	}
}

func testResealProductKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	p := newProduct(o.ID, "app", "APP")
	p.Keys = append(p.Keys, newProductKey(p.ID, licentia.KeyPrevious, base.Add(time.Millisecond)))
	createProducts(t, s, p)

	resealed := p.Keys[0]
	resealed.Sealed, resealed.MasterFingerprint = sealedBlob(), "sha256:new-master"
	inTx(t, s, func(tx store.Tx) error {
		return tx.ResealProductKey(ctx, resealed.ID, resealed.Sealed, resealed.MasterFingerprint)
	})
	want := *p
	want.Keys = []licentia.ProductKey{resealed, p.Keys[1]}
	if diff := cmp.Diff(&want, readProduct(t, s, o.ID, p.ID)); diff != "" {
		t.Errorf("Product() after ResealProductKey() mismatch (-want +got):\n%s", diff)
	}

	err := s.InTx(ctx, func(tx store.Tx) error {
		return tx.ResealProductKey(ctx, licentia.NewID(), sealedBlob(), "sha256:new-master")
	})
	wantCode(t, "ResealProductKey(missing)", err, licentia.CodePublicKeyNotFound)
}

// testDeleteProduct removes a product with its keys.
func testDeleteProduct(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	gone, kept := newProduct(o.ID, "gone", "GONE"), newProduct(o.ID, "kept", "KEPT")
	gone.Keys = append(gone.Keys, newProductKey(gone.ID, licentia.KeyPrevious, base))
	createProducts(t, s, gone, kept)

	remove := func() error {
		return s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteProduct(ctx, o.ID, gone.ID) })
	}
	if err := remove(); err != nil {
		t.Fatalf("DeleteProduct() error = %v", err)
	}
	_, err := s.Product(ctx, o.ID, gone.ID)
	wantCode(t, "Product(deleted)", err, licentia.CodeProductNotFound)
	wantCode(t, "DeleteProduct(deleted)", remove(), licentia.CodeProductNotFound)
	got, err := s.AllProducts(ctx)
	if diff := cmp.Diff([]licentia.Product{*kept}, got); diff != "" || err != nil {
		t.Errorf("AllProducts() error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	// Its keys went with it.
	err = s.InTx(ctx, func(tx store.Tx) error {
		return tx.SetProductKeyStatus(ctx, gone.ID, gone.Keys[0].ID, licentia.KeyRetired, &base)
	})
	wantCode(t, "SetProductKeyStatus(deleted product's key)", err, licentia.CodePublicKeyNotFound)
	if all, _, err := s.CountProducts(ctx, o.ID, base); all != 1 || err != nil {
		t.Errorf("CountProducts() = %d, %v, want 1, nil", all, err)
	}
}

// testProductRace creates products with the same id, or the same prefix, in
// two organizations at once: exactly one is created and the others answer
// conflict.
func testProductRace(t *testing.T, s store.Store) {
	const racers = 8
	for _, tt := range []struct {
		name    string
		product func(orgID string, i int) *licentia.Product
	}{
		{"id", func(orgID string, i int) *licentia.Product {
			return newProduct(orgID, "app", "APP"+string(rune('A'+i)))
		}},
		{"key_prefix", func(orgID string, i int) *licentia.Product {
			return newProduct(orgID, "app-"+string(rune('a'+i)), "APP")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			orgs := []*licentia.Organization{createOrganization(t, s, "acme-"+tt.name), createOrganization(t, s, "other-"+tt.name)}
			errs := make([]error, racers)
			var wg sync.WaitGroup
			for i := range racers {
				p := tt.product(orgs[i%len(orgs)].ID, i)
				wg.Go(func() { errs[i] = s.InTx(ctx, func(tx store.Tx) error { return tx.CreateProduct(ctx, p) }) })
			}
			wg.Wait()
			won := 0
			for i, err := range errs {
				if err == nil {
					won++
					continue
				}
				wantCode(t, fmt.Sprintf("racer %d: CreateProduct()", i), err, licentia.CodeConflict)
			}
			if won != 1 {
				t.Errorf("%d racers created the product, want 1", won)
			}
			created := 0
			for _, o := range orgs {
				ps, err := s.Products(ctx, o.ID)
				if err != nil {
					t.Fatalf("Products() error = %v", err)
				}
				created += len(ps)
			}
			if created != 1 {
				t.Errorf("Products() lists %d products, want 1", created)
			}
		})
	}
}
