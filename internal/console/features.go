package console

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// The Features section of a product's page: add a feature, rename one,
// delete one. Each is the API's PUT or DELETE of
// /v1/admin/products/{id}/features/{code}, with the code a form field
// rather than a path segment, so no code reads as a path ("..").

// addFeature adds a feature to the product's catalogue. The API's PUT
// also renames; the add form refuses a code the product has, so a typo
// never renames another feature unseen.
func (s *Server) addFeature(w http.ResponseWriter, r *http.Request, v *visit) error {
	code := strings.TrimSpace(r.PostForm.Get("code"))
	has, err := s.hasFeature(r, v, code)
	if err != nil {
		return err
	}
	if has {
		var is licentia.Issues
		is.Add("/code", "the product has this feature already: rename it in its row")
		return s.showProduct(w, r, v, refusal(featureAdd, r, is.Err()))
	}
	return s.saveFeature(w, r, v, featureAdd, code, "feature-added")
}

// renameFeature gives a feature of the product a new name; unlike the
// API's PUT, it never adds one.
func (s *Server) renameFeature(w http.ResponseWriter, r *http.Request, v *visit) error {
	code := strings.TrimSpace(r.PostForm.Get("code"))
	has, err := s.hasFeature(r, v, code)
	if err != nil {
		return err
	}
	if !has {
		return s.showProduct(w, r, v, refusal(featureRename+code, r, store.FeatureNotFound()))
	}
	return s.saveFeature(w, r, v, featureRename+code, code, "feature-renamed")
}

// hasFeature reports whether the product of the path has the feature
// code; another organization's product is not found.
func (s *Server) hasFeature(r *http.Request, v *visit, code string) (bool, error) {
	fs, err := s.admin.Features(r.Context(), v.orgID(), r.PathValue("id"))
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(fs, func(f licentia.Feature) bool { return f.Code == code }), nil
}

