package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

type licencesPage struct {
	Products []*admin.ProductView
	Query    url.Values
	// Rows are the page's licences, newest first; Next is the link to the
	// next page, "" on the last.
	Rows []licenceRow
	Next string
	// Filtered is set when any filter or search is given, Matched says
	// what the search matched ("order id", "machine id", or "" for an
	// email, key, licence id or external reference).
	Filtered bool
	Matched  string
	// Export is the address of the current filter's export, whole: a
	// query string put into an href by the template would be escaped.
	Export string
	// Catalogues are the products' features, for the issue form, and
	// Codes every feature code of any product, for the feature filter.
	Catalogues []catalogue
	Codes      []featureCode
}

type licenceRow struct {
	Licence     licentia.Licence
	State       licentia.State
	ProductName string
	// Machines is "2 of 3": live machines of those the licence allows.
	Machines string
}

// licenceFilters are the filters the page's form sends; search is the
// search box, by what it matched on the first page.
var licenceFilters = []string{"product_id", "state", "term", "source", "feature"}

// licences lists the organization's licences, newest first, a page at a
// time, with the filters and search the form sends, and offers the issue
// form.
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
	if page.Catalogues, page.Codes, err = s.catalogues(ctx, v, ps, p); err != nil {
		return err
	}
	filters, by := searchFilters(page.Query)
	q := admin.ListQuery{LicenceFilters: filters, Cursor: optional(page.Query, "cursor")}
	list, err := s.admin.ListLicences(ctx, v.orgID(), q)
	if by == "" && q.Q != nil && err == nil && len(list.Licences) == 0 && q.Cursor == nil {
		// Nothing by email, key or reference: the search may be an order
		// or a machine id, as a support mail quotes them.
		for _, alt := range []string{"order", "machine"} {
			q.LicenceFilters, _ = searchFilters(withValue(page.Query, "by", alt))
			if list, err = s.admin.ListLicences(ctx, v.orgID(), q); err != nil || len(list.Licences) > 0 {
				by = alt
				break
			}
		}
	}
	if fp := refusal("find", r, err); fp != nil && p == nil {
		return s.render(w, r, fp.Status, "licences", &view{Title: "Licences", Section: "licences", Visit: v, Data: page, problem: fp})
	}
	if err != nil {
		return err
	}
	page.Filtered = q.Q != nil || q.OrderID != nil || q.MachineID != nil || q.ProductID != nil || q.State != nil || q.Term != nil || q.Source != nil ||
		q.Feature != nil
	page.Matched = map[string]string{"order": "order id", "machine": "machine id"}[by]
	keep := withValue(page.Query, "by", by)
	keep.Del("cursor")
	page.Export = "/console/licences/export?" + keep.Encode()
	if list.Next != nil {
		page.Next = "/console/licences?" + withValue(keep, "cursor", *list.Next).Encode()
	}
	products := map[string]*licentia.Product{}
	for _, pv := range ps {
		products[pv.Product.ID] = pv.Product
	}
	for _, l := range list.Licences {
		page.Rows = append(page.Rows, machinesRow(l, products, list.Now))
	}
	return s.render(w, r, http.StatusOK, "licences", &view{Title: "Licences", Section: "licences", Visit: v, Notice: notice(r), Data: page, problem: p})
}

// exportLicences streams the CSV of the page's current filter, as the
// API's export does.
func (s *Server) exportLicences(w http.ResponseWriter, r *http.Request, v *visit) error {
	filters, _ := searchFilters(r.URL.Query())
	e, err := s.admin.ExportLicences(r.Context(), v.orgID(), filters)
	if err != nil {
		return err
	}
	if err := web.StreamCSV(w, r, e, web.DefaultDatabaseTimeout, exportWriteTimeout); err != nil {
		s.log.WarnContext(r.Context(), "licence export ended early", "org_id", v.orgID(), "error", err.Error())
	}
	return nil
}

// exportWriteTimeout is how long an export may take to write each page,
// as the API's (httpapi.WriteTimeout).
const exportWriteTimeout = 35 * time.Second

