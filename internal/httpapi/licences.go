package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

type issuedAnswer struct {
	Licence    events.Licence `json:"licence"`
	LicenceKey string         `json:"licence_key"`
}

func (s *Server) issueLicence(w http.ResponseWriter, r *http.Request) error {
	var in admin.NewLicence
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	c := callerOf(r)
	v, err := s.admin.IssueLicence(r.Context(), c.Actor, c.OrgID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, issuedAnswer{Licence: events.LicenceOf(v.Licence, s.admin.Now()), LicenceKey: *v.Key})
	return nil
}

func (s *Server) findLicences(w http.ResponseWriter, r *http.Request) error {
	var q admin.FindQuery
	if err := web.Decode(r, nil, &q); err != nil {
		return err
	}
	ls, err := s.admin.FindLicences(r.Context(), callerOf(r).OrgID, q)
	if err != nil {
		return err
	}
	now := s.admin.Now()
	out := make([]events.Licence, len(ls))
	for i := range ls {
		out[i] = events.LicenceOf(&ls[i], now)
	}
	writeJSON(w, http.StatusOK, map[string]any{"licences": out})
	return nil
}

type countsJSON struct {
	All          int64        `json:"all"`
	Active       int64        `json:"active"`
	Trial        int64        `json:"trial"`
	Expired      int64        `json:"expired"`
	Revoked      int64        `json:"revoked"`
	Perpetual    int64        `json:"perpetual"`
	Term         int64        `json:"term"`
	Subscription int64        `json:"subscription"`
	BySource     bySourceJSON `json:"by_source"`
	LiveMachines int64        `json:"live_machines"`
	IssuedSince  int64        `json:"issued_since"`
	RevokedSince int64        `json:"revoked_since"`
}

type bySourceJSON struct {
	Admin    int64 `json:"admin"`
	Provider int64 `json:"provider"`
}

func (s *Server) countLicences(w http.ResponseWriter, r *http.Request) error {
	var q admin.CountQuery
	if err := web.Decode(r, nil, &q); err != nil {
		return err
	}
	n, since, err := s.admin.CountLicences(r.Context(), callerOf(r).OrgID, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"since": licentia.FormatTime(since), "counts": countsJSON{
		All: n.All, Active: n.Active, Trial: n.Trial, Expired: n.Expired, Revoked: n.Revoked,
		Perpetual: n.Perpetual, Term: n.Term, Subscription: n.Subscription,
		BySource:     bySourceJSON{Admin: n.Admin, Provider: n.Provider},
		LiveMachines: n.LiveMachines, IssuedSince: n.IssuedSince, RevokedSince: n.RevokedSince,
	}})
	return nil
}

type licenceAnswer struct {
	Licence     events.Licence      `json:"licence"`
	LicenceKey  *string             `json:"licence_key"`
	Activations []events.Activation `json:"activations"`
}

func (s *Server) getLicence(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	v, err := s.admin.Licence(r.Context(), callerOf(r).OrgID, id)
	if err != nil {
		return err
	}
	out := licenceAnswer{Licence: events.LicenceOf(v.Licence, s.admin.Now()), LicenceKey: v.Key,
		Activations: make([]events.Activation, len(v.Activations))}
	for i := range v.Activations {
		out.Activations[i] = events.ActivationOf(&v.Activations[i])
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type auditEventJSON struct {
	ID     string          `json:"id"`
	Action string          `json:"action"`
	Actor  licentia.Actor  `json:"actor"`
	At     string          `json:"at"`
	Data   json.RawMessage `json:"data"`
}

func (s *Server) licenceAudit(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	entries, err := s.admin.LicenceAudit(r.Context(), callerOf(r).OrgID, id)
	if err != nil {
		return err
	}
	out := make([]auditEventJSON, len(entries))
	for i, e := range entries {
		out[i] = auditEventJSON{ID: e.ID, Action: e.Action, Actor: e.Actor, At: licentia.FormatTime(e.At), Data: e.Data}
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
	return nil
}

type changeAnswer struct {
	Licence events.Licence `json:"licence"`
	Changed bool           `json:"changed"`
}

// statusOp is one of admin's status changes.
type statusOp func(ctx context.Context, actor licentia.Actor, orgID, id string, in admin.ChangeStatus) (*admin.Change, error)

// statusChange serves revoke, expire and reinstate: body { reason }.
func (s *Server) statusChange(op statusOp) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var is licentia.Issues
		id := pathUUID(r, "id", &is)
		var in admin.ChangeStatus
		if err := web.Decode(r, is, &in); err != nil {
			return err
		}
		c := callerOf(r)
		ch, err := op(r.Context(), c.Actor, c.OrgID, id, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, changeAnswer{Licence: events.LicenceOf(ch.Licence, s.admin.Now()), Changed: ch.Changed})
		return nil
	}
}

func (s *Server) anonymiseLicence(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.Anonymise
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	ch, err := s.admin.AnonymiseLicence(r.Context(), c.Actor, c.OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changeAnswer{Licence: events.LicenceOf(ch.Licence, s.admin.Now()), Changed: ch.Changed})
	return nil
}

// patchLicence changes a licence's limit, expiry or major in place.
func (s *Server) patchLicence(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.LicenceChange
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	ch, err := s.admin.UpdateLicence(r.Context(), c.Actor, c.OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, changeAnswer{Licence: events.LicenceOf(ch.Licence, s.admin.Now()), Changed: ch.Changed})
	return nil
}

type activationChangeAnswer struct {
	Activation events.Activation `json:"activation"`
	Changed    bool              `json:"changed"`
}

// deactivateActivation frees a machine; it takes no body.
func (s *Server) deactivateActivation(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	c := callerOf(r)
	ch, err := s.admin.DeactivateActivation(r.Context(), c.Actor, c.OrgID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, activationChangeAnswer{Activation: events.ActivationOf(ch.Activation), Changed: ch.Changed})
	return nil
}

// reissueLicence replaces a licence's key: body { reason }; 201 with the new
// licence and its key, as an issue answers.
func (s *Server) reissueLicence(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.Reissue
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	v, err := s.admin.ReissueLicence(r.Context(), c.Actor, c.OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, issuedAnswer{Licence: events.LicenceOf(v.Licence, s.admin.Now()), LicenceKey: *v.Key})
	return nil
}
