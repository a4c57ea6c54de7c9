package store

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
)

// LicenceFilter selects licences for GET /v1/admin/licences (where at least
// one of Email, Q and ExternalRef is set, so every find starts from an index
// on the organization and one of them) and for the list and export, where
// every filter is optional and a page starts After a licence.
type LicenceFilter struct {
	// Email matches the whole address, case-insensitively.
	Email *string
	// Q matches an email prefix (case-insensitively), an exact id or an
	// exact external reference. QLicenceID is set instead when Q is a whole
	// licence key: it then matches that licence only.
	Q          *string
	QLicenceID *string
	ProductID  *string
	// ExternalRef matches exactly, within ProductID.
	ExternalRef *string
	State       *licentia.State
	Status      *licentia.Status
	Term        *licentia.Term
	Source      *licentia.Source
	// Feature matches licences granting the feature code, whatever the
	// grant's expiry.
	Feature *string
	// OrderID matches a licence's provider order, checkout or subscription
	// id, or its order number, exactly.
	OrderID *string
	// MachineID matches the licences a machine was activated on, whether
	// that activation is live or not.
	MachineID *string
	// IssuedAfter is inclusive, IssuedBefore exclusive.
	IssuedAfter, IssuedBefore *time.Time
	// After starts the answer after this position in the order of the
	// list (issued_at, then id, descending): keyset paging, so licences
	// issued while a caller pages never shift the pages still to come.
	After *ListPosition
	Limit int
}

// ListPosition is a licence's place in the list's order.
type ListPosition struct {
	IssuedAt time.Time
	ID       string
}

// StatusColumns are the columns of a licence that LicenceWithSeat reads, in
// the order each engine's LicenceWithSeat scans them: what a status check
// and its verdict use, a third of the licence's columns. The status route
// reads and converts no more.
const StatusColumns = `id, org_id, product_id, status, expires_at, trial_ends_at, major, limit_kind, limit_count, features`

// StatusPart is the part of licence l that LicenceWithSeat reads
// (StatusColumns); its other fields are zero.
func StatusPart(l *licentia.Licence) *licentia.Licence {
	return &licentia.Licence{ID: l.ID, OrgID: l.OrgID, ProductID: l.ProductID, Status: l.Status,
		ExpiresAt: l.ExpiresAt, TrialEndsAt: l.TrialEndsAt, Major: l.Major, LimitKind: l.LimitKind,
		LimitCount: l.LimitCount, Features: l.Features}
}

// Seat is what the status route needs of a machine's live activation.
type Seat struct {
	ActivationID string
	LastSeenAt   time.Time
}

// Locked is what Tx.LockSeat read: the licence, now held; the machine's
// live activation on it, nil when the machine holds none; and the
// licence's product, nil unless asked for.
type Locked struct {
	Licence *licentia.Licence
	Held    *licentia.Activation
	Product *licentia.Product
}

