package frequency

import (
	"fmt"
	"math"
)

// Defaults of the [Nutch] policy: Apache Nutch's shipped defaults (conf/nutch-default.xml,
// db.fetch.schedule.adaptive.*), with seconds turned into runs of one day.
const (
	DefaultNutchIncRate   = 0.4   // inc_rate: the interval grows by 40 % after an unchanged fetch
	DefaultNutchDecRate   = 0.2   // dec_rate: it shrinks by 20 % after a changed one
	DefaultNutchSyncDelta = 0.3   // sync_delta_rate (sync_delta is true by default)
	DefaultNutchMin       = 1.0   // min_interval 60 s: below one run, so one run
	DefaultNutchMax       = 365.0 // max_interval 365 days: 365 daily runs
)

// Nutch is Apache Nutch's AdaptiveFetchSchedule, the adaptive revisit rule that most users of an
// open-source crawler run today, as a baseline for the others:
//
//	after a changed fetch:    interval' = interval · (1 − DecRate)
//	after an unchanged fetch: interval' = interval · (1 + IncRate)
//	sync_delta:               delta = runs since the last fetch that saw a change (0 after a change)
//	                          interval' = max(interval', delta)
//	                          the next fetch is due delta · SyncDeltaRate runs early
//	bounds:                   interval' kept within [Min, Max]
//
// Units. Nutch counts seconds; strata counts runs, and with strata's daily runs one run is one day
// (86,400 s). Nutch's min_interval of 60 s is below one run, and a crawler that runs once a day cannot
// fetch a page more often than once a run, so Min defaults to 1 run; max_interval, 365 days, becomes
// 365 runs. A crawler run more or less often than daily should set Min and Max from its own run
// length.
//
// Nutch's "last modified" time is the fetch at which the change was detected (it sets modifiedTime
// to the fetch time on a changed fetch and keeps it on an unchanged one), so delta is the number of
// runs since the last fetch that saw a change, or since the first fetch when none has.
//
// Next carries the fractional interval, as Nutch's float field does; a crawler that stores only
// whole runs uses [Nutch.NextFrMax]. A zero field means its default; a negative SyncDeltaRate turns
// sync_delta off. Nutch is a value type with no state: its methods are safe for concurrent use.
type Nutch struct {
	IncRate       float64 // growth after an unchanged fetch; 0 means 0.4
	DecRate       float64 // shrinkage after a changed fetch; 0 means 0.2
	SyncDeltaRate float64 // share of delta by which the next fetch is moved earlier; 0 means 0.3, < 0 off
	Min           float64 // shortest interval, runs; 0 means 1
	Max           float64 // longest interval, runs; 0 means 365
}

// Name returns "nutch".
func (Nutch) Name() string { return "nutch" }

func (n Nutch) params() (inc, dec, sync, lo, hi float64) {
	inc, dec = positive(n.IncRate, DefaultNutchIncRate), positive(n.DecRate, DefaultNutchDecRate)
	dec = min(dec, 1)
	sync = positive(n.SyncDeltaRate, DefaultNutchSyncDelta)
	if n.SyncDeltaRate < 0 {
		sync = 0
	}
	lo, hi = positive(n.Min, DefaultNutchMin), positive(n.Max, DefaultNutchMax)
	return inc, dec, sync, lo, max(hi, lo)
}

// Validate reports settings Next would have to correct: negative or NaN rates (SyncDeltaRate may be
// negative: off), a DecRate of 1 or more, or Min above Max.
func (n Nutch) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"inc rate", n.IncRate}, {"dec rate", n.DecRate}, {"min interval", n.Min}, {"max interval", n.Max}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return fmt.Errorf("nutch %s %v: must be a finite number >= 0 (0 means the default)", f.name, f.v)
		}
	}
	if math.IsNaN(n.SyncDeltaRate) {
		return fmt.Errorf("nutch sync delta rate %v: must be a number", n.SyncDeltaRate)
	}
	if n.DecRate >= 1 {
		return fmt.Errorf("nutch dec rate %v: must be below 1", n.DecRate)
	}
	if lo, hi := positive(n.Min, DefaultNutchMin), positive(n.Max, DefaultNutchMax); lo > hi {
		return fmt.Errorf("nutch min interval %v is above max interval %v", lo, hi)
	}
	return nil
}

// Next returns a page's new interval after a fetch, and wait, the runs from this fetch until the next
// fetch is due (the interval less the sync_delta shift, at least 0). interval is the page's interval
// before the fetch (<= 0 or NaN counts as Min), changed whether the fetch saw a change, and
// sinceChange the runs since the last fetch that saw one (Nutch's fetchTime − modifiedTime; ignored
// when changed, where it is 0 by definition).
func (n Nutch) Next(interval float64, changed bool, sinceChange float64) (next, wait float64) {
	inc, dec, sync, lo, hi := n.params()
	if !(interval > 0) {
		interval = lo
	}
	delta := 0.0
	if changed {
		next = interval * (1 - dec)
	} else {
		next = interval * (1 + inc)
		if sinceChange > 0 && !math.IsInf(sinceChange, 1) {
			delta = sinceChange
		}
	}
	if sync > 0 {
		next = max(next, delta)
	}
	next = min(max(next, lo), hi)
	return next, max(next-sync*delta, 0)
}

// NextFrMax is the rule for a crawler that keeps a whole number of runs per page, such as strata's
// fr_max: p.FrMax is taken as the interval, the newest successful record says whether the page
// changed, and delta is counted from the newest earlier successful record that was a change (or the
// oldest record in p.History when none was). The new interval is rounded to whole runs, but always
// moves at least one run in the rule's direction unless a bound stops it: plain rounding would keep
// an interval of 1 at 1 for ever (1 · 1.4 rounds to 1) and one of 2 at 2 (2 · 0.8 rounds to 2). The
// sync_delta shift of the due time has no place in a countdown that restarts at every fetch; delta
// still sets the interval's floor. With no successful record it returns p.FrMax within the bounds.
func (n Nutch) NextFrMax(p Page) int {
	_, _, _, lo, hi := n.params()
	ilo, ihi := max(int(math.Ceil(lo)), 1), max(int(math.Floor(hi)), 1)
	ihi = max(ihi, ilo)
	cur := min(max(p.FrMax, ilo), ihi)
	last, since := -1, -1.0
	for i := len(p.History) - 1; i >= 0; i-- {
		r := p.History[i]
		if r.Failed {
			continue
		}
		if last < 0 {
			last = i
			continue
		}
		since = float64(p.History[last].Run - r.Run)
		if r.Changed {
			break
		}
	}
	if last < 0 {
		return cur
	}
	changed := p.History[last].Changed
	next, _ := n.Next(float64(cur), changed, since)
	v := int(math.Floor(next + 0.5))
	switch {
	case changed:
		v = min(v, cur-1)
	case next > float64(cur):
		v = max(v, cur+1)
	}
	return min(max(v, ilo), ihi)
}

func init() {
	Register("nutch", func(o Options) (Policy, error) {
		n := Nutch{Min: float64(o.Min), Max: float64(o.Max)}
		if err := n.Validate(); err != nil {
			return nil, err
		}
		return n, nil
	})
}
