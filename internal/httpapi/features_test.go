package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

type featureView struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func featurePath(productID, code string) string {
	if code == "" {
		return "/v1/admin/products/" + productID + "/features"
	}
	return "/v1/admin/products/" + productID + "/features/" + code
}

func putFeatureCall(key, productID, code, name string) call {
	return call{method: "PUT", path: featurePath(productID, code), key: key, body: map[string]any{"name": name}}
}

// refused marks a call the document refuses too.
func refused(c call) call {
	c.invalid = true
	return c
}

// saveFeature adds or renames a feature of desk-app through the API.
func (e *licenceEnv) saveFeature(t *testing.T, code, name string) featureView {
	t.Helper()
	r := e.run(t, scenario{call: putFeatureCall(e.allKey, "desk-app", code, name), wantStatus: http.StatusOK})
	return decodeStrict[struct {
		Feature featureView `json:"feature"`
	}](t, r.body).Feature
}

func (e *licenceEnv) features(t *testing.T) []featureView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: featurePath("desk-app", ""), key: e.allKey}, wantStatus: http.StatusOK})
	return decodeStrict[struct {
		Features []featureView `json:"features"`
	}](t, r.body).Features
}

// TestFeatureCatalogue: PUT creates then renames (created_at kept), GET
// lists by code, DELETE answers 204 and the feature is gone; each write is
// audited.
func TestFeatureCatalogue(t *testing.T) {
	e := newLicenceEnv(t)
	created := e.clock.Now()
	if got := e.saveFeature(t, "sso", "Single sign-on"); got != (featureView{"sso", "Single sign-on", licentia.FormatTime(created)}) {
		t.Errorf("PUT sso = %+v, want it created now", got)
	}
	e.clock.Advance(time.Minute)
	e.saveFeature(t, "export-pdf", "PDF export")
	if got := e.saveFeature(t, "sso", "SSO"); got != (featureView{"sso", "SSO", licentia.FormatTime(created)}) {
		t.Errorf("PUT sso again = %+v, want it renamed, created_at kept", got)
	}
	want := []featureView{{"export-pdf", "PDF export", licentia.FormatTime(created.Add(time.Minute))}, {"sso", "SSO", licentia.FormatTime(created)}}
	if diff := cmp.Diff(want, e.features(t)); diff != "" {
		t.Errorf("GET features mismatch (-want +got):\n%s", diff)
	}
	e.run(t, scenario{call: call{method: "DELETE", path: featurePath("desk-app", "sso"), key: e.allKey}, wantStatus: http.StatusNoContent})
	e.run(t, scenario{call: call{method: "DELETE", path: featurePath("desk-app", "sso"), key: e.allKey},
		wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
	if got := e.features(t); len(got) != 1 || got[0].Code != "export-pdf" {
		t.Errorf("GET features after delete = %+v, want export-pdf alone", got)
	}
	entries, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if err != nil {
		t.Fatalf("OrganizationAudit() error = %v", err)
	}
	var actions []string
	for _, a := range entries {
		if strings.HasPrefix(a.Action, "product.feature") {
			actions = append(actions, a.Action)
		}
	}
	wantActions := []string{"product.feature_saved", "product.feature_saved", "product.feature_saved", "product.feature_deleted"}
	if diff := cmp.Diff(wantActions, actions); diff != "" {
		t.Errorf("audit actions mismatch (-want +got):\n%s", diff)
	}
}

// TestFeatureRefusals: bad codes at path.code, bad names, the 201st
// feature, deleting a granted feature, and another organization's product
// answering 404 as if absent.
func TestFeatureRefusals(t *testing.T) {
	e := newLicenceEnv(t)
	_, theirKey := e.otherOrg(t, "other", "their-app", "THEIR")
	e.run(t, scenario{call: putFeatureCall(theirKey, "their-app", "sso", "Theirs"), wantStatus: http.StatusOK})
	for _, tt := range []scenario{
		{name: "bad code", call: refused(putFeatureCall(e.allKey, "desk-app", "Export", "PDF")), wantStatus: http.StatusBadRequest,
			wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.code", "must be 1 to 64 of a-z, 0-9, dot, underscore and hyphen")},
		{name: "long code", call: refused(putFeatureCall(e.allKey, "desk-app", strings.Repeat("a", 65), "PDF")), wantStatus: http.StatusBadRequest,
			wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.code", "must be 1 to 64 of a-z, 0-9, dot, underscore and hyphen")},
		{name: "bad code on delete", call: call{method: "DELETE", path: featurePath("desk-app", "a%20b"), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issues("path.code", "must be 1 to 64 of a-z, 0-9, dot, underscore and hyphen")},
		{name: "name too long", call: refused(putFeatureCall(e.allKey, "desk-app", "sso", strings.Repeat("n", 101))), wantStatus: http.StatusBadRequest,
			wantCode: licentia.CodeValidationFailed, wantDetails: issues("/name", "must be 1 to 100 characters")},
		{name: "no name", call: call{method: "PUT", path: featurePath("desk-app", "sso"), key: e.allKey, body: map[string]any{}, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/name", "is required")},
		{name: "another organization's product, list", call: call{method: "GET", path: featurePath("their-app", ""), key: e.allKey},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "another organization's product, save", call: putFeatureCall(e.allKey, "their-app", "sso", "Mine"),
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "another organization's product, delete", call: call{method: "DELETE", path: featurePath("their-app", "sso"), key: e.allKey},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "missing product", call: call{method: "GET", path: featurePath("nope-app", ""), key: e.allKey},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "body over 64 KB", call: call{method: "PUT", path: featurePath("desk-app", "sso"), key: e.allKey,
			body: paddedBody(`{"name":"x"}`, 65537), invalid: true}, wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge},
		{name: "read-only key", call: putFeatureCall(e.key(t, e.org.ID, licentia.ScopeProductsRead), "desk-app", "sso", "SSO"),
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"products:write"}}},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
	// The worst name the size limit allows: 100 characters of four bytes.
	e.saveFeature(t, "wide", strings.Repeat("𝄞", 100))

	for i := range licentia.MaxFeatures - 1 {
		e.saveFeature(t, fmt.Sprintf("f%03d", i), "F")
	}
	e.run(t, scenario{call: putFeatureCall(e.allKey, "desk-app", "one-more", "F"), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict,
		wantDetails: map[string]any{"limit": float64(licentia.MaxFeatures)}})
	e.saveFeature(t, "f000", "Renamed at the limit")

	l := e.issue(t, e.allKey, issueBody(map[string]any{"features": []any{"f001"}}))
	e.change(t, l.Licence.ID, "revoke", "refund")
	e.run(t, scenario{call: call{method: "DELETE", path: featurePath("desk-app", "f001"), key: e.allKey},
		wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict})
}

// TestLicenceFeatures: issue takes codes and objects, answers them by code;
// an unknown or repeated code is refused at /features/<i>; PATCH replaces
// the list, with licence.updated and an audit entry holding before and
// after; find and counts filter by feature.
func TestLicenceFeatures(t *testing.T) {
	e := newLicenceEnv(t)
	e.saveFeature(t, "sso", "SSO")
	e.saveFeature(t, "export-pdf", "PDF export")
	_, theirKey := e.otherOrg(t, "other", "their-app", "THEIR")
	e.run(t, scenario{call: putFeatureCall(theirKey, "their-app", "audit-log", "Theirs"), wantStatus: http.StatusOK})

	until := licentia.FormatTime(e.clock.Now().Add(30 * 24 * time.Hour))
	got := e.issue(t, e.allKey, issueBody(map[string]any{"features": []any{"sso", map[string]any{"code": "export-pdf", "expires_at": until}}}))
	want := []grantView{{Code: "export-pdf", ExpiresAt: &until}, {Code: "sso"}}
	if diff := cmp.Diff(want, got.Licence.Features); diff != "" {
		t.Errorf("issued features mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, e.read(t, got.Licence.ID).Licence.Features); diff != "" {
		t.Errorf("read features mismatch (-want +got):\n%s", diff)
	}
	plain := e.issue(t, e.allKey, issueBody(map[string]any{"email": "bob@example.com"}))

	for _, tt := range []scenario{
		{name: "unknown code", call: issueCall(e.allKey, issueBody(map[string]any{"features": []any{"sso", "audit-log"}})),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/features/1", "is not a feature of the product")},
		{name: "repeated code", call: issueCall(e.allKey, issueBody(map[string]any{"features": []any{"sso", map[string]any{"code": "sso"}}})),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/features/1", "repeats a feature given before")},
		{name: "bad shapes", call: issueCall(e.allKey, issueBody(map[string]any{"features": []any{7, map[string]any{"code": "sso", "until": "x"},
			map[string]any{"code": "sso", "expires_at": "soon"}, "Bad Code"}})),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(
				"/features/0", "must be a feature code or an object with code and expires_at",
				"/features/1", `has an unknown field "until"`,
				"/features/2", "expires_at must be an RFC 3339 time with an offset, or null",
				"/features/3", "must be 1 to 64 of a-z, 0-9, dot, underscore and hyphen")},
		{name: "not an array", call: issueCall(e.allKey, issueBody(map[string]any{"features": "sso"})),
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/features", "must be an array")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.invalid = tt.name != "unknown code" && tt.name != "repeated code"
			e.run(t, tt)
		})
	}

	e.clock.Advance(time.Minute)
	r := e.run(t, scenario{call: call{method: "PATCH", path: licencePath(got.Licence.ID, ""), key: e.allKey,
		body: map[string]any{"features": []any{"sso"}}}, wantStatus: http.StatusOK})
	if ch := decodeStrict[changeView](t, r.body); !ch.Changed || !cmp.Equal(ch.Licence.Features, []grantView{{Code: "sso"}}) {
		t.Errorf("PATCH features = %+v changed %v, want sso alone, changed", ch.Licence.Features, ch.Changed)
	}
	audit := e.audit(t, got.Licence.ID)
	last := audit[len(audit)-1]
	wantData := map[string]any{"licence_id": got.Licence.ID, "features": map[string]any{
		"before": []any{map[string]any{"code": "export-pdf", "expires_at": until}, map[string]any{"code": "sso", "expires_at": nil}},
		"after":  []any{map[string]any{"code": "sso", "expires_at": nil}}}}
	if last.Action != licentia.AuditLicenceUpdated || !cmp.Equal(wantData, last.Data) {
		t.Errorf("last audit entry = %s %v, want licence.updated with %v", last.Action, last.Data, wantData)
	}
	evs := e.events(t, e.org.ID)
	if ev := evs[len(evs)-1]; ev.Type != licentia.EventLicenceUpdated {
		t.Errorf("last event = %s, want licence.updated", ev.Type)
	}
	// The same list again changes nothing.
	r = e.run(t, scenario{call: call{method: "PATCH", path: licencePath(got.Licence.ID, ""), key: e.allKey,
		body: map[string]any{"features": []any{"sso"}}}, wantStatus: http.StatusOK})
	if decodeStrict[changeView](t, r.body).Changed {
		t.Errorf("PATCH with the same features changed the licence")
	}
	e.run(t, scenario{call: call{method: "PATCH", path: licencePath(got.Licence.ID, ""), key: e.allKey,
		body: map[string]any{"features": []any{"audit-log"}}}, wantStatus: http.StatusBadRequest,
		wantCode: licentia.CodeValidationFailed, wantDetails: issues("/features/0", "is not a feature of the product")})

	found := e.find(t, e.allKey, q("q", "example.com", "feature", "sso"))
	if len(found) != 0 {
		t.Errorf("find q=example.com feature=sso = %d licences, want none (q is an email prefix)", len(found))
	}
	found = e.find(t, e.allKey, q("email", "ada@example.com", "feature", "sso"))
	if len(found) != 1 || found[0].ID != got.Licence.ID {
		t.Errorf("find feature=sso = %+v, want %s alone", found, got.Licence.ID)
	}
	if found := e.find(t, e.allKey, q("email", "bob@example.com", "feature", "sso")); len(found) != 0 {
		t.Errorf("find bob feature=sso = %d licences, want none (%s grants none)", len(found), plain.Licence.ID)
	}
	r = e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/counts?feature=sso", key: e.allKey}, wantStatus: http.StatusOK})
	counts := decodeStrict[map[string]any](t, r.body)["counts"].(map[string]any)
	if counts["all"] != 1.0 || counts["active"] != 1.0 {
		t.Errorf("counts feature=sso = %v, want one active licence", counts)
	}
	e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/counts?feature=BAD", key: e.allKey, invalid: true},
		wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		wantDetails: issues("query.feature", "must be 1 to 64 of a-z, 0-9, dot, underscore and hyphen")})
}

// TestFeatureRaces: on PostgreSQL, deletes of a feature racing licences
// granted it never leave a grant of a deleted feature, and PUTs racing
// for the last places never make the 201st.
func TestFeatureRaces(t *testing.T) {
	e := licenceEnvOf(t, newTestEnvWith(t, envOptions{postgres: true}))
	for round := range 3 {
		code := fmt.Sprintf("race-%d", round)
		e.saveFeature(t, code, "Raced")
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Go(func() {
				c := call{method: "DELETE", path: featurePath("desk-app", code), key: e.allKey}
				if i%2 == 1 {
					c = issueCall(e.allKey, issueBody(map[string]any{"email": fmt.Sprintf("r%d-%d@example.com", round, i), "features": []any{code}}))
				}
				statuses[i] = e.send(t, c).status
			})
		}
		wg.Wait()
		deleted := false
		for _, f := range e.features(t) {
			deleted = deleted || f.Code == code
		}
		deleted = !deleted
		granted := e.find(t, e.allKey, q("q", "r", "feature", code))
		if deleted && len(granted) > 0 {
			t.Errorf("round %d: %s deleted yet granted by %d licences (statuses %v)", round, code, len(granted), statuses)
		}
	}
	for i := range licentia.MaxFeatures - 8 {
		e.saveFeature(t, fmt.Sprintf("f%03d", i), "F")
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() { e.send(t, putFeatureCall(e.allKey, "desk-app", fmt.Sprintf("last-%02d", i), "F")) })
	}
	wg.Wait()
	if n := len(e.features(t)); n != licentia.MaxFeatures {
		t.Errorf("features after racing for the last places = %d, want %d", n, licentia.MaxFeatures)
	}
}

// The list and the export filter by a granted feature, and the export's
// features cell holds the granted codes joined by ";".
func TestListAndExportByFeature(t *testing.T) {
	engines(t, func(t *testing.T, e *licenceEnv) {
		e.saveFeature(t, "sso", "SSO")
		e.saveFeature(t, "export-pdf", "PDF export")
		both := e.issue(t, e.allKey, issueBody(map[string]any{"email": "ada@example.com", "features": []any{"sso", "export-pdf"}}))
		e.issue(t, e.allKey, issueBody(map[string]any{"email": "bob@example.com"}))
		e.clock.Advance(time.Minute)
		pdf := e.issue(t, e.allKey, issueBody(map[string]any{"email": "cy@example.com", "features": []any{"export-pdf"}}))

		if got := listedIDs(e.list(t, e.allKey, q("feature", "export-pdf")).Licences); !cmp.Equal(got, []string{pdf.Licence.ID, both.Licence.ID}) {
			t.Errorf("list feature=export-pdf = %v, want %v then %v", got, pdf.Licence.ID, both.Licence.ID)
		}
		page := e.list(t, e.allKey, q("feature", "export-pdf", "limit", "1"))
		if got := listedIDs(page.Licences); !cmp.Equal(got, []string{pdf.Licence.ID}) || page.NextCursor == nil {
			t.Fatalf("list feature=export-pdf limit=1 = %v (next %v), want %v and a cursor", got, page.NextCursor, pdf.Licence.ID)
		}
		next := e.list(t, e.allKey, q("feature", "export-pdf", "limit", "1", "cursor", *page.NextCursor))
		if got := listedIDs(next.Licences); !cmp.Equal(got, []string{both.Licence.ID}) || next.NextCursor != nil {
			t.Errorf("second page = %v (next %v), want %v and the end", got, next.NextCursor, both.Licence.ID)
		}
		e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/list?" + q("feature", "sso", "limit", "1", "cursor", *page.NextCursor),
			key: e.allKey, invalid: true}, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issues("query.cursor", "is not a cursor of this list with these filters: take next_cursor from the previous page, with the same filters")})

		_, rows := e.exportOf(t, e.allKey, q("feature", "sso"))
		if len(rows) != 1 || rows[0][0] != both.Licence.ID || rows[0][14] != "export-pdf;sso" {
			t.Errorf("export feature=sso = %v, want %s with features export-pdf;sso", rows, both.Licence.ID)
		}
	})
}
