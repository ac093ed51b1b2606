package crawler

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/hints"
	"github.com/strata-crawler/strata/internal/store"
)

// A run with a budget is crawled in rounds. Before each round the stage chooses which due URLs it
// fetches with what is left of the budget (frequency.Pick): never-fetched URLs up to their share,
// taking turns among domains; then known ones by what fetching them is worth to the policy; then,
// if budget is left, more new ones. Each domain then works through its own chosen URLs, so a slow
// domain keeps its share however fast the others answer, and what a run fetches does not depend on
// timing. URLs that join during a round — links one level down, redirect targets, the children of
// a hub the selective rule opens, pages a sitemap says changed — are candidates in the next round,
// which shares out what is left the same way. The first round of a run reads the provider hints
// of the origins that are due for it, so the choice knows what the sites said.

// maxRounds bounds the rounds of a run: each round goes one level down at least, and levels are few.
const maxRounds = 32

// roundHorizon is how long a budgeted round waits for a domain's next request. A domain that may not
// be contacted sooner (a site whose robots.txt asks for a Crawl-delay of an hour) gets no place in the
// round, and its chosen URLs go back to the budget: the budget goes to the domains that can use it in
// this run, and the site's own pages wait for a round or a run in which it is ready. Ordinary gaps,
// and Crawl-delays of a few seconds, are far below it: slow domains keep their share.
const roundHorizon = 2 * time.Minute

// postpone gives a domain's chosen URLs of the current round back: its next request is further off
// than the round waits.
func (s *stage) postpone(d *domain) {
	hosts, _ := s.sched.hosts(d)
	s.picks.mu.Lock()
	for _, h := range hosts {
		delete(s.picks.byHost, h)
	}
	s.picks.mu.Unlock()
	s.c.cfg.Log.Info("domain set aside for this round; its chosen URLs go back to the budget", "domain", d.key)
}

// picks are the URLs chosen for the current round, per host, in the order they are crawled.
type picks struct {
	mu      sync.Mutex
	byHost  map[string][]int64
	sampled map[int64]bool // the hybrid policy's sampled pages among them
}

// next pops the next chosen URL of one of hosts.
func (p *picks) next(hosts []string) (id int64, sampled, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range hosts {
		if list := p.byHost[h]; len(list) > 0 {
			p.byHost[h] = list[1:]
			return list[0], p.sampled[list[0]], true
		}
	}
	return 0, false, false
}

// nextPicked returns the next chosen URL of d that is still due; errNoMore when d has none left.
func (s *stage) nextPicked(ctx context.Context, d *domain) (*store.DueURL, error) {
	hosts, _ := s.sched.hosts(d)
	for {
		id, sampled, ok := s.picks.next(hosts)
		if !ok {
			return nil, errNoMore
		}
		u, err := s.c.store.DueByID(ctx, id, s.run.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue // skipped by the selective rule since it was chosen, or recorded already
		}
		if err != nil {
			return nil, err
		}
		u.Sampled = sampled
		return u, nil
	}
}

// pickRound chooses the URLs of the next round and hands their hosts to the scheduler: first from
// the due ones, never-fetched URLs within their domains' fair shares of the run; with budget left
// and nothing due, the known pages whose turn comes soonest, brought forward (a budget is there to
// be used); and only then the never-fetched URLs beyond the fair shares. It returns how many it
// chose.
func (s *stage) pickRound(ctx context.Context) (int, error) {
	// With a fleet, what is left is what the whole fleet has left.
	if err := s.budget.refresh(ctx); err != nil {
		return 0, err
	}
	due := func(fn func(store.Candidate) error) error { return s.c.store.DueCandidates(ctx, s.run.ID, fn) }
	n, err := s.pickFrom(ctx, due, false, false)
	if err != nil || n > 0 {
		return n, err
	}
	if left, _ := s.budget.left(); left <= 0 {
		return 0, nil
	}
	if !s.c.cfg.Uniform { // under the uniform policy every page is due every run: none to bring forward
		left, _ := s.budget.left()
		n, err = s.pickFrom(ctx, func(fn func(store.Candidate) error) error {
			return s.c.store.NextCandidates(ctx, s.run.Start, 4*left, fn)
		}, true, false)
		if err != nil || n > 0 {
			return n, err
		}
	}
	return s.pickFrom(ctx, due, false, true)
}

