// Package activation serves the routes an application calls with a licence
// key: taking a seat on a machine, asking for a signed verdict, and freeing
// the seat. The licence key is the credential; no API key is involved.
package activation

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/cache"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

// seenLag is how stale a live activation's stored last_seen_at may be: a
// busy machine does not cost a write on every status check.
const seenLag = 60 * time.Second

// RefreshAfter is how old a live activation's stored last_seen_at gets
// before a status check rewrites it: between half of seenLag and seenLag,
// fixed for each activation by its id. Machines activated together (a
// fleet rolled out at once) would otherwise all fall due in the same
// second, every minute, and queue their writes behind one another.
func RefreshAfter(activationID string) time.Duration {
	// FNV-1a, written out: hash/fnv would allocate on every status check.
	h := uint32(2166136261)
	for i := range len(activationID) {
		h = (h ^ uint32(activationID[i])) * 16777619
	}
	half := seenLag / 2
	return half + time.Duration(h%uint32(half/time.Millisecond))*time.Millisecond
}

// trialGrace bounds a trial's active verdict: never valid more than one day
// past the trial's end.
const trialGrace = 24 * time.Hour

// Service runs the activation routes.
type Service struct {
	store    store.Store
	clock    clock.Clock
	keys     *signing.Keyring
	cat      *signing.Catalogue
	validity time.Duration
	log      *slog.Logger
	verdicts *cache.Map[verdictFor, keptVerdict]
}

// Options are the dependencies of a Service.
type Options struct {
	Store     store.Store
	Clock     clock.Clock
	Keys      *signing.Keyring
	Catalogue *signing.Catalogue
	// Validity is how long a verdict may be used offline.
	Validity time.Duration
	Logger   *slog.Logger
}

// New returns a Service.
func New(o Options) *Service {
	return &Service{store: o.Store, clock: o.Clock, keys: o.Keys, cat: o.Catalogue, validity: o.Validity, log: o.Logger,
		verdicts: cache.New[verdictFor, keptVerdict](maxVerdicts)}
}

var machineIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// CheckMachineID returns why id is not a machine id, or "".
func CheckMachineID(id string) string {
	if !machineIDRE.MatchString(id) {
		return "must be 1 to 128 of A-Z a-z 0-9 . _ : -"
	}
	return ""
}

// CheckMachineField returns why a label, os or app_version is not
// acceptable, or "": 0 to 200 characters.
func CheckMachineField(s string) string {
	if len([]rune(s)) > 200 {
		return "must be at most 200 characters"
	}
	if licentia.HasControl(s) {
		return "must not contain control characters"
	}
	return ""
}

// MaxLicenceKey is the longest licence key read, in characters.
const MaxLicenceKey = 1024

// CheckLicenceKey returns why key cannot be a licence key by its length
// alone, or "".
func CheckLicenceKey(key string) string {
	if n := utf8.RuneCountInString(key); n < 1 || n > MaxLicenceKey {
		return "must be 1 to 1024 characters"
	}
	return ""
}

// Machine is what an application says about itself.
type Machine struct {
	ID         string
	Label      string
	OS         string
	AppVersion string
}

// Activate is the body of an activation: the licence key, the machine, and
// what the application says about it.
type Activate struct {
	licentia.Decoded
	LicenceKey *string `json:"licence_key" input:"required"`
	MachineID  *string `json:"machine_id" input:"required"`
	Label      *string `json:"label" input:"required"`
	OS         *string `json:"os" input:"required"`
	AppVersion *string `json:"app_version" input:"required"`
}

// Validate reports every problem of an activation: the key and the machine
// first, then each of label, os and app_version in turn.
func (in *Activate) Validate() licentia.Issues {
	fields := licentia.CheckFields(in)
	is := slices.Clone(in.Before)
	checkSeat(&is, fields, in.LicenceKey, in.MachineID)
	for _, f := range []struct {
		path  string
		value *string
	}{{"/label", in.Label}, {"/os", in.OS}, {"/app_version", in.AppVersion}} {
		is = append(is, fields.Of(f.path)...)
		is.CheckString(f.path, f.value, CheckMachineField)
	}
	return is
}

// machine is the machine the activation names.
func (in *Activate) machine() Machine {
	return Machine{ID: *in.MachineID, Label: *in.Label, OS: *in.OS, AppVersion: *in.AppVersion}
}