// searchFilters reads the page's filters from its query: the form's
// selects, and the search box (q) as by says to read it: an order id, a
// machine id, or (by empty) an email, key, licence id or external
// reference. Empty values are no filter.
func searchFilters(vals url.Values) (admin.LicenceFilters, string) {
	var f admin.LicenceFilters
	only := url.Values{}
	for _, name := range licenceFilters {
		only.Set(name, vals.Get(name))
	}
	decodeForm(only, &f)
	search := optional(vals, "q")
	by := vals.Get("by")
	switch by {
	case "order":
		f.OrderID = search
	case "machine":
		f.MachineID = search
	default:
		by, f.Q = "", search
	}
	return f, by
}

// withValue returns a copy of vals with name set to value, or removed
// when value is "".
func withValue(vals url.Values, name, value string) url.Values {
	out := url.Values{}
	for k, v := range vals {
		out[k] = v
	}
	if value == "" {
		out.Del(name)
	} else {
		out.Set(name, value)
	}
	return out
}

// issueLicence issues a licence from the console: source admin, event
// licence.issued, as the API's issue.
func (s *Server) issueLicence(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.NewLicence
	decodeForm(r.PostForm, &in)
	reqs, fields := sentGrants(r.PostForm, strings.TrimSpace(r.PostForm.Get("product_id")))
	in.Features = reqs
	lv, err := s.admin.IssueLicence(r.Context(), v.actor(), v.orgID(), in)
	if p := refusal("issue", r, err); p != nil {
		return s.showLicences(w, r, v, grantProblems(p, fields, s.grantNames(r.Context(), v)))
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
	// Allowed is how many machines the limit lets hold a seat, Used how
	// many do now. Kept is how many keep their seat, counted by no limit,
	// while the licence is not in force (a reinstatement or renewal gives
	// them back their use).
	Allowed, Used, Kept int64
	// StatusOps are the status changes the licence's state allows, in the
	// order the page offers them.
	StatusOps []string
	History   []historyRow
	Live      []licentia.Activation
	Past      []licentia.Activation
	// Grants are the licence's features; Choices the product's, for the
	// form that changes them.
	Grants  []admin.NamedGrant
	Choices []grantChoice
	// Use is the licence's leases in use and transfers of the last 30
	// days; nil for an anonymised licence, which has neither.
	Use *admin.LicenceUse
}

// statusOps are the status changes a licence allows: revoking what is
// not revoked, expiring what is in force, reinstating what is stored
// revoked or expired (a licence past its expiry is stored active, and
// comes back by a later expiry, not by reinstating). An anonymised
// licence allows none.
func statusOps(l *licentia.Licence, state licentia.State) []string {
	if l.AnonymisedAt != nil {
		return nil
	}
	var ops []string
	if l.Status != licentia.StatusRevoked {
		ops = append(ops, revoke.form)
	}
	if state.IsInForce() {
		ops = append(ops, expire.form)
	}
	if l.Status != licentia.StatusActive {
		ops = append(ops, reinstate.form)
	}
	return ops
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
	now := s.admin.Now()
	page := licencePage{View: lv, State: lv.Licence.DerivedState(now), ProductName: lv.Licence.ProductID,
		Allowed: lv.Licence.LimitCount, Used: lv.Licence.LiveMachines(now)}
	page.Kept = lv.Licence.LiveActivations - page.Used
	if pv, err := s.admin.Product(ctx, v.orgID(), lv.Licence.ProductID); err == nil {
		page.ProductName, page.Allowed = pv.Product.Name, lv.Licence.MachinesAllowed(pv.Product.MachinesPerSeat)
	}
	fs, err := s.admin.Features(ctx, v.orgID(), lv.Licence.ProductID)
	if err != nil {
		return err
	}
	page.Grants = admin.NameGrants(lv.Licence.Features, fs, s.admin.Now())
	refused := p
	if p != nil && p.Form != formFeatures {
		refused = nil
	}
	page.Choices = grantChoices(lv.Licence.ProductID, fs, lv.Licence.Features, refused)
	page.StatusOps = statusOps(lv.Licence, page.State)
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
		es, err := s.admin.LicenceAudit(ctx, v.orgID(), id)
		if err != nil {
			return err
		}
		if page.History, err = s.history(ctx, v.orgID(), es, false); err != nil {
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
