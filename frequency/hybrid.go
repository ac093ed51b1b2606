package frequency

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SampleMore returns the probability of sampling another batch of pages from a site whose sampled
// pages had the changed fraction rho, in the hybrid policy of Ghodsi, Hassanzadeh, Kamali and
// Monemizadeh (equation 1, with the papers README's erratum: the paper prints the +1 inside the
// tanh, which is not a probability):
//
//	P(ρ) = (tanh(10 (ρ − ρ0)) + 1) / 2
//
// P is a smoothed step at rho0: 0.5 at ρ = ρ0, increasing in ρ, about 0.12 at ρ0 − 0.1 and 0.88 at
// ρ0 + 0.1, and within 0.0025 of 0 or 1 beyond ρ0 ± 0.3. Sites whose pages change often are
// sampled again; raising rho0 from cycle to cycle moves resources from sampling to the
// change-frequency method. The result is in [0, 1] whenever ρ − ρ0 is a number (±Inf included); a
// NaN gives NaN, which a caller testing rand.Float64() < P never samples.
func SampleMore(rho, rho0 float64) float64 {
	return (math.Tanh(10*(rho-rho0)) + 1) / 2
}

// Defaults of [Hybrid]. The paper's intervals are 15 and 30 days ("twice per month" and "once per
// month"); with strata's daily runs they are 15 and 30 runs.
const (
	DefaultSampleSize = 10   // pages per batch
	DefaultRho0Start  = 0.3  // ρ0 at run 0
	DefaultRho0Step   = 0.02 // ρ0's rise per run: from 0.3 to 1 in 35 runs
	DefaultMinHistory = 4    // successful records before a page leaves sampling
	DefaultNormal     = 15   // Normal queue interval, runs
	DefaultSlow       = 30   // Slow queue interval, runs
	// MaxRho0 caps ρ0: beyond it P(ρ) < 0.0025 for every ρ in [0, 1], so sampling is down to the
	// one batch per site and run that every site gets, and raising ρ0 further changes nothing.
	MaxRho0 = 1.3
)

// Hybrid is the hybrid refresh policy of Ghodsi et al. (papers README file 001), as pure decisions
// that a day-by-day simulator and the crawler (which handles one site's URLs one after the other
// within a run, and can report each page's outcome before asking for more) both drive:
//
//   - Sampling. While a page has fewer than MinHistory successful records it is "still sampled":
//     every run, every site gets a [Sampler] that hands out batches of SampleSize of its sampled
//     pages. The first batch is always fetched; after that another batch follows with probability
//     [SampleMore](ρ, ρ0), ρ being the changed share of the site's pages fetched so far in this run.
//     Sites whose pages change get more batches, sites whose pages do not, one.
//   - Migration. ρ0 rises by Step every run ([Hybrid.Rho0]), so the expected number of batches per
//     site falls run after run and the resources move to the change-frequency method (the paper's
//     "increase ρ0 one step" at the start of every cycle; a strata run is one cycle).
//   - Change frequency. A page with at least MinHistory successful records leaves sampling for one
//     of two queues ([Hybrid.Queue]): Normal (revisited every Normal runs) when its estimated change
//     rate is at least Cut, Slow (every Slow runs) otherwise.
//
// The cut. The paper sends a page to Normal when its estimated change frequency is "greater than
// some adaptive threshold" and does not say which. strata's default is the rate at which a page is
// expected to change once in the geometric mean of the two intervals, Cut = 1/√(Normal·Slow)
// (1/21.2 per run with 15 and 30): a page that changes more often than that is likely to have
// changed by a Normal visit, one that changes less is unlikely to have changed even by a Slow one.
// The estimate is [Estimator]'s (Cho's estimator for irregular intervals), shrunk towards
// Estimator.Prior when one is set.
//
// A zero field means its default. Hybrid is a value type: its methods are safe for concurrent use;
// a Sampler is not (one per site and run).
type Hybrid struct {
	SampleSize int       // pages per batch; 0 means DefaultSampleSize
	Rho0Start  float64   // ρ0 at run 0; 0 means DefaultRho0Start (negative: 0)
	Step       float64   // ρ0's rise per run; 0 means DefaultRho0Step (negative: no rise)
	MinHistory int       // successful records before a page moves to a queue; 0 means DefaultMinHistory
	Normal     int       // Normal queue interval in runs; 0 means DefaultNormal
	Slow       int       // Slow queue interval in runs; 0 means DefaultSlow (at least Normal)
	Cut        float64   // rate per run at or above which a page goes to Normal; 0 means 1/√(Normal·Slow)
	Estimator  Estimator // how a page's rate is estimated for the cut
}

func (h Hybrid) params() (size, minHist, normal, slow int, cut float64) {
	size, minHist, normal, slow = h.SampleSize, h.MinHistory, h.Normal, h.Slow
	if size <= 0 {
		size = DefaultSampleSize
	}
	if minHist <= 0 {
		minHist = DefaultMinHistory
	}
	if normal <= 0 {
		normal = DefaultNormal
	}
	if slow <= 0 {
		slow = DefaultSlow
	}
	slow = max(slow, normal)
	cut = positive(h.Cut, 1/math.Sqrt(float64(normal)*float64(slow)))
	return size, minHist, normal, slow, cut
}