func (s *Server) saveFeature(w http.ResponseWriter, r *http.Request, v *visit, form, code, done string) error {
	var in admin.FeatureSave
	decodeForm(r.PostForm, &in)
	productID := r.PathValue("id")
	_, err := s.admin.SaveFeature(r.Context(), v.actor(), v.orgID(), productID, code, in)
	if p := refusal(form, r, err); p != nil {
		return s.showProduct(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/products/"+productID, done)
}

// deleteFeature takes a feature out of the product's catalogue; while a
// licence grants it the refusal is shown next to its row.
func (s *Server) deleteFeature(w http.ResponseWriter, r *http.Request, v *visit) error {
	code := strings.TrimSpace(r.PostForm.Get("code"))
	productID := r.PathValue("id")
	err := s.admin.DeleteFeature(r.Context(), v.actor(), v.orgID(), productID, code, admin.FeatureDelete{})
	if p := refusal(featureDelete+code, r, err); p != nil {
		return s.showProduct(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/products/"+productID, "feature-deleted")
}

// The names of the feature forms' refusals; a row's forms add its code.
const (
	featureAdd    = "feature-add"
	featureRename = "feature-rename:"
	featureDelete = "feature-delete:"
)

// featureRowForm is where a refusal of a feature's row form is shown: in
// its row, or, for a code the product does not have, above the add form.
func featureRowForm(form string, fs []licentia.Feature) string {
	for _, prefix := range []string{featureRename, featureDelete} {
		if code, ok := strings.CutPrefix(form, prefix); ok &&
			!slices.ContainsFunc(fs, func(f licentia.Feature) bool { return f.Code == code }) {
			return featureAdd
		}
	}
	return form
}

// grantChoice is one feature of a product in a form that grants
// features: ticked or not, and until when.
type grantChoice struct {
	// Field names the feature in the form: "<product id>:<code>", the
	// value of its box and the end of its expiry's name.
	Field   string
	Code    string
	Name    string
	Ticked  bool
	Expires string
	// Error is why a refused form could not grant it.
	Error string
}

// grantField is a feature's name in a grant form.
func grantField(productID, code string) string { return productID + ":" + code }

// Fields of the grant forms: a box "feature" per feature ticked, with its
// value grantField, and an optional expiry "feature_expires:" + grantField.
const (
	fieldFeature        = "feature"
	fieldFeatureExpires = "feature_expires:"
)

// grantChoices are a product's features as a grant form shows them: as
// the refused form was sent when refused is set, otherwise with the
// licence's grants gs ticked.
func grantChoices(productID string, fs []licentia.Feature, gs []licentia.FeatureGrant, refused *problem) []grantChoice {
	out := make([]grantChoice, 0, len(fs))
	for _, f := range fs {
		c := grantChoice{Field: grantField(productID, f.Code), Code: f.Code, Name: f.Name}
		if refused != nil {
			c.Ticked = slices.Contains(refused.Values[fieldFeature], c.Field)
			c.Expires = refused.Values.Get(fieldFeatureExpires + c.Field)
			c.Error = refused.Fields[fieldFeature+":"+c.Field]
		} else if i := slices.IndexFunc(gs, func(g licentia.FeatureGrant) bool { return g.Code == f.Code }); i >= 0 {
			c.Ticked = true
			if e := gs[i].ExpiresAt; e != nil {
				c.Expires = e.UTC().Format("2006-01-02T15:04")
			}
		}
		out = append(out, c)
	}
	return out
}

// sentGrants reads the grants a form asks for: the ticked features of
// productID, each with its expiry. The fields of every element are kept,
// in order, so that a refusal at /features/<i> is shown next to its
// feature. A ticked feature of another product (the issue form lists
// every product's) is refused at its element too.
func sentGrants(vals url.Values, productID string) ([]licentia.GrantRequest, []string) {
	var reqs []licentia.GrantRequest
	var fields []string
	for _, field := range vals[fieldFeature] {
		field = strings.TrimSpace(field)
		owner, code, ok := strings.Cut(field, ":")
		var g licentia.GrantRequest
		g.Code = code
		switch {
		case !ok:
			g.Problem = "is not a feature of any product"
		case owner != productID:
			g.Problem = "is a feature of another product: tick only features of the licence's product"
		default:
			if exp := strings.TrimSpace(vals.Get(fieldFeatureExpires + field)); exp != "" {
				t, ok := parseFormTime(exp)
				if ok && licentia.CheckTime(t) == "" {
					t = licentia.TruncateMillis(t)
					g.ExpiresAt = &t
				} else {
					g.Problem = "needs an expiry that is a date (2026-12-31) or a date and time (2026-12-31T23:59), in UTC, or none"
				}
			}
		}
		reqs = append(reqs, g)
		fields = append(fields, field)
	}
	return reqs, fields
}

// grantProblems shows each refused feature of a grant form next to its
// box, worded with the feature's name instead of /features/<i>.
func grantProblems(p *problem, fields []string, names map[string]string) *problem {
	if p == nil {
		return nil
	}
	for i, is := range p.Issues {
		rest, ok := strings.CutPrefix(is.Path, "/features/")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || n >= len(fields) {
			continue
		}
		field := fields[n]
		p.Fields[fieldFeature+":"+field] = is.Message
		name := names[field]
		if name == "" {
			_, name, _ = strings.Cut(field, ":")
		}
		p.Issues[i] = fieldIssue{Path: is.Path, Field: fieldFeature + ":" + field, Message: name + " " + is.Message}
	}
	return p
}

// featureNames names each feature of fs by its grant field.
func featureNames(productID string, fs []licentia.Feature, into map[string]string) {
	for _, f := range fs {
		into[grantField(productID, f.Code)] = f.Name
	}
}

// changeFeatures replaces a licence's features with those ticked on its
// page: the API's PATCH with features, so none ticked takes them all away.
func (s *Server) changeFeatures(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := licenceID(r.PathValue("id"))
	if err != nil {
		return err
	}
	lv, err := s.admin.Licence(r.Context(), v.orgID(), id)
	if err != nil {
		return err
	}
	productID := lv.Licence.ProductID
	reqs, fields := sentGrants(r.PostForm, productID)
	in := admin.LicenceChange{Features: append([]licentia.GrantRequest{}, reqs...)}
	c, err := s.admin.UpdateLicence(r.Context(), v.actor(), v.orgID(), id, in)
	if p := refusal(formFeatures, r, err); p != nil {
		names := map[string]string{}
		if fs, ferr := s.admin.Features(r.Context(), v.orgID(), productID); ferr == nil {
			featureNames(productID, fs, names)
		}
		return s.showLicence(w, r, v, id, grantProblems(p, fields, names))
	}
	if err != nil {
		return err
	}
	done := "features-changed"
	if !c.Changed {
		done = "unchanged"
	}
	return seeOther(w, r, "/console/licences/"+id, done)
}

// formFeatures names the licence page's features form.
const formFeatures = "features"

// catalogue is a product's features in the issue form.
type catalogue struct {
	ProductID, ProductName string
	Choices                []grantChoice
	// Open shows the list unfolded: the only product with features, or
	// the product of a refused form.
	Open bool
}

// featureCode is a choice of the find's feature filter.
type featureCode struct{ Code, Name string }

// catalogues are the features of every product with some, shown as a
// refused issue form p was sent, and every code among them, once, by
// code: the find's filter takes a code, whatever its product.
func (s *Server) catalogues(ctx context.Context, v *visit, ps []*admin.ProductView, p *problem) ([]catalogue, []featureCode, error) {
	if p != nil && p.Form != "issue" {
		p = nil
	}
	var out []catalogue
	var codes []featureCode
	for _, pv := range ps {
		fs, err := s.admin.Features(ctx, v.orgID(), pv.Product.ID)
		if err != nil {
			return nil, nil, err
		}
		if len(fs) == 0 {
			continue
		}
		c := catalogue{ProductID: pv.Product.ID, ProductName: pv.Product.Name, Choices: grantChoices(pv.Product.ID, fs, nil, p)}
		c.Open = p != nil && (p.Values.Get("product_id") == c.ProductID || slices.ContainsFunc(c.Choices, func(g grantChoice) bool { return g.Ticked }))
		out = append(out, c)
		for _, f := range fs {
			if !slices.ContainsFunc(codes, func(fc featureCode) bool { return fc.Code == f.Code }) {
				codes = append(codes, featureCode{Code: f.Code, Name: f.Name})
			}
		}
	}
	if len(out) == 1 {
		out[0].Open = true
	}
	slices.SortFunc(codes, func(a, b featureCode) int { return strings.Compare(a.Code, b.Code) })
	return out, codes, nil
}

// grantNames names every feature of every product by its grant field, to
// word a refused issue form; a name it cannot read is left out, and the
// feature is named by its code.
func (s *Server) grantNames(ctx context.Context, v *visit) map[string]string {
	names := map[string]string{}
	ps, err := s.admin.Products(ctx, v.orgID())
	if err != nil {
		return names
	}
	for _, pv := range ps {
		if fs, err := s.admin.Features(ctx, v.orgID(), pv.Product.ID); err == nil {
			featureNames(pv.Product.ID, fs, names)
		}
	}
	return names
}
