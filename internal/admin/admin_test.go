package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

var start = time.Date(2026, 11, 22, 1, 16, 13, 250_000_000, time.UTC)

type fixture struct {
	st  store.Store
	clk *clock.Fake
	svc *admin.Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), storetest.SQLiteFile(t))
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewFake(start)
	return &fixture{st: st, clk: clk, svc: admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: signing.NewKeyring(nil), Logger: slog.New(slog.DiscardHandler)})}
}

func (f *fixture) org(t *testing.T, slug string, plan licentia.PlanID) *licentia.Organization {
	t.Helper()
	o, err := f.svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Org " + slug, Slug: slug, Plan: plan, OwnerEmail: "owner@" + slug + ".example",
	})
	if err != nil {
		t.Fatalf("CreateOrganization(%s) error = %v", slug, err)
	}
	return o
}

var readScopes = []licentia.Scope{licentia.ScopeLicencesRead}

func (f *fixture) key(t *testing.T, orgID string, in admin.NewAPIKey) *licentia.APIKey {
	t.Helper()
	if in.Scopes == nil {
		in.Scopes = readScopes
	}
	_, k, err := f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, orgID, in)
	if err != nil {
		t.Fatalf("CreateAPIKey() error = %v", err)
	}
	return k
}

// wantCode reports an error unless err carries code.
func wantCode(t *testing.T, what string, err error, code licentia.Code) *licentia.Error {
	t.Helper()
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code != code {
		t.Errorf("%s error = %v, want %s", what, err, code)
		return nil
	}
	return e
}

func TestCreateAPIKey(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanIndie)
	expires := time.Date(2027, 1, 2, 4, 4, 5, 123_456_789, time.FixedZone("CET", 3600))
	key, k, err := f.svc.CreateAPIKey(t.Context(), licentia.APIKeyActor("creator"), o.ID, admin.NewAPIKey{
		Name: "CI", Scopes: []licentia.Scope{licentia.ScopeLicencesWrite, licentia.ScopeAuditRead}, ExpiresAt: &expires,
	})
	if err != nil {
		t.Fatalf("CreateAPIKey() error = %v", err)
	}
	wantExpiry := time.Date(2027, 1, 2, 3, 4, 5, 123_000_000, time.UTC)
	want := &licentia.APIKey{
		ID: k.ID, OrgID: o.ID, Name: "CI", Prefix: k.Prefix, Hash: auth.Hash(key.Reveal()),
		Scopes:    []licentia.Scope{licentia.ScopeLicencesWrite, licentia.ScopeAuditRead},
		ExpiresAt: &wantExpiry, CreatedAt: start.Truncate(time.Millisecond),
	}
	if diff := cmp.Diff(want, k); diff != "" {
		t.Errorf("CreateAPIKey() key mismatch (-want +got):\n%s", diff)
	}
	if p, ok := auth.ParseKey(key.Reveal()); !ok || p != k.Prefix {
		t.Errorf("CreateAPIKey() key %q does not carry prefix %q", key.Reveal(), k.Prefix)
	}
	stored, err := f.st.APIKey(t.Context(), o.ID, k.ID)
	if err != nil {
		t.Fatalf("APIKey() error = %v", err)
	}
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("stored key mismatch (-want +got):\n%s", diff)
	}
	e := lastAudit(t, f.st, o.ID)
	wantAudit := licentia.AuditEntry{
		ID: e.ID, OrgID: o.ID, Action: licentia.AuditAPIKeyCreated, Actor: licentia.APIKeyActor("creator"),
		At: start.Truncate(time.Millisecond),
	}
	if diff := cmp.Diff(wantAudit, e, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Data" }, cmp.Ignore())); diff != "" {
		t.Errorf("audit entry mismatch (-want +got):\n%s", diff)
	}
	wantData := map[string]any{"api_key_id": k.ID, "prefix": k.Prefix, "scopes": []any{"licences:write", "audit:read"}}
	if diff := cmp.Diff(wantData, decode(t, e.Data)); diff != "" {
		t.Errorf("audit data mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(string(e.Data), key.Reveal()) {
		t.Errorf("audit data %s holds the key", e.Data)
	}
}

