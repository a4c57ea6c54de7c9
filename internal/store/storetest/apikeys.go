package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func testAPIKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	// Written newest first; two share created_at, so the id breaks the tie.
	newest, second, first := newAPIKey(o.ID), newAPIKey(o.ID), newAPIKey(o.ID)
	newest.CreatedAt = base.Add(time.Millisecond)
	newest.ExpiresAt = ptr(base.Add(24 * time.Hour))
	newest.Scopes = []licentia.Scope{licentia.ScopeAuditRead}
	first.ID, second.ID = seqID(1), seqID(2)
	second.RevokedAt = ptr(base.Add(time.Minute))
	createAPIKeys(t, s, newest, second, first)

	got, err := s.APIKeys(ctx, o.ID)
	if err != nil {
		t.Fatalf("APIKeys() error = %v", err)
	}
	if diff := cmp.Diff([]licentia.APIKey{*first, *second, *newest}, got); diff != "" {
		t.Errorf("APIKeys() mismatch (-want +got):\n%s", diff)
	}
	for _, k := range []*licentia.APIKey{first, second, newest} {
		got, err := s.APIKey(ctx, o.ID, k.ID)
		if err != nil {
			t.Fatalf("APIKey() error = %v", err)
		}
		if diff := cmp.Diff(k, got); diff != "" {
			t.Errorf("APIKey() mismatch (-want +got):\n%s", diff)
		}
		got, err = s.APIKeyByPrefix(ctx, k.Prefix)
		if err != nil {
			t.Fatalf("APIKeyByPrefix() error = %v", err)
		}
		if diff := cmp.Diff(k, got); diff != "" {
			t.Errorf("APIKeyByPrefix() mismatch (-want +got):\n%s", diff)
		}
	}

	_, err = s.APIKey(ctx, o.ID, licentia.NewID())
	wantCode(t, "APIKey(missing)", err, licentia.CodeNotFound)
	_, err = s.APIKeyByPrefix(ctx, "lic_missing")
	wantCode(t, "APIKeyByPrefix(missing)", err, licentia.CodeNotFound)
}

func testAPIKeyConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	taken := newAPIKey(o.ID)
	createAPIKeys(t, s, taken)
	samePrefix, sameID := newAPIKey(o.ID), newAPIKey(o.ID)
	samePrefix.Prefix, sameID.ID = taken.Prefix, taken.ID
	for _, tt := range []struct {
		name string
		key  *licentia.APIKey
	}{
		{"prefix", samePrefix},
		{"id", sameID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateAPIKey(ctx, tt.key) })
			wantCode(t, "CreateAPIKey()", err, licentia.CodeConflict)
		})
	}
	got, err := s.APIKeys(ctx, o.ID)
	if err != nil {
		t.Fatalf("APIKeys() error = %v", err)
	}
	if diff := cmp.Diff([]licentia.APIKey{*taken}, got); diff != "" {
		t.Errorf("APIKeys() after conflicts mismatch (-want +got):\n%s", diff)
	}
}

func testCountLiveAPIKeys(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	live, soon, atBase, past, revoked := newAPIKey(o.ID), newAPIKey(o.ID), newAPIKey(o.ID), newAPIKey(o.ID), newAPIKey(o.ID)
	soon.ExpiresAt = ptr(base.Add(time.Millisecond))
	atBase.ExpiresAt = ptr(base)
	past.ExpiresAt = ptr(base.Add(-time.Hour))
	revoked.RevokedAt = ptr(base.Add(-2 * time.Hour))
	createAPIKeys(t, s, live, soon, atBase, past, revoked, newAPIKey(other.ID))

	// A key expiring at now is no longer live, as licentia.APIKey.IsLive says.
	for _, tt := range []struct {
		name string
		now  time.Time
		want int64
	}{
		{"before any expiry", base.Add(-2 * time.Hour), 4},
		{"1 ms before base", base.Add(-time.Millisecond), 3},
		{"base", base, 2},
		{"base in another zone", base.In(time.FixedZone("UTC-7", -7*3600)), 2},
		{"1 ms after base", base.Add(time.Millisecond), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				got, err := r.CountLiveAPIKeys(t.Context(), o.ID, tt.now)
				if got != tt.want || err != nil {
					t.Errorf("CountLiveAPIKeys() = %d, %v, want %d, nil", got, err, tt.want)
				}
			})
		})
	}
}

// revoke runs RevokeAPIKey in its own transaction.
func revoke(t *testing.T, s store.Store, orgID, id string, at time.Time) (bool, error) {
	t.Helper()
	var changed bool
	err := s.InTx(t.Context(), func(tx store.Tx) error {
		var err error
		changed, err = tx.RevokeAPIKey(t.Context(), orgID, id, at)
		return err
	})
	return changed, err
}

func testRevokeAPIKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	k, theirs := newAPIKey(o.ID), newAPIKey(other.ID)
	createAPIKeys(t, s, k, theirs)

	at := base.Add(time.Minute)
	for i, want := range []bool{true, false} {
		changed, err := revoke(t, s, o.ID, k.ID, at.Add(time.Duration(i)*time.Hour))
		if changed != want || err != nil {
			t.Errorf("RevokeAPIKey() #%d = %v, %v, want %v, nil", i+1, changed, err, want)
		}
	}
	got, err := s.APIKey(ctx, o.ID, k.ID)
	if err != nil {
		t.Fatalf("APIKey() error = %v", err)
	}
	if got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
		t.Errorf("APIKey().RevokedAt = %v, want %v (the first revocation's)", got.RevokedAt, at)
	}

	_, missing := revoke(t, s, o.ID, licentia.NewID(), at)
	wantCode(t, "RevokeAPIKey(missing)", missing, licentia.CodeNotFound)
	changed, err := revoke(t, s, o.ID, theirs.ID, at)
	if changed {
		t.Errorf("RevokeAPIKey(another organization's) changed = true, want false")
	}
	wantSame(t, "RevokeAPIKey(another organization's)", err, missing)
	if got, err := s.APIKey(ctx, other.ID, theirs.ID); err != nil || got.RevokedAt != nil {
		t.Errorf("APIKey(theirs) = %+v, %v; want it still live", got, err)
	}
}

// testLastPlace races for a plan's last place: however many transactions
// check and create at once, exactly one may win.
func testLastPlace(t *testing.T, s store.Store) {
	const racers = 8
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				if err := tx.LockOrganization(ctx, o.ID); err != nil {
					return err
				}
				n, err := tx.CountLiveAPIKeys(ctx, o.ID, base)
				if err != nil || n >= 1 {
					return err
				}
				return tx.CreateAPIKey(ctx, newAPIKey(o.ID))
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("racer %d: InTx() error = %v", i, err)
		}
	}
	if n, err := s.CountLiveAPIKeys(ctx, o.ID, base); n != 1 || err != nil {
		t.Errorf("CountLiveAPIKeys() = %d, %v, want 1, nil", n, err)
	}
}
