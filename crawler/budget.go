package crawler

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// BudgetStore orders the due URLs for a run that cannot reach them all, and keeps what each domain
// used of the budget.
type BudgetStore interface {
	// Prioritize orders the due URLs by the cost of leaving them stale (Xu et al.'s c), updated
	// saying which pages a provider hint vouched for; it returns how many it ordered.
	Prioritize(ctx context.Context, now time.Time, c float64, updated store.Updated) (int, error)
	// UpdateWeights brings the pages' weights (seed priority, in-links) up to date for Prioritize.
	UpdateWeights(ctx context.Context) (int, error)
	// SaveRunDomains records the budget each domain used in run.
	SaveRunDomains(ctx context.Context, run int64, ds []store.RunDomain) error
}

var _ BudgetStore = (*store.DB)(nil)

// budget counts a run's page fetches against its cap, new and known: newCap is how many never-fetched
// URLs may take before known ones are served (frequency.Pick shares them out). A share above zero is
// at least one page, so a small budget still admits new URLs. The zero total means no cap.
//
// With a fleet the cap is the run's, not the process's: every fetch is reserved in the fleet's
// account (Fleet.Spend) before it is made, a small block at a time, and what a process reserved and
// did not use goes back when its stage ends (giveBack). See blockSize for what a block costs.
type budget struct {
	mu                   sync.Mutex
	total, newCap        int
	newTaken, knownTaken int // this process's fetches

	fleet         Fleet         // with a fleet, the run's account
	run           int64         // the run the account is of
	acct          store.Account // the fleet's account as last seen
	reservedNew   int           // this process's reservations for never-fetched URLs, in the fleet's account
	reservedKnown int           // and for known ones
}

func newBudget(total int, share float64) *budget {
	return &budget{total: total, newCap: int(math.Ceil(share * float64(total)))}
}

// share makes b the process's side of run's budget in the fleet's account, which the run's first
// worker opened with its own total and new share: the run's cap is that one, whatever this
// process was configured with.
func (b *budget) share(ctx context.Context, f Fleet, run int64) error {
	a, err := f.OpenBudget(ctx, run, b.total, b.newCap)
	if err != nil {
		return err
	}
	b.fleet, b.run, b.acct = f, run, a
	b.total, b.newCap = a.Total, a.NewCap
	return nil
}

// maxBlock is the most fetches a fleet worker reserves in one round trip to the database.
//
// The fleet's account is one row that every worker's reservation locks and updates: per fetch, it
// would be one more commit on a row all workers wait for. A block of 8 makes it one in 8. What a
// block costs is exactness, and it is bounded: a worker killed holding a block loses its unused part
// (at most maxBlock fetches of the run, per worker killed), and a worker that finds the account
// empty ends its stage while others may still hold unused reservations that they give back when
// they end (at most maxBlock−1 per other worker). blockSize makes the blocks small as the account
// drains, so that near the end a block is one fetch and a run that is not killed spends its budget
// to within a few fetches.
const maxBlock = 8

// blockSize is how many fetches to reserve at once, from the fleet's account as last seen: a
// sixteenth of what is left, between 1 and maxBlock.
func blockSize(a store.Account) int {
	return min(max(a.Left()/16, 1), maxBlock)
}

// unused returns what this process reserved of the fleet's account and has not used. Call it
// with b.mu held.
func (b *budget) unused() int {
	return max(b.reservedNew+b.reservedKnown-b.newTaken-b.knownTaken, 0)
}

// taken returns the fetches of each kind taken in the run so far, fleet-wide with a fleet: the
// fleet's reservations as last seen, with this process's counted as it used them. Call it with b.mu
// held.
func (b *budget) taken() (newTaken, knownTaken int) {
	if b.fleet == nil {
		return b.newTaken, b.knownTaken
	}
	return max(b.acct.NewTaken-b.reservedNew, 0) + b.newTaken, max(b.acct.KnownTaken-b.reservedKnown, 0) + b.knownTaken
}

// prefer returns the kind of URL a domain should ask for first; spent reports that the budget is
// used up.
func (b *budget) prefer() (kind store.DueKind, spent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	newTaken, knownTaken := b.taken()
	switch {
	case b.total == 0:
		return store.DueAny, false
	case b.fleet != nil && b.acct.Left() == 0 && b.unused() == 0:
		return store.DueAny, true
	case b.fleet == nil && newTaken+knownTaken >= b.total:
		return store.DueAny, true
	case newTaken >= b.newCap:
		return store.DueKnown, false
	case knownTaken >= b.total-b.newCap:
		return store.DueNew, false
	}
	return store.DueAny, false
}

// left returns the fetches left in the run, and how many of them never-fetched URLs may still take
// before known ones are served. With a fleet they are the fleet's, as last seen (refresh).
func (b *budget) left() (left, newLeft int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	newTaken, knownTaken := b.taken()
	if b.fleet != nil {
		return b.acct.Left() + b.unused(), max(b.newCap-newTaken, 0)
	}
	return max(b.total-newTaken-knownTaken, 0), max(b.newCap-newTaken, 0)
}

