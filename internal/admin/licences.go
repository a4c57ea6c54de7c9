package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/activation"
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
	licentia.Decoded
	ID          *string             `json:"id"`
	ProductID   *string             `json:"product_id" input:"required"`
	Email       *string             `json:"email" input:"required"`
	LimitKind   *licentia.LimitKind `json:"limit_kind"`
	LimitCount  *int64              `json:"limit_count" input:"min=1,max=4294967295"`
	ExpiresAt   *time.Time          `json:"expires_at"`
	Major       *int64              `json:"major" input:"min=1,max=65535"`
	ExternalRef *string             `json:"external_ref"`
	Trial       *bool               `json:"trial"`
	// SendKeyMail mails the key to the licence's email, queued with the
	// licence; off unless asked for.
	SendKeyMail *bool `json:"send_key_mail"`
	// Features are the grants: codes, or objects { code, expires_at }.
	Features []licentia.GrantRequest `json:"features"`
	// TransfersPer30Days is the licence's own transfer limit; null or
	// absent follows the product's.
	TransfersPer30Days *int64 `json:"transfers_per_30_days" input:"nullable,min=0,max=100"`
	// MaxConcurrent is the licence's own limit of machines in use at once;
	// null or absent follows the product's.
	MaxConcurrent *int64 `json:"max_concurrent" input:"nullable,min=1,max=100000"`
}

