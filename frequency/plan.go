package frequency

import "math"

// Group is a set of pages that share a change rate for planning: one change-rate bucket of the
// archive, or the pages whose rate is not estimated yet.
type Group struct {
	Bucket int     // 0..255, the bucket of [Buckets]; -1 for pages whose rate is not estimated yet
	Class  int     // weight class within the bucket, for a weighted objective; 0 otherwise
	Pages  int     // pages in the group
	Rate   float64 // their mean estimated change rate per run; ignored for Bucket -1
	Weight float64 // importance of one of its pages (Wolf et al.'s weights); 0 means 1
	// PerRun is Σ 1/fr_max over its pages: the crawls per run their current intervals give. Only
	// [CurrentPlan] reads it.
	PerRun float64
}

// PlanConfig sets the budgeted policy: Budget pages per run on average, over a period of Period
// runs, every page crawled between MinCrawls and MaxCrawls times per period.
type PlanConfig struct {
	Budget int
	Period int
	// MinCrawls is the floor: every page at least this many crawls per period (WebFountain's
	// compromise: nothing starved). 0 means no floor: a page may wait up to MaxInterval runs. A floor
	// that cannot fit the budget is lowered until it takes at most half of it (see MakePlan).
	MinCrawls int
	MaxCrawls int // 0 = Period
	Buckets   Buckets
	// DefaultRate is assumed for pages without an estimate when no page has one; default 0.1 per run.
	DefaultRate float64
}

// Plan is an allocation of crawls to change-rate buckets.
type Plan struct {
	Budget, Period    int
	Buckets           []PlanBucket
	Pages             int
	ExpectedPerRun    float64 // crawls per run the plan implies: Σ pages / fr_max
	FrMaxHi           int     // the longest interval the plan could give: the floor, after bending to the budget
	ExpectedFreshness float64 // time-average share of pages whose stored copy is current (1 − mean staleness)
}

// PlanBucket is one bucket's share of a plan.
type PlanBucket struct {
	Bucket         int     // -1: pages whose rate is not estimated yet
	Class          int     // weight class, for a weighted objective
	Weight         float64 // weight of one of its pages
	RateLo, RateHi float64
	Rate           float64 // the rate the allocation assumed
	Pages          int
	Crawls         int     // per page per period
	FrMax          int     // the revisit interval that realises it
	Staleness      float64 // expected time-average staleness of a page of this bucket
}

// MaxInterval is the longest revisit interval a plan gives, in runs: a year of daily runs, when
// MinCrawls is 0 or the floor had to be lowered.
const MaxInterval = 365

// floorShare is the largest share of the budget the floor may take: the rest is what the plan
// shares out by the pages' rates.
const floorShare = 0.5

// MakePlan shares Budget crawls per run out between the buckets with Fox's greedy, minimising the
// pages' total (weighted) time-average staleness (Wolf et al.'s A for a Poisson process of the
// bucket's rate), as WebFountain does per bucket. The decision is each bucket's revisit interval, a
// whole number of runs between Period/MaxCrawls and Period/MinCrawls ([AllocateIntervals]): that is
// what strata's fr_max can realise, so the plan's load Σ pages/fr_max is exact and stays within the
// budget. Crawls is then the rounded number of crawls per period, Period/FrMax. Pages without an
// estimate are assumed to change at the mean estimated rate.
//
// The floor bends to the budget. Crawling every page MinCrawls times a period may need more than the
// budget (5,550 pages, one crawl each per 30 runs, is 185 crawls a run against a budget of 48); the
// plan then gave every page the floor and nothing else, a daily-changing page included. Now the
// longest interval is raised until the floor takes at most half of the budget (at most MaxInterval),
// and the other half goes where the rates say.
func MakePlan(groups []Group, cfg PlanConfig) *Plan {
	if cfg.MaxCrawls <= 0 || cfg.MaxCrawls > cfg.Period {
		cfg.MaxCrawls = cfg.Period
	}
	p, fl := planBuckets(groups, cfg)
	period := max(cfg.Period, 1)
	fLo := (period + cfg.MaxCrawls - 1) / max(cfg.MaxCrawls, 1) // ⌈T / max⌉: at most MaxCrawls a period
	fHi := MaxInterval                                          // no floor
	if cfg.MinCrawls > 0 {
		fHi = max(period/cfg.MinCrawls, 1) // ⌊T / min⌋: at least MinCrawls a period
	}
	if cfg.Budget > 0 {
		need := int(math.Ceil(float64(p.Pages) / (floorShare * float64(cfg.Budget)))) // the floor's load is floorShare · budget
		fHi = max(fHi, min(need, MaxInterval))
	}
	fHi = max(fHi, fLo)
	p.FrMaxHi = fHi
	f := AllocateIntervals(fl, float64(cfg.Budget), fLo, fHi)
	stale := 0.0
	for i := range p.Buckets {
		b := &p.Buckets[i]
		b.FrMax = f[i]
		b.Crawls = int(math.Round(float64(period) / float64(f[i])))
		b.Staleness = Staleness(b.Rate, float64(f[i]), 0)
		p.ExpectedPerRun += float64(b.Pages) / float64(b.FrMax)
		stale += b.Staleness * float64(b.Pages)
	}
	if p.Pages > 0 {
		p.ExpectedFreshness = 1 - stale/float64(p.Pages)
	}
	return p
}

