package frequency

import (
	"fmt"
	"math"
)

// Defaults of [Selective].
const (
	DefaultThresholdStart = 0.40 // the paper's 40 %
	DefaultThresholdMin   = 0.05
	DefaultThresholdMax   = 0.95
	DefaultThresholdStep  = 0.25
)

// Evidence is what a hub's children say about its subtree when the hub comes due (Bouras et al.,
// section 3.3).
type Evidence struct {
	Children int // known children
	// Known counts the children with evidence: at least two usable fetches, so at least one
	// interval in which a change could be seen. A child fetched once has none; it is unknown, not
	// unchanged.
	Known int
	// Changed counts the known children that changed within their last limit records.
	Changed int
}

// Ratio is the share of the known children that changed, 0 when none is known.
func (e Evidence) Ratio() float64 {
	if e.Known == 0 {
		return 0
	}
	return float64(e.Changed) / float64(e.Known)
}

// Enough reports whether the children are known well enough to judge the hub's subtree: at least
// half of them, and at least one, have evidence. A site crawled once has no evidence anywhere, and a
// hub whose children are mostly new says little about them.
func (e Evidence) Enough() bool { return e.Known > 0 && 2*e.Known >= e.Children }

// ChildEvidence sums up a hub's children from their histories (one per child, oldest first, as in
// [Page]). A child changed when one of its last limit successful records has Changed set — the
// window [Bouras] uses, so failed fetches are skipped and the window's first record counts. A
// limit <= 0 means [DefaultLimit].
func ChildEvidence(children [][]Record, limit int) Evidence {
	if limit <= 0 {
		limit = DefaultLimit
	}
	e := Evidence{Children: len(children)}
	for _, h := range children {
		if !HasEvidence(h) {
			continue
		}
		e.Known++
		if _, counter := window(h, limit); counter > 0 {
			e.Changed++
		}
	}
	return e
}

// ChildChangeRatio is the share of a hub's children with evidence that changed: ChildEvidence(...).Ratio().
func ChildChangeRatio(children [][]Record, limit int) float64 {
	return ChildEvidence(children, limit).Ratio()
}

// HasEvidence reports whether a page's history says anything about how it changes: two usable
// fetches or more.
func HasEvidence(history []Record) bool {
	n := 0
	for _, r := range history {
		if !r.Failed {
			if n++; n >= 2 {
				return true
			}
		}
	}
	return false
}

// Quiet reports whether a page's own history supports leaving it out of a run when its hub's
// subtree is skipped: it has evidence, and it changed in less than the share threshold of its last
// limit usable fetches. A page without evidence, or one that changes as often as the subtree would
// need to be visited, is crawled when its own interval says so, whatever its hub says.
func Quiet(history []Record, limit int, threshold float64) bool {
	return HasEvidence(history) && ChangeRatio(history, limit) < threshold
}

// Selective holds the settings of the selective incremental decision (Bouras et al., section 3.3).
// Each hub stores its own threshold (the threshold column of the URL table); Selective decides with
// it and moves it.
//
// When a hub comes due, the crawler fetches it (it must, to know whether it changed), then:
//
//	e := ChildEvidence(childHistories, limit)
//	verdict, reason := s.Decide(hubChanged, stored, e) // decide with the threshold learnt so far
//	if e.Enough() {
//		stored = s.NextThreshold(stored, e.Ratio()) // then learn from this visit
//	}
//
// The threshold is recalculated every time the hub comes due with enough evidence, whether it
// changed or not: the children's ratio is evidence either way.
//
// Thresholds are shares in (0, 1]. A zero field means its default (Start 0.40, Min 0.05, Max 0.95,
// Step 0.25); a field outside (0, 1] or NaN is treated as zero, and if Min is above Max both take
// their defaults. [Selective.Validate] reports such settings. Selective is a value type with no state:
// its methods are safe for concurrent use.
type Selective struct {
	Start float64 // threshold of a hub with no stored threshold yet
	Min   float64 // the threshold never goes below Min
	Max   float64 // the threshold never goes above Max
	Step  float64 // fraction of the way the threshold moves towards its target per hub visit
	// Mirror moves the threshold towards 1 − ratio rather than towards the ratio (see NextThreshold).
	Mirror bool
}

// DefaultSelective returns the default settings, spelled out.
func DefaultSelective() Selective {
	return Selective{Start: DefaultThresholdStart, Min: DefaultThresholdMin, Max: DefaultThresholdMax,
		Step: DefaultThresholdStep}
}

func share(v, def float64) float64 {
	if v > 0 && v <= 1 { // false for NaN
		return v
	}
	return def
}

// params returns the settings with the defaults applied, Min <= Start <= Max.
func (s Selective) params() (start, lo, hi, step float64) {
	lo, hi = share(s.Min, DefaultThresholdMin), share(s.Max, DefaultThresholdMax)
	if lo > hi {
		lo, hi = DefaultThresholdMin, DefaultThresholdMax
	}
	start = min(max(share(s.Start, DefaultThresholdStart), lo), hi)
	return start, lo, hi, share(s.Step, DefaultThresholdStep)
}

// Validate reports settings that the methods would have to correct: a field outside [0, 1] or NaN,
// Min above Max, or Start outside [Min, Max], once the defaults are applied.
func (s Selective) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"start", s.Start}, {"min", s.Min}, {"max", s.Max}, {"step", s.Step}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("threshold %s %v: must be a share between 0 and 1 (0 means the default)", f.name, f.v)
		}
	}
	lo, hi := share(s.Min, DefaultThresholdMin), share(s.Max, DefaultThresholdMax)
	if lo > hi {
		return fmt.Errorf("threshold min %v is above threshold max %v", lo, hi)
	}
	if start := share(s.Start, DefaultThresholdStart); start < lo || start > hi {
		return fmt.Errorf("threshold start %v is outside [%v, %v]", start, lo, hi)
	}
	return nil
}

