package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

var start = time.Date(2026, 11, 22, 1, 16, 13, 0, time.UTC)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), storetest.SQLiteFile(t))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func createOrg(t *testing.T, st store.Store, slug string) *licentia.Organization {
	t.Helper()
	o := &licentia.Organization{ID: licentia.NewID(), Name: slug, Slug: slug, Plan: licentia.PlanBusiness, CreatedAt: start}
	if err := st.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateOrganization(t.Context(), o) }); err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	return o
}

// storeKey stores a new key of orgID; change may alter the record first.
func storeKey(t *testing.T, st store.Store, orgID string, scopes []licentia.Scope, change func(*licentia.APIKey)) (string, *licentia.APIKey) {
	t.Helper()
	key, prefix := auth.NewKey()
	k := &licentia.APIKey{
		ID: licentia.NewID(), OrgID: orgID, Prefix: prefix, Hash: auth.Hash(key.Reveal()),
		Scopes: scopes, CreatedAt: start,
	}
	if change != nil {
		change(k)
	}
	if err := st.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateAPIKey(t.Context(), k) }); err != nil {
		t.Fatalf("CreateAPIKey() error = %v", err)
	}
	return key.Reveal(), k
}

func TestAuthenticate(t *testing.T) {
	st := openStore(t)
	clk := clock.NewFake(start)
	a := auth.NewAuthenticator(st, clk)
	org := createOrg(t, st, "acme")
	other := createOrg(t, st, "other")
	scopes := []licentia.Scope{licentia.ScopeLicencesRead, licentia.ScopeProductsWrite}

	good, goodRec := storeKey(t, st, org.ID, scopes, nil)
	otherKey, otherRec := storeKey(t, st, other.ID, []licentia.Scope{licentia.ScopeAuditRead}, nil)
	revokedAt := start.Add(-time.Minute)
	revoked, _ := storeKey(t, st, org.ID, scopes, func(k *licentia.APIKey) { k.RevokedAt = &revokedAt })
	expiredAt := start.Add(-time.Millisecond)
	expired, _ := storeKey(t, st, org.ID, scopes, func(k *licentia.APIKey) { k.ExpiresAt = &expiredAt })
	unknown, _ := auth.NewKey()
	// Right prefix, wrong secret: the lookup finds a row, the hash refuses it.
	last := "a"
	if strings.HasSuffix(good, last) {
		last = "b"
	}
	wrongSecret := good[:len(good)-1] + last

	t.Run("accepted", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			header string
			want   *auth.Caller
		}{
			{"key", "Bearer " + good, &auth.Caller{
				OrgID: org.ID, Actor: licentia.APIKeyActor(goodRec.ID), KeyID: goodRec.ID, Prefix: goodRec.Prefix, Scopes: scopes,
			}},
			{"another organization's key", "Bearer " + otherKey, &auth.Caller{
				OrgID: other.ID, Actor: licentia.APIKeyActor(otherRec.ID), KeyID: otherRec.ID, Prefix: otherRec.Prefix,
				Scopes: []licentia.Scope{licentia.ScopeAuditRead},
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got, err := a.Authenticate(t.Context(), tt.header)
				if err != nil {
					t.Fatalf("Authenticate() error = %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Authenticate() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			header string
		}{
			{"missing", ""},
			{"no scheme", good},
			{"basic scheme", "Basic " + good},
			{"bearer without key", "Bearer "},
			{"malformed", "Bearer licentia_nope"},
			{"two spaces", "Bearer  " + good},
			{"trailing space", "Bearer " + good + " "},
			{"unknown", "Bearer " + unknown.Reveal()},
			{"wrong secret", "Bearer " + wrongSecret},
			{"revoked", "Bearer " + revoked},
			{"expired", "Bearer " + expired},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got, err := a.Authenticate(t.Context(), tt.header)
				if got != nil || licentia.ErrorCode(err) != licentia.CodeUnauthorized {
					t.Errorf("Authenticate(%q) = %+v, %v, want nil, unauthorized", tt.header, got, err)
				}
			})
		}
	})
}

// TestAuthenticateExpiryAndRevocation checks that a key stops working the
// moment it expires or is revoked: every request reads the key's row.
func TestAuthenticateExpiryAndRevocation(t *testing.T) {
	st := openStore(t)
	clk := clock.NewFake(start)
	a := auth.NewAuthenticator(st, clk)
	org := createOrg(t, st, "acme")
	expiresAt := start.Add(time.Hour)
	key, rec := storeKey(t, st, org.ID, []licentia.Scope{licentia.ScopeLicencesRead}, func(k *licentia.APIKey) { k.ExpiresAt = &expiresAt })
	check := func(when string, want licentia.Code) {
		t.Helper()
		_, err := a.Authenticate(t.Context(), "Bearer "+key)
		if got := codeOf(err); got != want {
			t.Errorf("Authenticate() %s = %v, want %q", when, err, want)
		}
	}
	check("before its expiry", "")
	clk.Set(expiresAt.Add(-time.Millisecond))
	check("1ms before its expiry", "")
	clk.Set(expiresAt)
	check("at its expiry", licentia.CodeUnauthorized)

	clk.Set(start)
	check("back before its expiry", "")
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		_, err := tx.RevokeAPIKey(t.Context(), org.ID, rec.ID, start)
		return err
	})
	if err != nil {
		t.Fatalf("RevokeAPIKey() error = %v", err)
	}
	check("after its revocation", licentia.CodeUnauthorized)
}

func codeOf(err error) licentia.Code {
	if err == nil {
		return ""
	}
	return licentia.ErrorCode(err)
}

func TestCallerHasScope(t *testing.T) {
	c := &auth.Caller{Scopes: []licentia.Scope{licentia.ScopeLicencesRead}}
	if !c.HasScope(licentia.ScopeLicencesRead) {
		t.Error("HasScope(licences:read) = false, want true")
	}
	if c.HasScope(licentia.ScopeLicencesWrite) {
		t.Error("HasScope(licences:write) = true, want false")
	}
}
