package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// feature adds a feature to a product of orgID.
func (e *env) feature(t *testing.T, orgID, productID, code, name string) {
	t.Helper()
	if _, err := e.admin.SaveFeature(t.Context(), licentia.OperatorActor, orgID, productID, code, admin.FeatureSave{Name: &name}); err != nil {
		t.Fatalf("SaveFeature(%s) error = %v", code, err)
	}
}

// features are a product's features as code=name, by code.
func (e *env) features(t *testing.T, productID string) string {
	t.Helper()
	fs, err := e.store.ProductFeatures(t.Context(), e.org.ID, productID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Code+"="+f.Name)
	}
	return strings.Join(out, " ")
}

// grants are a licence's grants as code or code@expiry, by code.
func (e *env) grants(t *testing.T, id string) string {
	t.Helper()
	l, err := e.store.Licence(t.Context(), e.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range l.Features {
		s := g.Code
		if g.ExpiresAt != nil {
			s += "@" + g.ExpiresAt.UTC().Format(time.RFC3339)
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// wantIn fails unless body holds every one of want, and none of the API
// paths a person should not have to read.
func wantIn(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, body)
		}
	}
	for _, path := range []string{"<code>/features", "<code>path.code", "<code>/name", "<code>/code"} {
		if strings.Contains(body, path) {
			t.Errorf("%s shows the API path %q", what, path)
		}
	}
}

// A product's Features section: added, refused with the reason next to
// the field, renamed, listed by code, and deleted unless a licence grants
// it, when the refusal is a sentence in its row.
func TestProductFeatures(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		dev := e.member(t, e.org.ID, "dev@acme.example", licentia.RoleDeveloper)
		c := e.signUp(t, e.org.ID, "dev@acme.example")
		page := "/console/products/desk-app"
		add := page + "/features"
		wantIn(t, "empty section", c.get(t, page).body, "No features yet", `action="`+add+`"`)

		a := c.post(t, add, url.Values{"code": {"Export PDF"}, "name": {""}})
		wantStatus(t, "add with bad fields", a, http.StatusBadRequest)
		wantIn(t, "refused add", a.body, "Code: must be 1 to 64 of a-z", "Name: is required", `value="Export PDF"`)
		wantSeeOther(t, "add pro", c.post(t, add, url.Values{"code": {"pro"}, "name": {"Pro tools"}}), page+"?done=feature-added")
		wantMemberActor(t, e, licentia.AuditProductFeatureSaved, dev.ID)
		wantSeeOther(t, "add export-pdf", c.post(t, add, url.Values{"code": {"export-pdf"}, "name": {"Export to PDF"}}), page+"?done=feature-added")
		a = c.post(t, add, url.Values{"code": {"pro"}, "name": {"Something else"}})
		wantStatus(t, "add a code the product has", a, http.StatusBadRequest)
		wantIn(t, "refused second pro", a.body, "has this feature already")
		if got := e.features(t, "desk-app"); got != "export-pdf=Export to PDF pro=Pro tools" {
			t.Fatalf("features = %q", got)
		}

		rename := page + "/features/rename"
		wantSeeOther(t, "rename", c.post(t, rename, url.Values{"code": {"pro"}, "name": {"Pro features"}}), page+"?done=feature-renamed")
		a = c.post(t, rename, url.Values{"code": {"pro"}, "name": {strings.Repeat("n", 101)}})
		wantStatus(t, "rename too long", a, http.StatusBadRequest)
		wantIn(t, "refused rename", a.body, `<span class="field-error" role="alert">Name: must be 1 to 100 characters</span>`)
		a = c.post(t, rename, url.Values{"code": {"gone"}, "name": {"Gone"}})
		wantStatus(t, "rename a code the product lacks", a, http.StatusNotFound)
		wantIn(t, "refused rename of a missing feature", a.body, "Feature not found")
		body := c.get(t, page).body
		if i, j := strings.Index(body, "<code>export-pdf</code>"), strings.Index(body, "<code>pro</code>"); i < 0 || j < i {
			t.Errorf("features not listed by code:\n%s", body)
		}
		wantIn(t, "section", body, `value="Pro features"`)

		e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		l := e.issue(t, e.org.ID, "desk-app", "bob@example.com")
		if _, err := e.admin.UpdateLicence(t.Context(), licentia.OperatorActor, e.org.ID, l.Licence.ID,
			admin.LicenceChange{Features: []licentia.GrantRequest{{FeatureGrant: licentia.FeatureGrant{Code: "pro"}}}}); err != nil {
			t.Fatal(err)
		}
		del := page + "/features/delete"
		a = c.post(t, del, url.Values{"code": {"pro"}})
		wantStatus(t, "delete a granted feature", a, http.StatusConflict)
		wantIn(t, "refused delete", a.body, `<span class="field-error" role="alert">A licence grants this feature; take it off every licence first.</span>`)
		wantSeeOther(t, "delete", c.post(t, del, url.Values{"code": {"export-pdf"}}), page+"?done=feature-deleted")
		wantMemberActor(t, e, licentia.AuditProductFeatureDeleted, dev.ID)
		if got := e.features(t, "desk-app"); got != "pro=Pro features" {
			t.Errorf("features after deleting = %q", got)
		}

		// A viewer reads the list and is offered no form; a forged post
		// is refused and changes nothing.
		viewer := e.as(t, licentia.RoleViewer)
		body = viewer.get(t, page).body
		if !strings.Contains(body, "Pro features") || strings.Contains(body, "/features/rename") || strings.Contains(body, `action="`+add+`"`) {
			t.Errorf("the viewer's product page:\n%s", body)
		}
		wantStatus(t, "viewer's add", viewer.post(t, add, url.Values{"code": {"x"}, "name": {"X"}}), http.StatusForbidden)
		wantStatus(t, "viewer's delete", viewer.post(t, del, url.Values{"code": {"pro"}}), http.StatusForbidden)
		if got := e.features(t, "desk-app"); got != "pro=Pro features" {
			t.Errorf("features after the viewer's posts = %q", got)
		}
	})
}