// refresh reads the fleet's account again, so that left and prefer see what the other workers
// took; without a fleet there is nothing to read.
func (b *budget) refresh(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fleet == nil || b.total == 0 {
		return nil
	}
	a, err := b.fleet.OpenBudget(ctx, b.run, b.total, b.newCap)
	if err != nil {
		return err
	}
	b.acct = a
	return nil
}

// take reserves one fetch for a URL, reporting false when the budget is used up: the run's,
// fleet-wide, with a fleet.
func (b *budget) take(ctx context.Context, isNew bool) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.total == 0:
	case b.fleet == nil:
		if b.newTaken+b.knownTaken >= b.total {
			return false, nil
		}
	case b.unused() == 0:
		// The mutex is held across the round trip: this process's other workers would ask for a
		// block of their own otherwise, and reservations are a few per hundred fetches.
		got, a, err := b.fleet.Spend(ctx, b.run, isNew, blockSize(b.acct))
		if err != nil {
			return false, err
		}
		b.acct = a
		if got == 0 {
			return false, nil
		}
		if isNew {
			b.reservedNew += got
		} else {
			b.reservedKnown += got
		}
	}
	if isNew {
		b.newTaken++
	} else {
		b.knownTaken++
	}
	return true, nil
}

// giveBack returns to the fleet's account what this process reserved and did not use, and counts
// the fetches it used by the kind of URL they went to, when the stage ends.
func (b *budget) giveBack(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fleet == nil || b.total == 0 {
		return nil // no cap: nothing was reserved
	}
	newBack, knownBack := b.reservedNew-b.newTaken, b.reservedKnown-b.knownTaken
	if err := b.fleet.GiveBack(ctx, b.run, newBack, knownBack); err != nil {
		return err
	}
	b.reservedNew, b.reservedKnown = b.newTaken, b.knownTaken
	return nil
}

// ledger keeps a run's accounts: the fetches per domain and what the change model expected of them.
type ledger struct {
	mu      sync.Mutex
	domains map[string]*store.RunDomain
}

// record accounts for one page fetch of domain; p is the probability the rate estimate gave the
// page of having changed since its last fetch, or -1 without an estimate.
func (l *ledger) record(domain string, changed bool, p float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.domains == nil {
		l.domains = map[string]*store.RunDomain{}
	}
	d := l.domains[domain]
	if d == nil {
		d = &store.RunDomain{Domain: domain}
		l.domains[domain] = d
	}
	d.Fetched++
	if changed {
		d.Changed++
	}
	if p > 0 {
		d.Expected += p
	}
}

func (l *ledger) list() []store.RunDomain {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]store.RunDomain, 0, len(l.domains))
	for _, d := range l.domains {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out
}

// changeProbability is the chance that a page whose changes are a Poisson process of rate changes
// per run changed in the runs since its last fetch: 1 − exp(−rate · runs). It is −1 when there is no
// estimate or no earlier fetch to measure from.
func changeProbability(rate float64, lastRun, run int64) float64 {
	if rate <= 0 || lastRun <= 0 || run <= lastRun {
		return -1
	}
	return -math.Expm1(-rate * float64(run-lastRun))
}

// short reports whether the run cannot reach all due URLs: more due than the budget, or a domain
// whose due URLs need longer than the run may last at its politeness gap. budget is the run's cap:
// with a fleet, the fleet's, and due is the whole frontier's then too (each worker counts what is
// due fleet-wide, not what it will crawl), so the answer is the fleet's. The time test holds per
// worker as it is: a domain is one worker's at a time, at the same gap fleet-wide.
func (c *Crawler) short(ctx context.Context, due, budget int, hosts map[string]int) bool {
	if budget > 0 && due > budget {
		return true
	}
	if c.cfg.MaxDuration <= 0 {
		return false
	}
	perDomain := map[string]int{}
	gap := map[string]float64{}
	for h, n := range hosts {
		k := c.gate.Key(h)
		perDomain[k] += n
		gap[k] = c.gate.Gap(ctx, h, 0).Seconds()
	}
	for k, n := range perDomain {
		if float64(n)*gap[k] > c.cfg.MaxDuration.Seconds() {
			return true
		}
	}
	return false
}

// siteSample is the hybrid policy's sampling of one site in one run: its Sampler, and how many
// pages of the current batch are left.
type siteSample struct {
	s    *frequency.Sampler
	left int
}

// sampleMore reports whether d's sampler wants another sampled page: one is left of the current
// batch, or the sampler hands out another batch (the first always; later ones with Ghodsi et al.'s
// probability P(ρ) given the changed share seen so far). The sampler's randomness is seeded by the
// run and the site, so a run's choices can be replayed.
func (s *stage) sampleMore(d *domain) bool {
	h := s.c.cfg.Hybrid
	if d.sample == nil {
		seed := uint64(s.run.ID)
		for _, b := range []byte(d.key) {
			seed = seed*1099511628211 + uint64(b)
		}
		d.sample = &siteSample{s: h.NewSampler(h.Rho0(int(s.run.ID-1)), rand.New(rand.NewPCG(seed, 0x6a09e667)))}
	}
	if d.sample.left == 0 {
		d.sample.left = d.sample.s.NextBatch()
	}
	return d.sample.left > 0
}
