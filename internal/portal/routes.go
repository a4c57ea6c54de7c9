package portal

import (
	"errors"
	"io/fs"
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// routes registers every page. Each POST is a form: cross-origin posts are
// refused before anything is read.
func (s *Server) routes() {
	static, _ := fs.Sub(files, "static")
	s.mux.Handle("GET /portal/assets/portal.css", http.StripPrefix("/portal/assets/", http.FileServerFS(static)))
	s.mux.Handle("GET /portal/{org}/brand.css", s.public(s.brandStyle))
	s.mux.Handle("GET /portal/{org}/{$}", s.public(s.home))
	s.form("POST /portal/{org}/sign-in", s.public(s.sendLink))
	s.mux.Handle("GET /portal/{org}/sign-in/{token}", s.public(s.linkPage))
	s.form("POST /portal/{org}/sign-in/{token}", s.public(s.useLink))
	s.form("POST /portal/{org}/sign-out", s.public(s.signOut))
	s.form("POST /portal/{org}/machines/{id}/free", s.signedIn(s.freeMachine))
	s.form("POST /portal/{org}/machines/{id}/rename", s.signedIn(s.renameMachine))
	s.form("POST /portal/{org}/licences/{id}/send-key", s.signedIn(s.sendKey))
	s.form("POST /portal/{org}/licences/{id}/reissue", s.signedIn(s.reissue))
	s.mux.Handle("POST /portal/{org}/offline", s.origin.Handler(s.upload(s.activateOffline)))
	s.mux.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, nil, licentia.Errorf(licentia.CodeNotFound, "There is no page here."))
	})
}

// pageFunc is a page of an organization's portal, for anyone.
type pageFunc func(w http.ResponseWriter, r *http.Request, b *brand, org *licentia.Organization) error

// customerFunc is a form of a signed-in customer.
type customerFunc func(w http.ResponseWriter, r *http.Request, c *customer) error

func (s *Server) form(pattern string, h http.Handler) { s.mux.Handle(pattern, s.origin.Handler(h)) }

// public finds the organization the path names (an unknown one answers
// the not-found page), reads a posted form, and runs h.
func (s *Server) public(h pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		org, err := s.organization(r)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		b := brandOf(org)
		if r.Method == http.MethodPost {
			if err := readForm(w, r); err != nil {
				s.fail(w, r, b, err)
				return
			}
		}
		if err := h(w, r, b, org); err != nil {
			s.fail(w, r, b, err)
		}
	})
}

// signedIn runs h as the customer the session cookie stands for, in the
// path's organization. Without one the form answers the sign-in page
// again: its session ended.
func (s *Server) signedIn(h customerFunc) http.Handler {
	return s.public(func(w http.ResponseWriter, r *http.Request, b *brand, org *licentia.Organization) error {
		c, err := s.customer(w, r, org)
		if err != nil {
			return err
		}
		if c == nil {
			http.Redirect(w, r, b.Base(), http.StatusSeeOther)
			return nil
		}
		c.brand = b
		return h(w, r, c)
	})
}

// upload is signedIn for a form with a file, which h reads itself with
// its own bound.
func (s *Server) upload(h customerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		org, err := s.organization(r)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		b := brandOf(org)
		c, err := s.customer(w, r, org)
		if err == nil && c == nil {
			http.Redirect(w, r, b.Base(), http.StatusSeeOther)
			return
		}
		if err == nil {
			c.brand = b
			err = h(w, r, c)
		}
		if err != nil {
			s.fail(w, r, b, err)
		}
	})
}

var errNoPortal = licentia.Errorf(licentia.CodeNotFound, "There is no customer page here.")

// organization is the organization whose slug the path names.
func (s *Server) organization(r *http.Request) (*licentia.Organization, error) {
	org, err := s.store.OrganizationBySlug(r.Context(), r.PathValue("org"))
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, errNoPortal
	}
	return org, err
}

var (
	errTooLarge = licentia.Errorf(licentia.CodePayloadTooLarge, "The form is over 65,536 bytes.")
	errBadForm  = licentia.Errorf(licentia.CodeValidationFailed, "The form could not be read.")
)

// readForm parses a posted form of at most web.MaxBody bytes.
func readForm(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > web.MaxBody {
		return errTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, web.MaxBody)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errTooLarge
		}
		return errBadForm
	}
	return nil
}

// crossOrigin answers a form posted from another site.
func (s *Server) crossOrigin(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, nil, licentia.Errorf(licentia.CodeForbidden,
		"This form was sent from another site, so it was refused. Open the page on this site and send it again."))
}

// brandStyle is the organization's accent colour as a stylesheet: pages
// carry no inline style, which the Content-Security-Policy refuses. The
// accent is #rrggbb, checked when it was set.
func (s *Server) brandStyle(w http.ResponseWriter, r *http.Request, _ *brand, org *licentia.Organization) error {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	if a := org.Branding.Accent; a != nil && licentia.CheckAccent(*a) == "" {
		_, _ = w.Write([]byte(":root { --accent: " + *a + "; }\n"))
	}
	return nil
}
