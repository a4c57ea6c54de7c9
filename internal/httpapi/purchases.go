package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/web"
)

// lookup registers a purchase lookup route: no API key; the lookup rate
// limit, then 413; the handler answers the rest. The limit is counted per
// client address alone, not per route as the others are: the GET and the
// POST share one allowance of 5 a minute, so the two routes do not double
// a guesser's tries.
func (s *Server) lookup(pattern string, h handlerFunc) {
	s.keyless(pattern, ratelimit.Lookup, func(r *http.Request) string { return ratelimit.ClientSubject(s.clientAddr(r)) }, nil, h)
}

type purchaseAnswer struct {
	Purchase purchaseObject `json:"purchase"`
}

type purchaseObject struct {
	OrderID  *string           `json:"order_id"`
	Licences []purchaseLicence `json:"licences"`
}

// purchaseLicence is what a buyer sees of a licence: its key and standing,
// never the maker's notes (external_ref, reasons) or provider ids.
type purchaseLicence struct {
	ID           string             `json:"id"`
	ProductID    string             `json:"product_id"`
	ProductName  string             `json:"product_name"`
	LicenceKey   string             `json:"licence_key"`
	State        licentia.State     `json:"state"`
	LimitKind    licentia.LimitKind `json:"limit_kind"`
	LimitCount   int64              `json:"limit_count"`
	ExpiresAt    *string            `json:"expires_at"`
	IssuedAt     string             `json:"issued_at"`
	LiveMachines int64              `json:"live_machines"`
	// Features are the licence's grants, as the licence's own answers
	// show them: what the buyer's purchase unlocks.
	Features []events.Grant `json:"features"`
}

func purchaseAnswerOf(p *purchase.Purchase) purchaseAnswer {
	a := purchaseAnswer{Purchase: purchaseObject{OrderID: p.OrderID, Licences: make([]purchaseLicence, 0, len(p.Licences))}}
	for _, pl := range p.Licences {
		l := &pl.Licence
		a.Purchase.Licences = append(a.Purchase.Licences, purchaseLicence{
			ID: l.ID, ProductID: l.ProductID, ProductName: pl.ProductName, LicenceKey: pl.Key, State: pl.State,
			LimitKind: l.LimitKind, LimitCount: l.LimitCount, ExpiresAt: licentia.FormatTimePtr(l.ExpiresAt),
			IssuedAt: licentia.FormatTime(l.IssuedAt), LiveMachines: l.LiveActivations, Features: events.GrantsOf(l.Features),
		})
	}
	return a
}

func (s *Server) lookupPurchaseQuery(w http.ResponseWriter, r *http.Request) error {
	var in purchase.LookupQuery
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	p, err := s.purchases.LookupQuery(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, purchaseAnswerOf(p))
	return nil
}

func (s *Server) lookupPurchase(w http.ResponseWriter, r *http.Request) error {
	var in purchase.Lookup
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	p, err := s.purchases.Lookup(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, purchaseAnswerOf(p))
	return nil
}
