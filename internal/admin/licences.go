package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

// MaxFind is the most licences a find answers.
const MaxFind = 100

// LicenceView is a licence with its key (nil once anonymised) and, where
// read, its activations.
type LicenceView struct {
	Licence     *licentia.Licence
	Key         *string
	Activations []licentia.Activation
}

// NewLicence is what issues a licence; nil fields were not given.
type NewLicence struct {
	ID          *string
	ProductID   *string
	Email       *string
	LimitKind   *licentia.LimitKind
	LimitCount  *int64
	ExpiresAt   *time.Time
	Major       *int64
	ExternalRef *string
	Trial       *bool
}

// Validate reports every problem of a new licence at now.
func (in *NewLicence) Validate(now time.Time) licentia.Issues {
	var is licentia.Issues
	required(&is, "/product_id", in.ProductID, licentia.CheckProductID)
	required(&is, "/email", in.Email, licentia.CheckEmail)
	if in.ID != nil {
		if _, ok := licentia.ParseUUID(*in.ID); !ok {
			is.Add("/id", "must be a UUID")
		}
	}
	if in.LimitKind != nil && *in.LimitKind != licentia.LimitSeats && *in.LimitKind != licentia.LimitMachines {
		is.Add("/limit_kind", "must be seats or machines")
	}
	if in.LimitCount != nil && (*in.LimitCount < 1 || *in.LimitCount > licentia.MaxLimitCount) {
		is.Add("/limit_count", "must be an integer from 1 to %d", int64(licentia.MaxLimitCount))
	}
	if in.Major != nil && (*in.Major < 1 || *in.Major > licentia.MaxMajor) {
		is.Add("/major", "must be an integer from 1 to %d", licentia.MaxMajor)
	}
	// Times are kept to the millisecond: a time less than a millisecond
	// ahead would be stored at or before now, already expired.
	if in.ExpiresAt != nil && !in.ExpiresAt.Truncate(time.Millisecond).After(now) {
		is.Add("/expires_at", "must be in the future")
	}
	if in.ExternalRef != nil {
		if msg := licentia.CheckExternalRef(*in.ExternalRef); msg != "" {
			is.Add("/external_ref", "%s", msg)
		}
	}
	if in.Trial != nil && *in.Trial && in.ExpiresAt == nil {
		is.Add("/expires_at", "is required for a trial, which ends with the key")
	}
	return is
}

// IssueLicence issues a licence, in the contract's order of checks: 400, 404
// product, 409 id or external_ref taken, 402 plan (nothing written), 503
// product_unavailable. The licence, its counters, its audit entry and its
// licence.issued event commit together.
func (s *Service) IssueLicence(ctx context.Context, actor licentia.Actor, orgID string, in NewLicence) (*LicenceView, error) {
	now := s.now()
	if err := in.Validate(now).Err(); err != nil {
		return nil, err
	}
	l := &licentia.Licence{
		ID: licentia.NewID(), OrgID: orgID, ProductID: *in.ProductID, Email: *in.Email, IssuedAt: now,
		LimitKind: deref(in.LimitKind, licentia.LimitSeats), LimitCount: deref(in.LimitCount, 1),
		Status: licentia.StatusActive, Source: licentia.SourceAdmin, ExternalRef: in.ExternalRef,
		CreatedAt: now, UpdatedAt: now,
	}
	if in.ID != nil {
		l.ID, _ = licentia.ParseUUID(*in.ID)
	}
	if in.ExpiresAt != nil {
		t := in.ExpiresAt.UTC().Truncate(time.Millisecond)
		l.ExpiresAt = &t
		if deref(in.Trial, false) {
			l.TrialEndsAt = &t
		}
	}
	var key string
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		org, err := lockOrganization(ctx, tx, orgID)
		if err != nil {
			return err
		}
		p, err := tx.Product(ctx, orgID, l.ProductID)
		if err != nil {
			return err
		}
		l.Major = deref(in.Major, p.CurrentMajor)
		if err := checkLicenceConflicts(ctx, tx, l); err != nil {
			return err
		}
		if err := s.checkPlan(ctx, tx, org, resourceActiveLicences, now); err != nil {
			return err
		}
		if key, err = s.deriveKey(p, l.ID); err != nil {
			return err
		}
		if err := tx.CreateLicence(ctx, l); err != nil {
			return err
		}
		return events.Record(ctx, tx, actor, l, nil, licentia.AuditLicenceIssued, licentia.EventLicenceIssued, now, map[string]any{
			"licence_id": l.ID, "product_id": l.ProductID, "status": l.Status, "limit_kind": l.LimitKind,
			"limit_count": l.LimitCount, "major": l.Major, "expires_at": timeOrNil(l.ExpiresAt),
			"trial_ends_at": timeOrNil(l.TrialEndsAt), "email": l.Email, "external_ref": l.ExternalRef,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("issue licence: %w", err)
	}
	return &LicenceView{Licence: l, Key: &key}, nil
}

// checkLicenceConflicts refuses a licence id held by anyone (every time,
// never naming the holder) and an external reference the product already
// has (naming that licence, which is the caller's own).
func checkLicenceConflicts(ctx context.Context, tx store.Tx, l *licentia.Licence) error {
	taken, err := tx.LicenceIDTaken(ctx, l.ID)
	if err != nil {
		return err
	}
	if taken {
		return licentia.Errorf(licentia.CodeConflict, "The licence id is taken.")
	}
	if l.ExternalRef == nil {
		return nil
	}
	other, err := tx.LicenceByExternalRef(ctx, l.OrgID, l.ProductID, *l.ExternalRef)
	switch {
	case err == nil:
		return &licentia.Error{Code: licentia.CodeConflict, Message: "The product already has a licence with this external reference.",
			Details: map[string]any{"licence_id": other.ID}}
	case licentia.ErrorCode(err) != licentia.CodeLicenceNotFound:
		return err
	}
	return nil
}

// deriveKey signs a licence's key under the product's current signing key;
// a product that cannot sign answers 503 product_unavailable.
func (s *Service) deriveKey(p *licentia.Product, licenceID string) (string, error) {
	priv, err := s.keys.CurrentPrivate(p)
	if err != nil {
		return "", err
	}
	return sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, licenceID)
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return licentia.FormatTime(*t)
}

