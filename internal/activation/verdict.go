package activation

import (
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// trialGrace bounds a trial's active verdict: never valid more than one day
// past the trial's end.
const trialGrace = 24 * time.Hour

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
	// features are the grants in force, encoded: a grant added, removed
	// or past its expiry makes a verdict of its own.
	features      string
	major         int
	limitCount    int64
	hasActivation bool
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
// lease the verdict's check renewed; for a lease of floating use (never
// reused), until the lease's end and never past it.
func (s *Service) verdict(sub *subject, machineID string, activationID *string, now time.Time, reuse bool) (string, error) {
	l := sub.licence
	state := l.DerivedState(now)
	v := sdk.Verdict{
		LicenceID: l.ID, ProductID: l.ProductID, MachineID: machineID, ActivationID: activationID,
		State: string(state), ExpiresAt: licentia.FormatTimePtr(l.ExpiresAt), TrialEndsAt: licentia.FormatTimePtr(l.TrialEndsAt),
		Major: int(l.Major), LimitKind: string(l.LimitKind), LimitCount: l.LimitCount,
		Features: verdictFeatures(licentia.GrantsInForce(l.Features, now)),
	}
	facts := verdictFacts{productID: v.ProductID, state: v.State, limitKind: v.LimitKind, domain: sub.product.VerdictSigningDomain,
		major: v.Major, limitCount: v.LimitCount, hasActivation: activationID != nil, features: featureFacts(v.Features)}
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
	if sub.lease != nil {
		// A lease's end takes the place of the configured validity: a
		// borrowed lease holds offline until its end, a short one no
		// longer.
		validUntil = sub.lease.ExpiresAt
		v.LeaseID, v.LeaseExpiresAt = &sub.lease.ID, new(licentia.FormatTime(sub.lease.ExpiresAt))
	}
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

// verdictFeatures are grants as a verdict carries them; nil for none, so
// the payload leaves features out.
func verdictFeatures(gs []licentia.FeatureGrant) []sdk.VerdictFeature {
	if len(gs) == 0 {
		return nil
	}
	out := make([]sdk.VerdictFeature, len(gs))
	for i, g := range gs {
		out[i] = sdk.VerdictFeature{Code: g.Code, ExpiresAt: licentia.FormatTimePtr(g.ExpiresAt)}
	}
	return out
}

// featureFacts encodes a verdict's features for comparing kept verdicts.
func featureFacts(fs []sdk.VerdictFeature) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Code)
		if f.ExpiresAt != nil {
			b.WriteString("@" + *f.ExpiresAt)
		}
		b.WriteByte(' ')
	}
	return b.String()
}
