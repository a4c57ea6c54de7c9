package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Session lifetimes: a session ends after SessionIdle without a request,
// and SessionLifetime after sign-in whatever happens.
const (
	SessionIdle     = 12 * time.Hour
	SessionLifetime = 7 * 24 * time.Hour
	// touchEvery is how stale last_seen_at may grow before a request
	// writes it: idle expiry is counted in hours, so one write a minute
	// keeps it exact enough without a write per request.
	touchEvery = time.Minute
)

// The session cookie's names. Under https it takes the __Host- prefix,
// which browsers accept only when Secure, with Path=/ and no Domain: no
// other host, and no plain-http page, can set or shadow it.
const (
	cookieName       = "licentia_session"
	secureCookieName = "__Host-licentia_session"
)

// visit is the member a request acts as, read afresh on every request:
// the session, its account, and the account's member record in the
// session's organization with its role at this moment.
type visit struct {
	Session *licentia.Session
	Account *licentia.Account
	Member  *licentia.Member
	// OrgName and OrgSlug name the member's organization.
	OrgName string
	OrgSlug string
	// Orgs are every organization the account is a member of, for the
	// switcher.
	Orgs []licentia.Membership
}

// actor is the audit actor of the member's changes.
func (v *visit) actor() licentia.Actor { return licentia.MemberActor(v.Member.ID) }

// orgID is the organization the member acts in.
func (v *visit) orgID() string { return v.Member.OrgID }

// now reads the clock at the precision the store keeps.
func (s *Server) now() time.Time { return licentia.TruncateMillis(s.clock.Now()) }

// signedIn returns the member a request's session cookie stands for, or
// nil when there is none: no cookie, an unknown token, a session past its
// idle or absolute end, an account gone, or an account no longer a member
// anywhere. A member removed from the session's organization moves to
// another of theirs; with none left the session ends.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) (*visit, error) {
	c, err := r.Cookie(s.cookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	ctx := r.Context()
	sess, err := s.store.SessionByToken(ctx, auth.TokenHash(c.Value))
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		s.clearCookie(w)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	now := s.now()
	if !now.Before(sess.ExpiresAt) || now.Sub(sess.LastSeenAt) >= SessionIdle {
		return nil, s.endSession(ctx, w, sess.ID)
	}
	acct, err := s.store.Account(ctx, sess.AccountID)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, s.endSession(ctx, w, sess.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("read session account: %w", err)
	}
	orgs, err := s.store.Memberships(ctx, acct.Email)
	if err != nil {
		return nil, fmt.Errorf("read memberships: %w", err)
	}
	if len(orgs) == 0 {
		return nil, s.endSession(ctx, w, sess.ID)
	}
	i := slices.IndexFunc(orgs, func(m licentia.Membership) bool { return m.OrgID == sess.OrgID })
	moved := i < 0
	if moved {
		i = 0
		sess.OrgID = orgs[0].OrgID
	}
	touch := now.Sub(sess.LastSeenAt) >= touchEvery
	if moved || touch {
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			if moved {
				if err := tx.SetSessionOrganization(ctx, sess.ID, sess.OrgID); err != nil {
					return err
				}
			}
			if touch {
				return tx.TouchSession(ctx, sess.ID, now)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("update session: %w", err)
		}
		if touch {
			sess.LastSeenAt = now
		}
	}
	m := orgs[i]
	return &visit{Session: sess, Account: acct, Member: &m.Member, OrgName: m.OrgName, OrgSlug: m.OrgSlug, Orgs: orgs}, nil
}

// startSession signs an account in to orgID with a new session, whose
// token only the cookie holds, and ends the session the request came
// with, if any: a token that was known before sign-in is never signed in.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, accountID, orgID string) error {
	ctx := r.Context()
	token, hash := auth.NewToken()
	now := s.now()
	sess := &licentia.Session{
		ID: licentia.NewID(), TokenHash: hash, AccountID: accountID, OrgID: orgID,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionLifetime),
	}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if old := s.sessionOf(ctx, r); old != nil {
			if err := tx.DeleteSession(ctx, old.ID); err != nil {
				return err
			}
		}
		return tx.CreateSession(ctx, sess)
	})
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookie, Value: token, Path: "/", MaxAge: int(SessionLifetime / time.Second),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// sessionOf is the stored session of the request's cookie, or nil, expired
// or not.
func (s *Server) sessionOf(ctx context.Context, r *http.Request) *licentia.Session {
	c, err := r.Cookie(s.cookie)
	if err != nil || c.Value == "" {
		return nil
	}
	sess, err := s.store.SessionByToken(ctx, auth.TokenHash(c.Value))
	if err != nil {
		return nil
	}
	return sess
}

// endSession deletes a session and its cookie.
func (s *Server) endSession(ctx context.Context, w http.ResponseWriter, id string) error {
	s.clearCookie(w)
	if err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.DeleteSession(ctx, id) }); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

func (s *Server) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
}

// SweepSessions deletes the sessions past their idle or absolute end,
// which no request will find again, and reports how many. Serve runs it
// now and then; expiry does not wait for it.
func (s *Server) SweepSessions(ctx context.Context) (int64, error) {
	now := s.now()
	var n int64
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteStaleSessions(ctx, now.Add(-SessionIdle), now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep sessions: %w", err)
	}
	return n, nil
}
