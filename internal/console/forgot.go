package console

import (
	"net/http"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

type forgotPage struct {
	Email string
	// Sent is set on the answer to the form, the same for every address.
	Sent bool
}

// forgotPage offers the form that mails a link to set a new password.
func (s *Server) forgotPage(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "forgot", &view{Title: "Forgot password", Data: forgotPage{}})
}

// forgotPassword mails a one-time link that sets a new console password
// to the address typed, when it is a member's, and answers the very same
// page whether it is or not, so the page tells nobody who has an account.
// Every request counts in the sign-in limits, per address and per client
// address, before anything is looked up, and is never given back: each
// may send a mail.
func (s *Server) forgotPassword(w http.ResponseWriter, r *http.Request) error {
	email := strings.TrimSpace(r.PostForm.Get("email"))
	if why := licentia.CheckEmail(email); why != "" {
		var is licentia.Issues
		is.Add("/email", "%s", why)
		p := refusal("forgot", r, is.Err())
		return s.render(w, r, p.Status, "forgot", &view{Title: "Forgot password", Data: forgotPage{Email: email}, problem: p})
	}
	if _, wait, limited := s.reserve(r.Context(), s.signInLimits(r, email)); limited {
		return s.tooMany(w, r, wait, "/console/forgot-password")
	}
	if err := s.admin.ForgotPassword(r.Context(), email); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "forgot", &view{Title: "Check your mail", Data: forgotPage{Email: email, Sent: true}})
}