// Licence reads a licence with its key and its activations, live first.
func (s *Service) Licence(ctx context.Context, orgID, id string) (*LicenceView, error) {
	l, err := s.store.Licence(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	acts, err := s.store.Activations(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	v := &LicenceView{Licence: l, Activations: acts}
	if l.AnonymisedAt == nil {
		p, err := s.store.Product(ctx, orgID, l.ProductID)
		if err != nil {
			return nil, err
		}
		key, err := s.deriveKey(p, l.ID)
		if err != nil {
			return nil, err
		}
		v.Key = &key
	}
	return v, nil
}

// FindQuery is a find's parameters; see store.LicenceFilter.
type FindQuery = store.LicenceFilter

// FindLicences lists the caller's matching licences, newest first. A q that
// is a whole licence key (any case, dashes or not, surrounding whitespace,
// signed by a current or previous key of one of the caller's products)
// matches the licence it names.
func (s *Service) FindLicences(ctx context.Context, orgID string, f FindQuery) ([]licentia.Licence, error) {
	if f.Q != nil {
		if id, ok := licentia.ParseUUID(*f.Q); ok {
			f.Q = &id
		}
	}
	if f.Q != nil && strings.Contains(*f.Q, string(sdk.KeySeparator)) {
		id, err := s.licenceIDOfKey(ctx, orgID, *f.Q)
		if err != nil {
			return nil, err
		}
		if id != "" {
			f.QLicenceID = &id
		}
	}
	f.Limit = MaxFind
	return s.store.FindLicences(ctx, orgID, f, s.now())
}

// licenceIDOfKey returns the licence id a pasted key names, or "" when q is
// not a key of the caller's products.
func (s *Service) licenceIDOfKey(ctx context.Context, orgID, q string) (string, error) {
	if _, err := sdk.ParseLicenceKey(q); err != nil {
		return "", nil
	}
	ps, err := s.store.Products(ctx, orgID)
	if err != nil {
		return "", err
	}
	entries := make([]sdk.Product, len(ps))
	for i := range ps {
		entries[i] = signing.VerifierProduct(&ps[i])
	}
	v, err := sdk.NewVerifier(entries...)
	if err != nil {
		return "", err
	}
	vk, err := v.VerifyLicenceKey(q)
	if err != nil {
		return "", nil
	}
	return vk.LicenceID, nil
}

// CountLicences counts the caller's licences, of one product or all.
func (s *Service) CountLicences(ctx context.Context, orgID string, productID *string, since time.Time) (*store.LicenceCounts, error) {
	return s.store.CountLicences(ctx, orgID, productID, since, s.now())
}

// DefaultCountWindow is how far back counts look when since is not given.
const DefaultCountWindow = 7 * 24 * time.Hour

// LicenceAudit lists a licence's audit entries, oldest first.
func (s *Service) LicenceAudit(ctx context.Context, orgID, id string) ([]licentia.AuditEntry, error) {
	if _, err := s.store.Licence(ctx, orgID, id); err != nil {
		return nil, err
	}
	return s.store.LicenceAudit(ctx, orgID, id)
}

// Now is the service's current time at answer precision, for callers that
// show times relative to it.
func (s *Service) Now() time.Time { return s.now() }

// sweepBatch is how many licences one sweep transaction moves.
const sweepBatch = 1000

// SweepLicences moves licences whose expiry has passed to their lapsed
// counters, a batch per transaction, until none is left. Counts are right
// without it; it keeps them cheap.
func (s *Service) SweepLicences(ctx context.Context) (int, error) {
	total := 0
	for {
		var n int
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.SweepLicences(ctx, s.now(), sweepBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sweep licences: %w", err)
		}
		total += n
		// A sweep that moves nothing has brought the watermark to now.
		if n == 0 {
			return total, nil
		}
	}
}
