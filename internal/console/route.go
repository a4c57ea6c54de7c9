package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

// memberFunc is a page or form of a signed-in member: it decodes, calls
// one operation as the member and renders or redirects, returning an error
// for the error page.
type memberFunc func(w http.ResponseWriter, r *http.Request, v *visit) error

// publicFunc is a page or form for which nobody need be signed in.
type publicFunc func(w http.ResponseWriter, r *http.Request) error

// need is what a member's role must allow to use a page or form: the
// scope the API route of the same operation needs, or one of the role
// rules with no scope (API keys, connecting integrations).
type need struct {
	what string
	ok   func(licentia.Role) bool
}

func scope(sc licentia.Scope) need {
	return need{what: "use " + string(sc), ok: func(r licentia.Role) bool { return r.HasScope(sc) }}
}

var (
	anyMember  = need{what: "see this", ok: licentia.Role.Valid}
	apiKeys    = need{what: "manage API keys", ok: licentia.Role.CanManageAPIKeys}
	connecting = need{what: "connect integrations", ok: licentia.Role.CanConnectIntegrations}
)

// page registers a GET page of a signed-in member.
func (s *Server) page(pattern string, n need, h memberFunc) {
	s.mux.Handle(pattern, s.asMember(n, h, false))
}

// form registers a POST form of a signed-in member. Cross-origin posts are
// refused before the session is read.
func (s *Server) form(pattern string, n need, h memberFunc) {
	s.mux.Handle(pattern, s.origin.Handler(s.asMember(n, h, true)))
}

// open registers a GET page for which nobody need be signed in.
func (s *Server) open(pattern string, h publicFunc) {
	s.mux.Handle(pattern, s.public(h, false))
}

// openForm registers a POST form for which nobody need be signed in
// (signing in, the links, the customer page); cross-origin posts are
// refused.
func (s *Server) openForm(pattern string, h publicFunc) {
	s.mux.Handle(pattern, s.origin.Handler(s.public(h, true)))
}

// upload registers a POST form with a file for which nobody need be
// signed in; cross-origin posts are refused. The handler reads the
// multipart form itself, with its own bound.
func (s *Server) upload(pattern string, h publicFunc) {
	s.mux.Handle(pattern, s.origin.Handler(s.public(h, false)))
}

func (s *Server) public(h publicFunc, post bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if post {
			if err := readForm(w, r); err != nil {
				s.fail(w, r, nil, err)
				return
			}
		}
		if err := h(w, r); err != nil {
			s.fail(w, r, nil, err)
		}
	})
}

// asMember reads the request's member afresh, with their role at this
// moment, sends a request without one to sign in, and refuses with 403 a
// role without n: a forged post of a form the page did not show is
// refused like a shown one.
func (s *Server) asMember(n need, h memberFunc, post bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := s.signedIn(w, r)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		if v == nil {
			to := "/console/sign-in"
			if !post {
				to += "?next=" + url.QueryEscape(r.URL.RequestURI())
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if !n.ok(v.Member.Role) {
			s.fail(w, r, v, &licentia.Error{
				Code:    licentia.CodeInsufficientRole,
				Message: "The " + string(v.Member.Role) + " role cannot " + n.what + ".",
				Details: map[string]any{"role": string(v.Member.Role)},
			})
			return
		}
		if post {
			if err := readForm(w, r); err != nil {
				s.fail(w, r, v, err)
				return
			}
		}
		if err := h(w, r, v); err != nil {
			s.fail(w, r, v, err)
		}
	})
}

// crossOrigin answers a form posted from another site.
func (s *Server) crossOrigin(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, nil, licentia.Errorf(licentia.CodeForbidden,
		"This form was sent from another site, so it was refused. Open the page on this site and send it again."))
}

// notFound answers a console path that names no page.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, nil, licentia.Errorf(licentia.CodeNotFound, "There is no page here."))
}

// safeNext is where to go after signing in: a path of this service's
// console or authorization pages, never another site.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.HasPrefix(next, "//") ||
		strings.Contains(next, "\\") || !(strings.HasPrefix(u.Path, "/console/") || strings.HasPrefix(u.Path, "/oauth/")) {
		return "/console/"
	}
	return u.RequestURI()
}
