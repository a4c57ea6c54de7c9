package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// listHeldOrders answers the organization's orders still held, oldest
// first.
func (s *Server) listHeldOrders(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	hs, err := s.admin.ListHeldOrders(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]events.HeldOrder, len(hs))
	for i := range hs {
		out[i] = events.HeldOrderOf(&hs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"held_orders": out})
	return nil
}

// releaseHeldOrder issues a held order with the corrections of its body
// (an empty body or {} releases it as held): 201 with the licences issued,
// without their keys (provider:write does not read keys).
func (s *Server) releaseHeldOrder(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.HeldRelease
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	ls, err := s.admin.ReleaseHeldOrder(r.Context(), c.Actor, c.OrgID, id, in)
	if err != nil {
		return err
	}
	now := s.admin.Now()
	out := make([]events.Licence, len(ls))
	for i := range ls {
		out[i] = events.LicenceOf(&ls[i], now)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"licences": out})
	return nil
}

// dropHeldOrder drops a held order: 204.
func (s *Server) dropHeldOrder(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	c := callerOf(r)
	if err := s.admin.DropHeldOrder(r.Context(), c.Actor, c.OrgID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
