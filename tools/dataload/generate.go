package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// The naming convention the load generator relies on to find loaded
// licences: licence n has this email and external reference, and its
// machines are load-NNNNNNN-m0, -m1, ...
const (
	emailFormat   = "load-%07d@dataset.example"
	refFormat     = "load-%07d"
	machineFormat = "load-%07d-m%d"
)

const (
	day  = 24 * time.Hour
	year = 365 * day
	// minAge is how long ago the newest licence was issued, so every
	// licence has had time to be activated, revoked or expired.
	minAge = time.Hour
	// trialLength is how long a trial runs; trials are issued within the
	// last trialIssued, so every one is still running at the load's start.
	trialLength = 30 * day
	trialIssued = 29 * day
)

// Shares of the licence mix; the package comment explains them.
const (
	shareTrial   = 0.05
	shareRevoked = 0.10
	shareExpired = 0.05
	// Of the stored-active licences that are not trials, this share has a
	// term (30% of all licences); the others are perpetual.
	shareTermOfActive = 0.375
	// Of revoked and expired licences, this share has a term.
	shareTermOfEnded = 0.4
	// shareFreed is the chance that a machine was freed by its user.
	shareFreed = 0.15
)

type weighted[T any] struct {
	v T
	p float64
}

var (
	termLengths   = []weighted[time.Duration]{{30 * day, 0.15}, {90 * day, 0.25}, {year, 0.45}, {2 * year, 0.15}}
	machineLimits = []weighted[int64]{{1, 0.35}, {2, 0.30}, {3, 0.20}, {5, 0.15}}
	seatLimits    = []weighted[int64]{{1, 0.50}, {2, 0.25}, {5, 0.15}, {10, 0.10}}
	revokeReasons = []string{"Refunded.", "Chargeback.", "Key shared publicly.", "Replaced by a new licence."}
	expireReasons = []string{"Contract ended.", "Not renewed.", "Moved to another product."}
	systems       = []string{"windows", "macos", "linux"}
	appVersions   = []string{"1.0.4", "1.1.0", "1.2.3", "2.0.1"}
)

func pick[T any](r *rand.Rand, ws []weighted[T]) T {
	u := r.Float64()
	for _, w := range ws {
		if u < w.p {
			return w.v
		}
		u -= w.p
	}
	return ws[len(ws)-1].v
}

// spec is what one load generates.
type spec struct {
	orgID, productID string
	major            int64
	machinesPerSeat  int64
	licences         int
	activations      int
	seed             uint64
	// now is the load's start at millisecond precision: every generated
	// time is at or before it.
	now time.Time
}

// Streams of random numbers, one per licence (or pair of licences) and
// purpose, so that licence n is the same whatever the batch size and
// whichever licences are generated before it.
const (
	streamLicence uint64 = iota + 1
	streamSplit
)

// generator makes licence n and its activations from the seed and the
// product alone.
type generator struct {
	spec
	// key mixes the product into every stream. Licence ids are global, and
	// so are product ids, never reused: two loads with one seed into two
	// products must not generate the same ids, and a load into a fresh
	// database with the same product id and seed generates the same rows.
	key uint64
	pcg *rand.PCG
	r   *rand.Rand
	// split remembers the last pair's activation counts, computed once for
	// both licences.
	split struct {
		pair   int
		counts [2]int
		ok     bool
	}
}

func newGenerator(s spec) *generator {
	h := fnv.New64a()
	h.Write([]byte(s.productID))
	pcg := rand.NewPCG(0, 0)
	return &generator{spec: s, key: h.Sum64(), pcg: pcg, r: rand.New(pcg)}
}

// mix is SplitMix64's finalizer: nearby inputs give unrelated outputs, so
// the streams of licences n and n+1 share nothing.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// stream reseeds the generator's source for one purpose and index.
func (g *generator) stream(purpose uint64, i int) *rand.Rand {
	a := mix(g.seed ^ mix(g.key^purpose))
	g.pcg.Seed(a, mix(a+uint64(i)*0x9e3779b97f4a7c15))
	return g.r
}

// newID returns a version 4 UUID in lower case, as licentia.NewID does,
// from r instead of the system's random source.
func newID(r *rand.Rand) string {
	var b [16]byte
	for i := range 2 {
		v := r.Uint64()
		for j := range 8 {
			b[i*8+j] = byte(v >> (8 * j))
		}
	}
	return licentia.UUIDv4(b)
}

// between returns a time in [from, to) at millisecond precision; from when
// the span is empty.
func between(r *rand.Rand, from, to time.Time) time.Time {
	span := to.Sub(from).Milliseconds()
	if span <= 0 {
		return from
	}
	return from.Add(time.Duration(r.Int64N(span)) * time.Millisecond)
}

func ptr[T any](v T) *T { return &v }

