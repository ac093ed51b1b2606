package frequency

// Budgeted and sampling policies: the building blocks.
//
// Besides the [Bouras] rule, this package provides the pure pieces of two further policies:
//
//   - an "optimal" policy after Edwards, McCurley and Tomlin (WebFountain, papers README file 000) and
//     Wolf, Squillante, Yu, Sethuraman and Ozsen (file 004): every page's change rate is estimated
//     from its history ([Estimator], Cho's estimator generalised to irregular intervals, as used by
//     Ghodsi et al., file 001, or a [RateMix] fitted to the population), pages are grouped into at
//     most 256 log-spaced change-rate buckets ([Buckets], one byte per page), the budget of crawls
//     per run is shared out between the buckets as revisit intervals by Fox's greedy algorithm on
//     Wolf's staleness ([Staleness], [AllocateIntervals], [MakePlan]), and each page gets a fixed
//     phase within its interval ([Phase]);
//   - a "hybrid" policy after Ghodsi et al.: sites without history are sampled, with the probability of
//     sampling another batch given by [SampleMore] (with the papers README's erratum).
//
// Time is measured in runs throughout: a rate is a number of changes per run, an interval a number of
// runs.

import (
	"fmt"
	"math"
)

// Defaults of [Estimator] and [Buckets]. Rates are changes per run.
const (
	DefaultMinRate     = 1e-3 // about one change per 1000 runs: "never changes" in practice
	DefaultMaxRate     = 10.0 // more than a crawler visiting at most once per run can tell apart
	DefaultPriorWeight = 2.0  // pseudo-visits given to the prior rate
)

// choCorrection is the 0.5 of Cho's estimator r̂ = −log((X̄ + 0.5) / (n + 0.5)): half an unchanged
// visit added to the evidence.
const choCorrection = 0.5

// Interval is what one fetch of a page tells about its changes: the time since the previous
// successful fetch, in runs, and whether the content changed in that time; and, when the page's
// server dated its last change (Dated), how long before the fetch that was (Age, in runs).
//
// A page's first fetch has no previous one: its interval has Length 0 and tells nothing, unless it
// is dated — a page that last changed Age runs ago is then a change Age runs ago, as a Poisson
// process seen at a random moment shows.
type Interval struct {
	Length  float64 // runs since the previous successful fetch; 0 for a first fetch; NaN or ±Inf are ignored
	Changed bool    // the content differed from the previous successful fetch's (a dated first fetch: true)
	Dated   bool    // Age is known
	Age     float64 // runs from the page's last change to the fetch, when Dated
}

// maxAge bounds the age of a dated change, in runs: a page unchanged for years is as good as
// static, and its creation date is not a change worth its full weight.
const maxAge = 365

// evidence reports whether iv tells anything about the page's changes.
func (iv Interval) evidence() bool {
	if iv.Dated {
		return iv.Age >= 0 && !math.IsNaN(iv.Age) && !math.IsInf(iv.Age, 0) && (iv.Length == 0 || usable(iv.Length))
	}
	return usable(iv.Length)
}

// age is the dated change's age, within (0, Length] and at most maxAge: a change dated after
// the fetch, or before the previous one, is clamped into the interval it was seen in.
func (iv Interval) age() float64 {
	a := min(max(iv.Age, 1e-3), maxAge)
	if iv.Length > 0 {
		a = min(a, iv.Length)
	}
	return a
}

// logLik is the log-likelihood of iv for a page of Poisson rate lambda: a change dated age runs
// before the fetch has density λ·e^{−λ·age} (the last change of the interval fell then, none since);
// an undated change has probability 1 − e^{−λ·I}; no change, e^{−λ·I}.
func (iv Interval) logLik(lambda float64) float64 {
	switch {
	case iv.Dated && iv.Changed:
		return math.Log(lambda) - lambda*iv.age()
	case iv.Changed:
		return math.Log(-math.Expm1(-lambda * iv.Length))
	default:
		return -lambda * iv.Length
	}
}

// Intervals turns a page's records (oldest first) into the intervals between its successful fetches:
// failed records are skipped, the first successful record (which has no predecessor) gives an
// interval only when it is dated (Length 0, a change Age runs before), and every later successful
// record r gives Interval{r.Run − previous.Run, r.Changed, r.Dated, r.Age}. Records whose Run does
// not increase give a Length <= 0, which the estimator ignores.
func Intervals(history []Record) []Interval {
	var out []Interval
	prev, seen := int64(0), false
	for _, r := range history {
		if r.Failed {
			continue
		}
		switch {
		case seen:
			out = append(out, Interval{Length: float64(r.Run - prev), Changed: r.Changed, Dated: r.Dated, Age: r.Age})
		case r.Dated:
			out = append(out, Interval{Changed: true, Dated: true, Age: r.Age})
		}
		prev, seen = r.Run, true
	}
	return out
}

