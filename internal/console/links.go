package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

type linkPage struct {
	View   *admin.LinkView
	Action string
	// Current is set when the link takes the account's current password:
	// an invitation to an address that already has one.
	Current bool
}

// current reports whether a link takes the account's current password
// rather than setting a new one.
func current(lv *admin.LinkView) bool { return lv.Kind == admin.LinkInvitation && lv.HasPassword }

// linkPage opens a setup or invitation link: a form with the field
// password. An unknown, used, revoked, replaced or expired link answers
// 404 alike.
func (s *Server) linkPage(kind string) publicFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		lv, err := s.admin.OpenLink(r.Context(), kind, r.PathValue("token"))
		if err != nil {
			return linkError(err)
		}
		return s.showLink(w, r, lv, nil)
	}
}

func (s *Server) showLink(w http.ResponseWriter, r *http.Request, lv *admin.LinkView, p *problem) error {
	title := "Join " + lv.OrgName
	if lv.Kind == admin.LinkSetup {
		title = "Set your password"
	}
	// The form posts back to the path it came from, which holds the token;
	// the Referrer-Policy keeps it from leaving with any request.
	return s.render(w, r, http.StatusOK, "link", &view{Title: title, Data: linkPage{View: lv, Action: r.URL.EscapedPath(), Current: current(lv)}, problem: p})
}

// linkError is the page of a link that cannot be used.
func linkError(err error) error {
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return licentia.Errorf(licentia.CodeNotFound,
			"This link does not work: it was already used, replaced by a newer one, revoked, or it expired. Ask for a new one.")
	}
	return err
}

// useLink sets the password a link asks for (or, joining with an account
// that has one, checks it), makes the member, and signs them in. A wrong
// password of an existing account counts as a failed sign-in.
func (s *Server) useLink(kind string) publicFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		token := r.PathValue("token")
		lv, err := s.admin.OpenLink(ctx, kind, token)
		if err != nil {
			return linkError(err)
		}
		// The current password is counted before it is checked, as a
		// sign-in's is, and given back unless it was wrong.
		var hs []held
		if current(lv) {
			reserved, wait, limited := s.reserve(ctx, s.signInLimits(r, lv.Email))
			if limited {
				return s.tooMany(w, r, wait, r.URL.EscapedPath())
			}
			hs = reserved
			s.passwordChecks.Add(1)
		}
		acct, m, err := s.admin.UseLink(ctx, kind, token, r.PostForm.Get("password"))
		if current(lv) && licentia.ErrorCode(err) == licentia.CodeUnauthorized {
			s.failed(ctx)
		} else {
			s.release(ctx, hs)
		}
		if err != nil {
			if p := refusal("link", r, err); p != nil && licentia.ErrorCode(err) != licentia.CodeNotFound {
				p.Values.Del("password")
				return s.showLink(w, r, lv, p)
			}
			return linkError(err)
		}
		if err := s.startSession(w, r, acct.ID, m.OrgID); err != nil {
			return err
		}
		return seeOther(w, r, "/console/", "joined")
	}
}
