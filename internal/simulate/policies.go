package simulate

import (
	"math"
	"slices"

	"github.com/strata-crawler/strata/frequency"
)

// policies builds each policy for one simulation.
var policies = map[string]func(s *sim) policy{
	"everything":   func(*sim) policy { return everything{} },
	"uniform":      func(*sim) policy { return &uniform{} },
	"proportional": newProportional,
	"nutch":        newNutch,
	"bouras":       func(s *sim) policy { return newBouras(s, true) },
	"bouras-plain": func(s *sim) policy { return newBouras(s, false) },
	"hybrid":       newHybrid,
	"optimal":      func(s *sim) policy { return newOptimal(s, false) },
	"optimal-true": func(s *sim) policy { return newOptimal(s, true) },
	"oracle":       func(*sim) policy { return oracle{} },
}

// policyOrder is the order of PolicyNames: the references last.
var policyOrder = []string{"everything", "uniform", "proportional", "nutch", "bouras", "bouras-plain", "hybrid",
	"optimal", "optimal-true", "oracle"}

// PolicyNames lists the policies a simulation can compare:
//
//   - everything: every known page at every run (no budget);
//   - uniform: the budget's pages per run, round robin, so every page is visited every N/budget runs;
//   - proportional: visits proportional to each page's true change rate, at the budget (Wolf et al.'s
//     and Cho's "proportional");
//   - nutch: Apache Nutch's AdaptiveFetchSchedule with its shipped defaults ([frequency.Nutch]), at the budget;
//   - bouras, bouras-plain: strata's default policy, [frequency.Bouras] with the selective rule and
//     the hub adjustment (bouras) or without them (bouras-plain); no budget, as in the paper;
//   - hybrid: Ghodsi et al.'s sampling and change-frequency queues ([frequency.Hybrid]), at the budget;
//   - optimal: strata's optimal policy: rates estimated from the fetch history, change-rate buckets,
//     [frequency.MakePlan] and phases, at the budget;
//   - optimal-true: the same plan given every page's true rate: no crawler can know them;
//   - oracle: fetches exactly the pages that changed since their last fetch (no budget).
func PolicyNames() []string { return slices.Clone(policyOrder) }

// everything fetches every known page at every run.
type everything struct{}

func (everything) run(s *sim, _ int) {
	for _, i := range s.known {
		s.fetch(i)
	}
}

// oracle fetches exactly the pages that changed since their last fetch, and the new pages.
type oracle struct{}

func (oracle) run(s *sim, d int) {
	t := float64(d)
	// Hubs first: a changed hub may announce new pages, which the next run fetches.
	for _, roots := range [][]int32{s.w.roots} {
		for _, i := range roots {
			if s.changedSince(i, t) {
				s.fetch(i)
			}
		}
	}
	for _, i := range s.known {
		if s.w.pages[i].died <= t {
			s.st[i].gone = true // the oracle knows; a crawler pays a fetch to learn it
			continue
		}
		if s.changedSince(i, t) {
			s.fetch(i)
		}
	}
}

// changedSince reports whether page i has changed since its last fetch, or was never fetched.
func (s *sim) changedSince(i int32, t float64) bool {
	st := &s.st[i]
	if !s.live(i) {
		return false
	}
	if st.lastFetch < 0 {
		return true
	}
	return st.next < s.w.pages[i].hi && s.w.times[st.next] <= t
}

// uniform fetches the budget's pages per run, round robin over the known pages.
type uniform struct{ cursor int }

func (u *uniform) run(s *sim, _ int) {
	s.limit(s.cfg.Budget)
	s.fetchPending()
	for n := 0; s.left() && n < len(s.known); n++ {
		if u.cursor >= len(s.known) {
			u.cursor = 0
		}
		i := s.known[u.cursor]
		u.cursor++
		if s.live(i) {
			s.fetch(i)
		}
	}
}

// dueQueue is the schedule of the policies that keep a due time per page: every run they fetch the
// pages due by then, longest waiting first, as far as the budget goes.
type dueQueue struct {
	due []float64 // per page: time it comes due; +Inf never
	buf []int32
}

func newDueQueue(n int) dueQueue {
	q := dueQueue{due: make([]float64, n)}
	for i := range q.due {
		q.due[i] = math.Inf(1)
	}
	return q
}

