package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

type customersPage struct {
	Query string
	// Portal is the organization's customer portal, where a customer
	// manages their licences themselves.
	Portal    string
	Customers []customerCard
	// Prev and Next link the neighbouring pages, "" where there is none.
	Prev, Next string
}

// customerCard is one customer: their licences, the orders those came
// from, and the machines live on them.
type customerCard struct {
	Email        string
	LastIssuedAt string
	Licences     []licenceRow
	Orders       []string
	Machines     []licentia.Activation
}

// customers lists the organization's licences grouped by email, newest
// activity first, a page at a time, searched by the start of an email.
func (s *Server) customers(w http.ResponseWriter, r *http.Request, v *visit) error {
	ctx := r.Context()
	q := r.URL.Query()
	var prefix *string
	if p := q.Get("q"); p != "" {
		prefix = &p
	}
	n, _ := strconv.Atoi(q.Get("page"))
	n = max(n, 0)
	list, err := s.admin.Customers(ctx, v.orgID(), prefix, n)
	if err != nil {
		return err
	}
	ps, err := s.admin.Products(ctx, v.orgID())
	if err != nil {
		return err
	}
	products := map[string]*licentia.Product{}
	for _, pv := range ps {
		products[pv.Product.ID] = pv.Product
	}
	page := customersPage{Query: q.Get("q"), Portal: "/portal/" + url.PathEscape(v.OrgSlug) + "/"}
	now := s.admin.Now()
	for _, c := range list.Customers {
		card := customerCard{Email: c.Email, LastIssuedAt: c.LastIssuedAt.Format("2006-01-02")}
		seen := map[string]bool{}
		for _, l := range c.Licences {
			card.Licences = append(card.Licences, machinesRow(l, products, now))
			for _, o := range []*string{l.Provider.OrderNumber, l.Provider.OrderID} {
				if o != nil && !seen[*o] {
					seen[*o] = true
					card.Orders = append(card.Orders, *o)
				}
			}
			card.Machines = append(card.Machines, c.Live[l.ID]...)
		}
		page.Customers = append(page.Customers, card)
	}
	at := func(n int) string {
		vals := url.Values{}
		if page.Query != "" {
			vals.Set("q", page.Query)
		}
		if n > 0 {
			vals.Set("page", strconv.Itoa(n))
		}
		if len(vals) == 0 {
			return "/console/customers"
		}
		return "/console/customers?" + vals.Encode()
	}
	if n > 0 {
		page.Prev = at(n - 1)
	}
	if list.More {
		page.Next = at(n + 1)
	}
	return s.render(w, r, http.StatusOK, "customers", &view{Title: "Customers", Section: "customers", Visit: v, Data: page})
}

// machinesRow is a licence's row as the lists show it: its product's name
// and its machines as used of allowed ("2 of 3").
func machinesRow(l licentia.Licence, products map[string]*licentia.Product, now time.Time) licenceRow {
	row := licenceRow{Licence: l, State: l.DerivedState(now), ProductName: l.ProductID}
	allowed := l.LimitCount
	if pr := products[l.ProductID]; pr != nil {
		row.ProductName, allowed = pr.Name, l.MachinesAllowed(pr.MachinesPerSeat)
	}
	row.Machines = fmt.Sprintf("%d of %d", l.LiveMachines(now), allowed)
	return row
}