// Estimator estimates a page's Poisson change rate λ (changes per run) from its intervals.
//
// # Method
//
// A page that changes as a Poisson process of rate λ and is fetched after an interval I shows a
// change with probability 1 − exp(−λI). The maximum-likelihood estimate for irregular intervals (Cho
// and Garcia-Molina, Estimating frequency of change, 2003) is the root of the score
//
//	Σ_changed I_i / (exp(λ I_i) − 1)  =  Σ_unchanged I_i
//
// whose left side falls from +∞ to 0 as λ grows, so the root is unique. Like the plain MLE for equal
// intervals, −log(X̄/n) · f, it is infinite when every visit saw a change. Cho's estimator adds half
// an unchanged visit, r̂ = −log((X̄ + 0.5) / (n + 0.5)); Estimator does the same for irregular
// intervals by adding 0.5 · Ī to the right side, where Ī is the mean interval. With equal intervals
// I = 1/f the root is then exactly Cho's λ̂ = r̂ · f, the estimator Ghodsi et al. use.
//
// # Dated changes
//
// When the page's server dates its last change (Interval.Dated), a changed interval says more than
// "at least one change": the last one came Age runs before the fetch, and none since. Its
// log-likelihood is log λ − λ·Age instead of log(1 − exp(−λI)), so it adds 1/λ to the left side of
// the score and Age to the right; with dated changes only, the estimate is the number of changes
// over the time they and the unchanged intervals cover, X / (Σ Age + Σ_unchanged I), the
// exponential's maximum-likelihood rate. A dated first fetch counts as a change Age runs before it.
// Cho's half visit is added for the undated intervals only, 0.5 times their mean length: it keeps an
// estimate from saturating when every undated visit saw a change, which a dated change cannot do.
//
// # Shrinkage towards a prior
//
// With few visits even Cho's estimator is noisy: three visits that all saw a change give
// λ̂ = log 7 ≈ 1.95 per run, and an optimiser that believes it pours crawls into the page and starves
// others. When Prior (λ0, for instance the mean rate of the page's site or bucket) is set, the
// history is extended by k = PriorWeight pseudo-visits of length Ī of which the share
// p0 = 1 − exp(−λ0 Ī) changed — the evidence a page of rate λ0 would give on average. λ̂ is the root
// of the penalised score
//
//	Σ_changed I_i / (exp(λ I_i) − 1) + k p0 Ī / (exp(λ Ī) − 1)  =  Σ_unchanged I_i + (0.5 + k (1 − p0)) Ī
//
// The pseudo-visits alone have their root at λ0, so a page with no history gets λ0, a page with a
// few visits lands between λ0 and its own estimate, and a long history outweighs the k pseudo-visits.
//
// # Bounds
//
// The result is kept within [MinRate, MaxRate]: a page never seen changing gets MinRate, not 0, so
// it is still crawled now and then, and a page seen changing at every visit gets at most MaxRate.
// The root is found by Newton's method safeguarded by bisection within the bounds, to a relative
// precision of about 1e-13.
//
// A zero field means its default (MinRate 1e-3, MaxRate 10, PriorWeight 2; Prior 0 means no prior);
// a negative or NaN field counts as zero, and MaxRate below MinRate as MinRate. [Estimator.Validate]
// reports such settings. Estimator is a value type: its methods are safe for concurrent use.
type Estimator struct {
	MinRate     float64 // smallest rate returned; 0 means DefaultMinRate
	MaxRate     float64 // largest rate returned; 0 means DefaultMaxRate
	Prior       float64 // rate λ0 the estimate is shrunk towards; 0 means no shrinkage
	PriorWeight float64 // pseudo-visits given to Prior; 0 means DefaultPriorWeight
}

func positive(v, def float64) float64 {
	if v > 0 && !math.IsInf(v, 1) { // false for NaN
		return v
	}
	return def
}

// bounds returns MinRate and MaxRate with the defaults applied, lo <= hi.
func (e Estimator) bounds() (lo, hi float64) {
	lo, hi = positive(e.MinRate, DefaultMinRate), positive(e.MaxRate, DefaultMaxRate)
	return lo, max(hi, lo)
}

// Validate reports settings the estimator would have to correct: negative, NaN or infinite fields,
// or MinRate above MaxRate once the defaults are applied.
func (e Estimator) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"min rate", e.MinRate}, {"max rate", e.MaxRate}, {"prior", e.Prior}, {"prior weight", e.PriorWeight}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return fmt.Errorf("%s %v: must be a finite number >= 0 (0 means the default)", f.name, f.v)
		}
	}
	lo, hi := positive(e.MinRate, DefaultMinRate), positive(e.MaxRate, DefaultMaxRate)
	if lo > hi {
		return fmt.Errorf("min rate %v is above max rate %v", lo, hi)
	}
	return nil
}