// runDue fetches the due pages and calls after for each fetched one.
func (q *dueQueue) runDue(s *sim, d int, after func(i int32, o outcome)) {
	t := float64(d) + 1e-9
	q.buf = q.buf[:0]
	for _, i := range s.known {
		if s.live(i) && q.due[i] <= t && s.st[i].lastFetch >= 0 {
			q.buf = append(q.buf, i)
		}
	}
	byOverdue(q.buf, func(i int32) float64 { return q.due[i] })
	for _, i := range q.buf {
		if !s.left() {
			return
		}
		if o, ok := s.fetch(i); ok {
			after(i, o)
		}
	}
}

// proportional visits each page at intervals inversely proportional to its true change rate, scaled
// so that the visits add up to the budget (intervals below one run are one run, and the crawls they
// cannot use go to the others); pages that never change are not revisited.
type proportional struct {
	q     dueQueue
	c     float64 // page i's interval is c / rate_i runs
	known int     // known pages when c was computed
}

func newProportional(s *sim) policy {
	return &proportional{q: newDueQueue(len(s.w.pages))}
}

// rescale finds c with Σ min(λ_i / c, 1) = budget: page i's crawls per run are min(λ_i / c, 1).
func (p *proportional) rescale(s *sim) {
	b := float64(s.cfg.Budget)
	lo, hi := 1e-12, 1e6
	for range 60 {
		c := math.Sqrt(lo * hi)
		sum := 0.0
		for _, i := range s.known {
			if s.live(i) {
				sum += min(s.w.pages[i].rate/c, 1)
			}
		}
		if sum > b {
			lo = c
		} else {
			hi = c
		}
	}
	p.c, p.known = hi, len(s.known)
}

func (p *proportional) interval(s *sim, i int32) float64 {
	if r := s.w.pages[i].rate; r > 0 {
		return max(p.c/r, 1)
	}
	return math.Inf(1)
}

func (p *proportional) run(s *sim, d int) {
	if p.known == 0 || len(s.known) > p.known+p.known/50 { // 2 % more pages: share the budget out again
		first := p.known == 0
		p.rescale(s)
		if first { // a random phase within each page's interval, so that the load is flat
			for _, i := range s.known {
				p.q.due[i] = p.interval(s, i) * s.rng.Float64()
			}
		}
	}
	s.limit(s.cfg.Budget)
	s.fetchPending()
	for _, i := range s.runList { // new pages: first fetch now, then on their interval
		p.q.due[i] = float64(d) + p.interval(s, i)
	}
	p.q.runDue(s, d, func(i int32, _ outcome) { p.q.due[i] = float64(d) + p.interval(s, i) })
}

// nutch is Apache Nutch's AdaptiveFetchSchedule with fractional intervals, as Nutch keeps them:
// every page starts at the budget's uniform interval (Nutch ships 30 days, which would leave most of
// the budget unused in a two-month simulation), and a due page is fetched at the first run at or
// after its due time, longest waiting first, up to the budget (Nutch's generator with topN).
type nutch struct {
	rule       frequency.Nutch
	q          dueQueue
	interval   []float64
	lastChange []float64
	start      float64
}

func newNutch(s *sim) policy {
	n := &nutch{q: newDueQueue(len(s.w.pages)), interval: make([]float64, len(s.w.pages)),
		lastChange: make([]float64, len(s.w.pages)), start: float64(s.cfg.Pages) / float64(s.cfg.Budget)}
	for i := range s.w.initial {
		n.interval[i], n.q.due[i] = n.start, n.start*s.rng.Float64()
	}
	return n
}

func (n *nutch) run(s *sim, d int) {
	s.limit(s.cfg.Budget)
	for _, i := range s.pending {
		if _, ok := s.fetch(i); ok {
			n.interval[i], n.lastChange[i] = n.start, float64(d)
			n.q.due[i] = float64(d) + n.start
		}
	}
	n.q.runDue(s, d, func(i int32, o outcome) { n.observe(i, d, o) })
}

func (n *nutch) observe(i int32, d int, o outcome) {
	t := float64(d)
	next, wait := n.rule.Next(n.interval[i], o.changed, t-n.lastChange[i])
	if o.changed {
		n.lastChange[i] = t
	}
	n.interval[i], n.q.due[i] = next, t+wait
}

// history keeps each page's last records for the frequency rules.
type history struct {
	limit int
	recs  [][]frequency.Record
}

func (h *history) add(i int32, d int, o outcome) {
	r := frequency.Record{Run: int64(d), Changed: o.changed && !o.first}
	hs := h.recs[i]
	if len(hs) == h.limit {
		copy(hs, hs[1:])
		hs[len(hs)-1] = r
	} else {
		hs = append(hs, r)
	}
	h.recs[i] = hs
}