// Status is the body of a status check: the licence key and the machine.
type Status struct {
	licentia.Decoded
	LicenceKey *string `json:"licence_key" input:"required"`
	MachineID  *string `json:"machine_id" input:"required"`
}

// Deactivate is the body that frees a machine's seat, the same as a status
// check's.
type Deactivate = Status

// Validate reports every problem of a status check or deactivation.
func (in *Status) Validate() licentia.Issues {
	is := slices.Clone(in.Before)
	checkSeat(&is, licentia.CheckFields(in), in.LicenceKey, in.MachineID)
	return is
}

// checkSeat adds the problems of the licence key and machine id every
// activation body carries: each field's own, then their rules.
func checkSeat(is *licentia.Issues, fields licentia.Issues, key, machineID *string) {
	*is = append(*is, fields.Of("/licence_key", "/machine_id")...)
	is.CheckString("/licence_key", key, CheckLicenceKey)
	is.CheckString("/machine_id", machineID, CheckMachineID)
}

// Result is an activation's outcome: the machine's activation, whether a
// seat was taken now (201) or already held (200), and the verdict.
type Result struct {
	Activation *licentia.Activation
	Created    bool
	Verdict    string
	// Heartbeat is the product's heartbeat interval, nil when off.
	Heartbeat *int64
}

// subject is a verified key's licence and product, and the product's key
// to sign verdicts with.
type subject struct {
	licence *licentia.Licence
	product *licentia.Product
	priv    ed25519.PrivateKey
}

// resolve runs the checks every route shares, in the contract's order: 422
// key, 404 licence_not_found, and (when sign is set) 503
// product_unavailable.
func (s *Service) resolve(ctx context.Context, key string, sign bool) (*subject, error) {
	p, licenceID, err := s.cat.VerifyLicenceKey(ctx, key)
	if err != nil {
		return nil, err
	}
	l, err := s.store.LicenceByID(ctx, licenceID)
	return s.subjectOf(p, l, err, sign)
}

// subjectOf finishes resolve once the licence of a verified key was read
// (l and err are the read's result).
func (s *Service) subjectOf(p *licentia.Product, l *licentia.Licence, err error, sign bool) (*subject, error) {
	if licentia.ErrorCode(err) == licentia.CodeLicenceNotFound || err == nil && l.ProductID != p.ID {
		// A genuine key the service does not know: not a revocation, so the
		// application keeps its offline result.
		return nil, licentia.Errorf(licentia.CodeLicenceNotFound, "The service does not know this licence.")
	}
	if err != nil {
		return nil, err
	}
	sub := &subject{licence: l, product: p}
	if sign {
		if sub.priv, err = s.keys.CurrentPrivate(p); err != nil {
			return nil, err
		}
	}
	return sub, nil
}

// refused answers 403 for a licence whose derived state forbids taking a
// seat. An anonymised licence answers with its stored status.
func refused(l *licentia.Licence, now time.Time) error {
	switch l.DerivedState(now) {
	case licentia.StateRevoked:
		return licentia.Errorf(licentia.CodeLicenceRevoked, "The licence was revoked.")
	case licentia.StateExpired:
		return licentia.Errorf(licentia.CodeLicenceExpired, "The licence has expired.")
	}
	return nil
}

