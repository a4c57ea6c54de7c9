package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// TestLeaseSettings: a product takes max_concurrent, lease_ttl_seconds and
// max_borrow_hours on create and PATCH (max_concurrent null turns the
// count off), defaults to null, 900 and 0, and refuses values out of
// range; a licence takes its own max_concurrent on issue and PATCH, null
// following the product's.
func TestLeaseSettings(t *testing.T) {
	e := newLicenceEnv(t)
	if p := e.getProduct(t, e.allKey, "desk-app"); p.MaxConcurrent != nil || p.LeaseTTLSeconds != 900 || p.MaxBorrowHours != 0 {
		t.Errorf("defaults: max_concurrent %v, lease_ttl_seconds %d, max_borrow_hours %d; want null, 900, 0",
			p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours)
	}
	made := e.createProduct(t, e.allKey, productBody("float-app", "FLT", map[string]any{
		"max_concurrent": 5, "lease_ttl_seconds": 120, "max_borrow_hours": 720}))
	if made.MaxConcurrent == nil || *made.MaxConcurrent != 5 || made.LeaseTTLSeconds != 120 || made.MaxBorrowHours != 720 {
		t.Errorf("created: %v, %d, %d; want 5, 120, 720", made.MaxConcurrent, made.LeaseTTLSeconds, made.MaxBorrowHours)
	}
	patched := e.run(t, scenario{call: call{method: "PATCH", path: productPath("float-app", ""), key: e.allKey,
		body: map[string]any{"max_concurrent": nil, "lease_ttl_seconds": 86400, "max_borrow_hours": 0}}, wantStatus: http.StatusOK}).product(t)
	if patched.MaxConcurrent != nil || patched.LeaseTTLSeconds != 86400 || patched.MaxBorrowHours != 0 {
		t.Errorf("patched: %v, %d, %d; want null, 86400, 0", patched.MaxConcurrent, patched.LeaseTTLSeconds, patched.MaxBorrowHours)
	}
	for _, tt := range []struct {
		field string
		value any
		msg   string
	}{
		{"max_concurrent", 0, "must be an integer from 1 to 100000"},
		{"max_concurrent", 100001, "must be an integer from 1 to 100000"},
		{"lease_ttl_seconds", 59, "must be an integer from 60 to 86400"},
		{"lease_ttl_seconds", 86401, "must be an integer from 60 to 86400"},
		{"max_borrow_hours", 721, "must be an integer from 0 to 720"},
		{"max_borrow_hours", -1, "must be an integer from 0 to 720"},
	} {
		e.run(t, scenario{call: call{method: "PATCH", path: productPath("float-app", ""), key: e.allKey,
			body: map[string]any{tt.field: tt.value}, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/"+tt.field, tt.msg)})
	}

	own := e.issue(t, e.allKey, issueBody(map[string]any{"max_concurrent": 2}))
	if own.Licence.MaxConcurrent == nil || *own.Licence.MaxConcurrent != 2 {
		t.Errorf("issued max_concurrent = %v, want 2", own.Licence.MaxConcurrent)
	}
	follows := e.issue(t, e.allKey, issueBody(nil))
	if follows.Licence.MaxConcurrent != nil {
		t.Errorf("issued without max_concurrent: %v, want null", *follows.Licence.MaxConcurrent)
	}
	if ch := e.patch(t, own.Licence.ID, map[string]any{"max_concurrent": nil}); ch.Licence.MaxConcurrent != nil {
		t.Errorf("PATCH max_concurrent null: %v, want null", *ch.Licence.MaxConcurrent)
	}
	if ch := e.patch(t, follows.Licence.ID, map[string]any{"max_concurrent": 100000}); ch.Licence.MaxConcurrent == nil || *ch.Licence.MaxConcurrent != 100000 {
		t.Errorf("PATCH max_concurrent 100000: %v", ch.Licence.MaxConcurrent)
	}
	e.run(t, scenario{call: call{method: "PATCH", path: licencePath(own.Licence.ID, ""), key: e.allKey,
		body: map[string]any{"max_concurrent": 0}, invalid: true},
		wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/max_concurrent", "must be an integer from 1 to 100000")})
}

// TestLeaseSettingsOtherOrganization: PATCHes of the new settings naming
// another organization's product or licence answer 404 as if absent, and
// change nothing.
func TestLeaseSettingsOtherOrganization(t *testing.T) {
	e := newLicenceEnv(t)
	_, otherKey := e.otherOrg(t, "globex", "globex-app", "GLBX")
	theirs := e.issue(t, otherKey, issueBody(map[string]any{"product_id": "globex-app"}))
	for _, c := range []struct {
		path string
		body map[string]any
		code licentia.Code
	}{
		{productPath("globex-app", ""), map[string]any{"max_concurrent": 1, "lease_ttl_seconds": 60, "max_borrow_hours": 1,
			"machine_match": "any", "transfers_per_30_days": 100}, licentia.CodeProductNotFound},
		{licencePath(theirs.Licence.ID, ""), map[string]any{"max_concurrent": 1, "transfers_per_30_days": 100}, licentia.CodeLicenceNotFound},
	} {
		e.run(t, scenario{call: call{method: "PATCH", path: c.path, key: e.allKey, body: c.body},
			wantStatus: http.StatusNotFound, wantCode: c.code})
	}
	if p := e.getProduct(t, otherKey, "globex-app"); p.MaxConcurrent != nil || p.MachineMatch != "exact" || p.Transfers != 0 {
		t.Errorf("another organization's product changed: %+v", p)
	}
	got := e.run(t, scenario{call: call{method: "GET", path: licencePath(theirs.Licence.ID, ""), key: otherKey}, wantStatus: http.StatusOK})
	if v := decodeStrict[readView](t, got.body); v.Licence.MaxConcurrent != nil || v.Licence.Transfers != nil {
		t.Errorf("another organization's licence changed: %+v", v.Licence)
	}
}

// TestLeaseSettingsConcurrentPatches: on both engines, PATCHes of one
// product's and one licence's settings at once all succeed, and the
// stored values are one of those sent, with one audit entry each.
func TestLeaseSettingsConcurrentPatches(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := licenceEnvOf(t, newTestEnvWith(t, o))
		l := e.issue(t, e.allKey, issueBody(nil))
		const n = 8
		answers := e.concurrently(t, n, func(i int) call {
			if i%2 == 0 {
				return call{method: "PATCH", path: productPath("desk-app", ""), key: e.allKey,
					body: map[string]any{"max_concurrent": i + 1, "lease_ttl_seconds": 60 + i, "max_borrow_hours": i}}
			}
			return patchCall(e.allKey, l.Licence.ID, map[string]any{"max_concurrent": i + 1, "transfers_per_30_days": i})
		})
		for i, r := range answers {
			if r.status != http.StatusOK {
				t.Errorf("PATCH %d: %d %s", i, r.status, r.body)
			}
		}
		p := e.getProduct(t, e.allKey, "desk-app")
		if p.MaxConcurrent == nil || p.LeaseTTLSeconds != 60+*p.MaxConcurrent-1 || p.MaxBorrowHours != *p.MaxConcurrent-1 {
			t.Errorf("product settings mixed between PATCHes: %v, %d, %d", p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours)
		}
		got := decodeStrict[readView](t, e.run(t, scenario{call: call{method: "GET", path: licencePath(l.Licence.ID, ""), key: e.allKey},
			wantStatus: http.StatusOK}).body).Licence
		if got.MaxConcurrent == nil || got.Transfers == nil || *got.Transfers != *got.MaxConcurrent-1 {
			t.Errorf("licence settings mixed between PATCHes: %v, %v", got.MaxConcurrent, got.Transfers)
		}
		updates := 0
		entries, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
		if err != nil {
			t.Fatalf("OrganizationAudit() error = %v", err)
		}
		for _, a := range entries {
			if a.Action == licentia.AuditProductUpdated || a.Action == licentia.AuditLicenceUpdated {
				updates++
			}
		}
		if updates != n {
			t.Errorf("%d update audit entries, want %d", updates, n)
		}
	})
}
