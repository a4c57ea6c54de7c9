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
// hashing as a known one. Each attempt is counted before its password is
// hashed and given back when the password was right, so concurrent
// attempts cannot all pass the limits before any of them has failed.
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
	hs, wait, limited := s.reserve(r.Context(), s.signInLimits(r, email))
	if limited {
		return s.tooMany(w, r, wait, "/console/sign-in")
	}
	acct, ok, err := s.checkPassword(r.Context(), email, pw)
	if err != nil {
		s.release(r.Context(), hs)
		return fmt.Errorf("sign in: %w", err)
	}
	if !ok {
		s.failed(r.Context())
		return again(errSignIn)
	}
	s.release(r.Context(), hs)
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
		{ratelimit.SignInAddress, ratelimit.ClientSubject(s.clientAddr(r))},
	}
}

// checkPassword checks pw against the stored hash of email's account, or
// against none at the same cost when there is no account.
func (s *Server) checkPassword(ctx context.Context, email, pw string) (*licentia.Account, bool, error) {
	acct, err := s.store.AccountByEmail(ctx, email)
	hash := ""
	switch {
	case err == nil:
		hash = acct.PasswordHash
	case licentia.ErrorCode(err) != licentia.CodeNotFound:
		return nil, false, err
	}
	s.passwordChecks.Add(1)
	ok, err := auth.CheckPassword(ctx, hash, pw)
	return acct, ok, err
}

// held is an attempt counted in one limit, to be given back unless the
// attempt fails.
type held struct {
	limit
	counted ratelimit.Result
}

// reserve counts an attempt in every one of limits before its password is
// checked, and reports whether any of them is used up and how long until
// the last of those resets; the metrics count the refusal under each limit
// used up. A refused attempt is given back at once: it checked nothing.
// Counting first is what bounds the checks: the limiter counts atomically,
// so however many attempts arrive together, at most a limit's worth are
// let through. A limiter that fails lets the attempt through, as the API
// does: an outage must not lock everyone out.
func (s *Server) reserve(ctx context.Context, limits []limit) ([]held, time.Duration, bool) {
	var hs []held
	var wait time.Duration
	out := false
	for _, l := range limits {
		res, err := s.limiter.Allow(ctx, l.rule, l.key)
		if err != nil {
			s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
			continue
		}
		hs = append(hs, held{l, res})
		if !res.Allowed {
			s.metrics.RateLimited(l.rule.Name)
			out, wait = true, max(wait, res.Reset)
		}
	}
	if out {
		s.release(ctx, hs)
	}
	return hs, wait, out
}

// release gives back an attempt that did not fail. It runs even when the
// client has gone: a right password must not stay counted as a failure.
func (s *Server) release(ctx context.Context, hs []held) {
	ctx = context.WithoutCancel(ctx)
	for _, h := range hs {
		if err := s.limiter.Release(ctx, h.rule, h.key, h.counted); err != nil {
			s.log.WarnContext(ctx, "rate limiter unavailable", "request_id", requestID(ctx), "error", err.Error())
		}
	}
}

// failed logs a failed attempt, which stays counted in its limits.
func (s *Server) failed(ctx context.Context) {
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