// A licence's features in the console: chosen on issue with an expiry
// each, refused next to the box with the feature's name, shown on the
// licence's page, replaced by the page's form (licence.updated, audited
// with before and after), and found by the feature filter.
func TestLicenceFeatures(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		e.product(t, e.org.ID, "sync-app", "SYNC")
		e.feature(t, e.org.ID, "desk-app", "export-pdf", "Export to PDF")
		e.feature(t, e.org.ID, "desk-app", "pro", "Pro tools")
		e.feature(t, e.org.ID, "sync-app", "cloud", "Cloud sync")
		support := e.member(t, e.org.ID, "support@acme.example", licentia.RoleSupport)
		c := e.signUp(t, e.org.ID, "support@acme.example")

		form := c.get(t, "/console/licences").body
		wantIn(t, "issue form", form, `name="feature" value="desk-app:pro"`, `name="feature_expires:desk-app:pro"`, "Cloud sync", `<option value="export-pdf">`)
		issue := url.Values{"product_id": {"desk-app"}, "email": {"ada@example.com"}, "limit_count": {"2"},
			"feature": {"desk-app:export-pdf", "desk-app:pro"}, "feature_expires:desk-app:pro": {"soon"}}
		a := c.post(t, "/console/licences", issue)
		wantStatus(t, "issue with an unreadable expiry", a, http.StatusBadRequest)
		wantIn(t, "refused issue", a.body, "Pro tools needs an expiry that is a date", `value="soon"`)
		issue["feature"] = append(issue["feature"], "sync-app:cloud")
		issue.Set("feature_expires:desk-app:pro", "2027-06-30")
		a = c.post(t, "/console/licences", issue)
		wantStatus(t, "issue with another product's feature", a, http.StatusBadRequest)
		wantIn(t, "refused issue", a.body, "Cloud sync is a feature of another product")
		issue["feature"] = issue["feature"][:2]
		a = c.post(t, "/console/licences", issue)
		m := licencePath.FindStringSubmatch(a.location())
		if m == nil {
			t.Fatalf("issue = %d to %q:\n%s", a.status, a.location(), a.body)
		}
		id := m[1]
		if got := e.grants(t, id); got != "export-pdf pro@2027-06-30T23:59:00Z" {
			t.Errorf("grants on issue = %q", got)
		}
		wantIn(t, "licence page", c.get(t, "/console/licences/"+id).body, "Export to PDF", "as long as the licence", "2027-06-30 23:59 UTC",
			`action="/console/licences/`+id+`/features"`, `value="desk-app:pro" checked`, `value="2027-06-30T23:59"`)

		change := "/console/licences/" + id + "/features"
		a = c.post(t, change, url.Values{"feature": {"desk-app:pro"}, "feature_expires:desk-app:pro": {"2027-13-01"}})
		wantStatus(t, "change with a bad expiry", a, http.StatusBadRequest)
		wantIn(t, "refused change", a.body, `<span class="field-error">needs an expiry that is a date`, `value="2027-13-01"`)
		wantSeeOther(t, "change", c.post(t, change, url.Values{"feature": {"desk-app:pro"}, "feature_expires:desk-app:pro": {"2027-12-31T12:00"},
			"feature_expires:desk-app:export-pdf": {"2027-01-01"}}), "/console/licences/"+id+"?done=features-changed")
		if got := e.grants(t, id); got != "pro@2027-12-31T12:00:00Z" {
			t.Errorf("grants after the change = %q", got)
		}
		wantMemberActor(t, e, licentia.AuditLicenceUpdated, support.ID)
		if got := string(e.lastAudit(t).Data); !strings.Contains(got, `"before"`) || !strings.Contains(got, `"export-pdf"`) {
			t.Errorf("audit of the change = %s, want before and after", got)
		}
		if evs := e.events(t); evs[len(evs)-1] != licentia.EventLicenceUpdated {
			t.Errorf("events = %v, want licence.updated last", evs)
		}
		wantSeeOther(t, "same again", c.post(t, change, url.Values{"feature": {"desk-app:pro"}, "feature_expires:desk-app:pro": {"2027-12-31T12:00"}}),
			"/console/licences/"+id+"?done=unchanged")

		// A grant whose date passed reads as ended.
		wantSeeOther(t, "a past expiry", c.post(t, change, url.Values{"feature": {"desk-app:pro"}, "feature_expires:desk-app:pro": {"2026-01-01"}}),
			"/console/licences/"+id+"?done=features-changed")
		wantIn(t, "licence page", c.get(t, "/console/licences/"+id).body, `<span class="state expired">ended</span>`)

		// The feature filter narrows a find.
		e.issue(t, e.org.ID, "desk-app", "ada.other@example.com")
		found := c.get(t, "/console/licences?q=ada&feature=pro").body
		if !strings.Contains(found, "/console/licences/"+id) || strings.Contains(found, "ada.other@example.com") {
			t.Errorf("find by feature:\n%s", found)
		}
		// The feature alone lists every licence granting it.
		a = c.get(t, "/console/licences?feature=pro")
		wantStatus(t, "a list by feature alone", a, http.StatusOK)
		if !strings.Contains(a.body, "/console/licences/"+id) || strings.Contains(a.body, "ada.other@example.com") {
			t.Errorf("list by feature:\n%s", a.body)
		}

		wantSeeOther(t, "take all away", c.post(t, change, url.Values{}), "/console/licences/"+id+"?done=features-changed")
		if got := e.grants(t, id); got != "" {
			t.Errorf("grants after unticking all = %q", got)
		}
		wantIn(t, "licence page", c.get(t, "/console/licences/"+id).body, "No features granted.")

		// A viewer sees the features and no form.
		viewer := e.as(t, licentia.RoleViewer)
		if body := viewer.get(t, "/console/licences/"+id).body; strings.Contains(body, change) {
			t.Errorf("the viewer is offered the features form")
		}
		wantStatus(t, "viewer's change", viewer.post(t, change, url.Values{"feature": {"desk-app:pro"}}), http.StatusForbidden)
	})
}

