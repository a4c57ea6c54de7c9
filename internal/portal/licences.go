package portal

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// maxLicences is the most licences of one address a page lists.
const maxLicences = 200

type licencesPage struct {
	Licences []licenceRow
}

// licenceRow is one licence as the customer sees it.
type licenceRow struct {
	ID          string
	ProductName string
	Key         string
	State       licentia.State
	Limit       string
	Expiry      string
	// Features are the licence's grants, named from its product's
	// catalogue.
	Features []admin.NamedGrant
	Machines []licentia.Activation
	// InForce is whether the key works: only then can it be mailed or
	// reissued.
	InForce bool
	// Use is how the licence's transfers and floating use stand; nil when
	// neither transfers nor a limit of computers at once apply.
	Use *admin.LicenceUse
}

// showLicences lists every licence of the customer's address in the
// organization, newest first, with a notice or a problem of the last form.
func (s *Server) showLicences(w http.ResponseWriter, r *http.Request, c *customer, status int, notice, problem string) error {
	ls, err := s.licences(r.Context(), c)
	if err != nil {
		return err
	}
	return s.render(w, r, status, "licences", &view{Title: "Your licences", Brand: c.brand, Email: c.session.Email,
		Notice: notice, Problem: problem, Data: licencesPage{Licences: ls}})
}

// licences reads the customer's licences: every product and source, never
// an anonymised one, nor one whose key was reissued (its replacement is
// listed instead).
func (s *Server) licences(ctx context.Context, c *customer) ([]licenceRow, error) {
	now := s.now()
	found, err := s.store.FindLicences(ctx, c.orgID(), store.LicenceFilter{Email: &c.session.Email, Limit: maxLicences}, now)
	if err != nil {
		return nil, err
	}
	products := map[string]*licentia.Product{}
	grants := s.admin.GrantNamer(c.orgID())
	var out []licenceRow
	for _, l := range found {
		if !listed(&l, c) {
			continue
		}
		v, err := s.admin.Licence(ctx, c.orgID(), l.ID)
		if err != nil {
			return nil, err
		}
		p, ok := products[l.ProductID]
		if !ok {
			if p, err = s.store.Product(ctx, c.orgID(), l.ProductID); err != nil {
				return nil, err
			}
			products[l.ProductID] = p
		}
		row := licenceRow{ID: l.ID, ProductName: p.Name, State: l.DerivedState(now), Limit: courier.LimitWords(v.Licence),
			Expiry: courier.ExpiryWords(v.Licence, now), InForce: l.DerivedState(now).IsInForce()}
		if v.Key != nil {
			row.Key = *v.Key
		}
		if row.Features, err = grants.Name(ctx, v.Licence); err != nil {
			return nil, err
		}
		for _, a := range v.Activations {
			if a.IsLive() {
				row.Machines = append(row.Machines, a)
			}
		}
		// Only a licence with transfers on or a limit of computers at once
		// has anything to say about them.
		if v.Licence.TransfersAllowed(p) > 0 || v.Licence.ConcurrentAllowed(p) != nil {
			if row.Use, err = s.admin.LicenceUse(ctx, c.orgID(), l.ID); err != nil {
				return nil, err
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// listed reports whether the customer sees l: theirs, neither anonymised
// nor reissued.
func listed(l *licentia.Licence, c *customer) bool {
	return l.OrgID == c.orgID() && strings.EqualFold(l.Email, c.session.Email) && l.AnonymisedAt == nil && l.ReplacedBy == nil
}

// errNoLicence answers an id that names no licence of the customer's: one
// missing, another customer's, another organization's, anonymised or
// reissued all answer alike.
var errNoLicence = licentia.Errorf(licentia.CodeLicenceNotFound, "There is no such licence among yours.")

// errNoMachine answers likewise for a machine.
var errNoMachine = licentia.Errorf(licentia.CodeNotFound, "There is no such computer among yours.")

// ownLicence reads a licence the customer sees, by id, or errNoLicence.
func (s *Server) ownLicence(ctx context.Context, c *customer, id string) (*admin.LicenceView, error) {
	v, err := s.admin.Licence(ctx, c.orgID(), id)
	if code := licentia.ErrorCode(err); code == licentia.CodeLicenceNotFound || code == licentia.CodeValidationFailed {
		return nil, errNoLicence
	}
	if err != nil {
		return nil, err
	}
	if !listed(v.Licence, c) {
		return nil, errNoLicence
	}
	return v, nil
}

// ownMachine reads a live machine of one of the customer's licences, by
// its activation id, or errNoMachine.
func (s *Server) ownMachine(ctx context.Context, c *customer, id string) (*licentia.Activation, error) {
	a, err := s.store.Activation(ctx, c.orgID(), id)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, errNoMachine
	}
	if err != nil {
		return nil, err
	}
	if !a.IsLive() {
		return nil, errNoMachine
	}
	if _, err := s.ownLicence(ctx, c, a.LicenceID); errors.Is(err, errNoLicence) {
		return nil, errNoMachine
	} else if err != nil {
		return nil, err
	}
	return a, nil
}
