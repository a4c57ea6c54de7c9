package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testIsolation reads as one organization while another holds a row of every
// kind: none of them shows, and asking for one by id answers exactly as for
// an id that does not exist.
func testIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := createOrganization(t, s, "mine")
	theirs := createOrganization(t, s, "theirs")
	myKey, theirKey := newAPIKey(mine.ID), newAPIKey(theirs.ID)
	member := func(orgID, email string, created time.Time) *licentia.Member {
		return &licentia.Member{ID: licentia.NewID(), OrgID: orgID, Email: email, Role: licentia.RoleOwner, CreatedAt: created}
	}
	myMember, myLaterMember := member(mine.ID, "me@example.com", base), member(mine.ID, "x@example.com", base.Add(time.Hour))
	theirInvitation := &licentia.Invitation{ID: licentia.NewID(), OrgID: theirs.ID, Email: "y@example.com",
		Role: licentia.RoleAdmin, ExpiresAt: base.Add(time.Hour), CreatedAt: base}
	myAudit := newAuditEntry(mine.ID, `{"mine":true}`)
	inTx(t, s, func(tx store.Tx) error {
		return errors.Join(tx.CreateMember(ctx, myMember), tx.CreateMember(ctx, myLaterMember),
			tx.CreateMember(ctx, member(theirs.ID, "x@example.com", base)), tx.CreateInvitation(ctx, theirInvitation))
	})
	createAPIKeys(t, s, myKey, theirKey)
	appendAudit(t, s, myAudit, newAuditEntry(theirs.ID, `{"mine":false}`))

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		_, missing := r.APIKey(ctx, mine.ID, licentia.NewID())
		wantCode(t, "APIKey(missing)", missing, licentia.CodeNotFound)
		_, err := r.APIKey(ctx, mine.ID, theirKey.ID)
		wantSame(t, "APIKey(theirs)", err, missing)

		keys, err := r.APIKeys(ctx, mine.ID)
		if diff := cmp.Diff([]licentia.APIKey{*myKey}, keys); diff != "" || err != nil {
			t.Errorf("APIKeys() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		if n, err := r.CountLiveAPIKeys(ctx, mine.ID, base); n != 1 || err != nil {
			t.Errorf("CountLiveAPIKeys() = %d, %v, want 1, nil", n, err)
		}
		members, err := r.Members(ctx, mine.ID)
		if diff := cmp.Diff([]licentia.Member{*myMember, *myLaterMember}, members); diff != "" || err != nil {
			t.Errorf("Members() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		if invs, err := r.PendingInvitations(ctx, mine.ID, base); len(invs) != 0 || err != nil {
			t.Errorf("PendingInvitations() = %+v, %v; want none", invs, err)
		}
		entries, err := r.OrganizationAudit(ctx, mine.ID)
		if diff := cmp.Diff([]licentia.AuditEntry{*myAudit}, entries); diff != "" || err != nil {
			t.Errorf("OrganizationAudit() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	})
}

// testMalformedIDs gives ids that are not stored ids, as a caller that forgot
// to validate would: they answer like missing ones, never with an internal
// error, and leave a transaction usable.
func testMalformedIDs(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	k := newAPIKey(o.ID)
	createAPIKeys(t, s, k)
	p := newProduct(o.ID, "acme-app", "ACME")
	createProducts(t, s, p)
	// PostgreSQL refuses NUL bytes and invalid UTF-8 in text, failing the
	// statement; SQLite stores them. Both must answer not found.
	for _, tt := range []struct{ name, id string }{
		{"empty", ""},
		{"word", "not-a-uuid"},
		{"not hex", "0000000g-0000-4000-8000-000000000000"},
		{"upper case", strings.ToUpper(o.ID)},
		{"upper case product", strings.ToUpper(p.ID)},
		{"sql", "' OR '1'='1"},
		{"nul", p.ID + "\x00"},
		{"invalid utf-8", "acme-\xff\xfe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				checkMalformedReads(t, r, o.ID, k.ID, tt.id)
				checkMalformedProductReads(t, r, p, tt.id)
			})
			err := s.InTx(t.Context(), func(tx store.Tx) error {
				checkMalformedWrites(t, tx, o.ID, k.ID, tt.id)
				checkMalformedProductWrites(t, tx, p, tt.id)
				return errRollback
			})
			if !errors.Is(err, errRollback) {
				t.Errorf("InTx() error = %v, want %v", err, errRollback)
			}
		})
	}
}