// TestCreateAPIKeyPlanLimit counts the keys the plan allows: live keys only,
// so an expired or revoked key frees its place.
func TestCreateAPIKeyPlanLimit(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanFree) // 2 API keys
	expiry := start.Add(time.Hour)
	expiring := f.key(t, o.ID, admin.NewAPIKey{ExpiresAt: &expiry})
	f.key(t, o.ID, admin.NewAPIKey{})

	_, _, err := f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, admin.NewAPIKey{Scopes: readScopes})
	if e := wantCode(t, "third CreateAPIKey()", err, licentia.CodePlanLimitReached); e != nil {
		want := map[string]any{"plan": "free", "resource": "api_keys", "limit": int64(2), "count": int64(2)}
		if diff := cmp.Diff(want, e.Details); diff != "" {
			t.Errorf("plan_limit_reached details mismatch (-want +got):\n%s", diff)
		}
	}
	if n := countKeys(t, f.st, o.ID); n != 2 {
		t.Errorf("keys after a refusal = %d, want 2: nothing written", n)
	}

	f.clk.Set(expiry.Add(-time.Millisecond))
	_, _, err = f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, admin.NewAPIKey{Scopes: readScopes})
	wantCode(t, "CreateAPIKey() 1ms before a key expires", err, licentia.CodePlanLimitReached)

	// The moment a key expires it stops counting.
	f.clk.Set(expiry)
	third := f.key(t, o.ID, admin.NewAPIKey{})
	_, _, err = f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, admin.NewAPIKey{Scopes: readScopes})
	wantCode(t, "fourth CreateAPIKey()", err, licentia.CodePlanLimitReached)

	// A revoked key stops counting too; revoking an expired one frees nothing.
	if _, err := f.svc.RevokeAPIKey(t.Context(), licentia.OperatorActor, o.ID, expiring.ID); err != nil {
		t.Fatalf("RevokeAPIKey(expired) error = %v", err)
	}
	_, _, err = f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, admin.NewAPIKey{Scopes: readScopes})
	wantCode(t, "CreateAPIKey() after revoking an expired key", err, licentia.CodePlanLimitReached)
	if _, err := f.svc.RevokeAPIKey(t.Context(), licentia.OperatorActor, o.ID, third.ID); err != nil {
		t.Fatalf("RevokeAPIKey() error = %v", err)
	}
	f.key(t, o.ID, admin.NewAPIKey{})

	// Another organization's keys never count.
	other := f.org(t, "other", licentia.PlanFree)
	f.key(t, other.ID, admin.NewAPIKey{})
	f.key(t, other.ID, admin.NewAPIKey{})
}

// TestCreateAPIKeyRace races 8 callers for an organization's last place:
// exactly one wins, the others get plan_limit_reached.
func TestCreateAPIKeyRace(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanFree)
	f.key(t, o.ID, admin.NewAPIKey{})

	const callers = 8
	var mu sync.Mutex
	codes := map[licentia.Code]int{}
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			<-ready
			_, _, err := f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, admin.NewAPIKey{Scopes: readScopes})
			code := licentia.Code("ok")
			if err != nil {
				code = licentia.ErrorCode(err)
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	close(ready)
	wg.Wait()
	want := map[licentia.Code]int{"ok": 1, licentia.CodePlanLimitReached: callers - 1}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("outcomes of %d racing CreateAPIKey() mismatch (-want +got):\n%s", callers, diff)
	}
	if n := countKeys(t, f.st, o.ID); n != 2 {
		t.Errorf("live keys = %d, want the plan's 2", n)
	}
	if n := countAudit(t, f.st, o.ID, licentia.AuditAPIKeyCreated); n != 2 {
		t.Errorf("api_key.created entries = %d, want 2", n)
	}
}

