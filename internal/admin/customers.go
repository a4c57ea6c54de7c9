package admin

import (
	"context"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// CustomersPerPage is how many customers a page of the console's
// Customers view shows, and CustomerLicences how many of each customer's
// licences it lists, newest first.
const (
	CustomersPerPage = 20
	CustomerLicences = 50
)

// Customer is one email's licences, newest first, with each licence's
// live machines (Live, by licence id).
type Customer struct {
	store.Customer
	Licences []licentia.Licence
	Live     map[string][]licentia.Activation
}

// CustomerPage is a page of customers; More says a further page exists.
type CustomerPage struct {
	Customers []Customer
	More      bool
}

// Customers lists a page (from 0) of the organization's customers, newest
// activity first, those whose email starts with prefix when it is given.
// A prefix longer than an email can be matches nobody.
func (s *Service) Customers(ctx context.Context, orgID string, prefix *string, page int) (*CustomerPage, error) {
	if prefix != nil && utf8.RuneCountInString(*prefix) > licentia.MaxEmail {
		return &CustomerPage{}, nil
	}
	cs, err := s.store.Customers(ctx, orgID, store.CustomerFilter{Prefix: prefix,
		Offset: max(page, 0) * CustomersPerPage, Limit: CustomersPerPage + 1})
	if err != nil {
		return nil, err
	}
	out := &CustomerPage{More: len(cs) > CustomersPerPage}
	now := s.now()
	for _, c := range cs[:min(len(cs), CustomersPerPage)] {
		email := c.Email
		ls, err := s.store.FindLicences(ctx, orgID, store.LicenceFilter{Email: &email, Limit: CustomerLicences}, now)
		if err != nil {
			return nil, err
		}
		cu := Customer{Customer: c, Licences: ls, Live: map[string][]licentia.Activation{}}
		for _, l := range ls {
			if l.LiveMachines(now) == 0 {
				continue
			}
			if cu.Live[l.ID], err = s.store.LiveActivations(ctx, orgID, l.ID); err != nil {
				return nil, err
			}
		}
		out.Customers = append(out.Customers, cu)
	}
	return out, nil
}
