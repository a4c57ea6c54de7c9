package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
)

type signInPage struct {
	Next  string
	Email string
}

func (s *Server) signInPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.signedIn(w, r)
	if err != nil {
		return err
	}
	next := safeNext(r.URL.Query().Get("next"))
	if v != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	return s.render(w, r, http.StatusOK, "signin", &view{Title: "Sign in", Data: signInPage{Next: next}})
}

// errSignIn is the one answer to a wrong address or password: it does not
// tell which.
var errSignIn = licentia.Errorf(licentia.CodeUnauthorized, "The email address or the password is wrong.")

// signIn checks an address and password. Failed sign-ins are limited per
// address and per client address; past either limit every sign-in is
// refused until its window ends, a right password too, so a guesser
// learns nothing from a late success. An unknown address costs the same
// hashing as a known one.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) error {
	email, pw := strings.TrimSpace(r.PostForm.Get("email")), r.PostForm.Get("password")
	next := safeNext(r.PostForm.Get("next"))
	again := func(err error) error {
		p := refusal("signin", r, err)
		if p == nil {
			return err
		}
		p.Values.Del("password")
		return s.render(w, r, p.Status, "signin", &view{Title: "Sign in", Data: signInPage{Next: next, Email: email}, problem: p})
	}
	var is licentia.Issues
	if email == "" {
		is.Add("/email", "is required")
	}
	if pw == "" {
		is.Add("/password", "is required")
	}
	if err := is.Err(); err != nil {
		return again(err)
	}
	limits := s.signInLimits(r, email)
	if wait, limited := s.limited(r.Context(), limits); limited {
		return s.tooMany(w, r, wait, "/console/sign-in")
	}
	acct, err := s.store.AccountByEmail(r.Context(), email)
	hash := ""
	switch {
	case err == nil:
		hash = acct.PasswordHash
	case licentia.ErrorCode(err) != licentia.CodeNotFound:
		return fmt.Errorf("sign in: %w", err)
	}
	ok, err := auth.CheckPassword(r.Context(), hash, pw)
	if err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	if !ok {
		s.countFailure(r.Context(), limits)
		return again(errSignIn)
	}
	orgs, err := s.store.Memberships(r.Context(), acct.Email)
	if err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	if len(orgs) == 0 {
		return again(licentia.Errorf(licentia.CodeForbidden, "This address is no longer a member of any organization."))
	}
	if err := s.startSession(w, r, acct.ID, orgs[0].OrgID); err != nil {
		return err
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// signOut ends the request's session, if any.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) error {
	if sess := s.sessionOf(r.Context(), r); sess != nil {
		if err := s.endSession(r.Context(), w, sess.ID); err != nil {
			return err
		}
	}
	s.clearCookie(w)
	http.Redirect(w, r, "/console/sign-in", http.StatusSeeOther)
	return nil
}

// limit is one rate limit a failed sign-in counts in, with its subject.
type limit struct {
	rule ratelimit.Rule
	key  string
}

// signInLimits are the limits of a sign-in to email from the request's
// client: one per address, one per client address. The address is kept in
// the limiter only as a digest of its lower-case form.
func (s *Server) signInLimits(r *http.Request, email string) []limit {
	sum := sha256.Sum256([]byte(strings.ToLower(email)))
	return []limit{
		{ratelimit.SignInEmail, "email:" + hex.EncodeToString(sum[:16])},
		{ratelimit.SignInAddress, "addr:" + s.clientAddr(r)},
	}
}

// limited reports whether any of limits is used up, and how long until the
// last of those resets; the metrics count the refusal under each limit
// used up. A limiter that fails lets the attempt through, as the API does:
// an outage must not lock everyone out.
func (s *Server) limited(ctx context.Context, limits []limit) (time.Duration, bool) {
	var wait time.Duration
	out := false
	for _, l := range limits {
		res, err := s.limiter.Peek(ctx, l.rule, l.key)
		if err != nil {
			s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
			continue
		}
		if !res.Allowed {
			s.metrics.RateLimited(l.rule.Name)
			out, wait = true, max(wait, res.Reset)
		}
	}
	return wait, out
}

// countFailure counts a failed attempt in every limit.
func (s *Server) countFailure(ctx context.Context, limits []limit) {
	for _, l := range limits {
		if _, err := s.limiter.Allow(ctx, l.rule, l.key); err != nil {
			s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
		}
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "console sign-in refused", slog.String("request_id", requestID(ctx)))
}

type waitPage struct {
	Seconds int64
	Back    string
}

// tooMany answers 429 with a page saying how long to wait.
func (s *Server) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, back string) error {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return s.render(w, r, http.StatusTooManyRequests, "wait", &view{Title: "Too many attempts", Data: waitPage{Seconds: secs, Back: back}})
}
