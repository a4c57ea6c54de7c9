package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

type licencesPage struct {
	Products []*admin.ProductView
	// Searched is set once a find ran; Found are its licences, newest
	// first, with their products' names.
	Searched bool
	Found    []foundLicence
	Query    url.Values
	// Full is set when the find hit its limit: more licences match.
	Full bool
}

type foundLicence struct {
	Licence     licentia.Licence
	State       licentia.State
	ProductName string
}

// licences finds licences by an email address (or its start), a licence
// key, an id or an external reference, and offers the issue form.
func (s *Server) licences(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showLicences(w, r, v, nil)
}

func (s *Server) showLicences(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	ctx := r.Context()
	ps, err := s.admin.Products(ctx, v.orgID())
	if err != nil {
		return err
	}
	page := licencesPage{Products: ps, Query: r.URL.Query()}
	if strings.TrimSpace(page.Query.Get("q")) != "" || page.Query.Get("email") != "" || page.Query.Get("external_ref") != "" {
		var q admin.FindQuery
		decodeForm(page.Query, &q)
		ls, err := s.admin.FindLicences(ctx, v.orgID(), q)
		if fp := refusal("find", r, err); fp != nil && p == nil {
			return s.render(w, r, fp.Status, "licences", &view{Title: "Licences", Section: "licences", Visit: v,
				Data: page, problem: fp})
		}
		if err != nil {
			return err
		}
		names := productNames(ps)
		now := s.admin.Now()
		page.Searched, page.Full = true, len(ls) >= admin.MaxFind
		for _, l := range ls {
			page.Found = append(page.Found, foundLicence{Licence: l, State: l.DerivedState(now), ProductName: names[l.ProductID]})
		}
	}
	return s.render(w, r, http.StatusOK, "licences", &view{Title: "Licences", Section: "licences", Visit: v, Notice: notice(r), Data: page, problem: p})
}

func productNames(ps []*admin.ProductView) map[string]string {
	out := make(map[string]string, len(ps))
	for _, p := range ps {
		out[p.Product.ID] = p.Product.Name
	}
	return out
}

