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
)

// The integration page's mapping forms. The API's PUT replaces a whole
// mapping, so each mapping has its own form filled with everything it
// holds, features and add-on included, and sending it back unchanged
// changes nothing. The form for a new mapping refuses a provider product
// already mapped, so it never replaces one unseen.

// Form names of the mapping forms: the new one, and each mapping's with
// its provider product id.
const (
	mappingNew  = "mapping"
	mappingEdit = "mapping:"
)

// Fields the mapping forms send besides the API's: add_on, a box whose
// tick makes the mapping an add-on of its own product, and replace, which
// marks a mapping's own form.
const (
	fieldAddOn   = "add_on"
	fieldReplace = "replace"
)

// mappingForm is one mapping form as the page shows it.
type mappingForm struct {
	// Name names the form's refusal; ID is its HTML id and the prefix of
	// its fields' ids.
	Name, ID string
	// Mapping is the mapping the form changes, nil in the new form.
	Mapping  *licentia.Mapping
	Values   url.Values
	Fields   map[string]string
	Refused  bool
	Products []*admin.ProductView
	// Choices are the features of the mapped product as boxes.
	Choices []mappingChoice
}

// mappingChoice is a feature of the mapped product, ticked when the
// mapping grants it.
type mappingChoice struct {
	Code, Name string
	Ticked     bool
}

// mappingForms are the new-mapping form and each mapping's own, filled
// with the mapping, or with what was sent when p refused it.
func (s *Server) mappingForms(ctx context.Context, orgID string, ms []licentia.Mapping, ps []*admin.ProductView, p *problem) (mappingForm, []mappingForm, error) {
	if p != nil && strings.HasPrefix(p.Form, mappingEdit) &&
		!slices.ContainsFunc(ms, func(m licentia.Mapping) bool { return mappingEdit+m.ProviderProductID == p.Form }) {
		// The mapping went meanwhile: its refusal shows on the new form.
		p.Form = mappingNew
	}
	added := refilled(mappingForm{Name: mappingNew, ID: "mapping-new", Values: url.Values{}, Products: ps}, p)
	var out []mappingForm
	for i := range ms {
		m := &ms[i]
		f := refilled(mappingForm{Name: mappingEdit + m.ProviderProductID, ID: "mapping-" + m.ProviderProductID,
			Mapping: m, Values: mappingValues(m), Products: ps}, p)
		fs, err := s.admin.Features(ctx, orgID, m.ProductID)
		if err != nil {
			return added, nil, err
		}
		f.Choices = mappingChoices(fs, f.Values[fieldFeatures])
		out = append(out, f)
	}
	return added, out, nil
}

// refilled is f holding what was sent, and why it was refused, when p is
// its refusal.
func refilled(f mappingForm, p *problem) mappingForm {
	f.Fields = map[string]string{}
	if p != nil && p.Form == f.Name {
		f.Values, f.Fields, f.Refused = p.Values, p.Fields, true
	}
	return f
}

const fieldFeatures = "features"

// mappingValues are a mapping's fields as its form sends them.
func mappingValues(m *licentia.Mapping) url.Values {
	v := url.Values{
		"provider_product_id": {m.ProviderProductID}, "product_id": {m.ProductID}, "limit_kind": {string(m.LimitKind)},
		"limit_count": {strconv.FormatInt(m.LimitCount, 10)}, "on_refund": {string(m.OnRefund)},
		"on_subscription_end": {string(m.OnSubscriptionEnd)}, "send_key_mail": {"no"}, fieldFeatures: m.Features,
	}
	if m.SendKeyMail {
		v.Set("send_key_mail", "yes")
	}
	if m.KeyValidDays != nil {
		v.Set("key_valid_days", strconv.FormatInt(*m.KeyValidDays, 10))
	}
	if m.RenewalURL != nil {
		v.Set("renewal_url", *m.RenewalURL)
	}
	if m.AddsTo != nil {
		v.Set(fieldAddOn, "yes")
	}
	return v
}

// mappingChoices are the product's features fs as boxes, ticked when in
// codes. A ticked code the catalogue no longer has is kept as its own box,
// so a resave is refused in words rather than dropping it unseen.
func mappingChoices(fs []licentia.Feature, codes []string) []mappingChoice {
	out := make([]mappingChoice, 0, len(fs))
	for _, f := range fs {
		out = append(out, mappingChoice{Code: f.Code, Name: f.Name, Ticked: slices.Contains(codes, f.Code)})
	}
	for _, c := range codes {
		if !slices.ContainsFunc(fs, func(f licentia.Feature) bool { return f.Code == c }) {
			out = append(out, mappingChoice{Code: c, Name: c, Ticked: true})
		}
	}
	return out
}

// putMapping creates a mapping from the new form, or replaces one from
// its own form, with the provider product named in provider_product_id.
func (s *Server) putMapping(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.PutMapping
	decodeForm(r.PostForm, &in)
	if b, ok := formBools[strings.ToLower(strings.TrimSpace(r.PostForm.Get(fieldAddOn)))]; ok && b {
		// The API asks adds_to to name the mapping's product again.
		in.AddsTo = new(deref(in.ProductID))
	}
	ppid := strings.TrimSpace(r.PostForm.Get("provider_product_id"))
	form, integ := mappingNew, r.PathValue("id")
	if r.PostForm.Has(fieldReplace) {
		form = mappingEdit + ppid
	} else if ppid != "" {
		ms, err := s.admin.Mappings(r.Context(), v.orgID(), integ)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(ms, func(m licentia.Mapping) bool { return m.ProviderProductID == ppid }) {
			var is licentia.Issues
			is.Add("/provider_product_id", "is mapped already: change that mapping in its own form below")
			return s.showIntegration(w, r, v, refusal(form, r, is.Err()))
		}
	}
	_, err := s.admin.PutMapping(r.Context(), v.actor(), v.orgID(), integ, ppid, in)
	if p := refusal(form, r, err); p != nil {
		return s.showIntegration(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/integrations/"+integ, "mapping-saved")
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