// Activate takes a seat for a machine, or refreshes the live seat it holds.
// Of machines racing for the last seat exactly one wins: the licence row is
// locked while its live activations are counted.
func (s *Service) Activate(ctx context.Context, in Activate) (*Result, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	m := in.machine()
	sub, err := s.resolve(ctx, *in.LicenceKey, true)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var res Result
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		res = Result{} // a run again starts afresh (see store.Store.InTx)
		l, err := tx.LockLicence(ctx, sub.licence.OrgID, sub.licence.ID)
		if err != nil {
			return err
		}
		sub.licence = l
		if err := refused(l, now); err != nil {
			return err
		}
		held, err := tx.LiveActivation(ctx, l.OrgID, l.ID, m.ID)
		switch {
		case err == nil:
			held.LastSeenAt, held.Label, held.OS, held.AppVersion = now, m.Label, m.OS, m.AppVersion
			res.Activation = held
			return tx.TouchActivation(ctx, held)
		case licentia.ErrorCode(err) != licentia.CodeNotFound:
			return err
		}
		p, err := tx.Product(ctx, l.OrgID, l.ProductID)
		if err != nil {
			return err
		}
		if l.LiveActivations >= l.MachinesAllowed(p.MachinesPerSeat) {
			return licentia.SeatLimitReached(l, p.MachinesPerSeat, l.LiveActivations)
		}
		a := &licentia.Activation{ID: licentia.NewID(), OrgID: l.OrgID, LicenceID: l.ID, MachineID: m.ID,
			Label: m.Label, OS: m.OS, AppVersion: m.AppVersion, ActivatedAt: now, LastSeenAt: now}
		if err := tx.CreateActivation(ctx, a); err != nil {
			return err
		}
		l.LiveActivations++
		res.Activation, res.Created = a, true
		return events.Record(ctx, tx, licentia.Actor{Type: licentia.ActorApplication}, l, a, licentia.AuditActivationCreated, licentia.EventActivationCreated, now, events.ActivationData(l, a))
	})
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	if res.Verdict, err = s.verdict(sub, m.ID, &res.Activation.ID, now, false); err != nil {
		return nil, err
	}
	res.Heartbeat = sub.product.HeartbeatIntervalSeconds
	return &res, nil
}

// Status answers a signed verdict for every state of the licence, on this
// machine. It reads the stored status on every call, so a revocation takes
// effect at once. A live activation's last_seen_at is refreshed when it is
// older than RefreshAfter, never more than a minute. The answer carries the
// product's heartbeat interval too, outside the signed verdict.
func (s *Service) Status(ctx context.Context, in Status) (*StatusResult, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	machineID := *in.MachineID
	p, licenceID, err := s.cat.VerifyLicenceKey(ctx, *in.LicenceKey)
	if err != nil {
		return nil, err
	}
	l, seat, err := s.store.LicenceWithSeat(ctx, licenceID, machineID)
	sub, err := s.subjectOf(p, l, err, true)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var activationID *string
	if seat != nil {
		activationID = &seat.ActivationID
		if isStale(seat.ActivationID, seat.LastSeenAt, now) {
			if err := s.touch(ctx, sub.licence, machineID, now); err != nil {
				return nil, fmt.Errorf("status: %w", err)
			}
		}
	}
	v, err := s.verdict(sub, machineID, activationID, now, true)
	if err != nil {
		return nil, err
	}
	return &StatusResult{Verdict: v, Heartbeat: p.HeartbeatIntervalSeconds}, nil
}

// StatusResult is a status check's answer: the verdict, and the product's
// heartbeat interval, nil when off.
type StatusResult struct {
	Verdict   string
	Heartbeat *int64
}

// isStale reports whether an activation's stored last_seen_at is due for
// a refresh.
func isStale(activationID string, lastSeen, now time.Time) bool {
	return now.Sub(lastSeen) > RefreshAfter(activationID)
}

// touch refreshes last_seen_at of the machine's live activation. It reads
// the activation again while holding the licence, as Activate does: the
// write carries label, os and app_version too, so a copy read before an
// activation refreshed them would write the old values back.
func (s *Service) touch(ctx context.Context, l *licentia.Licence, machineID string, now time.Time) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.LockLicence(ctx, l.OrgID, l.ID); err != nil {
			return err
		}
		a, err := tx.LiveActivation(ctx, l.OrgID, l.ID, machineID)
		if licentia.ErrorCode(err) == licentia.CodeNotFound {
			return nil // freed meanwhile: nothing to refresh
		}
		if err != nil || !isStale(a.ID, a.LastSeenAt, now) {
			return err
		}
		a.LastSeenAt = now
		return tx.TouchActivation(ctx, a)
	})
}

// Deactivate frees this machine's seat; nothing to free answers changed
// false. It signs nothing, so it needs no signing key.
func (s *Service) Deactivate(ctx context.Context, in Deactivate) (bool, error) {
	if err := in.Validate().Err(); err != nil {
		return false, err
	}
	machineID := *in.MachineID
	sub, err := s.resolve(ctx, *in.LicenceKey, false)
	if err != nil {
		return false, err
	}
	now := s.now()
	changed := false
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		changed = false // a run again starts afresh (see store.Store.InTx)
		l, err := tx.LockLicence(ctx, sub.licence.OrgID, sub.licence.ID)
		if err != nil {
			return err
		}
		held, err := tx.LiveActivation(ctx, l.OrgID, l.ID, machineID)
		if licentia.ErrorCode(err) == licentia.CodeNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		a, ok, err := tx.DeactivateActivation(ctx, l.OrgID, held.ID, now)
		if err != nil || !ok {
			return err
		}
		changed = true
		l.LiveActivations--
		return events.Record(ctx, tx, licentia.Actor{Type: licentia.ActorApplication}, l, a, licentia.AuditActivationDeactivated, licentia.EventActivationDeactivated, now, events.ActivationData(l, a))
	})
	if err != nil {
		return false, fmt.Errorf("deactivate: %w", err)
	}
	return changed, nil
}