func TestCreateAPIKeyValidation(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanBusiness)
	now := start.Truncate(time.Millisecond)
	past, later := now.Add(-time.Second), now.Add(time.Millisecond)
	for _, tt := range []struct {
		name  string
		in    admin.NewAPIKey
		paths []string // nil: accepted
	}{
		{"valid", admin.NewAPIKey{Name: strings.Repeat("é", 200), Scopes: readScopes, ExpiresAt: &later}, nil},
		{"name too long", admin.NewAPIKey{Name: strings.Repeat("n", 201), Scopes: readScopes}, []string{"name"}},
		{"expiry in the past", admin.NewAPIKey{Scopes: readScopes, ExpiresAt: &past}, []string{"expires_at"}},
		{"expiry now", admin.NewAPIKey{Scopes: readScopes, ExpiresAt: &now}, []string{"expires_at"}},
		{"no scopes", admin.NewAPIKey{}, []string{"scopes"}},
		{"members:write", admin.NewAPIKey{Scopes: []licentia.Scope{licentia.ScopeMembersWrite}}, []string{"scopes"}},
		{"unknown scope", admin.NewAPIKey{Scopes: []licentia.Scope{licentia.ScopeLicencesRead, "licences:all"}}, []string{"scopes"}},
		{"everything at once", admin.NewAPIKey{Name: strings.Repeat("n", 201), ExpiresAt: &past}, []string{"name", "expires_at", "scopes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := countKeys(t, f.st, o.ID)
			_, _, err := f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, tt.in)
			if diff := cmp.Diff(tt.paths, issuePaths(t, err)); diff != "" {
				t.Errorf("CreateAPIKey() issues mismatch (-want +got):\n%s", diff)
			}
			if tt.paths != nil && countKeys(t, f.st, o.ID) != before {
				t.Error("CreateAPIKey() refused the key but wrote one")
			}
		})
	}
}

func TestCreateAPIKeyUnknownOrganization(t *testing.T) {
	f := newFixture(t)
	_, _, err := f.svc.CreateAPIKey(t.Context(), licentia.OperatorActor, licentia.NewID(), admin.NewAPIKey{Scopes: readScopes})
	wantCode(t, "CreateAPIKey(unknown organization)", err, licentia.CodeNotFound)
}

func TestParseScopes(t *testing.T) {
	for _, tt := range []struct {
		name string
		csv  string
		want []licentia.Scope
		ok   bool
	}{
		{"one", "licences:read", []licentia.Scope{licentia.ScopeLicencesRead}, true},
		{"several, spaces, order kept", " licences:write , products:read,audit:read", []licentia.Scope{licentia.ScopeLicencesWrite, licentia.ScopeProductsRead, licentia.ScopeAuditRead}, true},
		{"duplicates once", "audit:read,audit:read", []licentia.Scope{licentia.ScopeAuditRead}, true},
		{"empty fields skipped", ",audit:read,,", []licentia.Scope{licentia.ScopeAuditRead}, true},
		{"empty", "", nil, false},
		{"commas only", ",,", nil, false},
		{"members:write", "licences:read,members:write", nil, false},
		{"unknown", "licences:read,licences:delete", nil, false},
		{"upper case", "LICENCES:READ", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := admin.ParseScopes(tt.csv)
			if !tt.ok {
				wantCode(t, "ParseScopes("+tt.csv+")", err, licentia.CodeValidationFailed)
				return
			}
			if err != nil {
				t.Fatalf("ParseScopes(%q) error = %v", tt.csv, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseScopes(%q) mismatch (-want +got):\n%s", tt.csv, diff)
			}
		})
	}
}

