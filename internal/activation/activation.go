// Package activation serves the routes an application calls with a licence
// key: taking a seat on a machine, asking for a signed verdict, and freeing
// the seat. The licence key is the credential; no API key is involved.
package activation

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"time"

	"github.com/licentia/licentia/internal/cache"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

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
	// lease, when set, is the lease of floating use a verdict is signed
	// for: the verdict names it and is valid until its end.
	lease *store.FloatingLease
}

// resolve runs the checks every route shares, in the contract's order: 422
// key, 404 licence_not_found, and (when sign is set) 503
// product_unavailable.
func (s *Service) resolve(ctx context.Context, key string, sign bool) (*subject, error) {
	k, err := s.verify(ctx, key, sign)
	if err != nil {
		return nil, err
	}
	l, err := s.store.LicenceByID(ctx, k.licenceID)
	return k.subject(l, err)
}

// keyed is a verified licence key: its product, its licence's id, and when
// its answer is signed the product's signing key or why there is none.
type keyed struct {
	product   *licentia.Product
	licenceID string
	priv      ed25519.PrivateKey
	privErr   error
}

// verify runs resolve's first check, 422 key, and finds the signing key;
// keyed.subject runs the others once the licence is read.
func (s *Service) verify(ctx context.Context, key string, sign bool) (*keyed, error) {
	p, licenceID, err := s.cat.VerifyLicenceKey(ctx, key)
	if err != nil {
		return nil, err
	}
	k := &keyed{product: p, licenceID: licenceID}
	if sign {
		k.priv, k.privErr = s.keys.CurrentPrivate(p)
	}
	return k, nil
}

// subject finishes resolve once the licence of the key was read (l and err
// are the read's result): 404 licence_not_found, then 503
// product_unavailable.
func (k *keyed) subject(l *licentia.Licence, err error) (*subject, error) {
	if licentia.ErrorCode(err) == licentia.CodeLicenceNotFound || err == nil && l.ProductID != k.product.ID {
		// A genuine key the service does not know: not a revocation, so the
		// application keeps its offline result.
		return nil, licentia.Errorf(licentia.CodeLicenceNotFound, "The service does not know this licence.")
	}
	if err != nil {
		return nil, err
	}
	if k.privErr != nil {
		return nil, k.privErr
	}
	return &subject{licence: l, product: k.product, priv: k.priv}, nil
}

// lockSeat locks the key's licence in tx, with the machine's live
// activation and, with product, the licence's product (store.Tx.LockSeat),
// and finishes resolve's checks on the licence it locked. The routes that
// write read the licence this way only: a read before the transaction
// would be a round trip the lock repeats.
func (k *keyed) lockSeat(ctx context.Context, tx store.Tx, machineID string, product bool) (*store.Locked, *subject, error) {
	// The licence is looked for in the organization of the key's product:
	// a licence of another one is one this key does not know.
	locked, err := tx.LockSeat(ctx, k.product.OrgID, k.licenceID, machineID, product)
	var l *licentia.Licence
	if err == nil {
		l = locked.Licence
	}
	sub, err := k.subject(l, err)
	if err != nil {
		return nil, nil, err
	}
	return locked, sub, nil
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
	return s.activate(ctx, licentia.Actor{Type: licentia.ActorApplication}, in)
}

// activate is Activate, audited as actor.
func (s *Service) activate(ctx context.Context, actor licentia.Actor, in Activate) (*Result, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	m := in.machine()
	k, err := s.verify(ctx, *in.LicenceKey, true)
	if err != nil {
		return nil, err
	}
	now := s.now()
	bound, err := s.boundBefore(ctx, k, m)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	var res Result
	var sub *subject
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		res = Result{} // a run again starts afresh (see store.Store.InTx)
		var locked *store.Locked
		var err error
		if locked, sub, err = k.lockSeat(ctx, tx, m.ID, true); err != nil {
			return err
		}
		l, p := locked.Licence, locked.Product
		if err := refused(l, now); err != nil {
			return err
		}
		if held := locked.Held; held != nil {
			held.LastSeenAt, held.Label, held.OS, held.AppVersion = now, m.Label, m.OS, m.AppVersion
			if m.Components != nil {
				held.Components = m.Components
			}
			res.Activation = held
			return tx.TouchActivation(ctx, held)
		}
		live, err := s.liveIfNeeded(ctx, tx, l, p, bound)
		if err != nil {
			return err
		}
		if res.Activation, err = rebind(ctx, tx, l, p, live, m, bound, now); err != nil || res.Activation != nil {
			return err
		}
		if allowed := l.MachinesAllowed(p.MachinesPerSeat); l.LiveActivations >= allowed {
			moved, err := transfer(ctx, tx, l, p, live, allowed, now)
			if err != nil {
				return err
			}
			if !moved {
				return licentia.SeatLimitReached(l, p.MachinesPerSeat, l.LiveActivations)
			}
		}
		a := &licentia.Activation{ID: licentia.NewID(), OrgID: l.OrgID, LicenceID: l.ID, MachineID: m.ID,
			Label: m.Label, OS: m.OS, AppVersion: m.AppVersion, ActivatedAt: now, LastSeenAt: now, Components: m.Components}
		if err := tx.CreateActivation(ctx, a); err != nil {
			return err
		}
		l.LiveActivations++
		res.Activation, res.Created = a, true
		return events.Record(ctx, tx, actor, l, a, licentia.AuditActivationCreated, licentia.EventActivationCreated, now, events.ActivationData(l, a))
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

// Deactivate frees this machine's seat; nothing to free answers changed
// false. It signs nothing, so it needs no signing key.
func (s *Service) Deactivate(ctx context.Context, in Deactivate) (bool, error) {
	if err := in.Validate().Err(); err != nil {
		return false, err
	}
	machineID := *in.MachineID
	k, err := s.verify(ctx, *in.LicenceKey, false)
	if err != nil {
		return false, err
	}
	now := s.now()
	changed := false
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		changed = false // a run again starts afresh (see store.Store.InTx)
		locked, _, err := k.lockSeat(ctx, tx, machineID, false)
		if err != nil || locked.Held == nil {
			return err
		}
		l := locked.Licence
		a, ok, err := tx.DeactivateActivation(ctx, l.OrgID, locked.Held.ID, now)
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

func (s *Service) now() time.Time { return licentia.TruncateMillis(s.clock.Now()) }