// LockSeatInTurn is Tx.LockSeat as its three reads one after the other,
// for an engine to which a statement costs no round trip.
func LockSeatInTurn(ctx context.Context, tx Tx, orgID, licenceID, machineID string, product bool) (*Locked, error) {
	l, err := tx.LockLicence(ctx, orgID, licenceID)
	if err != nil {
		return nil, err
	}
	out := &Locked{Licence: l}
	out.Held, err = tx.LiveActivation(ctx, orgID, licenceID, machineID)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		out.Held, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if product {
		if out.Product, err = tx.Product(ctx, orgID, l.ProductID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ScanWith appends extra destinations to a row's Scan, so a query can read
// a few columns after an entity's own with that entity's scan function.
type ScanWith struct {
	Row   interface{ Scan(dest ...any) error }
	Extra []any
}

func (s ScanWith) Scan(dest ...any) error { return s.Row.Scan(append(dest, s.Extra...)...) }

// Qualified prefixes each of a comma-separated list of columns with a
// table's alias, for a query that joins.
func Qualified(columns, alias string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// LicenceCounts are the numbers of GET /v1/admin/licences/counts.
type LicenceCounts struct {
	All, Active, Trial, Expired, Revoked int64
	Perpetual, Term, Subscription        int64
	Admin, Provider                      int64
	LiveMachines                         int64
	IssuedSince, RevokedSince            int64
}

// Licence counts are read from licence_stats, a table of counters kept in
// the same transaction as every licence and activation change, so neither
// plan checks nor counts scan an organization's licences. A licence counts
// in the row of its StatsKey; the only part of the key that moves with time
// is Lapsed, which the sweeper (SweepLicences) advances: a licence is lapsed
// once its expires_at is at or before the sweep watermark. Reads correct for
// licences expiring between the watermark and now, found through an index.

// StatsShards spreads an organization's counters over a few rows, so that
// concurrent activations on PostgreSQL do not all wait for one row lock.
const StatsShards = 4

// StatsKey is the licence_stats row a licence counts in.
type StatsKey struct {
	ProductID string
	Status    licentia.Status
	Source    licentia.Source
	Term      licentia.Term
	Trial     bool
	Lapsed    bool
	Shard     int
}

// CompareStatsKeys orders licence_stats rows as every writer takes their
// locks (product, status, source, term, trial, lapsed, shard), so two
// transactions never wait for a row the other holds.
func CompareStatsKeys(a, b StatsKey) int {
	return cmp.Or(cmp.Compare(a.ProductID, b.ProductID), cmp.Compare(a.Status, b.Status),
		cmp.Compare(a.Source, b.Source), cmp.Compare(a.Term, b.Term), compareBool(a.Trial, b.Trial),
		compareBool(a.Lapsed, b.Lapsed), cmp.Compare(a.Shard, b.Shard))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// ParseWatermark reads the stored sweep watermark (SettingSweepWatermark):
// Unix milliseconds, and the epoch when no sweep has run.
func ParseWatermark(v string) (time.Time, error) {
	if v == "" {
		return FromMillis(0), nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("read sweep watermark %q: %w", v, err)
	}
	return FromMillis(ms), nil
}

// KeyOf is the row licence l counts in, for sweep watermark w. Only a
// stored-active licence is ever lapsed: the sweeper moves no other, so the
// row of a revoked or expired licence must not depend on w, or a change made
// after a sweep would take it off a row it was never counted in. Trial says
// the licence has a trial end, ahead or not: a trial ends with its key
// (trial_ends_at is expires_at), so it is lapsed from the same instant.
func KeyOf(l *licentia.Licence, w time.Time) StatsKey {
	h := fnv.New32a()
	h.Write([]byte(l.ID))
	return StatsKey{
		ProductID: l.ProductID,
		Status:    l.Status,
		Source:    l.Source,
		Term:      l.Term(),
		Trial:     l.TrialEndsAt != nil,
		Lapsed:    l.Status == licentia.StatusActive && l.HasLapsed(w),
		Shard:     int(h.Sum32() % StatsShards),
	}
}

// StatsGroup is one aggregated line of licence_stats.
type StatsGroup struct {
	Status licentia.Status
	Source licentia.Source
	Term   licentia.Term
	Trial  bool
	Lapsed bool
	N      int64
	Live   int64
}

// Tally computes the counts from the aggregated counters and the stored-active
// licences expiring between the watermark w and now (either way round), whose
// counter rows were chosen with w but whose state is judged at now.
func Tally(groups []StatsGroup, window []licentia.Licence, w, now time.Time) LicenceCounts {
	var c LicenceCounts
	for _, g := range groups {
		c.All += g.N
		switch g.Term {
		case licentia.TermPerpetual:
			c.Perpetual += g.N
		case licentia.TermTerm:
			c.Term += g.N
		case licentia.TermSubscription:
			c.Subscription += g.N
		}
		if g.Source == licentia.SourceProvider {
			c.Provider += g.N
		} else {
			c.Admin += g.N
		}
		add(&c, licentia.StateOf(g.Status, g.Lapsed, g.Trial), g.N, g.Live)
	}
	for i := range window {
		l := &window[i]
		k := KeyOf(l, w) // the row it is counted in, judged as the rows above
		counted := licentia.StateOf(k.Status, k.Lapsed, k.Trial)
		actual := l.DerivedState(now)
		if counted == actual {
			continue
		}
		add(&c, counted, -1, -l.LiveActivations)
		add(&c, actual, 1, l.LiveActivations)
	}
	return c
}

// add counts n licences in state s, with live activations on them; those
// on licences not in force are not live machines.
func add(c *LicenceCounts, s licentia.State, n, live int64) {
	switch s {
	case licentia.StateRevoked:
		c.Revoked += n
	case licentia.StateExpired:
		c.Expired += n
	case licentia.StateTrial:
		c.Trial += n
		c.LiveMachines += live
	case licentia.StateActive:
		c.Active += n
		c.LiveMachines += live
	}
}

// Window returns the bounds of the expiry window Tally corrects for.
func Window(w, now time.Time) (lo, hi time.Time) {
	if w.After(now) {
		return now, w
	}
	return w, now
}

// StateSQL returns a boolean SQL expression true when a row of licences is
// in derived state s at the time bound to the placeholder now. It mirrors
// licentia.StateOf; storetest's DerivedStateBoundaries holds both engines'
// answers to licentia.Licence.DerivedState.
func StateSQL(s licentia.State, now string) string {
	switch s {
	case licentia.StateRevoked:
		return `status = 'revoked'`
	case licentia.StateExpired:
		return `(status = 'expired' OR (status = 'active' AND expires_at IS NOT NULL AND expires_at <= ` + now + `))`
	case licentia.StateTrial:
		return `(status = 'active' AND (expires_at IS NULL OR expires_at > ` + now + `) AND trial_ends_at IS NOT NULL AND trial_ends_at > ` + now + `)`
	}
	return `(status = 'active' AND (expires_at IS NULL OR expires_at > ` + now + `) AND (trial_ends_at IS NULL OR trial_ends_at <= ` + now + `))`
}

// TermSQL returns a boolean SQL expression true when a row has term t.
func TermSQL(t licentia.Term) string {
	switch t {
	case licentia.TermSubscription:
		return `provider_subscription_id IS NOT NULL`
	case licentia.TermTerm:
		return `(provider_subscription_id IS NULL AND expires_at IS NOT NULL)`
	}
	return `(provider_subscription_id IS NULL AND expires_at IS NULL)`
}

// EmailPrefixBound returns the exclusive upper bound of the lower-cased
// email range that starts with prefix, for an index range scan that compares
// bytes; "" when there is none. For valid UTF-8 the bound is the prefix with
// its last character raised to the next one: UTF-8 orders bytes as it orders
// code points and no character's encoding begins another's, so every string
// starting with prefix sorts below it and no other valid string does, and
// the bound is itself valid UTF-8, which PostgreSQL requires of text (raising
// the last byte of "ÿ", C3 BF, would give C3 C0). Other prefixes have their
// last byte below 0xFF raised.
func EmailPrefixBound(prefix string) string {
	if !utf8.ValidString(prefix) {
		return bytePrefixBound(prefix)
	}
	rs := []rune(prefix)
	for i := len(rs) - 1; i >= 0; i-- {
		switch next := rs[i] + 1; {
		case next == 0xD800: // surrogates are not characters
			rs[i] = 0xE000
		case next <= utf8.MaxRune:
			rs[i] = next
		default:
			continue
		}
		return string(rs[:i+1])
	}
	return ""
}

func bytePrefixBound(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}
