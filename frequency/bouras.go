package frequency

import "fmt"

// Defaults of the [Bouras] policy.
const (
	DefaultLimit = 10 // records examined
	DefaultMin   = 1  // smallest fr_max: every run
	DefaultMax   = 30 // largest fr_max: about a month of daily runs
)

// Bouras is the adaptive rule of Bouras et al., section 3.2:
//
//	x       = min(records, Limit)                 successful records examined, the newest ones
//	counter = number of those x records with Changed set
//	b       = x             if counter = 0
//	          x / counter   otherwise (real division)
//	fr_max' = floor((fr_max + b) / 2), then kept within [Min, Max]
//
// Records. Failed records are skipped and do not count towards x: the paper's records are successful
// crawls, each a stored version of the page. The window therefore reaches further back past failures
// until it holds Limit successful records or the history runs out.
//
// Counting changes. counter counts "the content of two sequential records differs": a record with
// Changed set differs from the successful record before it. The first record of the window counts
// too: its predecessor may lie outside the window, but the crawl that produced it is one of the x
// crawls examined, so x crawls can show up to x changes ("changed 10 times during the period of the
// last 20 crawlings"), and a page that changed at every crawl gets b = 1 exactly. Only the page's
// very first record can have no predecessor, and it is never a change, so a page with exactly 10
// records shows at most 9 changes, as in the paper's table 2. This is the count of the schema's
// example query, sum(changed) over the last 10 fetches.
//
// With these readings the paper's examples come out exactly: fr_max 3, 10 changes among the last 20
// of 45 records → b = 2, fr_max' = 2; fr_max 2, 9 changes in 10 → b = 10/9, fr_max' = 1; fr_max 2,
// 1 change in 10 → b = 10, fr_max' = 6.
//
// Bounds. A stored fr_max outside [Min, Max] (say after the operator lowered Max) is first brought
// into range; with no successful record the result is that value, otherwise the formula's result
// clamped to [Min, Max]. As floor((f + b) / 2) has fixed points only near b, a page that never
// changes settles at Limit−1 or Limit (9 or 10 with the defaults), or at Max if that is lower; a
// page that changes at every crawl settles at 1.
//
// A zero field means its default (Limit 10, Min 1, Max 30); if Max ends up below Min, Max is taken to
// be Min. [Bouras.Validate] reports such settings. Bouras is a value type with no state: its methods
// are safe for concurrent use.
type Bouras struct {
	Limit int // successful records examined; 0 means DefaultLimit
	Min   int // smallest fr_max returned; 0 means DefaultMin
	Max   int // largest fr_max returned; 0 means DefaultMax
}

// Name returns "bouras".
func (Bouras) Name() string { return "bouras" }

// Validate reports settings that NextFrMax would have to correct: negative fields, or Min above Max
// once the defaults are applied.
func (b Bouras) Validate() error {
	switch {
	case b.Limit < 0:
		return fmt.Errorf("limit %d: must be at least 1 (0 means the default, %d)", b.Limit, DefaultLimit)
	case b.Min < 0:
		return fmt.Errorf("min fr_max %d: must be at least 1 (0 means the default, %d)", b.Min, DefaultMin)
	case b.Max < 0:
		return fmt.Errorf("max fr_max %d: must be at least 1 (0 means the default, %d)", b.Max, DefaultMax)
	}
	lo, hi := b.Min, b.Max
	if lo == 0 {
		lo = DefaultMin
	}
	if hi == 0 {
		hi = DefaultMax
	}
	if lo > hi {
		return fmt.Errorf("min fr_max %d is above max fr_max %d", lo, hi)
	}
	return nil
}

// params returns Limit, Min and Max with the defaults applied and Max >= Min.
func (b Bouras) params() (limit, lo, hi int) {
	limit, lo, hi = b.Limit, b.Min, b.Max
	if limit <= 0 {
		limit = DefaultLimit
	}
	if lo <= 0 {
		lo = DefaultMin
	}
	if hi <= 0 {
		hi = DefaultMax
	}
	return limit, lo, max(hi, lo)
}

// NextFrMax returns the page's new fr_max by the rule described on [Bouras].
func (b Bouras) NextFrMax(p Page) int {
	limit, lo, hi := b.params()
	fr := min(max(p.FrMax, lo), hi)
	x, counter := window(p.History, limit)
	if x == 0 {
		return fr
	}
	// floor((fr + x/counter) / 2) == floor((fr + floor(x/counter)) / 2) for integers fr, x >= 0 and
	// counter > 0: with s = fr + floor(x/counter) and 0 <= frac < 1, floor((s + frac) / 2) is s/2 for
	// an even s and (s−1)/2 + floor((1 + frac)/2) = (s−1)/2 for an odd one. So integer arithmetic
	// gives the exact result, with no float rounding at the boundaries.
	q := x
	if counter > 0 {
		q = x / counter
	}
	next := fr/2 + q/2 + (fr%2+q%2)/2 // (fr + q) / 2 without overflow
	return min(max(next, lo), hi)
}

// window returns x, the number of successful records among the newest limit successful ones of
// history, and counter, how many of them have Changed set. It does not allocate.
func window(history []Record, limit int) (x, counter int) {
	for i := len(history) - 1; i >= 0 && x < limit; i-- {
		r := history[i]
		if r.Failed {
			continue
		}
		x++
		if r.Changed {
			counter++
		}
	}
	return x, counter
}

// ChangeRatio returns the share of a page's last limit successful records that were changes
// (counter / x in the terms of [Bouras]), or 0 for a page without a successful record. A limit <= 0
// means [DefaultLimit]. Compared with [ChildChangeRatio], it tells whether a hub's children change
// much more often than the hub itself, which is when [HubAdjust] applies.
func ChangeRatio(history []Record, limit int) float64 {
	if limit <= 0 {
		limit = DefaultLimit
	}
	x, counter := window(history, limit)
	if x == 0 {
		return 0
	}
	return float64(counter) / float64(x)
}
