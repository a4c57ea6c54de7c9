package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

type auditPage struct {
	Rows []historyRow
	// Next is the link to the next, older page, or "".
	Next string
	// Query is the filter shown; Actions and Actors what it offers.
	Query   url.Values
	Actions []actionChoice
	Actors  []actorChoice
}

type actionChoice struct{ Value, Label string }

type actorChoice struct{ Value, Label string }

// auditActorTypes are the actors the filter offers without an id.
var auditActorTypes = []licentia.ActorType{licentia.ActorCustomer, licentia.ActorSystem, licentia.ActorApplication,
	licentia.ActorProvider, licentia.ActorOperator}

// audit shows the organization's audit log, newest first, a page at a
// time (?before=<entry id>), filtered by action, actor (a member, an API
// key or a kind of actor) and date: team changes, licence changes and the
// rest.
func (s *Server) audit(w http.ResponseWriter, r *http.Request, v *visit) error {
	ctx := r.Context()
	vals := r.URL.Query()
	q, err := auditQuery(vals)
	if err != nil {
		return err
	}
	es, next, err := s.admin.OrganizationAudit(ctx, v.orgID(), q)
	if err != nil {
		return err
	}
	page := auditPage{Query: vals}
	if page.Rows, err = s.history(ctx, v.orgID(), es, true); err != nil {
		return err
	}
	if next != nil {
		page.Next = "/console/audit?" + withValue(vals, "before", *next).Encode()
	}
	n, err := s.names(ctx, v.orgID())
	if err != nil {
		return err
	}
	page.Actions, page.Actors = auditChoices(n)
	return s.render(w, r, http.StatusOK, "audit", &view{Title: "Audit log", Section: "audit", Visit: v, Data: page})
}

// auditQuery reads the audit log's filters: an actor is "member:<id>",
// "api_key:<id>" or a kind of actor; from and to are dates, both days
// included.
func auditQuery(vals url.Values) (store.AuditQuery, error) {
	q := store.AuditQuery{Before: optional(vals, "before"), Action: optional(vals, "action")}
	var is licentia.Issues
	if a := optional(vals, "actor"); a != nil {
		typ, id, _ := strings.Cut(*a, ":")
		at := licentia.ActorType(typ)
		q.ActorType = &at
		if id != "" {
			q.ActorID = &id
		}
	}
	day := func(name string, days int) *time.Time {
		v := optional(vals, name)
		if v == nil {
			return nil
		}
		t, err := time.Parse(time.DateOnly, *v)
		if err != nil {
			is.Add("query."+name, "must be a date (2026-12-31)")
			return nil
		}
		t = t.AddDate(0, 0, days)
		return &t
	}
	q.From, q.To = day("from", 0), day("to", 1)
	return q, is.Err()
}

// auditChoices are the filter's actions, in words, and its actors: the
// members by email, the API keys by name, then the kinds of actor.
func auditChoices(n *names) ([]actionChoice, []actorChoice) {
	var actions []actionChoice
	for _, a := range licentia.AuditActions {
		actions = append(actions, actionChoice{a, actionTitle(a)})
	}
	slices.SortFunc(actions, func(a, b actionChoice) int { return strings.Compare(a.Label, b.Label) })
	var actors []actorChoice
	for _, m := range sortedNames(n.members) {
		actors = append(actors, actorChoice{"member:" + m[0], m[1]})
	}
	for _, k := range sortedNames(n.keys) {
		actors = append(actors, actorChoice{"api_key:" + k[0], "API key " + k[1]})
	}
	for _, t := range auditActorTypes {
		actors = append(actors, actorChoice{string(t), n.actor(licentia.Actor{Type: t})})
	}
	return actions, actors
}

// sortedNames are a map's id and name pairs by name.
func sortedNames(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for id, name := range m {
		out = append(out, [2]string{id, name})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[1]+a[0], b[1]+b[0]) })
	return out
}