// Another organization's product and licence answer 404 on every feature
// form, as if absent, and change nothing.
func TestFeatureFormsOfAnotherOrganization(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		e.feature(t, e.org.ID, "desk-app", "pro", "Pro tools")
		l := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		beta := e.otherOrg(t)
		boss := e.signUp(t, beta.ID, "boss@beta.example")
		for path, form := range map[string]url.Values{
			"/console/products/desk-app/features":             {"code": {"x"}, "name": {"X"}},
			"/console/products/desk-app/features/rename":      {"code": {"pro"}, "name": {"Stolen"}},
			"/console/products/desk-app/features/delete":      {"code": {"pro"}},
			"/console/licences/" + l.Licence.ID + "/features": {"feature": {"desk-app:pro"}},
		} {
			wantStatus(t, path, boss.post(t, path, form), http.StatusNotFound)
		}
		if got := e.features(t, "desk-app"); got != "pro=Pro tools" {
			t.Errorf("features after another organization's posts = %q", got)
		}
		if got := e.grants(t, l.Licence.ID); got != "" {
			t.Errorf("grants after another organization's post = %q", got)
		}
	})
}

// Members posting the feature forms at once, on one product and one
// licence: every post succeeds, every feature is added, and the licence
// ends with one of the lists sent, audited once for each change.
func TestFeatureFormsConcurrently(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		l := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		const n = 8
		clients := make([]*client, n)
		for i := range clients {
			email := fmt.Sprintf("dev%d@acme.example", i)
			e.member(t, e.org.ID, email, licentia.RoleDeveloper)
			clients[i] = e.signUp(t, e.org.ID, email)
		}
		var wg sync.WaitGroup
		statuses := make([]int, n)
		for i, c := range clients {
			wg.Go(func() {
				statuses[i] = c.postStatus(t, "/console/products/desk-app/features", url.Values{"code": {fmt.Sprintf("f%d", i)}, "name": {"F"}})
			})
		}
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusSeeOther {
				t.Errorf("add %d: status %d", i, s)
			}
		}
		if got := strings.Count(e.features(t, "desk-app"), "=F"); got != n {
			t.Fatalf("%d features after %d adds", got, n)
		}
		for i, c := range clients {
			wg.Go(func() {
				statuses[i] = c.postStatus(t, "/console/licences/"+l.Licence.ID+"/features", url.Values{"feature": {fmt.Sprintf("desk-app:f%d", i)}})
			})
		}
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusSeeOther {
				t.Errorf("change %d: status %d", i, s)
			}
		}
		got := e.grants(t, l.Licence.ID)
		if len(got) != 2 || got[0] != 'f' {
			t.Errorf("grants after racing changes = %q, want one of those sent", got)
		}
		entries, err := e.store.LicenceAudit(t.Context(), e.org.ID, l.Licence.ID)
		if err != nil {
			t.Fatal(err)
		}
		updated := 0
		for _, en := range entries {
			if en.Action == licentia.AuditLicenceUpdated {
				updated++
			}
		}
		if updated != n {
			t.Errorf("%d licence.updated audit entries, want %d", updated, n)
		}
	})
}

// postStatus posts form from any goroutine and returns the answer's
// status, 0 when it failed (reported with t.Errorf).
func (c *client) postStatus(t *testing.T, path string, form url.Values) int {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Errorf("POST %s: %v", path, err)
		return 0
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", path, err)
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}