// EstimateRate estimates a page's change rate in changes per run with the default [Estimator]: Cho's
// estimator for irregular intervals, no prior, kept within [DefaultMinRate, DefaultMaxRate]. ok is
// false, and lambda 0, when h holds no usable interval.
func EstimateRate(h []Interval) (lambda float64, ok bool) {
	return Estimator{}.Estimate(h)
}

func usable(l float64) bool { return l > 0 && !math.IsInf(l, 1) }

// Estimate returns the page's estimated change rate per run, as described on [Estimator]. ok is false
// when h holds no usable interval; lambda is then Prior kept within the bounds, or 0 without a prior.
// Estimate neither modifies nor retains h and does not allocate.
func (e Estimator) Estimate(h []Interval) (lambda float64, ok bool) {
	lo, hi := e.bounds()
	prior := positive(e.Prior, 0)
	// n counts the intervals, sum their lengths (a dated first fetch: its age), undated the lengths
	// of the undated ones, which Cho's half visit is for: a dated change needs no correction, its
	// estimate does not saturate.
	n, sum, unchanged, dated := 0, 0.0, 0.0, 0.0
	nUndated, undated := 0, 0.0
	for _, iv := range h {
		if !iv.evidence() {
			continue
		}
		n++
		switch {
		case iv.Dated && iv.Changed:
			a := iv.age()
			sum += max(iv.Length, a)
			unchanged += a // no change in the age since the dated one
			dated++
			continue
		case !iv.Changed:
			unchanged += iv.Length
		}
		sum += iv.Length
		nUndated++
		undated += iv.Length
	}
	if n == 0 {
		if prior > 0 {
			return min(max(prior, lo), hi), false
		}
		return 0, false
	}
	mean := sum / float64(n)
	if math.IsInf(mean, 0) { // the sum overflowed
		mean = math.MaxFloat64
	}
	pseudoChanged := 0.0 // k p0: weight of the changed pseudo-visits, each of length mean
	rhs := unchanged
	if nUndated > 0 {
		rhs += choCorrection * undated / float64(nUndated)
	}
	if prior > 0 {
		k := positive(e.PriorWeight, DefaultPriorWeight)
		p0 := -math.Expm1(-prior * mean)
		pseudoChanged = k * p0
		rhs += k * (1 - p0) * mean
	}
	// score is decreasing in λ: > 0 below the root, < 0 above.
	term := changedTerm
	score := func(lambda float64) (s, ds float64) {
		for _, iv := range h {
			if iv.Changed && !iv.Dated && usable(iv.Length) {
				v, d := term(iv.Length, lambda)
				s, ds = s+v, ds+d
			}
		}
		if dated > 0 { // d/dλ of log λ for each dated change
			s, ds = s+dated/lambda, ds-dated/(lambda*lambda)
		}
		if pseudoChanged > 0 {
			v, d := term(mean, lambda)
			s, ds = s+pseudoChanged*v, ds+pseudoChanged*d
		}
		return s - rhs, ds
	}
	return solve(lo, hi, score), true
}

// solve returns the root in [lo, hi] of a score that decreases in λ (positive below the root), or
// the bound the root lies beyond. score returns the score and its derivative.
//
// Safeguarded Newton: the root stays bracketed in [a, b], and a Newton step that leaves the bracket
// is replaced by bisection on log λ. The score is convex, so from the left of the root Newton's
// steps approach it monotonically (at least doubling λ while far below it), and they converge
// quadratically near it: a dozen evaluations instead of forty for plain bisection.
func solve(lo, hi float64, score func(lambda float64) (s, ds float64)) float64 {
	if s, _ := score(lo); s <= 0 {
		return lo
	}
	if s, _ := score(hi); s >= 0 {
		return hi
	}
	a, b := lo, hi
	lambda := math.Sqrt(lo * hi)
	for range 200 {
		s, ds := score(lambda)
		if s > 0 {
			a = lambda
		} else {
			b = lambda
		}
		if s == 0 || b-a <= 1e-13*b {
			break
		}
		next := lambda - s/ds
		if !(next > a && next < b) || ds == 0 {
			next = math.Sqrt(a * b) // bisection on log λ
			if !(next > a && next < b) {
				break
			}
		}
		if math.Abs(next-lambda) <= 1e-14*lambda {
			lambda = next
			break
		}
		lambda = next
	}
	return min(max(lambda, lo), hi)
}

// changedTerm is I/(e^{λI} − 1), one changed interval's share of the score, and its derivative in λ,
// −I² e^{λI}/(e^{λI} − 1)².
func changedTerm(l, lambda float64) (v, d float64) {
	em := math.Expm1(lambda * l)
	if math.IsInf(em, 1) {
		return 0, 0
	}
	v = l / em
	return v, -v * v * (em + 1)
}