// licence generates licence n. It draws from r first, before any
// activation, so a licence alone (the survey) is the same as a licence with
// its activations.
func (g *generator) licence(n int, r *rand.Rand) licentia.Licence {
	l := licentia.Licence{
		ID: newID(r), OrgID: g.orgID, ProductID: g.productID,
		Email: fmt.Sprintf(emailFormat, n), ExternalRef: ptr(fmt.Sprintf(refFormat, n)),
		Major: g.major, Status: licentia.StatusActive, Source: licentia.SourceAdmin,
	}
	if r.Float64() < 0.6 {
		l.LimitKind, l.LimitCount = licentia.LimitMachines, pick(r, machineLimits)
	} else {
		l.LimitKind, l.LimitCount = licentia.LimitSeats, pick(r, seatLimits)
	}
	term := func(share float64) {
		if r.Float64() < share {
			l.ExpiresAt = ptr(l.IssuedAt.Add(pick(r, termLengths)))
		}
	}
	// A status change happens after the issue, at least a minute later.
	change := func(to licentia.Status, reasons []string) {
		at := between(r, l.IssuedAt.Add(time.Minute), g.now)
		l.Status, l.StatusChangedAt, l.StatusReason = to, &at, ptr(reasons[r.IntN(len(reasons))])
	}
	switch u := r.Float64(); {
	case u < shareTrial:
		// A trial ends with its key, as the service issues it.
		l.IssuedAt = between(r, g.now.Add(-trialIssued), g.now.Add(-minAge))
		l.ExpiresAt = ptr(l.IssuedAt.Add(trialLength))
		l.TrialEndsAt = l.ExpiresAt
	case u < shareTrial+shareRevoked:
		l.IssuedAt = between(r, g.now.Add(-year), g.now.Add(-minAge))
		term(shareTermOfEnded)
		change(licentia.StatusRevoked, revokeReasons)
	case u < shareTrial+shareRevoked+shareExpired:
		l.IssuedAt = between(r, g.now.Add(-year), g.now.Add(-minAge))
		term(shareTermOfEnded)
		change(licentia.StatusExpired, expireReasons)
	default:
		l.IssuedAt = between(r, g.now.Add(-year), g.now.Add(-minAge))
		term(shareTermOfActive)
	}
	l.CreatedAt, l.UpdatedAt = l.IssuedAt, l.IssuedAt
	if l.StatusChangedAt != nil {
		l.UpdatedAt = *l.StatusChangedAt
	}
	return l
}

// activationCount is how many activations licence n has. The total is
// exactly g.activations: cumulative shares fix what each pair of licences
// gets, and draws split it between the two in proportion to the machines
// each allows (a licence of ten seats holds more machines than one of a
// single machine), without a pass over every licence first.
func (g *generator) activationCount(n int) int {
	if pair := n / 2; !g.split.ok || g.split.pair != pair {
		g.split.pair, g.split.counts, g.split.ok = pair, g.splitPair(pair), true
	}
	return g.split.counts[n%2]
}

// splitPair returns the activation counts of licences 2*pair and 2*pair+1.
func (g *generator) splitPair(pair int) [2]int {
	cum := func(i int) int { return int(int64(g.activations) * int64(i+1) / int64(g.licences)) }
	lo, hi := 2*pair, min(2*pair+1, g.licences-1)
	total := cum(hi) - cum(lo-1)
	if lo == hi {
		return [2]int{total, 0}
	}
	allowed := func(n int) int64 {
		l := g.licence(n, g.stream(streamLicence, n))
		return l.MachinesAllowed(g.machinesPerSeat)
	}
	wlo, whi := allowed(lo), allowed(hi)
	r := g.stream(streamSplit, pair)
	var c [2]int
	if total > 64 {
		// Past a few machines a licence, the expected share rounded at
		// random varies enough and costs one draw.
		c[0] = int(float64(total)*float64(wlo)/float64(wlo+whi) + r.Float64())
	} else {
		for range total {
			if r.Int64N(wlo+whi) < wlo {
				c[0]++
			}
		}
	}
	c[1] = total - c[0]
	return c
}

// generate returns licence n and appends its activations to acts. Machines
// are activated in time order while the licence could take a seat (before
// its expiry and any status change). A machine is freed by its user with
// chance shareFreed; when every seat is taken, the oldest live machine is
// freed at the moment the next one is activated, so no licence ever held
// more live machines than it allows.
func (g *generator) generate(n int, acts []licentia.Activation) (licentia.Licence, []licentia.Activation) {
	count := g.activationCount(n)
	r := g.stream(streamLicence, n)
	l := g.licence(n, r)
	end := g.now
	for _, t := range []*time.Time{l.ExpiresAt, l.StatusChangedAt} {
		if t != nil && t.Before(end) {
			end = *t
		}
	}
	first := len(acts)
	times := make([]time.Time, count)
	for i := range times {
		times[i] = between(r, l.IssuedAt, end)
	}
	slices.SortFunc(times, time.Time.Compare)
	allowed := l.MachinesAllowed(g.machinesPerSeat)
	var live []int // indexes in acts, oldest first
	for j, at := range times {
		live = slices.DeleteFunc(live, func(i int) bool { return !acts[i].DeactivatedAt.After(at) })
		if int64(len(live)) >= allowed {
			acts[live[0]].DeactivatedAt = ptr(at)
			live = live[1:]
		}
		a := licentia.Activation{
			ID: newID(r), OrgID: l.OrgID, LicenceID: l.ID, MachineID: fmt.Sprintf(machineFormat, n, j),
			Label: fmt.Sprintf("Machine %d", j+1), OS: systems[r.IntN(len(systems))],
			AppVersion: appVersions[r.IntN(len(appVersions))], ActivatedAt: at,
		}
		// A far-off deactivation stands for "still live": it is replaced
		// by nil below unless it falls before the load's start.
		a.DeactivatedAt = ptr(g.now.Add(year))
		if r.Float64() < shareFreed {
			a.DeactivatedAt = ptr(between(r, at, g.now))
		}
		acts = append(acts, a)
		live = append(live, len(acts)-1)
	}
	for i := first; i < len(acts); i++ {
		a := &acts[i]
		seenUntil := g.now
		if a.DeactivatedAt.After(g.now) {
			a.DeactivatedAt = nil
			l.LiveActivations++
		} else {
			seenUntil = *a.DeactivatedAt
		}
		a.LastSeenAt = between(r, a.ActivatedAt, seenUntil)
	}
	return l, acts
}