// bouras is strata's default policy: the fr countdown, Bouras's fr_max rule after every fetch, and,
// with selective set, the selective rule at the hubs and the hub adjustment, as crawler.Recalc and
// the crawl stage apply them. It has no budget: it fetches what is due.
type bouras struct {
	rule      frequency.Bouras
	sel       frequency.Selective
	selective bool
	fr, frMax []int32
	skips     []int8
	threshold []float64
	hist      history
	childRat  []float64 // per page: the children's change share measured at its last hub visit; −1 none
	due       []int32
}

const maxSkips = 3 // crawler.Config.MaxSkips default

func newBouras(s *sim, selective bool) policy {
	n := len(s.w.pages)
	b := &bouras{rule: frequency.Bouras{Limit: s.cfg.Limit}, sel: frequency.DefaultSelective(), selective: selective,
		fr: make([]int32, n), frMax: make([]int32, n), skips: make([]int8, n), threshold: make([]float64, n),
		hist: history{limit: s.cfg.Limit, recs: make([][]frequency.Record, n)}, childRat: make([]float64, n)}
	for i := range n {
		b.frMax[i], b.childRat[i] = 1, -1 // seed.fr_max = 1
	}
	for i := range s.w.initial {
		b.hist.add(int32(i), 0, outcome{first: true, changed: true})
		b.fr[i] = b.frMax[i]
	}
	return b
}

func (b *bouras) run(s *sim, d int) {
	// Count down; due pages have fr 0. New pages are due at once.
	b.due = b.due[:0]
	for _, i := range s.known {
		if !s.live(i) {
			continue
		}
		if b.fr[i] > 0 {
			b.fr[i]--
		}
		if b.fr[i] == 0 {
			b.due = append(b.due, i)
		}
	}
	// Hubs first, as a crawl reaches a site's hub before the pages it links to.
	skip := map[int32]bool{}
	for _, i := range b.due {
		p := &s.w.pages[i]
		if !p.root {
			continue
		}
		o, ok := s.fetch(i)
		if !ok || o.gone {
			continue
		}
		b.record(s, i, d, o)
		if !b.selective || o.first {
			continue
		}
		kids := s.w.children[p.site]
		hs := make([][]frequency.Record, 0, len(kids))
		for _, k := range kids {
			if s.st[k].known {
				hs = append(hs, b.hist.recs[k])
			}
		}
		if len(hs) == 0 {
			continue
		}
		ratio := frequency.ChildChangeRatio(hs, s.cfg.Limit)
		th := b.sel.Threshold(b.threshold[i])
		visit, _ := b.sel.Decide(o.changed, th, ratio)
		b.threshold[i], b.childRat[i] = b.sel.NextThreshold(th, ratio), ratio
		switch {
		case o.changed:
		case visit: // the subtree is visited now, whatever the children's countdown
			for _, k := range kids {
				if s.live(k) && s.st[k].lastFetch >= 0 && b.fr[k] > 0 {
					b.fr[k] = 0
					b.due = append(b.due, k)
				}
			}
		default:
			skip[p.site] = true
		}
	}
	for _, i := range b.due {
		p := &s.w.pages[i]
		if p.root {
			continue
		}
		if skip[p.site] && s.st[i].lastFetch >= 0 && b.skips[i] < maxSkips {
			b.skips[i]++ // left for this run; still due at the next
			continue
		}
		if o, ok := s.fetch(i); ok && !o.gone {
			b.skips[i] = 0
			b.record(s, i, d, o)
		}
	}
}

// record appends the fetch to the page's history and recalculates its fr_max, as crawler.Recalc does.
func (b *bouras) record(s *sim, i int32, d int, o outcome) {
	b.hist.add(i, d, o)
	recs := b.hist.recs[i]
	next := b.rule.NextFrMax(frequency.Page{FrMax: int(b.frMax[i]), History: recs})
	if ratio := b.childRat[i]; b.selective && s.w.pages[i].root && ratio >= 0 {
		if own := frequency.ChangeRatio(recs, s.cfg.Limit); ratio >= 0.5 && ratio >= 2*own {
			next = min(next, frequency.HubAdjust(next, ratio))
		}
	}
	b.frMax[i], b.fr[i] = int32(next), int32(next)
}

// hybrid is Ghodsi et al.'s policy through [frequency.Hybrid]: the queued pages' countdown first,
// then each site's sampling batches while the budget lasts, sites in a random order each run.
type hybrid struct {
	h         frequency.Hybrid
	hist      history
	queued    []bool
	fr, frMax []int32
	dueSince  []int32
	bySite    [][]int32 // known pages still sampled, per site
	buf, pool []int32
}

