package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
)

type purchasePage struct {
	Email string
	// OrderID and LicenceKey are what the buyer typed; one of them proves
	// the purchase with the email address.
	OrderID    string
	LicenceKey string
	// Purchase is set once a lookup matched.
	Purchase *purchase.Purchase
	Licences []purchaseLicence
	// Org is the purchase's organization, whose branding the page wears.
	Org *licentia.Organization
	// Portal is the path of the customer portal of the purchase's
	// organization, where the buyer signs in to manage every licence of
	// theirs.
	Portal string
}

type purchaseLicence struct {
	Licence     licentia.Licence
	ProductName string
	Key         string
	State       licentia.State
	Machines    []licentia.Activation
	// Features are the licence's grants, named from its product's
	// catalogue.
	Features []admin.NamedGrant
}

// purchasePage is the customer page's form: the buyer's email address and
// the order number from the receipt, or a licence key. A link may fill them
// in; nothing is looked up until the buyer sends the form.
func (s *Server) purchasePage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	return s.render(w, r, http.StatusOK, "purchase", &view{Title: "Your purchase", Customer: brandFor(nil),
		Data: purchasePage{Email: q.Get("email"), OrderID: q.Get("order_id"), LicenceKey: q.Get("licence_key")}})
}

// lookupPurchase shows a purchase's licence keys and the machines holding
// their seats. It counts in the API's lookup limit, per client address,
// and every mismatch answers the same page, as the API's lookup does.
func (s *Server) lookupPurchase(w http.ResponseWriter, r *http.Request) error {
	return s.showPurchase(w, r, "")
}

// freeMachine frees one machine of the purchase: the buyer proves the
// purchase again with the same form fields, and the machine must hold a
// seat of one of its licences. The audit actor is the customer.
func (s *Server) freeMachine(w http.ResponseWriter, r *http.Request) error {
	return s.showPurchase(w, r, strings.TrimSpace(r.PostForm.Get("activation")))
}

// showPurchase looks the purchase up, frees the machine free when one is
// named, and shows the purchase.
func (s *Server) showPurchase(w http.ResponseWriter, r *http.Request, free string) error {
	ctx := r.Context()
	page, done, err := s.provePurchase(w, r)
	if done {
		return err
	}
	again := func(err error) error { return s.refusePurchase(w, r, "lookup", page, err) }
	found := page.Purchase
	notice := ""
	if free != "" {
		l, ok := holder(page.Licences, free)
		if !ok {
			return again(licentia.Errorf(licentia.CodeNotFound, "This machine holds no seat of this purchase's licences."))
		}
		c, err := s.admin.DeactivateActivation(ctx, licentia.CustomerActor, l.Licence.OrgID, free)
		if err != nil {
			return again(err)
		}
		notice = notices["unchanged"]
		if c.Changed {
			notice = notices["freed"]
		}
		if page.Licences, err = s.machines(ctx, found); err != nil {
			return err
		}
	}
	return s.render(w, r, http.StatusOK, "purchase", &view{Title: "Your purchase", Customer: brandFor(page.Org), Notice: notice, Data: page})
}

// provePurchase counts a customer page's post in the lookup limit, finds
// the purchase its email and order id (or licence key) name, and reads its
// machines. When the purchase is not proved, the answer is written and
// done is true.
func (s *Server) provePurchase(w http.ResponseWriter, r *http.Request) (page purchasePage, done bool, err error) {
	ctx := r.Context()
	email, orderID, key := r.PostForm.Get("email"), r.PostForm.Get("order_id"), r.PostForm.Get("licence_key")
	page = purchasePage{Email: email, OrderID: orderID, LicenceKey: key}
	if wait, ok := s.allowLookup(ctx, r); !ok {
		return page, true, s.tooMany(w, r, wait, "/console/purchase")
	}
	found, err := s.purchases.Lookup(ctx, purchase.Lookup{Email: &email, OrderID: filled(orderID), LicenceKey: filled(key)})
	if err != nil {
		return page, true, s.refusePurchase(w, r, "lookup", page, err)
	}
	page.Purchase = found
	if len(found.Licences) > 0 {
		org, err := s.store.Organization(ctx, found.Licences[0].Licence.OrgID)
		if err != nil {
			return page, true, err
		}
		page.Org = org
		page.Portal = "/portal/" + url.PathEscape(org.Slug) + "/"
	}
	page.Licences, err = s.machines(ctx, found)
	return page, err != nil, err
}

// filled is a form field's value, nil when left empty: the form always
// sends both the order field and the key field.
func filled(v string) *string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return &v
}

// refusePurchase shows the purchase page again with the refusal of one of
// its forms.
func (s *Server) refusePurchase(w http.ResponseWriter, r *http.Request, form string, page purchasePage, err error) error {
	p := refusal(form, r, err)
	if p == nil {
		return err
	}
	return s.render(w, r, p.Status, "purchase", &view{Title: "Your purchase", Customer: brandFor(page.Org), Data: page, problem: p})
}

// allowLookup counts a lookup in the lookup limit, with the subject the
// API's lookup routes count in, so the console does not add to a
// guesser's tries. A limiter that fails lets the lookup through.
func (s *Server) allowLookup(ctx context.Context, r *http.Request) (wait time.Duration, ok bool) {
	res, err := s.limiter.Allow(ctx, ratelimit.Lookup, ratelimit.ClientSubject(s.clientAddr(r)))
	if err != nil {
		s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
		return 0, true
	}
	if !res.Allowed {
		s.metrics.RateLimited(ratelimit.Lookup.Name)
	}
	return res.Reset, res.Allowed
}

// machines reads the live machines and the named features of each
// licence of a purchase.
func (s *Server) machines(ctx context.Context, p *purchase.Purchase) ([]purchaseLicence, error) {
	out := make([]purchaseLicence, len(p.Licences))
	var names *admin.GrantNamer
	for i := range p.Licences {
		ms, err := s.purchases.Machines(ctx, &p.Licences[i])
		if err != nil {
			return nil, err
		}
		l := p.Licences[i]
		if names == nil {
			names = s.admin.GrantNamer(l.Licence.OrgID)
		}
		fs, err := names.Name(ctx, &l.Licence)
		if err != nil {
			return nil, err
		}
		out[i] = purchaseLicence{Licence: l.Licence, ProductName: l.ProductName, Key: l.Key, State: l.State, Machines: ms, Features: fs}
	}
	return out, nil
}

// holder is the licence of ls one of whose live machines is activation id.
func holder(ls []purchaseLicence, id string) (*purchaseLicence, bool) {
	for i := range ls {
		for _, m := range ls[i].Machines {
			if m.ID == id {
				return &ls[i], true
			}
		}
	}
	return nil, false
}