func TestRevokeAPIKey(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanIndie)
	other := f.org(t, "other", licentia.PlanIndie)
	k := f.key(t, o.ID, admin.NewAPIKey{})
	f.clk.Advance(time.Minute)
	actor := licentia.APIKeyActor("revoker")

	// Another organization's key answers like a missing one.
	_, err := f.svc.RevokeAPIKey(t.Context(), actor, other.ID, k.ID)
	wantCode(t, "RevokeAPIKey(another organization's key)", err, licentia.CodeNotFound)
	_, err = f.svc.RevokeAPIKey(t.Context(), actor, o.ID, licentia.NewID())
	wantCode(t, "RevokeAPIKey(unknown id)", err, licentia.CodeNotFound)
	_, err = f.svc.RevokeAPIKey(t.Context(), actor, o.ID, "not-a-uuid")
	if diff := cmp.Diff([]string{"id"}, issuePaths(t, err)); diff != "" {
		t.Errorf("RevokeAPIKey(not-a-uuid) issues mismatch (-want +got):\n%s", diff)
	}

	// Upper case is normalised.
	changed, err := f.svc.RevokeAPIKey(t.Context(), actor, o.ID, strings.ToUpper(k.ID))
	if err != nil || !changed {
		t.Fatalf("RevokeAPIKey() = %v, %v, want true, nil", changed, err)
	}
	now := start.Add(time.Minute).Truncate(time.Millisecond)
	stored, err := f.st.APIKey(t.Context(), o.ID, k.ID)
	if err != nil {
		t.Fatalf("APIKey() error = %v", err)
	}
	if stored.RevokedAt == nil || !stored.RevokedAt.Equal(now) {
		t.Errorf("RevokedAt = %v, want %v", stored.RevokedAt, now)
	}
	e := lastAudit(t, f.st, o.ID)
	want := licentia.AuditEntry{ID: e.ID, OrgID: o.ID, Action: licentia.AuditAPIKeyRevoked, Actor: actor, At: now, Data: e.Data}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("audit entry mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"api_key_id": k.ID}, decode(t, e.Data)); diff != "" {
		t.Errorf("audit data mismatch (-want +got):\n%s", diff)
	}

	// Again: nothing changes and nothing is recorded.
	f.clk.Advance(time.Minute)
	changed, err = f.svc.RevokeAPIKey(t.Context(), actor, o.ID, k.ID)
	if err != nil || changed {
		t.Errorf("RevokeAPIKey() again = %v, %v, want false, nil", changed, err)
	}
	if n := countAudit(t, f.st, o.ID, licentia.AuditAPIKeyRevoked); n != 1 {
		t.Errorf("api_key.revoked entries = %d, want 1", n)
	}
	if stored, _ := f.st.APIKey(t.Context(), o.ID, k.ID); stored == nil || !stored.RevokedAt.Equal(now) {
		t.Errorf("RevokedAt after a second revoke = %v, want the first %v", stored.RevokedAt, now)
	}
}

var errAudit = errors.New("audit log unavailable")

// failingAudit is a store whose transactions cannot write audit entries.
type failingAudit struct{ store.Store }

func (s failingAudit) InTx(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(failingAuditTx{tx}) })
}

type failingAuditTx struct{ store.Tx }

func (failingAuditTx) AppendAudit(context.Context, *licentia.AuditEntry) error { return errAudit }

// TestChangeAndAuditCommitTogether checks that a change and its audit entry
// are written in one transaction: when the entry cannot be written, the
// change is rolled back.
func TestChangeAndAuditCommitTogether(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanIndie)
	k := f.key(t, o.ID, admin.NewAPIKey{})
	entries := len(audits(t, f.st, o.ID))
	broken := admin.New(admin.Options{Store: failingAudit{f.st}, Clock: f.clk, Plans: licentia.DefaultPlans(), Keys: signing.NewKeyring(nil), Logger: slog.New(slog.DiscardHandler)})

	changed, err := broken.RevokeAPIKey(t.Context(), licentia.OperatorActor, o.ID, k.ID)
	if !errors.Is(err, errAudit) || changed {
		t.Errorf("RevokeAPIKey() = %v, %v, want false and the audit failure", changed, err)
	}
	if stored, err := f.st.APIKey(t.Context(), o.ID, k.ID); err != nil || stored.RevokedAt != nil {
		t.Errorf("key after a failed revoke = %+v, %v, want it not revoked", stored, err)
	}

	_, _, err = broken.CreateAPIKey(t.Context(), licentia.OperatorActor, o.ID, admin.NewAPIKey{Scopes: readScopes})
	if !errors.Is(err, errAudit) {
		t.Errorf("CreateAPIKey() error = %v, want the audit failure", err)
	}
	if n := countKeys(t, f.st, o.ID); n != 1 {
		t.Errorf("keys after a failed create = %d, want 1", n)
	}

	_, err = broken.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Lost", Slug: "lost", Plan: licentia.PlanFree, OwnerEmail: "o@lost.example",
	})
	if !errors.Is(err, errAudit) {
		t.Errorf("CreateOrganization() error = %v, want the audit failure", err)
	}
	if _, err := f.st.OrganizationBySlug(t.Context(), "lost"); licentia.ErrorCode(err) != licentia.CodeNotFound {
		t.Errorf("OrganizationBySlug(lost) after a failed create error = %v, want not_found", err)
	}
	if n := len(audits(t, f.st, o.ID)); n != entries {
		t.Errorf("audit entries = %d, want %d: nothing written", n, entries)
	}
}

