package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// pageForm is what a browser sends with the form whose id is id: its
// action, and the values of its fields as shown (hidden and filled inputs,
// ticked boxes, selected options).
func pageForm(t *testing.T, body, id string) (string, url.Values) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	var form *html.Node
	for n := range doc.Descendants() {
		if v, _ := attr(n, "id"); n.Type == html.ElementNode && n.Data == "form" && v == id {
			form = n
			break
		}
	}
	if form == nil {
		t.Fatalf("the page has no form %q:\n%s", id, body)
	}
	action, _ := attr(form, "action")
	vals := url.Values{}
	for n := range form.Descendants() {
		name, named := attr(n, "name")
		if n.Type != html.ElementNode || !named {
			continue
		}
		switch n.Data {
		case "input":
			typ, _ := attr(n, "type")
			_, checked := attr(n, "checked")
			if (typ == "checkbox" || typ == "radio") && !checked {
				continue
			}
			v, _ := attr(n, "value")
			vals.Add(name, v)
		case "select":
			first := ""
			for o := range n.Descendants() {
				if o.Type != html.ElementNode || o.Data != "option" {
					continue
				}
				v, _ := attr(o, "value")
				if first == "" {
					first = v
				}
				if _, sel := attr(o, "selected"); sel {
					first = v
					break
				}
			}
			vals.Add(name, first)
		case "textarea":
			if n.FirstChild != nil {
				vals.Add(name, n.FirstChild.Data)
			} else {
				vals.Add(name, "")
			}
		}
	}
	return action, vals
}

// mappingOf reads the integration's mapping of prod_basic from the store.
func mappingOf(t *testing.T, e *env, integ string) *licentia.Mapping {
	t.Helper()
	m, err := e.store.Mapping(t.Context(), e.org.ID, integ, "prod_basic")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A mapping saved with features and adds_to through the API keeps them
// when its form on the integration page is sent back unchanged; the form
// ticks them, changes them, and says plainly what it refuses, next to the
// field. The form for a new mapping never replaces one unseen.
func TestMappingFormKeepsFeatures(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		integ := shopWithMapping(t, e)
		e.feature(t, e.org.ID, "desk-app", "export-pdf", "Export to PDF")
		e.feature(t, e.org.ID, "desk-app", "sync", "Sync")
		product, kind, count := "desk-app", licentia.LimitMachines, int64(3)
		if _, err := e.admin.PutMapping(t.Context(), licentia.OperatorActor, e.org.ID, integ, "prod_basic", admin.PutMapping{
			ProductID: &product, LimitKind: &kind, LimitCount: &count, Features: []string{"export-pdf"}, AddsTo: &product}); err != nil {
			t.Fatal(err)
		}
		c := e.as(t, licentia.RoleAdmin)
		page := "/console/integrations/" + integ
		body := c.get(t, page).body
		wantIn(t, "integration page", body, "Export to PDF", "<code>sync</code>", "add-on")

		action, vals := pageForm(t, body, "mapping-prod_basic")
		wantSeeOther(t, "resave", c.post(t, action, vals), page+"?done=mapping-saved")
		m := mappingOf(t, e, integ)
		if !slices.Equal(m.Features, []string{"export-pdf"}) || m.AddsTo == nil || *m.AddsTo != "desk-app" ||
			m.LimitKind != licentia.LimitMachines || m.LimitCount != 3 {
			t.Fatalf("after a resave: features %v, adds_to %v, limit %d %s; want export-pdf, desk-app, 3 machines",
				m.Features, m.AddsTo, m.LimitCount, m.LimitKind)
		}

		// Untick the add-on box, tick sync too: a mapping that issues
		// licences with both.
		vals.Del("add_on")
		vals.Add("features", "sync")
		wantSeeOther(t, "change", c.post(t, action, vals), page+"?done=mapping-saved")
		if m := mappingOf(t, e, integ); !slices.Equal(m.Features, []string{"export-pdf", "sync"}) || m.AddsTo != nil {
			t.Fatalf("after the change: features %v, adds_to %v; want export-pdf sync and no add-on", m.Features, m.AddsTo)
		}
		_, vals = pageForm(t, c.get(t, page).body, "mapping-prod_basic")
		if got := vals["features"]; !slices.Equal(got, []string{"export-pdf", "sync"}) || vals.Has("add_on") {
			t.Errorf("form after the change ticks %v, add-on %v; want both features, no add-on", got, vals["add_on"])
		}

		// An add-on without features, and a code the product lacks: each
		// refused in words next to its field, in this mapping's form.
		vals.Del("features")
		vals.Set("add_on", "yes")
		a := c.post(t, action, vals)
		wantStatus(t, "add-on without features", a, http.StatusBadRequest)
		wantIn(t, "refused add-on", a.body, "Features: are required for an add-on")
		if _, refused := pageForm(t, a.body, "mapping-prod_basic"); !refused.Has("add_on") || refused.Has("features") {
			t.Errorf("the refused form lost what was sent: %v", refused)
		}
		vals.Set("features", "gone")
		a = c.post(t, action, vals)
		wantStatus(t, "unknown feature", a, http.StatusBadRequest)
		wantIn(t, "refused feature", a.body, "Features:")
		if m := mappingOf(t, e, integ); !slices.Equal(m.Features, []string{"export-pdf", "sync"}) {
			t.Errorf("a refused save changed the mapping: %v", m.Features)
		}

		// The new-mapping form, given a provider product already mapped,
		// refuses rather than wipe its features.
		action, vals = pageForm(t, body, "mapping-new")
		vals.Set("provider_product_id", "prod_basic")
		a = c.post(t, action, vals)
		wantStatus(t, "new form on a mapped product", a, http.StatusBadRequest)
		wantIn(t, "refused new", a.body, "is mapped already")
		if m := mappingOf(t, e, integ); !slices.Equal(m.Features, []string{"export-pdf", "sync"}) {
			t.Errorf("the new-mapping form replaced the mapping: %v", m.Features)
		}
	})
}
