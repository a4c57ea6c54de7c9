package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
)

type issuedAnswer struct {
	Licence    events.Licence `json:"licence"`
	LicenceKey string         `json:"licence_key"`
}

func (s *Server) issueLicence(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	readQuery(r, &is)
	b, err := readBody(r, &is, "product_id", "email", "limit_kind", "limit_count", "expires_at", "major", "id", "external_ref", "trial")
	if err != nil {
		return err
	}
	in := admin.NewLicence{
		ID:          b.str("id", false),
		ProductID:   b.str("product_id", true),
		Email:       b.str("email", true),
		LimitKind:   (*licentia.LimitKind)(b.str("limit_kind", false)),
		LimitCount:  b.integer("limit_count", false, 1, licentia.MaxLimitCount),
		ExpiresAt:   b.time("expires_at", false),
		Major:       b.integer("major", false, 1, licentia.MaxMajor),
		ExternalRef: b.str("external_ref", false),
		Trial:       b.boolean("trial", false),
	}
	is.Merge(in.Validate(s.admin.Now()))
	if err := is.Err(); err != nil {
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

// enumParam reads an optional query parameter that must be one of values.
func enumParam[T ~string](q *query, name string, values ...T) *T {
	v, ok := q.get(name)
	if !ok {
		return nil
	}
	if !slices.Contains(values, T(v)) {
		q.issues.Add("query."+name, "must be one of %v", values)
		return nil
	}
	t := T(v)
	return &t
}

func (s *Server) findLicences(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	q := readQuery(r, &is, "email", "q", "product_id", "external_ref", "state", "status", "term", "source")
	f := admin.FindQuery{
		State:  enumParam(q, "state", licentia.StateActive, licentia.StateTrial, licentia.StateExpired, licentia.StateRevoked),
		Status: enumParam(q, "status", licentia.StatusActive, licentia.StatusRevoked, licentia.StatusExpired),
		Term:   enumParam(q, "term", licentia.TermPerpetual, licentia.TermTerm, licentia.TermSubscription),
		Source: enumParam(q, "source", licentia.SourceAdmin, licentia.SourceProvider),
	}
	for _, p := range []struct {
		name string
		dst  **string
		max  int
	}{{"email", &f.Email, 320}, {"q", &f.Q, 2048}, {"external_ref", &f.ExternalRef, licentia.MaxExternalRef}, {"product_id", &f.ProductID, 63}} {
		if v, ok := q.get(p.name); ok {
			if n := utf8.RuneCountInString(v); n == 0 || n > p.max {
				is.Add("query."+p.name, "must be 1 to %d characters", p.max)
				continue
			}
			*p.dst = &v
		}
	}
	if f.ProductID != nil {
		if msg := licentia.CheckProductID(*f.ProductID); msg != "" {
			is.Add("query.product_id", "%s", msg)
		}
	}
	// An external reference is printable ASCII: one that is not names no
	// licence, and is refused like a malformed one on issue.
	if f.ExternalRef != nil {
		if msg := licentia.CheckExternalRef(*f.ExternalRef); msg != "" {
			is.Add("query.external_ref", "%s", msg)
		}
	}
	if _, ok := q.get("external_ref"); ok {
		if _, ok := q.get("product_id"); !ok {
			is.Add("query.product_id", "is required with external_ref")
		}
	}
	_, e := q.get("email")
	_, qq := q.get("q")
	_, ref := q.get("external_ref")
	if !e && !qq && !ref {
		is.Add("query", "give at least one of email, q, external_ref")
	}
	if err := is.Err(); err != nil {
		return err
	}
	ls, err := s.admin.FindLicences(r.Context(), callerOf(r).OrgID, f)
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
	var is licentia.Issues
	q := readQuery(r, &is, "product_id", "since")
	var productID *string
	if v, ok := q.get("product_id"); ok {
		if msg := licentia.CheckProductID(v); msg != "" {
			is.Add("query.product_id", "%s", msg)
		}
		productID = &v
	}
	since := s.admin.Now().Add(-admin.DefaultCountWindow)
	if v, ok := q.get("since"); ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			is.Add("query.since", "must be an RFC 3339 time with an offset")
		}
		since = t.UTC()
	}
	if err := is.Err(); err != nil {
		return err
	}
	c := callerOf(r)
	if productID != nil {
		if _, err := s.admin.Product(r.Context(), c.OrgID, *productID); err != nil {
			return err
		}
	}
	n, err := s.admin.CountLicences(r.Context(), c.OrgID, productID, since)
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
type statusOp func(ctx context.Context, actor licentia.Actor, orgID, id, reason string) (*admin.Change, error)

// statusChange serves revoke, expire and reinstate: body { reason }.
func (s *Server) statusChange(op statusOp) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var is licentia.Issues
		id := pathUUID(r, "id", &is)
		readQuery(r, &is)
		b, err := readBody(r, &is, "reason")
		if err != nil {
			return err
		}
		reason := b.str("reason", true)
		if reason != nil {
			if msg := licentia.CheckReason(*reason); msg != "" {
				is.Add("/reason", "%s", msg)
			}
		}
		if err := is.Err(); err != nil {
			return err
		}
		c := callerOf(r)
		ch, err := op(r.Context(), c.Actor, c.OrgID, id, *reason)
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
	readQuery(r, &is)
	b, err := readBody(r, &is, "confirm")
	if err != nil {
		return err
	}
	if confirm := b.boolean("confirm", true); confirm != nil && !*confirm {
		is.Add("/confirm", "must be true")
	}
	if err := is.Err(); err != nil {
		return err
	}
	c := callerOf(r)
	ch, err := s.admin.AnonymiseLicence(r.Context(), c.Actor, c.OrgID, id)
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