func TestCreateOrganization(t *testing.T) {
	f := newFixture(t)
	o := f.org(t, "acme", licentia.PlanStudio)
	want := &licentia.Organization{ID: o.ID, Name: "Org acme", Slug: "acme", Plan: licentia.PlanStudio, CreatedAt: start.Truncate(time.Millisecond)}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("CreateOrganization() mismatch (-want +got):\n%s", diff)
	}
	members, err := f.st.Members(t.Context(), o.ID)
	if err != nil {
		t.Fatalf("Members() error = %v", err)
	}
	if len(members) != 1 || members[0].Role != licentia.RoleOwner || members[0].Email != "owner@acme.example" {
		t.Errorf("Members() = %+v, want the owner", members)
	}
	var actions []string
	for _, e := range audits(t, f.st, o.ID) {
		actions = append(actions, e.Action)
		if diff := cmp.Diff(licentia.OperatorActor, e.Actor); diff != "" {
			t.Errorf("%s actor mismatch (-want +got):\n%s", e.Action, diff)
		}
	}
	if diff := cmp.Diff([]string{licentia.AuditOrganizationCreated, licentia.AuditMemberAdded}, actions); diff != "" {
		t.Errorf("audit actions mismatch (-want +got):\n%s", diff)
	}

	_, err = f.svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Again", Slug: "acme", Plan: licentia.PlanFree, OwnerEmail: "o@a.example",
	})
	wantCode(t, "CreateOrganization(taken slug)", err, licentia.CodeConflict)

	_, err = f.svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{Slug: "Bad Slug", Plan: "gold", OwnerEmail: "nobody"})
	if diff := cmp.Diff([]string{"name", "slug", "plan", "owner_email"}, issuePaths(t, err)); diff != "" {
		t.Errorf("CreateOrganization(invalid) issues mismatch (-want +got):\n%s", diff)
	}
}

func issuePaths(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	e := wantCode(t, "validation", err, licentia.CodeValidationFailed)
	if e == nil {
		return nil
	}
	var paths []string
	for _, is := range e.Details["issues"].([]licentia.Issue) {
		paths = append(paths, is.Path)
	}
	return paths
}

// countKeys counts the organization's keys that are not revoked.
func countKeys(t *testing.T, st store.Store, orgID string) int64 {
	t.Helper()
	n, err := st.CountLiveAPIKeys(t.Context(), orgID, time.Time{})
	if err != nil {
		t.Fatalf("CountLiveAPIKeys() error = %v", err)
	}
	return n
}

func audits(t *testing.T, st store.Store, orgID string) []licentia.AuditEntry {
	t.Helper()
	es, err := st.OrganizationAudit(t.Context(), orgID)
	if err != nil {
		t.Fatalf("OrganizationAudit() error = %v", err)
	}
	return es
}

func lastAudit(t *testing.T, st store.Store, orgID string) licentia.AuditEntry {
	t.Helper()
	es := audits(t, st, orgID)
	if len(es) == 0 {
		t.Fatal("no audit entries")
	}
	return es[len(es)-1]
}

func countAudit(t *testing.T, st store.Store, orgID, action string) int {
	t.Helper()
	n := 0
	for _, e := range audits(t, st, orgID) {
		if e.Action == action {
			n++
		}
	}
	return n
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("audit data %s: %v", raw, err)
	}
	return m
}