// Validate reports settings the methods would have to correct.
func (h Hybrid) Validate() error {
	switch {
	case h.SampleSize < 0:
		return fmt.Errorf("hybrid sample size %d: must be at least 1 (0 means the default, %d)", h.SampleSize, DefaultSampleSize)
	case h.MinHistory < 0:
		return fmt.Errorf("hybrid min history %d: must be at least 1 (0 means the default, %d)", h.MinHistory, DefaultMinHistory)
	case h.Normal < 0 || h.Slow < 0:
		return fmt.Errorf("hybrid intervals %d and %d: must be at least 1 run (0 means the default)", h.Normal, h.Slow)
	case h.Normal > 0 && h.Slow > 0 && h.Slow < h.Normal:
		return fmt.Errorf("hybrid slow interval %d is below the normal interval %d", h.Slow, h.Normal)
	case math.IsNaN(h.Rho0Start) || math.IsNaN(h.Step) || !(h.Cut >= 0) || math.IsInf(h.Cut, 1):
		return fmt.Errorf("hybrid rho0 start %v, step %v, cut %v: must be numbers, the cut >= 0", h.Rho0Start, h.Step, h.Cut)
	}
	return h.Estimator.Validate()
}

// Rho0 returns ρ0 for a run (run 0 is the first after the initial crawl):
// Rho0Start + Step · run, kept within [0, MaxRho0].
func (h Hybrid) Rho0(run int) float64 {
	start, step := h.Rho0Start, h.Step
	if start == 0 {
		start = DefaultRho0Start
	}
	if step == 0 {
		step = DefaultRho0Step
	}
	step = max(step, 0)
	return min(max(start+step*float64(max(run, 0)), 0), MaxRho0)
}

// Sampler hands out one site's sampling batches within one run: see [Hybrid]. Its decisions are
// deterministic given the rng; it draws one number from it per batch after the first.
type Sampler struct {
	size     int
	rho0     float64
	rng      *rand.Rand
	batches  int
	seen     int
	changed  int
	finished bool
}

// NewSampler returns the sampler of one site for one run with inflection point rho0 (usually
// [Hybrid.Rho0] of the run). rng must not be nil.
func (h Hybrid) NewSampler(rho0 float64, rng *rand.Rand) *Sampler {
	size, _, _, _, _ := h.params()
	return &Sampler{size: size, rho0: rho0, rng: rng}
}

// NextBatch returns the number of pages to sample next from the site: SampleSize for the first batch;
// for every later one SampleSize with probability [SampleMore](ρ, ρ0), ρ being the changed share of
// the pages observed so far, and 0 otherwise. Once it has returned 0 it always does, and it returns 0
// after the first batch while no page at all has been observed (no evidence to continue on). The caller may fetch
// fewer pages than asked when the site has no more to sample.
func (s *Sampler) NextBatch() int {
	if s.finished {
		return 0
	}
	if s.batches > 0 && (s.seen == 0 || s.rng.Float64() >= SampleMore(s.Rho(), s.rho0)) {
		s.finished = true
		return 0
	}
	s.batches++
	return s.size
}

// Observe records the outcome of one sampled page: whether it had changed since its last fetch.
func (s *Sampler) Observe(changed bool) {
	s.seen++
	if changed {
		s.changed++
	}
}

// Rho returns ρ, the changed share of the pages observed so far (0 before the first).
func (s *Sampler) Rho() float64 {
	if s.seen == 0 {
		return 0
	}
	return float64(s.changed) / float64(s.seen)
}

// Batches returns how many batches NextBatch has handed out.
func (s *Sampler) Batches() int { return s.batches }

// Queue returns the revisit interval of a page that has left sampling: Normal when its estimated
// change rate is at least the cut, Slow otherwise (see [Hybrid]). ok is false while the page has
// fewer than MinHistory successful records: it is still sampled, and frMax is 0.
func (h Hybrid) Queue(p Page) (frMax int, ok bool) {
	_, minHist, normal, slow, cut := h.params()
	n := 0
	for _, r := range p.History {
		if !r.Failed {
			n++
		}
	}
	if n < minHist {
		return 0, false
	}
	if rate, _ := h.Estimator.Estimate(Intervals(p.History)); rate >= cut {
		return normal, true
	}
	return slow, true
}

// History returns MinHistory with its default applied: the successful records after which a page
// leaves sampling.
func (h Hybrid) History() int {
	_, minHist, _, _, _ := h.params()
	return minHist
}

// Policy returns the hybrid's revisit rule as a [Policy] named "hybrid": a page that has left
// sampling gets its queue's interval ([Hybrid.Queue]); a page still sampled gets 1, so that it is a
// candidate in every run, and the crawler's per-site [Sampler] decides whether it is fetched.
func (h Hybrid) Policy() Policy { return hybridPolicy{h} }

type hybridPolicy struct{ h Hybrid }

func (hybridPolicy) Name() string { return "hybrid" }

func (p hybridPolicy) NextFrMax(pg Page) int {
	if f, ok := p.h.Queue(pg); ok {
		return f
	}
	return 1
}