func newHybrid(s *sim) policy {
	n := len(s.w.pages)
	// Ghodsi's Normal and Slow intervals are 15 and 30 days; here they are set from the budget so
	// that the queues fit it when half the pages are in each: N/(2n) + N/(4n) = budget.
	// Ghodsi's sampling size is a fraction of each site; here a batch is half of a site's share of
	// the budget, so that a site whose pages change gets two batches or more.
	share := float64(s.cfg.Budget) / float64(s.cfg.Pages)
	normal := max(int(math.Round(0.75/share)), 1)
	size := max(int(math.Ceil(share*float64(s.cfg.Pages)/float64(s.cfg.Sites)/2)), 1)
	h := &hybrid{h: frequency.Hybrid{Normal: normal, Slow: 2 * normal, SampleSize: size},
		hist: history{limit: s.cfg.Limit, recs: make([][]frequency.Record, n)}, queued: make([]bool, n),
		fr: make([]int32, n), frMax: make([]int32, n), dueSince: make([]int32, n), bySite: make([][]int32, len(s.w.roots))}
	for i := range s.w.initial {
		h.hist.add(int32(i), 0, outcome{first: true, changed: true})
		h.bySite[s.w.pages[i].site] = append(h.bySite[s.w.pages[i].site], int32(i))
	}
	return h
}

func (h *hybrid) run(s *sim, d int) {
	s.limit(s.cfg.Budget)
	for _, i := range s.pending {
		if _, ok := s.fetch(i); ok {
			h.hist.add(i, d, outcome{first: true, changed: true})
			h.bySite[s.w.pages[i].site] = append(h.bySite[s.w.pages[i].site], i)
		}
	}
	// The change-frequency queues.
	h.buf = h.buf[:0]
	for _, i := range s.known {
		if !h.queued[i] || !s.live(i) {
			continue
		}
		if h.fr[i] > 0 {
			h.fr[i]--
			if h.fr[i] == 0 {
				h.dueSince[i] = int32(d)
			}
		}
		if h.fr[i] == 0 {
			h.buf = append(h.buf, i)
		}
	}
	byOverdue(h.buf, func(i int32) float64 { return float64(h.dueSince[i]) })
	for _, i := range h.buf {
		if !s.left() {
			break
		}
		if o, ok := s.fetch(i); ok && !o.gone {
			h.observe(i, d, o)
		}
	}
	// Sampling: every site's sampler, in a random order of sites.
	rho0 := h.h.Rho0(d - 1)
	for _, site := range s.rng.Perm(len(h.bySite)) {
		if !s.left() {
			break
		}
		kept := h.bySite[site][:0]
		for _, i := range h.bySite[site] {
			if !h.queued[i] && s.live(i) {
				kept = append(kept, i)
			}
		}
		h.bySite[site] = kept
		pool := append(h.pool[:0], kept...) // drawn from without replacement
		h.pool = pool
		sampler := h.h.NewSampler(rho0, s.rng)
		var batch []int32
		for n := sampler.NextBatch(); n > 0 && s.left(); n = sampler.NextBatch() {
			batch = batch[:0]
			for len(batch) < n && len(pool) > 0 {
				k := s.rng.IntN(len(pool))
				i := pool[k]
				pool[k] = pool[len(pool)-1]
				pool = pool[:len(pool)-1]
				if !s.fetched[i] {
					batch = append(batch, i)
				}
			}
			if len(batch) == 0 {
				break
			}
			for _, i := range batch {
				o, ok := s.fetch(i)
				if !ok {
					break
				}
				if !o.gone {
					sampler.Observe(o.changed)
					h.observe(i, d, o)
				}
			}
		}
	}
}

func (h *hybrid) observe(i int32, d int, o outcome) {
	h.hist.add(i, d, o)
	if f, ok := h.h.Queue(frequency.Page{History: h.hist.recs[i]}); ok {
		h.queued[i], h.frMax[i], h.fr[i] = true, int32(f), int32(f)
	}
}

// optimal is strata's optimal policy as `strata run` applies it: after every run, the pages fetched
// get a new rate estimate and bucket (crawler.Recalc), the plan is made over the buckets' page
// counts ([frequency.MakePlan], crawler.Optimize) and every page gets its bucket's fr_max and its
// phase ([frequency.Phase], store.ApplyPlan). The estimate is empirical Bayes: a
// [frequency.RateMix] fitted to the histories of the pages fetched in the run (three EM steps from
// the previous run's fit), and each page's [frequency.RateMix.Equivalent] rate at the budget's mean
// interval, pages / budget. With truth set, every page's bucket comes from its true mean rate
// instead: the reference no crawler can reach.
type optimal struct {
	truth     bool
	plan      frequency.PlanConfig
	hist      history
	fr, frMax []int32
	bucket    []int16 // −1: no estimate yet
	rate      []float64
	dueSince  []int32
	pages     [257]int // per bucket + 1 (index 0 is bucket −1)
	sums      [257]float64
	planFr    [257]int32
	due       []int32
	mix       frequency.RateMix
	hs        [][]frequency.Interval
}

