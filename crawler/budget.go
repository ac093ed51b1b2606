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
type budget struct {
	mu                   sync.Mutex
	total, newCap        int
	newTaken, knownTaken int
}

func newBudget(total int, share float64) *budget {
	return &budget{total: total, newCap: int(math.Ceil(share * float64(total)))}
}

// prefer returns the kind of URL a domain should ask for first; spent reports that the budget is
// used up.
func (b *budget) prefer() (kind store.DueKind, spent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.total == 0:
		return store.DueAny, false
	case b.newTaken+b.knownTaken >= b.total:
		return store.DueAny, true
	case b.newTaken >= b.newCap:
		return store.DueKnown, false
	case b.knownTaken >= b.total-b.newCap:
		return store.DueNew, false
	}
	return store.DueAny, false
}

// left returns the fetches left in the run, and how many of them never-fetched URLs may still take
// before known ones are served.
func (b *budget) left() (left, newLeft int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.total-b.newTaken-b.knownTaken, 0), max(b.newCap-b.newTaken, 0)
}

// take reserves one fetch for a URL, reporting false when the budget is used up.
func (b *budget) take(isNew bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total > 0 && b.newTaken+b.knownTaken >= b.total {
		return false
	}
	if isNew {
		b.newTaken++
	} else {
		b.knownTaken++
	}
	return true
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
// whose due URLs need longer than the run may last at its politeness gap.
func (c *Crawler) short(ctx context.Context, due int, hosts map[string]int) bool {
	if c.cfg.Budget > 0 && due > c.cfg.Budget {
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
