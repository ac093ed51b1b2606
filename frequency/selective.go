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

// ChildChangeRatio returns the share of a hub's known internal children that changed, for the
// selective incremental decision of Bouras et al., section 3.3. children holds one history per child
// (oldest first, as in [Page]).
//
// A child changed when at least one of its last limit successful records has Changed set — the same
// window as [Bouras] uses, so failed fetches are skipped and the window's first record counts. A child
// without any successful record is ignored: nothing is known about it, so it counts neither as
// changed nor as unchanged. The result is changed / considered children, in [0, 1], and 0 when no
// child has a successful record. A limit <= 0 means [DefaultLimit].
func ChildChangeRatio(children [][]Record, limit int) float64 {
	if limit <= 0 {
		limit = DefaultLimit
	}
	known, changed := 0, 0
	for _, h := range children {
		x, counter := window(h, limit)
		if x == 0 {
			continue
		}
		known++
		if counter > 0 {
			changed++
		}
	}
	if known == 0 {
		return 0
	}
	return float64(changed) / float64(known)
}

// Selective holds the settings of the selective incremental decision (Bouras et al., section 3.3).
// Each hub stores its own threshold (the threshold column of the URL table); Selective decides with
// it and moves it.
//
// When a hub comes due, the crawler fetches it (it must, to know whether it changed), then:
//
//	ratio := ChildChangeRatio(childHistories, limit)
//	visit, reason := s.Decide(hubChanged, stored, ratio) // decide with the threshold learnt so far
//	stored = s.NextThreshold(stored, ratio)              // then learn from this visit
//
// The threshold is recalculated every time the hub comes due, whether it changed or not: the
// children's ratio is evidence either way.
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

// Decide reports whether the crawler should visit a due hub's subtree — extract its links and let its
// internal children be crawled — and why, in a short phrase for logs.
//
// A hub that changed is visited: its content is new, so it is analysed like an unknown page and its
// children are visited as their own fr allows. A hub that did not change is visited only when ratio,
// the share of its children that changed ([ChildChangeRatio]), is at least the hub's threshold
// ([Selective.Threshold] of threshold).
//
// A hub crawled for the first time has no previous record and so no change, and no known children
// either: the crawler must pass hubChanged = true for it, or its links would never be extracted.
// Note also that a child's ratio only moves when the child is fetched: a child that is reached only
// through this hub's subtree keeps its old records while the subtree is skipped.
func (s Selective) Decide(hubChanged bool, threshold, ratio float64) (visitSubtree bool, reason string) {
	if hubChanged {
		return true, "hub changed"
	}
	t, r := s.Threshold(threshold), ratio01(ratio)
	if r >= t {
		return true, fmt.Sprintf("hub unchanged, %.1f%% of children changed >= threshold %.1f%%", 100*r, 100*t)
	}
	return false, fmt.Sprintf("hub unchanged, %.1f%% of children changed < threshold %.1f%%", 100*r, 100*t)
}

// NextThreshold returns the hub's threshold after a visit at which the share ratio of its children
// had changed. The threshold moves the fraction Step of the way towards 1 − ratio, then is kept
// within [Min, Max]:
//
//	t' = clamp(t + Step · ((1 − ratio) − t), Min, Max)
//
// with t = [Selective.Threshold] of threshold and ratio brought into [0, 1] (NaN counts as 0). Few
// children changed: the target is high and the threshold rises, so an unchanged hub's subtree needs
// more evidence next time. Many changed: the threshold falls, and the subtree is visited more
// readily. With the defaults, from 0.40: ratio 0.89 gives 0.3275, ratio 0.10 gives 0.525, ratio
// 0.60 leaves 0.40.
//
// For a steady ratio r this is an exponential moving average with the fixed point
// clamp(1 − r, Min, Max): each visit multiplies the distance to it by (1 − Step), with 0 < Step <= 1,
// so the threshold approaches it monotonically, never overshoots and so never oscillates, and a
// noisy ratio is smoothed over about 1/Step visits (4 with the default). In the long run an
// unchanged hub's subtree is visited when r >= 1 − r, that is when about half or more of its children
// change; the 40 % start governs the first visits.
func (s Selective) NextThreshold(threshold, ratio float64) float64 {
	_, lo, hi, step := s.params()
	t := s.Threshold(threshold)
	next := t + step*((1-ratio01(ratio))-t)
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
