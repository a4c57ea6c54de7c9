package portal

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// SessionLifetime is how long a portal session lasts after sign-in,
// whatever happens.
const SessionLifetime = 12 * time.Hour

// The session cookie's names. Under https it takes the __Host- prefix,
// which browsers accept only when Secure, with Path=/ and no Domain: no
// other host, and no plain-http page, can set or shadow it.
const (
	cookieName       = "licentia_portal"
	secureCookieName = "__Host-licentia_portal"
)

// customer is who a request acts as: the session's address in the
// session's organization, which is the path's.
type customer struct {
	session *licentia.PortalSession
	org     *licentia.Organization
	brand   *brand
}

func (c *customer) orgID() string { return c.org.ID }

// customer returns the customer the request's session cookie stands for in
// org, or nil: no cookie, an unknown token, a session past its end (which
// is deleted), or a session of another organization's portal (which is
// left alone: the customer may go back to it).
func (s *Server) customer(w http.ResponseWriter, r *http.Request, org *licentia.Organization) (*customer, error) {
	sess := s.sessionOf(r)
	if sess == nil {
		return nil, nil
	}
	if !s.now().Before(sess.ExpiresAt) {
		return nil, s.endSession(r.Context(), w, sess.ID)
	}
	if sess.OrgID != org.ID {
		return nil, nil
	}
	return &customer{session: sess, org: org}, nil
}

// sessionOf is the stored session of the request's cookie, or nil, expired
// or not.
func (s *Server) sessionOf(r *http.Request) *licentia.PortalSession {
	c, err := r.Cookie(s.cookie)
	if err != nil || c.Value == "" {
		return nil
	}
	sess, err := s.store.PortalSessionByToken(r.Context(), auth.TokenHash(c.Value))
	if err != nil {
		return nil
	}
	return sess
}

// startSession signs email in to orgID with a new session, whose token
// only the cookie holds, in tx: the sign-in link is used in the same
// transaction. The session the request came with, if any, ends.
func (s *Server) startSession(ctx context.Context, tx store.Tx, r *http.Request, orgID, email string, now time.Time) (*http.Cookie, error) {
	token, hash := auth.NewToken()
	sess := &licentia.PortalSession{ID: licentia.NewID(), OrgID: orgID, TokenHash: hash, Email: email,
		CreatedAt: now, ExpiresAt: now.Add(SessionLifetime)}
	if old := s.sessionOf(r); old != nil {
		if err := tx.DeletePortalSession(ctx, old.ID); err != nil {
			return nil, err
		}
	}
	if err := tx.CreatePortalSession(ctx, sess); err != nil {
		return nil, err
	}
	return &http.Cookie{Name: s.cookie, Value: token, Path: "/", MaxAge: int(SessionLifetime / time.Second),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode}, nil
}

// endSession deletes a session and its cookie.
func (s *Server) endSession(ctx context.Context, w http.ResponseWriter, id string) error {
	s.clearCookie(w)
	if err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.DeletePortalSession(ctx, id) }); err != nil {
		return fmt.Errorf("end portal session: %w", err)
	}
	return nil
}

func (s *Server) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// signOut ends the request's session, if any, and shows the sign-in page.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request, b *brand, _ *licentia.Organization) error {
	if sess := s.sessionOf(r); sess != nil {
		if err := s.endSession(r.Context(), w, sess.ID); err != nil {
			return err
		}
	}
	s.clearCookie(w)
	http.Redirect(w, r, b.Base(), http.StatusSeeOther)
	return nil
}

// Sweep deletes the sign-in links and sessions past their end, which no
// request will find again, and reports how many. Serve runs it now and
// then; expiry does not wait for it.
func (s *Server) Sweep(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteStalePortal(ctx, s.now())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep portal: %w", err)
	}
	return n, nil
}