// mixRates is the number of rates of the optimal policy's prior, log-spaced over the buckets' range.
const mixRates = 25

func newOptimal(s *sim, truth bool) policy {
	n := len(s.w.pages)
	o := &optimal{truth: truth, plan: frequency.PlanConfig{Budget: s.cfg.Budget, Period: s.cfg.Period, MinCrawls: 1},
		hist: history{limit: s.cfg.Limit, recs: make([][]frequency.Record, n)}, fr: make([]int32, n), frMax: make([]int32, n),
		bucket: make([]int16, n), rate: make([]float64, n), dueSince: make([]int32, n),
		mix: frequency.NewRateMix(frequency.DefaultMinRate, frequency.DefaultMaxRate, mixRates)}
	for i := range o.bucket {
		o.bucket[i] = -1
	}
	for i := range s.w.initial {
		o.hist.add(int32(i), 0, outcome{first: true, changed: true})
		o.count(int32(i), +1)
	}
	o.replan(s, 0)
	return o
}

// count adds page i to (sign +1) or removes it from (−1) its bucket's counts.
func (o *optimal) count(i int32, sign int) {
	b := int(o.bucket[i]) + 1
	o.pages[b] += sign
	o.sums[b] += float64(sign) * o.rate[i]
}

func (o *optimal) run(s *sim, d int) {
	s.limit(s.cfg.Budget)
	for _, i := range s.pending {
		if oc, ok := s.fetch(i); ok && !oc.gone {
			o.hist.add(i, d, oc)
			o.count(i, +1)
		}
	}
	o.due = o.due[:0]
	for _, i := range s.known {
		if !s.live(i) || s.st[i].lastFetch < 0 {
			continue
		}
		if o.fr[i] > 0 {
			o.fr[i]--
			if o.fr[i] == 0 {
				o.dueSince[i] = int32(d)
			}
		}
		if o.fr[i] == 0 {
			o.due = append(o.due, i)
		}
	}
	byOverdue(o.due, func(i int32) float64 { return float64(o.dueSince[i]) })
	for _, i := range o.due {
		if !s.left() {
			break
		}
		oc, ok := s.fetch(i)
		switch {
		case !ok:
		case oc.gone:
			o.count(i, -1)
		default:
			o.hist.add(i, d, oc)
		}
	}
	o.replan(s, d)
}

// replan is crawler.Recalc's estimate for the pages fetched in run d, then crawler.Optimize.
func (o *optimal) replan(s *sim, d int) {
	list := s.runList
	if d == 0 {
		list = s.known
	}
	if !o.truth {
		o.hs = o.hs[:0]
		for _, i := range list {
			if !s.st[i].gone {
				o.hs = append(o.hs, frequency.Intervals(o.hist.recs[i]))
			}
		}
		o.mix.Fit(o.hs, 3)
	}
	mean := float64(s.cfg.Pages) / float64(s.cfg.Budget) // the budget's mean interval
	for _, i := range list {
		if s.st[i].gone {
			continue
		}
		rate, ok := s.w.pages[i].rate, true
		if !o.truth {
			rate, ok = o.mix.Equivalent(frequency.Intervals(o.hist.recs[i]), mean)
		}
		if !ok {
			continue
		}
		o.count(i, -1)
		o.rate[i], o.bucket[i] = rate, int16(o.plan.Buckets.Of(rate))
		o.count(i, +1)
	}
	var groups []frequency.Group
	for b := range o.pages {
		if o.pages[b] > 0 {
			groups = append(groups, frequency.Group{Bucket: b - 1, Pages: o.pages[b], Rate: o.sums[b] / float64(o.pages[b])})
		}
	}
	plan := frequency.MakePlan(groups, o.plan)
	for _, b := range plan.Buckets {
		o.planFr[b.Bucket+1] = int32(b.FrMax)
	}
	for _, i := range s.known {
		if !s.live(i) || s.st[i].lastFetch < 0 {
			continue
		}
		f := o.planFr[int(o.bucket[i])+1]
		o.frMax[i] = f
		if s.st[i].lastFetch == float64(d) || o.fr[i] > f {
			o.fr[i] = int32(frequency.Phase(int64(d), int64(i)+1, int(f)))
		}
	}
}
