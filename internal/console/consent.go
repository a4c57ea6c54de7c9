package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// Authorizer is the authorization server's part in the consent page the
// console serves: it checks authorization requests and makes grants. cli
// hands it over, so that the console imports no other front door.
type Authorizer interface {
	CheckAuthorization(ctx context.Context, q url.Values) (*licentia.AuthorizationRequest, error)
	// Approve makes the grant and returns where the member is sent back
	// to, with the code.
	Approve(ctx context.Context, req *licentia.AuthorizationRequest, orgID, memberID string) (string, error)
	// Deny returns where the member is sent back to, with access_denied.
	Deny(req *licentia.AuthorizationRequest) string
}

// authorizationRefusal is an error of the Authorizer refusing a request.
type authorizationRefusal interface {
	error
	// Refusal is where the refusal goes back to the client, or "" when the
	// client cannot be trusted with it and it is shown instead, and why.
	Refusal() (redirectTo, description string)
}

// consentPage is what the consent page shows: the client, by the name it
// registered and the host it is sent back to, and the organization and
// role it would act with.
type consentPage struct {
	Client       string
	RedirectHost string
	// Params are the request's parameters, carried in hidden fields.
	Params url.Values
	// Orgs are the member's organizations to choose from, the session's
	// first; Current is the session's.
	Orgs    []licentia.Membership
	Current licentia.Membership
}

// authorizePage answers an authorization request: a request the
// authorization server refuses is shown, or sent back to the client; a
// visitor not signed in is sent to sign in and brought back here; a
// signed-in member sees the consent page.
func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request) error {
	req, err := s.oauth.CheckAuthorization(r.Context(), r.URL.Query())
	if err != nil {
		return s.authorizationRefused(w, r, err)
	}
	v, err := s.signedIn(w, r)
	if err != nil {
		return err
	}
	if v == nil {
		http.Redirect(w, r, "/console/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return nil
	}
	return s.showConsent(w, r, v, req)
}

func (s *Server) showConsent(w http.ResponseWriter, r *http.Request, v *visit, req *licentia.AuthorizationRequest) error {
	i := slices.IndexFunc(v.Orgs, func(m licentia.Membership) bool { return m.OrgID == v.orgID() })
	orgs := append([]licentia.Membership{v.Orgs[i]}, slices.Delete(slices.Clone(v.Orgs), i, i+1)...)
	w.Header().Set("Content-Security-Policy",
		strings.Replace(web.PagePolicy, "form-action 'self'", "form-action 'self' "+req.FormActionSource(), 1))
	return s.render(w, r, http.StatusOK, "consent", &view{Title: "Allow an AI assistant", Visit: v, Data: consentPage{
		Client: req.ClientName(), RedirectHost: req.RedirectHost(), Params: req.Params(), Orgs: orgs, Current: orgs[0],
	}})
}

// authorize takes the consent form: decision=allow makes a grant and sends
// the member back to the client with a code; decision=deny sends them back
// with access_denied. The request's parameters are checked again, as on
// the page, and the grant is for the organization chosen on the form,
// which must be one of the member's now.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) error {
	params := url.Values{}
	for k, vs := range r.PostForm {
		if k != "decision" && k != "org" {
			params[k] = vs
		}
	}
	req, err := s.oauth.CheckAuthorization(r.Context(), params)
	if err != nil {
		return s.authorizationRefused(w, r, err)
	}
	v, err := s.signedIn(w, r)
	if err != nil {
		return err
	}
	if v == nil {
		http.Redirect(w, r, "/console/sign-in?next="+url.QueryEscape("/oauth/authorize?"+req.Params().Encode()), http.StatusSeeOther)
		return nil
	}
	org := r.PostForm.Get("org")
	i := slices.IndexFunc(v.Orgs, func(m licentia.Membership) bool { return m.OrgID == org })
	if i < 0 {
		return licentia.Errorf(licentia.CodeForbidden, "You are not a member of the organization chosen. Open the authorization again.")
	}
	switch r.PostForm.Get("decision") {
	case "allow":
		to, err := s.oauth.Approve(r.Context(), req, v.Orgs[i].OrgID, v.Orgs[i].ID)
		if err != nil {
			return err
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return nil
	case "deny":
		http.Redirect(w, r, s.oauth.Deny(req), http.StatusSeeOther)
		return nil
	}
	var is licentia.Issues
	is.Add("/decision", `must be "allow" or "deny"`)
	return is.Err()
}

// authorizationRefused answers a request the authorization server
// refused: back to the client when it may be trusted with the refusal,
// otherwise on the error page.
func (s *Server) authorizationRefused(w http.ResponseWriter, r *http.Request, err error) error {
	e, ok := errors.AsType[authorizationRefusal](err)
	if !ok {
		return err
	}
	to, why := e.Refusal()
	if to != "" {
		http.Redirect(w, r, to, http.StatusSeeOther)
		return nil
	}
	return licentia.Errorf(licentia.CodeValidationFailed, "This authorization request cannot be used: %s", why)
}
