package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/web"
)

// handlerFunc is a route's handler: it decodes, calls one operation, writes
// the answer and returns an error for writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers an administration route. The checks run in the contract's
// order: identify the caller, rate limit (per key, or per client address
// when the key is missing or refused), 401, 403 scope, 413, then the
// Idempotency-Key of a write (see idempotent); the handler then answers 400,
// 404, 409, 402 and 503 in that order.
func (s *Server) handle(pattern string, scope licentia.Scope, h handlerFunc) {
	s.scopes[pattern] = scope
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		caller, authErr := s.auth.Authenticate(r.Context(), authorization(r.Header))
		if authErr == nil && web.IsForAssistant(r.Context()) {
			caller = caller.AsAssistant()
		}
		if authErr != nil && licentia.ErrorCode(authErr) != licentia.CodeUnauthorized {
			// The key could not be read (the database failed or did not
			// answer in time): a server error, counted against nobody. Counted
			// by address, every key behind one address would share a bucket
			// and be refused 429 for an outage that is not theirs.
			s.writeError(w, r, authErr)
			return
		}
		subject := ratelimit.ClientSubject(s.clientAddr(r))
		if authErr == nil {
			subject = caller.RateSubject()
		}
		if err := s.allow(w, r, ratelimit.Admin, subject+"|"+pattern); err != nil {
			s.writeError(w, r, err)
			return
		}
		if authErr != nil {
			s.writeError(w, r, authErr)
			return
		}
		// A member's team change is judged by the operation, which answers
		// insufficient_role naming their role; a key never holds the scope.
		teamByMember := scope == licentia.ScopeMembersWrite && caller.IsMember()
		if !caller.HasScope(scope) && !teamByMember {
			s.writeError(w, r, &licentia.Error{
				Code:    licentia.CodeInsufficientScope,
				Message: "The caller lacks a scope this route needs.",
				Details: map[string]any{"missing": []licentia.Scope{scope}},
			})
			return
		}
		if !web.LimitBody(w, r) {
			s.writeError(w, r, web.ErrTooLarge)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey, caller))
		if err := s.idempotent(w, r, h); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// notForAssistants refuses an AI assistant that passed the scope check 403
// forbidden, whatever its role: an assistant never adds, changes or removes
// a webhook endpoint nor replaces its secret. Endpoints receive the
// organization's events, customer emails among them, and an assistant led
// astray by what it reads must not be able to send them elsewhere.
func notForAssistants(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if callerOf(r).Assistant {
			return licentia.Errorf(licentia.CodeForbidden,
				"An AI assistant cannot add, change or remove a webhook endpoint or replace its secret.")
		}
		return h(w, r)
	}
}

// RouteScope returns the scope the administration route pattern needs, as
// the route table names it, and false for a pattern that is not one.
func (s *Server) RouteScope(pattern string) (licentia.Scope, bool) {
	scope, ok := s.scopes[pattern]
	return scope, ok
}

// authorization is the request's Authorization value, or "" (refused as a
// missing key) when it has more than one: servers and proxies disagree on
// which of several counts, so a key one of them checked could be another
// than the key used here.
func authorization(h http.Header) string {
	if v := h.Values("Authorization"); len(v) == 1 {
		return v[0]
	}
	return ""
}

// operator registers a route for operators: no key, no rate limit.
func (s *Server) operator(pattern string, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// allow counts the request against rule and writes the rate-limit
// headers; when the limit is passed it sets Retry-After-<name> and returns
// the 429 to answer. If the limiter fails, the request is let through: a
// limiter outage must not take the service down.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, rule ratelimit.Rule, key string) error {
	res, err := s.limiter.Allow(r.Context(), rule, key)
	if err != nil {
		s.log.WarnContext(r.Context(), "rate limiter unavailable", "request_id", requestID(r.Context()), "error", err.Error())
		return nil
	}
	setRateHeaders(w.Header(), rule.Name, res.Limit, res.Remaining, res.Reset)
	if res.Allowed {
		return nil
	}
	s.metrics.RateLimited(rule.Name)
	w.Header().Set("Retry-After-"+rule.Name, strconv.FormatInt(ceilSeconds(res.Reset), 10))
	return licentia.Errorf(licentia.CodeRateLimited, "Too many requests; retry after the seconds in Retry-After-%s.", rule.Name)
}

// callerOf returns the authenticated caller of an administration route.
func callerOf(r *http.Request) *auth.Caller {
	return r.Context().Value(callerKey).(*auth.Caller)
}