// pickFrom chooses the next round's URLs among the candidates each lists, and hands their hosts to
// the scheduler. forward says they are not due yet, and are made due now; spill lets new URLs past
// their domains' fair shares.
func (s *stage) pickFrom(ctx context.Context, each func(func(store.Candidate) error) error, forward, spill bool) (int, error) {
	left, newLeft := s.budget.left()
	if left <= 0 {
		return 0, nil
	}
	var cands []frequency.Candidate
	var rows []store.Candidate
	h := s.c.cfg.Hybrid
	bySite := map[string][]int{} // hybrid: the sampled pages of each domain, by index in rows
	err := each(func(c store.Candidate) error {
		key := s.c.gate.Key(c.Host)
		if s.sched.isDropped(key) || !s.sched.readyWithin(c.Host, roundHorizon) {
			return nil
		}
		if forward && s.vouched(c) {
			return nil // the site says it is as we have it: a fetch would find nothing
		}
		fc := frequency.Candidate{Domain: key, New: c.New, Level: c.Level, Key: c.URL}
		if !c.New {
			fc.Value = s.value(c)
			if h != nil && successes(c.Records) < h.History() {
				bySite[key] = append(bySite[key], len(rows))
			}
		}
		cands = append(cands, fc)
		rows = append(rows, c)

		return nil
	})
	if err != nil {
		return 0, err
	}
	sampled := map[int64]bool{}
	if h != nil {
		s.sampleBatches(bySite, rows, cands, sampled)
	}
	chosen := frequency.Pick(cands, frequency.Share{Left: left, New: newLeft, Allowance: s.allowances(cands),
		Spill: spill, Rotate: int(s.run.ID)})
	s.mu.Lock()
	for _, i := range chosen {
		if cands[i].New {
			s.newTaken[cands[i].Domain]++
		}
	}
	s.mu.Unlock()
	if forward && len(chosen) > 0 {
		ids := make([]int64, len(chosen))
		for k, i := range chosen {
			ids[k] = rows[i].ID
		}
		if err := s.c.store.SetDue(ctx, ids, nil); err != nil {
			return 0, err
		}
		s.count(func(st *Stats) { st.Forward += len(ids) })
	}
	if !forward && len(chosen) < len(cands) {
		s.mu.Lock()
		s.stats.Prioritized = true // more was due than the budget allows: the choice ordered them
		s.mu.Unlock()
	}
	// Each host's URLs in the order the crawl takes them: a hub before the pages below it, so the
	// selective rule can judge it first; then by the order of the choice.
	rank := make(map[int64]int, len(chosen))
	for r, i := range chosen {
		rank[rows[i].ID] = r
	}
	slices.SortStableFunc(chosen, func(a, b int) int {
		if c := cmp.Compare(rows[b].Level, rows[a].Level); c != 0 {
			return c
		}
		return cmp.Compare(rank[rows[a].ID], rank[rows[b].ID])
	})
	byHost := map[string][]int64{}
	for _, i := range chosen {
		byHost[rows[i].Host] = append(byHost[rows[i].Host], rows[i].ID)
	}
	s.picks.mu.Lock()
	s.picks.byHost, s.picks.sampled = byHost, sampled
	s.picks.mu.Unlock()
	hosts := make(map[string]int, len(byHost))
	for host, ids := range byHost {
		hosts[host] = len(ids)
	}
	s.sched.addPicked(hosts)
	return len(chosen), nil
}

// allowances returns how many more never-fetched URLs each domain of cands may take in this run: its
// fair share of the run's budget among the domains that had something to fetch in the run so far,
// less what it took in earlier rounds.
func (s *stage) allowances(cands []frequency.Candidate) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cands {
		s.domainsSeen[c.Domain] = true
	}
	fair := frequency.FairShare(s.budget.total, len(s.domainsSeen))
	out := map[string]int{}
	for d := range s.domainsSeen {
		out[d] = max(fair-s.newTaken[d], 0)
	}
	return out
}

// sampleBatches gives the hybrid policy's sampled pages their place in the choice: each domain's
// sampler hands out its next batch (the first always, later ones with Ghodsi et al.'s P(ρ) of the
// changes its earlier batches found); the batch comes after the pages of the Normal and Slow queues,
// and the rest of the domain's sampled pages after everything else, so that budget the samplers
// leave is still used.
//
// Ghodsi et al. draw a batch uniformly at random. strata draws the site's stalest sampled pages
// (ties at random): a page's last fetch time says nothing of how often it changes, so the batch's
// changed share estimates the site's as well as a random draw does, and no page waits longer than
// the round robin makes it — a random draw leaves some pages unvisited for many batches, which cost
// 0.002–0.009 of freshness at a 10 % budget on the simulator's three webs (docs/fidelity.md).
func (s *stage) sampleBatches(bySite map[string][]int, rows []store.Candidate, cands []frequency.Candidate, sampled map[int64]bool) {
	for _, list := range bySite {
		d := s.sched.domainFor(rows[list[0]].Host)
		n := 0
		if s.sampleMore(d) {
			n = d.sample.left
		}
		slices.SortFunc(list, func(a, b int) int {
			la, _ := lastUsable(rows[a].Records)
			lb, _ := lastUsable(rows[b].Records)
			if c := cmp.Compare(la, lb); c != 0 {
				return c
			}
			return cmp.Compare(mix(s.run.ID, rows[a].URL), mix(s.run.ID, rows[b].URL))
		})
		n = min(n, len(list))
		for _, i := range list[:n] {
			cands[i].Value = -1
			sampled[rows[i].ID] = true
		}
		// The rest wait for budget nothing else wants, in the same order; each site's in (-3, -2],
		// by its rank, so that the sites take turns rather than one site's pages all going first.
		rest := list[n:]
		for k, i := range rest {
			cands[i].Value = -2 - float64(k)/float64(len(rest))
		}
	}
}