// issueLicence issues a licence from the console: source admin, event
// licence.issued, as the API's issue.
func (s *Server) issueLicence(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.NewLicence
	decodeForm(r.PostForm, &in)
	lv, err := s.admin.IssueLicence(r.Context(), v.actor(), v.orgID(), in)
	if p := refusal("issue", r, err); p != nil {
		return s.showLicences(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/licences/"+lv.Licence.ID, "issued")
}

type licencePage struct {
	View        *admin.LicenceView
	State       licentia.State
	ProductName string
	Audit       []licentia.AuditEntry
	Live        []licentia.Activation
	Past        []licentia.Activation
	// Use is the licence's leases in use and transfers of the last 30
	// days; nil for an anonymised licence, which has neither.
	Use *admin.LicenceUse
}

// licence shows a licence with its key, its machines and its audit log,
// and the forms that change it.
func (s *Server) licence(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showLicence(w, r, v, r.PathValue("id"), nil)
}

func (s *Server) showLicence(w http.ResponseWriter, r *http.Request, v *visit, id string, p *problem) error {
	ctx := r.Context()
	id, err := licenceID(id)
	if err != nil {
		return err
	}
	lv, err := s.admin.Licence(ctx, v.orgID(), id)
	if err != nil {
		return err
	}
	page := licencePage{View: lv, State: lv.Licence.DerivedState(s.admin.Now()), ProductName: lv.Licence.ProductID}
	if pv, err := s.admin.Product(ctx, v.orgID(), lv.Licence.ProductID); err == nil {
		page.ProductName = pv.Product.Name
	}
	for _, a := range lv.Activations {
		if a.IsLive() {
			page.Live = append(page.Live, a)
		} else {
			page.Past = append(page.Past, a)
		}
	}
	if lv.Licence.AnonymisedAt == nil {
		if page.Use, err = s.admin.LicenceUse(ctx, v.orgID(), id); err != nil {
			return err
		}
	}
	if v.Member.Role.HasScope(licentia.ScopeAuditRead) {
		if page.Audit, err = s.admin.LicenceAudit(ctx, v.orgID(), id); err != nil {
			return err
		}
	}
	return s.render(w, r, http.StatusOK, "licence", &view{Title: "Licence", Section: "licences", Visit: v, Notice: notice(r), Data: page, problem: p})
}

// licenceID normalises a licence id from a path; one that is not a UUID
// names no licence.
func licenceID(id string) (string, error) {
	id, ok := licentia.ParseUUID(id)
	if !ok {
		return "", licentia.Errorf(licentia.CodeLicenceNotFound, "Licence not found.")
	}
	return id, nil
}

// statusOp is one of the status changes, with its form and notice.
type statusOp struct {
	form, done string
	run        func(s *admin.Service, ctx context.Context, actor licentia.Actor, orgID, id string, in admin.ChangeStatus) (*admin.Change, error)
}

var (
	revoke    = statusOp{"revoke", "revoked", (*admin.Service).RevokeLicence}
	expire    = statusOp{"expire", "expired", (*admin.Service).ExpireLicence}
	reinstate = statusOp{"reinstate", "reinstated", (*admin.Service).ReinstateLicence}
)

// statusChange revokes, expires or reinstates a licence, with a reason.
func (s *Server) statusChange(op statusOp) memberFunc {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		id, err := licenceID(r.PathValue("id"))
		if err != nil {
			return err
		}
		var in admin.ChangeStatus
		decodeForm(r.PostForm, &in)
		c, err := op.run(s.admin, r.Context(), v.actor(), v.orgID(), id, in)
		if p := refusal(op.form, r, err); p != nil {
			return s.showLicence(w, r, v, id, p)
		}
		if err != nil {
			return err
		}
		done := op.done
		if !c.Changed {
			done = "unchanged"
		}
		return seeOther(w, r, "/console/licences/"+id, done)
	}
}

// changeLicence changes a licence's limit, expiry or major from the
// licence page: empty fields stay, and the perpetual box removes the
// expiry, as expires_at null does in the API.
func (s *Server) changeLicence(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := licenceID(r.PathValue("id"))
	if err != nil {
		return err
	}
	var in admin.LicenceChange
	// An empty limit keeps the licence's own value, as every field of the
	// form does; the boxes make it follow the product's again.
	follows := map[string]string{"max_concurrent": "concurrent_follows", "transfers_per_30_days": "transfers_follow"}
	for field := range follows {
		if strings.TrimSpace(r.PostForm.Get(field)) == "" {
			r.PostForm.Del(field)
		}
	}
	decodeForm(r.PostForm, &in)
	for field, box := range follows {
		if b := formBools[strings.ToLower(strings.TrimSpace(r.PostForm.Get(box)))]; b && !r.PostForm.Has(field) {
			in.SetNull("/" + field)
		}
	}
	if b, ok := formBools[strings.ToLower(strings.TrimSpace(r.PostForm.Get("perpetual")))]; ok && b {
		if in.ExpiresAt != nil || in.Unread["/expires_at"] != "" {
			var is licentia.Issues
			is.Add("/expires_at", "leave it empty to make the licence perpetual")
			return s.showLicence(w, r, v, id, refusal("change", r, is.Err()))
		}
		in.SetNull("/expires_at")
	}
	c, err := s.admin.UpdateLicence(r.Context(), v.actor(), v.orgID(), id, in)
	if p := refusal("change", r, err); p != nil {
		return s.showLicence(w, r, v, id, p)
	}
	if err != nil {
		return err
	}
	done := "licence-changed"
	if !c.Changed {
		done = "unchanged"
	}
	return seeOther(w, r, "/console/licences/"+id, done)
}

// anonymiseWord is what the member types to confirm an erasure, which
// cannot be undone.
const anonymiseWord = "anonymise"

// anonymiseLicence erases a licence's customer data once the member typed
// the confirmation word.
func (s *Server) anonymiseLicence(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := licenceID(r.PathValue("id"))
	if err != nil {
		return err
	}
	confirmed := strings.EqualFold(strings.TrimSpace(r.PostForm.Get("confirm")), anonymiseWord)
	if !confirmed {
		var is licentia.Issues
		is.Add("/confirm", "type %s to confirm: the erasure cannot be undone", anonymiseWord)
		return s.showLicence(w, r, v, id, refusal("anonymise", r, is.Err()))
	}
	c, err := s.admin.AnonymiseLicence(r.Context(), v.actor(), v.orgID(), id, admin.Anonymise{Confirm: &confirmed})
	if p := refusal("anonymise", r, err); p != nil {
		return s.showLicence(w, r, v, id, p)
	}
	if err != nil {
		return err
	}
	done := "anonymised"
	if !c.Changed {
		done = "unchanged"
	}
	return seeOther(w, r, "/console/licences/"+id, done)
}

// deactivateActivation frees a machine's seat for the maker.
func (s *Server) deactivateActivation(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, ok := licentia.ParseUUID(r.PathValue("id"))
	if !ok {
		return licentia.Errorf(licentia.CodeNotFound, "Activation not found.")
	}
	c, err := s.admin.DeactivateActivation(r.Context(), v.actor(), v.orgID(), id)
	if err != nil {
		return err
	}
	done := "freed"
	if !c.Changed {
		done = "unchanged"
	}
	return seeOther(w, r, "/console/licences/"+c.Activation.LicenceID, done)
}