// Validate reports every problem of a new licence at now: first each
// field's own (unread, missing, out of range), then the rules, each on a
// field that has no problem yet.
func (in *NewLicence) Validate(now time.Time) licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	var rules licentia.Issues
	rules.CheckString("/product_id", in.ProductID, licentia.CheckProductID)
	// An address the key is mailed to must be one mail can be sent to,
	// refused here rather than as a mail that fails.
	if deref(in.SendKeyMail, false) {
		rules.CheckString("/email", in.Email, licentia.CheckMailableEmail)
	} else {
		rules.CheckString("/email", in.Email, licentia.CheckEmail)
	}
	if in.ID != nil {
		if _, ok := licentia.ParseUUID(*in.ID); !ok {
			rules.Add("/id", "must be a UUID")
		}
	}
	if in.LimitKind != nil && *in.LimitKind != licentia.LimitSeats && *in.LimitKind != licentia.LimitMachines {
		rules.Add("/limit_kind", "must be seats or machines")
	}
	// Times are kept to the millisecond: a time less than a millisecond
	// ahead would be stored at or before now, already expired.
	if in.ExpiresAt != nil && !licentia.TruncateMillis(*in.ExpiresAt).After(now) {
		rules.Add("/expires_at", "must be in the future")
	}
	rules.CheckString("/external_ref", in.ExternalRef, licentia.CheckExternalRef)
	if in.Trial != nil && *in.Trial && in.ExpiresAt == nil {
		rules.Add("/expires_at", "is required for a trial, which ends with the key")
	}
	activation.CheckVerdictFits(&rules, "/features", licentia.CheckGrantRequests(&rules, "/features", in.Features, nil))
	is.Merge(rules)
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
		TransfersPer30Days: in.TransfersPer30Days, MaxConcurrent: in.MaxConcurrent,
		CreatedAt: now, UpdatedAt: now,
	}
	if in.ID != nil {
		l.ID, _ = licentia.ParseUUID(*in.ID)
	}
	if in.ExpiresAt != nil {
		t := licentia.TruncateMillis(*in.ExpiresAt)
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
		if l.Features, err = resolveGrants(ctx, tx, orgID, p.ID, "/features", in.Features); err != nil {
			return err
		}
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
		err = events.Record(ctx, tx, actor, l, nil, licentia.AuditLicenceIssued, licentia.EventLicenceIssued, now, map[string]any{
			"licence_id": l.ID, "product_id": l.ProductID, "status": l.Status, "limit_kind": l.LimitKind,
			"limit_count": l.LimitCount, "major": l.Major, "expires_at": licentia.FormatTimePtr(l.ExpiresAt),
			"trial_ends_at": licentia.FormatTimePtr(l.TrialEndsAt), "email": l.Email, "external_ref": l.ExternalRef,
			"features": events.GrantsOf(l.Features),
		})
		if err != nil || !deref(in.SendKeyMail, false) {
			return err
		}
		// The mail is queued with the licence: a rolled-back issue sends
		// none.
		_, err = queueKeyMail(ctx, tx, actor, []*licentia.Licence{l}, now)
		return err
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

// FindQuery is a find's parameters, each a query parameter of GET
// /v1/admin/licences; nil ones were not given.
type FindQuery struct {
	licentia.Decoded
	Email       *string          `query:"email"`
	Q           *string          `query:"q"`
	ProductID   *string          `query:"product_id"`
	ExternalRef *string          `query:"external_ref"`
	State       *licentia.State  `query:"state"`
	Status      *licentia.Status `query:"status"`
	Term        *licentia.Term   `query:"term"`
	Source      *licentia.Source `query:"source"`
	Feature     *string          `query:"feature"`
}

// Validate reports every problem of a find: at least one of email, q and
// external_ref, so every find starts from an index; and the filters' own
// problems (validateFilters).
func (f *FindQuery) Validate() licentia.Issues {
	is := f.validateFilters()
	if f.Email == nil && f.Q == nil && f.ExternalRef == nil {
		is.Add("query", "give at least one of email, q, external_ref")
	}
	return is
}

// validateFilters reports the problems of a find's filters, which the list
// and export take too: external_ref only within a product, and each
// value's length and shape.
func (f *FindQuery) validateFilters() licentia.Issues {
	is := slices.Clone(f.Before)
	oneOf(&is, "query.state", f.State, licentia.StateActive, licentia.StateTrial, licentia.StateExpired, licentia.StateRevoked)
	oneOf(&is, "query.status", f.Status, licentia.StatusActive, licentia.StatusRevoked, licentia.StatusExpired)
	oneOf(&is, "query.term", f.Term, licentia.TermPerpetual, licentia.TermTerm, licentia.TermSubscription)
	oneOf(&is, "query.source", f.Source, licentia.SourceAdmin, licentia.SourceProvider)
	sized := map[string]bool{}
	for _, p := range []struct {
		path  string
		value *string
		max   int
	}{{"query.email", f.Email, licentia.MaxEmail}, {"query.q", f.Q, MaxFindQ}, {"query.external_ref", f.ExternalRef, licentia.MaxExternalRef}, {"query.product_id", f.ProductID, licentia.MaxProductID}} {
		if p.value == nil {
			continue
		}
		if n := utf8.RuneCountInString(*p.value); n == 0 || n > p.max {
			is.Add(p.path, "must be 1 to %d characters", p.max)
			continue
		}
		sized[p.path] = true
	}
	if sized["query.product_id"] {
		is.CheckString("query.product_id", f.ProductID, licentia.CheckProductID)
	}
	// An external reference is printable ASCII: one that is not names no
	// licence, and is refused like a malformed one on issue.
	if sized["query.external_ref"] {
		is.CheckString("query.external_ref", f.ExternalRef, licentia.CheckExternalRef)
	}
	is.CheckString("query.feature", f.Feature, licentia.CheckFeatureCode)
	if f.ExternalRef != nil && f.ProductID == nil {
		is.Add("query.product_id", "is required with external_ref")
	}
	return is
}

// MaxFindQ is the longest q a find takes, in characters.
const MaxFindQ = 2048

// oneOf adds an issue when v is given and not one of values.
func oneOf[T ~string](is *licentia.Issues, path string, v *T, values ...T) {
	if v != nil && !slices.Contains(values, *v) {
		is.Add(path, "must be one of %v", values)
	}
}

// FindLicences lists the caller's matching licences, newest first. A q that
// is a whole licence key (any case, dashes or not, surrounding whitespace,
// signed by a current or previous key of one of the caller's products)
// matches the licence it names.
func (s *Service) FindLicences(ctx context.Context, orgID string, q FindQuery) ([]licentia.Licence, error) {
	if err := q.Validate().Err(); err != nil {
		return nil, err
	}
	f, err := s.findFilter(ctx, orgID, &q)
	if err != nil {
		return nil, err
	}
	f.Limit = MaxFind
	return s.store.FindLicences(ctx, orgID, f, s.now())
}

// findFilter is the store's filter of a find's valid parameters, a pasted
// licence key read as the licence it names.
func (s *Service) findFilter(ctx context.Context, orgID string, q *FindQuery) (store.LicenceFilter, error) {
	f := store.LicenceFilter{Email: q.Email, Q: q.Q, ProductID: q.ProductID, ExternalRef: q.ExternalRef,
		State: q.State, Status: q.Status, Term: q.Term, Source: q.Source, Feature: q.Feature}
	if f.Q != nil {
		if id, ok := licentia.ParseUUID(*f.Q); ok {
			f.Q = &id
		}
	}
	if f.Q != nil && strings.Contains(*f.Q, string(sdk.KeySeparator)) {
		id, err := s.licenceIDOfKey(ctx, orgID, *f.Q)
		if err != nil {
			return store.LicenceFilter{}, err
		}
		if id != "" {
			f.QLicenceID = &id
		}
	}
	return f, nil
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

// CountQuery is a count's parameters, each a query parameter of GET
// /v1/admin/licences/counts; nil ones were not given.
type CountQuery struct {
	licentia.Decoded
	ProductID *string    `query:"product_id"`
	Since     *time.Time `query:"since"`
	Feature   *string    `query:"feature"`
}

// Validate reports every problem of a count.
func (q *CountQuery) Validate() licentia.Issues {
	is := slices.Clone(q.Before)
	is.CheckString("query.product_id", q.ProductID, licentia.CheckProductID)
	is.CheckString("query.feature", q.Feature, licentia.CheckFeatureCode)
	return append(is, licentia.CheckFields(q)...)
}

// CountLicences counts the caller's licences, of one product or all, and
// those issued and revoked since (DefaultCountWindow ago when not given),
// which it returns. Another organization's product answers
// product_not_found like a missing one.
func (s *Service) CountLicences(ctx context.Context, orgID string, q CountQuery) (*store.LicenceCounts, time.Time, error) {
	if err := q.Validate().Err(); err != nil {
		return nil, time.Time{}, err
	}
	now := s.now()
	since := now.Add(-DefaultCountWindow)
	if q.Since != nil {
		since = *q.Since
	}
	if q.ProductID != nil {
		if _, err := s.store.Product(ctx, orgID, *q.ProductID); err != nil {
			return nil, time.Time{}, err
		}
	}
	if q.Feature != nil {
		n, err := s.store.CountLicencesWithFeature(ctx, orgID, q.ProductID, *q.Feature, since, now)
		return n, since, err
	}
	n, err := s.store.CountLicences(ctx, orgID, q.ProductID, since, now)
	return n, since, err
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