// Threshold returns the threshold in force for a hub whose stored threshold is stored: Start when
// nothing is stored yet (stored <= 0 or NaN, as a zero column reads), else stored kept within
// [Min, Max].
func (s Selective) Threshold(stored float64) float64 {
	start, lo, hi, _ := s.params()
	if !(stored > 0) {
		return start
	}
	return min(max(stored, lo), hi)
}

// ratio01 brings a ratio into [0, 1]; NaN (no evidence) becomes 0.
func ratio01(r float64) float64 {
	if !(r > 0) {
		return 0
	}
	return min(r, 1)
}

// Verdict is the selective rule's decision about a due hub's subtree.
type Verdict int

const (
	// Follow leaves the subtree alone: the pages below the hub are crawled as their own intervals
	// say. A hub that changed is analysed like an unknown page (its links are followed), and a hub
	// whose children are too little known gives no grounds to skip or to open anything.
	Follow Verdict = iota
	// Open visits the subtree now: the hub did not change, but enough of its children did, so its
	// children are crawled in this run whatever their own intervals say.
	Open
	// Skip leaves the quiet pages below the hub for a later run: the hub did not change and too few
	// of its children did. Only pages whose own history is quiet ([Quiet]) are left out.
	Skip
)

func (v Verdict) String() string {
	switch v {
	case Open:
		return "open"
	case Skip:
		return "skip"
	}
	return "follow"
}

// Decide judges a due hub's subtree, and says why in a short phrase for logs. A hub crawled for the
// first time has no previous record and so no change: the crawler must pass hubChanged = true for
// it, or its links would never be followed.
func (s Selective) Decide(hubChanged bool, threshold float64, e Evidence) (Verdict, string) {
	if hubChanged {
		return Follow, "hub changed"
	}
	if !e.Enough() {
		return Follow, fmt.Sprintf("hub unchanged, but only %d of its %d children have two fetches to judge by", e.Known, e.Children)
	}
	t, r := s.Threshold(threshold), e.Ratio()
	if r >= t {
		return Open, fmt.Sprintf("hub unchanged, %.1f%% of children changed >= threshold %.1f%%", 100*r, 100*t)
	}
	return Skip, fmt.Sprintf("hub unchanged, %.1f%% of children changed < threshold %.1f%%", 100*r, 100*t)
}

// NextThreshold returns the hub's threshold after a visit at which the share ratio of its children
// (with evidence) had changed. Bouras et al.: "in proportion to the number of pages that have changed
// or not, we increase or decrease the percentage respectively" — the threshold moves the fraction
// Step of the way towards the ratio seen, then is kept within [Min, Max]:
//
//	t' = clamp(t + Step · (ratio − t), Min, Max)
//
// with t = [Selective.Threshold] of threshold and ratio brought into [0, 1] (NaN counts as 0). It is
// an exponential moving average of the hub's children's change share, so an unchanged hub's
// subtree is opened when its children changed at least as much as they usually do, and skipped when
// they changed less: the rule learns each hub's own normal. With Mirror set the threshold moves
// towards 1 − ratio instead, the reading strata used before (docs/fidelity.md compares the two).
//
// For a steady ratio r it approaches clamp(r, Min, Max) (or clamp(1 − r, …) mirrored)
// monotonically, each visit multiplying the distance by (1 − Step), so it never overshoots and a
// noisy ratio is smoothed over about 1/Step visits.
func (s Selective) NextThreshold(threshold, ratio float64) float64 {
	_, lo, hi, step := s.params()
	t := s.Threshold(threshold)
	target := ratio01(ratio)
	if s.Mirror {
		target = 1 - target
	}
	next := t + step*(target-t)
	return min(max(next, lo), hi)
}

// HubAdjust returns the shortened fr_max of a hub whose internal children change much more often than
// the hub itself, given childRatio, the share of its children that changed ([ChildChangeRatio]):
//
//	floor((fr_max + (1 − childRatio) · fr_max) / 2), and at least 1
//
// This is the papers README's reading of Bouras et al., section 5: the formula as printed,
// (fr_max + changes% · fr_max) / 2, turns the paper's own example (fr_max 6, 89 % of internal pages
// changed) into 5, while this one gives the paper's 3. The more children changed, the shorter the
// interval: childRatio 0 leaves fr_max as it is, 1 halves it.
//
// It applies after the hub's own recalculation ([Policy.NextFrMax]) when the children change much more
// often than the hub, for instance when childRatio is above the hub's [ChangeRatio] — the paper's
// page 2 changed 1 time in 10 while 89 % of its internal pages changed. It does not apply to a hub
// that changes more often than its children (the paper's page 1: crawled often, analysed rarely).
// childRatio is brought into [0, 1]; NaN counts as 0. A frMax below 1 counts as 1.
func HubAdjust(frMax int, childRatio float64) int {
	frMax = max(frMax, 1)
	r := ratio01(childRatio)
	// The epsilon absorbs binary rounding when the exact value is an integer, e.g. 10 · (2 − 0.8) / 2
	// computes as 5.999…; it is far below the resolution of any real ratio of children.
	v := math.Floor(float64(frMax)*(2-r)/2 + 1e-9)
	if v >= float64(frMax) { // no shortening; also keeps a huge frMax from overflowing int(v)
		return frMax
	}
	return max(int(v), 1)
}
