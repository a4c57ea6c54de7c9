package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/web"
)

// listedLicence is a list item: find's licence object with its
// live_machines.
type listedLicence struct {
	events.Licence
	LiveMachines int64 `json:"live_machines"`
}

type licenceListAnswer struct {
	Licences   []listedLicence `json:"licences"`
	NextCursor *string         `json:"next_cursor"`
}

func (s *Server) listLicences(w http.ResponseWriter, r *http.Request) error {
	var q admin.ListQuery
	if err := web.Decode(r, nil, &q); err != nil {
		return err
	}
	page, err := s.admin.ListLicences(r.Context(), callerOf(r).OrgID, q)
	if err != nil {
		return err
	}
	out := licenceListAnswer{Licences: make([]listedLicence, len(page.Licences)), NextCursor: page.Next}
	for i := range page.Licences {
		l := &page.Licences[i]
		out.Licences[i] = listedLicence{Licence: events.LicenceOf(l, page.Now), LiveMachines: l.LiveMachines(page.Now)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) exportLicences(w http.ResponseWriter, r *http.Request) error {
	var q admin.LicenceFilters
	if err := web.Decode(r, nil, &q); err != nil {
		return err
	}
	e, err := s.admin.ExportLicences(r.Context(), callerOf(r).OrgID, q)
	if err != nil {
		return err
	}
	if err := web.StreamCSV(w, r, e, s.timeout, WriteTimeout); err != nil {
		// The answer has begun: the error can only end it early, and the
		// client sees a cut file with no final line.
		s.log.WarnContext(r.Context(), "licence export ended early", "request_id", requestID(r.Context()),
			"org_id", callerOf(r).OrgID, "error", err.Error())
	}
	return nil
}
