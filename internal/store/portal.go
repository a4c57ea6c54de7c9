package store

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// PortalReader reads the customer portal's sign-in links and sessions.
type PortalReader interface {
	// PortalLink reads one sign-in link, used or not; another
	// organization's answers not_found like a missing one.
	PortalLink(ctx context.Context, orgID, id string) (*licentia.PortalLink, error)
	// PortalLinkByToken finds the link whose token hashes to hash, used or
	// not, expired or not; none answers not_found.
	PortalLinkByToken(ctx context.Context, hash []byte) (*licentia.PortalLink, error)
	// PortalSessionByToken finds the session whose token hashes to hash;
	// none answers not_found. Expiry is the caller's to check.
	PortalSessionByToken(ctx context.Context, hash []byte) (*licentia.PortalSession, error)
}

// PortalWriter changes the customer portal's sign-in links and sessions.
type PortalWriter interface {
	// CreatePortalLink writes a sign-in link; a taken id or token answers
	// conflict.
	CreatePortalLink(ctx context.Context, l *licentia.PortalLink) error
	// UsePortalLink marks the link whose token hashes to hash used at at,
	// when it is unused and expires after at, and returns it. In one
	// statement: of two requests racing with one token, exactly one gets
	// the link. A link missing, used or expired answers not_found.
	UsePortalLink(ctx context.Context, hash []byte, at time.Time) (*licentia.PortalLink, error)
	// CreatePortalSession writes a session; a taken id or token answers
	// conflict.
	CreatePortalSession(ctx context.Context, s *licentia.PortalSession) error
	// DeletePortalSession deletes a session, if it is there.
	DeletePortalSession(ctx context.Context, id string) error
	// DeleteStalePortal deletes the links and sessions expired at now and
	// reports how many.
	DeleteStalePortal(ctx context.Context, now time.Time) (int64, error)
}
