package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// heldReasons say in the maker's words why an order was held.
var heldReasons = map[licentia.HeldReason]string{
	licentia.HeldEmailInvalid:     "The buyer's email address is not one a licence can be issued to.",
	licentia.HeldTextInvalid:      "The provider sent text that is not valid UTF-8; what could not be read is left out.",
	licentia.HeldLimitTooLarge:    "The mapping's limit times the quantity bought is over the largest limit.",
	licentia.HeldNoLicenceToAddTo: "An add-on, and the buyer has no licence to add it to.",
}

// heldView is a held order as the page shows it.
type heldView struct {
	Order licentia.HeldOrder
	Why   string
	// Form names the order's release form, for its refusals.
	Form string
}

type heldPage struct {
	Orders []heldView
}

// heldOrders lists the paid orders held because they could not be issued
// as they stood, with a release form (corrections) and a drop button for
// members who may change integrations' mappings.
func (s *Server) heldOrders(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showHeldOrders(w, r, v, nil)
}

func (s *Server) showHeldOrders(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	hs, err := s.admin.ListHeldOrders(r.Context(), v.orgID())
	if err != nil {
		return err
	}
	page := heldPage{}
	for _, h := range hs {
		page.Orders = append(page.Orders, heldView{Order: h, Why: heldReasons[h.Reason], Form: "release-" + h.ID})
	}
	return s.render(w, r, http.StatusOK, "held", &view{Title: "Held orders", Section: "held", Visit: v,
		Notice: notice(r), Data: page, problem: p})
}

// releaseHeldOrder issues a held order with the corrections given; a
// refusal is shown next to that order's form.
func (s *Server) releaseHeldOrder(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.HeldRelease
	decodeForm(r.PostForm, &in)
	id := r.PathValue("id")
	_, err := s.admin.ReleaseHeldOrder(r.Context(), v.actor(), v.orgID(), id, in)
	if p := refusal("release-"+id, r, err); p != nil {
		return s.showHeldOrders(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/orders/held", "held-released")
}

// dropHeldOrder drops a held order: it is never issued.
func (s *Server) dropHeldOrder(w http.ResponseWriter, r *http.Request, v *visit) error {
	id := r.PathValue("id")
	err := s.admin.DropHeldOrder(r.Context(), v.actor(), v.orgID(), id)
	if p := refusal("release-"+id, r, err); p != nil {
		return s.showHeldOrders(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/orders/held", "held-dropped")
}
