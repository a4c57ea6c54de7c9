package portal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/store"
)

// LinkLifetime is how long a mailed sign-in link signs in.
const LinkLifetime = 15 * time.Minute

type signInPage struct {
	Email string
}

type sentPage struct {
	Email string
}

type linkPage struct {
	// Valid is false for a link unknown, used or expired: the page then
	// offers the sign-in form instead of its button.
	Valid bool
}

// home is the organization's portal: the customer's licences when signed
// in, the sign-in form otherwise.
func (s *Server) home(w http.ResponseWriter, r *http.Request, b *brand, org *licentia.Organization) error {
	c, err := s.customer(w, r, org)
	if err != nil {
		return err
	}
	if c == nil {
		return s.render(w, r, http.StatusOK, "signin", &view{Title: "Sign in", Brand: b, Data: signInPage{}})
	}
	c.brand = b
	return s.showLicences(w, r, c, http.StatusOK, notices[r.URL.Query().Get("done")], "")
}

// sendLink mails a one-time sign-in link to the address typed, when it
// holds a licence of the organization, and answers the very same page
// whether it does or not, so the page tells nobody who is a customer.
// Links are limited per address and per client address, counted for
// every address alike, before anything is looked up.
func (s *Server) sendLink(w http.ResponseWriter, r *http.Request, b *brand, org *licentia.Organization) error {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostForm.Get("email"))
	if why := licentia.CheckEmail(email); why != "" {
		return s.render(w, r, http.StatusBadRequest, "signin", &view{Title: "Sign in", Brand: b,
			Problem: "The email address " + why + ".", Data: signInPage{Email: email}})
	}
	email = strings.ToLower(email)
	if wait, ok := s.allowLink(ctx, r, email); !ok {
		return s.tooMany(w, r, b, wait)
	}
	id := licentia.NewID()
	token, err := s.keys.LinkToken(courier.SignInPurpose, id)
	if err != nil {
		return err
	}
	known, err := s.holdsLicence(ctx, org.ID, email)
	if err != nil {
		return err
	}
	if known {
		now := s.now()
		link := &licentia.PortalLink{ID: id, OrgID: org.ID, TokenHash: auth.TokenHash(token), Email: email,
			CreatedAt: now, ExpiresAt: now.Add(LinkLifetime)}
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			if err := tx.CreatePortalLink(ctx, link); err != nil {
				return err
			}
			// The mail has the link's id: the courier derives the token
			// from it when it sends the mail.
			return tx.CreateMail(ctx, &licentia.Mail{ID: id, OrgID: org.ID, Kind: licentia.MailPortalSignIn,
				Status: licentia.MailQueued, NextAttemptAt: &now, CreatedAt: now})
		})
		if err != nil {
			return err
		}
	}
	return s.render(w, r, http.StatusOK, "sent", &view{Title: "Check your mail", Brand: b, Data: sentPage{Email: email}})
}

// holdsLicence reports whether email holds a licence of the organization
// that was not anonymised.
func (s *Server) holdsLicence(ctx context.Context, orgID, email string) (bool, error) {
	ls, err := s.store.FindLicences(ctx, orgID, store.LicenceFilter{Email: &email, Limit: maxLicences}, s.now())
	if err != nil {
		return false, err
	}
	for _, l := range ls {
		if l.AnonymisedAt == nil {
			return true, nil
		}
	}
	return false, nil
}

// allowLink counts a sign-in link in the limit of its address and of the
// client's address (IPv6 by its /64), both before anything is looked up.
// A limiter that fails lets the request through, as the API does.
func (s *Server) allowLink(ctx context.Context, r *http.Request, email string) (time.Duration, bool) {
	sum := sha256.Sum256([]byte(email))
	var wait time.Duration
	ok := true
	for _, l := range []struct {
		rule ratelimit.Rule
		key  string
	}{
		{ratelimit.PortalAddress, ratelimit.ClientSubject(s.clientAddr(r))},
		{ratelimit.PortalEmail, "email:" + hex.EncodeToString(sum[:16])},
	} {
		res, err := s.limiter.Allow(ctx, l.rule, l.key)
		if err != nil {
			s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
			continue
		}
		if !res.Allowed {
			s.metrics.RateLimited(l.rule.Name)
			ok, wait = false, max(wait, res.Reset)
		}
	}
	return wait, ok
}

// linkPage is where a mailed link lands: a page whose button signs in.
// Opening it uses nothing up, so a mail scanner that opens links leaves
// the link to its owner.
func (s *Server) linkPage(w http.ResponseWriter, r *http.Request, b *brand, org *licentia.Organization) error {
	l, err := s.store.PortalLinkByToken(r.Context(), auth.TokenHash(r.PathValue("token")))
	if err != nil && licentia.ErrorCode(err) != licentia.CodeNotFound {
		return err
	}
	valid := err == nil && l.OrgID == org.ID && l.UsedAt == nil && s.now().Before(l.ExpiresAt)
	status := http.StatusOK
	if !valid {
		status = http.StatusNotFound
	}
	return s.render(w, r, status, "link", &view{Title: "Sign in", Brand: b, Data: linkPage{Valid: valid}})
}

var errLinkUsed = licentia.Errorf(licentia.CodeNotFound, "This sign-in link no longer works: it was used, or it expired.")

// useLink signs in with a mailed link: the link is used and the session
// made in one transaction, and of two posts of one link exactly one
// signs in.
func (s *Server) useLink(w http.ResponseWriter, r *http.Request, b *brand, org *licentia.Organization) error {
	ctx := r.Context()
	now := s.now()
	var cookie *http.Cookie
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		l, err := tx.UsePortalLink(ctx, auth.TokenHash(r.PathValue("token")), now)
		if licentia.ErrorCode(err) == licentia.CodeNotFound {
			return errLinkUsed
		}
		if err != nil {
			return err
		}
		if l.OrgID != org.ID {
			return errLinkUsed // another organization's link: rolled back, unused
		}
		cookie, err = s.startSession(ctx, tx, r, org.ID, l.Email, now)
		return err
	})
	if errors.Is(err, errLinkUsed) {
		return s.render(w, r, http.StatusNotFound, "link", &view{Title: "Sign in", Brand: b, Data: linkPage{}})
	}
	if err != nil {
		return err
	}
	http.SetCookie(w, cookie)
	http.Redirect(w, r, b.Base(), http.StatusSeeOther)
	return nil
}