// Phase returns the countdown that puts a page on its fixed phase after run: with fr = Phase(run,
// key, frMax), and every later run first decrementing fr, the page comes due in a run r > run with
// (r + key) mod frMax = 0 — the first of them at least half an interval (⌈frMax/2⌉ runs) away, so
// between ⌈frMax/2⌉ and frMax + ⌈frMax/2⌉ − 1 runs later, frMax on average. With key = [PageKey] of
// the page's URL the phases of a bucket's pages are spread evenly over its interval, so no run gets a
// thundering herd, and a page keeps its phase whatever order the crawl found it in. A page fetched
// off its phase — found this run, brought forward, or late — would otherwise come due again within a
// run or two, half its interval too soon on average, and the plan's crawls would go to pages just
// fetched. The store's ApplyPlan calls it from SQL. frMax < 1 counts as 1.
func Phase(run, key int64, frMax int) int {
	f := int64(max(frMax, 1))
	k := ((f-(run+key)%f)%f + f) % f
	if k == 0 {
		k = f
	}
	if k < (f+1)/2 {
		k += f
	}
	return int(k)
}

// PageKey is a page's place in the phases of [Phase]: a hash of its URL (64-bit FNV-1a, kept
// positive), uniform over the pages of any bucket.
func PageKey(pageURL string) int64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(pageURL); i++ {
		h ^= uint64(pageURL[i])
		h *= prime
	}
	return int64(h >> 2)
}

// planBuckets describes the groups as plan buckets (rate ranges from the buckets, the mean
// estimated rate for pages without an estimate) and as loads for the allocation.
func planBuckets(groups []Group, cfg PlanConfig) (*Plan, []BucketLoad) {
	if cfg.DefaultRate <= 0 {
		cfg.DefaultRate = 0.1
	}
	prior, known := 0.0, 0
	for _, l := range groups {
		if l.Bucket >= 0 {
			prior += l.Rate * float64(l.Pages)
			known += l.Pages
		}
	}
	if known > 0 {
		prior /= float64(known)
	} else {
		prior = cfg.DefaultRate
	}
	fl := make([]BucketLoad, len(groups))
	p := &Plan{Budget: cfg.Budget, Period: cfg.Period}
	for i, l := range groups {
		w := l.Weight
		if !(w > 0) {
			w = 1
		}
		b := PlanBucket{Bucket: l.Bucket, Class: l.Class, Weight: w, Pages: l.Pages, Rate: l.Rate}
		if l.Bucket < 0 {
			b.Rate = prior
		} else {
			lo := cfg.Buckets.Rate(uint8(l.Bucket))
			b.RateLo, b.RateHi = lo, lo
			if l.Bucket > 0 {
				b.RateLo = math.Sqrt(cfg.Buckets.Rate(uint8(l.Bucket-1)) * lo)
			}
			if l.Bucket < cfg.Buckets.Len()-1 {
				b.RateHi = math.Sqrt(lo * cfg.Buckets.Rate(uint8(l.Bucket+1)))
			}
		}
		fl[i] = BucketLoad{Pages: l.Pages, Rate: b.Rate, Weight: w}
		p.Buckets = append(p.Buckets, b)
		p.Pages += l.Pages
	}
	return p, fl
}

// CurrentPlan describes the allocation the pages' current intervals make, whatever policy set
// them: per group the mean interval (pages / PerRun, the harmonic mean of their fr_max), the crawls
// per period of cfg.Period runs it gives, and the time-average staleness at the group's rate; in
// total the crawls per run and the expected freshness. Budget is what cfg says (0 for none).
func CurrentPlan(groups []Group, cfg PlanConfig) *Plan {
	p, _ := planBuckets(groups, cfg)
	period := float64(max(cfg.Period, 1))
	stale := 0.0
	for i := range p.Buckets {
		b, g := &p.Buckets[i], groups[i]
		if !(g.PerRun > 0) || g.Pages == 0 {
			continue
		}
		f := float64(g.Pages) / g.PerRun
		b.FrMax = int(math.Round(f))
		b.Crawls = int(math.Round(period / f))
		b.Staleness = Staleness(b.Rate, f, 0)
		p.ExpectedPerRun += g.PerRun
		stale += b.Staleness * float64(b.Pages)
	}
	if p.Pages > 0 {
		p.ExpectedFreshness = 1 - stale/float64(p.Pages)
	}
	return p
}