// verdictReuse is how long the status route answers a verdict again to a
// machine whose verdict would say the same: its issued_at and valid_until
// then lag the request by at most this much. Anything the verdict states that changes
// (the state, a revocation, the seat, the limit, the signing key) makes a
// new one at once.
const verdictReuse = time.Second

// maxVerdicts bounds the verdicts kept for reuse: about 1 KB each.
const maxVerdicts = 20_000

// verdictFor names the machine a kept verdict is about.
type verdictFor struct{ licenceID, machineID string }

// verdictFacts is everything a verdict states but when it was signed.
type verdictFacts struct {
	productID, activationID, state, expiresAt, trialEndsAt string
	limitKind, domain, keyFingerprint                      string
	major                                                  int
	limitCount                                             int64
	hasActivation                                          bool
}

// keptVerdict is a verdict signed at issued.
type keptVerdict struct {
	facts   verdictFacts
	issued  time.Time
	verdict string
}

// verdict signs the licence's state on a machine. With reuse (the status
// route) it answers instead the one signed for the same facts less than
// verdictReuse ago; an activation always signs anew. It is valid for the
// configured validity; a trial's active verdict never past one day after
// the trial's end; for a product with heartbeat leases, never past the
// lease the verdict's check renewed.
func (s *Service) verdict(sub *subject, machineID string, activationID *string, now time.Time, reuse bool) (string, error) {
	l := sub.licence
	state := l.DerivedState(now)
	v := sdk.Verdict{
		LicenceID: l.ID, ProductID: l.ProductID, MachineID: machineID, ActivationID: activationID,
		State: string(state), ExpiresAt: licentia.FormatTimePtr(l.ExpiresAt), TrialEndsAt: licentia.FormatTimePtr(l.TrialEndsAt),
		Major: int(l.Major), LimitKind: string(l.LimitKind), LimitCount: l.LimitCount,
	}
	facts := verdictFacts{productID: v.ProductID, state: v.State, limitKind: v.LimitKind, domain: sub.product.VerdictSigningDomain,
		major: v.Major, limitCount: v.LimitCount, hasActivation: activationID != nil}
	if activationID != nil {
		facts.activationID = *activationID
	}
	if v.ExpiresAt != nil {
		facts.expiresAt = *v.ExpiresAt
	}
	if v.TrialEndsAt != nil {
		facts.trialEndsAt = *v.TrialEndsAt
	}
	if k := sub.product.CurrentKey(); k != nil {
		facts.keyFingerprint = k.Fingerprint
	}
	at := verdictFor{l.ID, machineID}
	if kept, ok := s.verdicts.Get(at); reuse && ok && kept.facts == facts && !now.Before(kept.issued) && now.Sub(kept.issued) < verdictReuse {
		return kept.verdict, nil
	}
	validUntil := now.Add(s.validity)
	if state == licentia.StateTrial && l.TrialEndsAt != nil {
		if limit := l.TrialEndsAt.Add(trialGrace); validUntil.After(limit) {
			validUntil = limit
		}
	}
	if lease := LeaseLength(sub.product); lease > 0 && validUntil.After(now.Add(lease)) {
		validUntil = now.Add(lease)
	}
	v.IssuedAt, v.ValidUntil = licentia.FormatTime(now), licentia.FormatTime(validUntil)
	signed, err := sdk.SignVerdict(sub.priv, sub.product.VerdictSigningDomain, v)
	if err != nil {
		return "", err
	}
	if reuse {
		s.verdicts.Put(at, keptVerdict{facts: facts, issued: now, verdict: signed})
	}
	return signed, nil
}

func (s *Service) now() time.Time { return licentia.TruncateMillis(s.clock.Now()) }