func checkMalformedReads(t *testing.T, r store.Reader, orgID, keyID, bad string) {
	ctx := t.Context()
	_, err := r.Organization(ctx, bad)
	wantCode(t, "Organization()", err, licentia.CodeNotFound)
	_, err = r.OrganizationBySlug(ctx, bad)
	wantCode(t, "OrganizationBySlug()", err, licentia.CodeNotFound)
	_, err = r.APIKeyByPrefix(ctx, bad)
	wantCode(t, "APIKeyByPrefix()", err, licentia.CodeNotFound)
	_, err = r.APIKey(ctx, orgID, bad)
	wantCode(t, "APIKey(org, bad)", err, licentia.CodeNotFound)
	_, err = r.APIKey(ctx, bad, keyID)
	wantCode(t, "APIKey(bad, key)", err, licentia.CodeNotFound)
	if n, err := r.CountLiveAPIKeys(ctx, bad, base); n != 0 || err != nil {
		t.Errorf("CountLiveAPIKeys() = %d, %v, want 0, nil", n, err)
	}
	lists := map[string]func() (int, error){
		"APIKeys":            func() (int, error) { v, err := r.APIKeys(ctx, bad); return len(v), err },
		"Members":            func() (int, error) { v, err := r.Members(ctx, bad); return len(v), err },
		"PendingInvitations": func() (int, error) { v, err := r.PendingInvitations(ctx, bad, base); return len(v), err },
		"OrganizationAudit":  func() (int, error) { v, err := r.OrganizationAudit(ctx, bad); return len(v), err },
	}
	for name, list := range lists {
		if n, err := list(); n != 0 || err != nil {
			t.Errorf("%s() = %d rows, %v, want none, nil", name, n, err)
		}
	}
	// The reads above must not have spoilt a transaction.
	if _, err := r.Organization(ctx, orgID); err != nil {
		t.Errorf("Organization(valid) after malformed reads error = %v", err)
	}
}

func checkMalformedWrites(t *testing.T, tx store.Tx, orgID, keyID, bad string) {
	ctx := t.Context()
	// A missing organization locks nothing; the read that follows a lock
	// answers not found.
	if err := tx.LockOrganization(ctx, bad); err != nil {
		t.Errorf("LockOrganization() error = %v, want nil", err)
	}
	_, err := tx.RevokeAPIKey(ctx, orgID, bad, base)
	wantCode(t, "RevokeAPIKey(org, bad)", err, licentia.CodeNotFound)
	_, err = tx.RevokeAPIKey(ctx, bad, keyID, base)
	wantCode(t, "RevokeAPIKey(bad, key)", err, licentia.CodeNotFound)
	if n, err := tx.CountLiveAPIKeys(ctx, orgID, base); n != 1 || err != nil {
		t.Errorf("CountLiveAPIKeys(valid) after malformed writes = %d, %v, want 1, nil", n, err)
	}
}

func checkMalformedProductReads(t *testing.T, r store.Reader, p *licentia.Product, bad string) {
	ctx := t.Context()
	_, err := r.Product(ctx, p.OrgID, bad)
	wantCode(t, "Product(org, bad)", err, licentia.CodeProductNotFound)
	_, err = r.Product(ctx, bad, p.ID)
	wantCode(t, "Product(bad, product)", err, licentia.CodeProductNotFound)
	if v, err := r.Products(ctx, bad); len(v) != 0 || err != nil {
		t.Errorf("Products() = %d rows, %v, want none, nil", len(v), err)
	}
	if all, since, err := r.CountProducts(ctx, bad, base); all != 0 || since != 0 || err != nil {
		t.Errorf("CountProducts() = %d, %d, %v, want 0, 0, nil", all, since, err)
	}
	for _, field := range []store.ProductField{store.FieldID, store.FieldKeyPrefix} {
		if use, err := r.ProductNameUse(ctx, field, bad); use != store.NameFree || err != nil {
			t.Errorf("ProductNameUse(%s) = %v, %v, want %v, nil", field, use, err, store.NameFree)
		}
	}
	// The reads above must not have spoilt a transaction.
	if _, err := r.Product(ctx, p.OrgID, p.ID); err != nil {
		t.Errorf("Product(valid) after malformed reads error = %v", err)
	}
}

func checkMalformedProductWrites(t *testing.T, tx store.Tx, p *licentia.Product, bad string) {
	ctx := t.Context()
	badID, badOrg := *p, *p
	badID.ID, badOrg.OrgID = bad, bad
	wantCode(t, "UpdateProduct(org, bad)", tx.UpdateProduct(ctx, &badID), licentia.CodeProductNotFound)
	wantCode(t, "UpdateProduct(bad, product)", tx.UpdateProduct(ctx, &badOrg), licentia.CodeProductNotFound)
	wantCode(t, "DeleteProduct(org, bad)", tx.DeleteProduct(ctx, p.OrgID, bad), licentia.CodeProductNotFound)
	wantCode(t, "DeleteProduct(bad, product)", tx.DeleteProduct(ctx, bad, p.ID), licentia.CodeProductNotFound)
	keyID := p.Keys[0].ID
	err := tx.SetProductKeyStatus(ctx, p.ID, bad, licentia.KeyRetired, &base)
	wantCode(t, "SetProductKeyStatus(product, bad)", err, licentia.CodePublicKeyNotFound)
	err = tx.SetProductKeyStatus(ctx, bad, keyID, licentia.KeyRetired, &base)
	wantCode(t, "SetProductKeyStatus(bad, key)", err, licentia.CodePublicKeyNotFound)
	err = tx.ResealProductKey(ctx, bad, []byte{1}, "sha256:master")
	wantCode(t, "ResealProductKey(bad)", err, licentia.CodePublicKeyNotFound)
	got, err := tx.Product(ctx, p.OrgID, p.ID)
	if diff := cmp.Diff(p, got); diff != "" || err != nil {
		t.Errorf("Product(valid) after malformed writes error = %v, mismatch (-want +got):\n%s", err, diff)
	}
}