// mix is a hash of a run and a page's URL, for drawing samples that can be replayed.
func mix(run int64, pageURL string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for k := range 8 {
		b[k] = byte(run >> (8 * k))
	}
	h.Write(b[:])
	h.Write([]byte(pageURL))
	return h.Sum64()
}

// value is what fetching a known due page now is worth to the policy (frequency.GainValue): the fresh
// time it buys before the page's next change or next fetch — the probability that its copy is stale,
// by its estimated change rate and the runs since its last usable fetch (certain when the site's
// sitemap or feed says it changed since), times the time a fresh copy lasts within its revisit
// interval — times its weight in the weighted objective. The uniform policy values only the wait,
// so the budget goes round robin.
func (s *stage) value(c store.Candidate) float64 {
	last, ok := lastUsable(c.Records)
	runs := float64(s.run.ID - last)
	if !ok {
		runs = float64(s.run.ID) // never an answer worth keeping: as stale as can be
	}
	if s.c.cfg.Uniform {
		return frequency.WaitValue(runs)
	}
	rate := c.Rate
	if rate < 0 {
		var ok bool
		if rate, ok = frequency.EstimateRate(frequency.Intervals(FrequencyRecords(c.Records))); !ok {
			rate = defaultRate
		}
	}
	weight := 1.0 // pages weigh by their seed's priority and in-links only in the weighted objective
	if s.c.cfg.Weighted {
		weight = c.Weight
	}
	// A page below a snapshot seed must be fetched every run: as certainly stale as a page whose
	// sitemap says it changed, it is among the first known pages a budget takes.
	updated := hintSaysChanged(c) && s.hintOrigin(c, (*hintQueue).heeded)
	return frequency.GainValue(rate, runs, float64(c.FrMax), weight, updated || c.Snapshot)
}

// defaultRate is the change rate assumed for a page with too little history to estimate one.
const defaultRate = 0.1

// hintSaysChanged reports whether the page's sitemap or feed lastmod is newer than our last fetch, on
// the site's own clock.
func hintSaysChanged(c store.Candidate) bool {
	newer, sure := hintVerdict(c)
	return sure && newer
}

// vouched reports whether the page's origin has earned trust for its "not modified" hints in this
// run and its sitemap or feed says the page has not changed since our last fetch. Such a page is
// not brought forward to fill a budget: the site's own account already says the fetch would be
// wasted. The audit that keeps the trust honest is chosen where the hints are read (applyHints).
func (s *stage) vouched(c store.Candidate) bool {
	newer, sure := hintVerdict(c)
	return sure && !newer && s.hintOrigin(c, (*hintQueue).spares)
}

// hintVerdict is what the page's sitemap or feed lastmod says of it (hints.NewerThanFetch): changed
// since our last fetch or not, and whether it can tell; not sure without a lastmod or a site date.
func hintVerdict(c store.Candidate) (newer, sure bool) {
	if c.HintLastMod == "" || c.SiteDate.IsZero() {
		return false, false
	}
	stamp, err := hints.ParseStamp(c.HintLastMod)
	if err != nil {
		return false, false
	}
	return hints.NewerThanFetch(stamp, c.SiteDate)
}

// hintOrigin reports whether the hints of the page's origin, as read in this run, pass test; false
// when they were not read in this run. Called between rounds, when no worker holds the domain.
func (s *stage) hintOrigin(c store.Candidate, test func(*hintQueue) bool) bool {
	u, err := url.Parse(c.URL)
	if err != nil {
		return false
	}
	d := s.sched.domainFor(c.Host)
	if d == nil {
		return false
	}
	q, ok := d.hints[origin(u)]
	return ok && test(q)
}

// lastUsable returns the run of the newest record with a usable answer.
func lastUsable(recs []store.Record) (int64, bool) {
	for i := len(recs) - 1; i >= 0; i-- {
		if !recs[i].Failed {
			return recs[i].Run, true
		}
	}
	return 0, false
}

// successes counts the records with a usable answer.
func successes(recs []store.Record) int {
	n := 0
	for _, r := range recs {
		if !r.Failed {
			n++
		}
	}
	return n
}
