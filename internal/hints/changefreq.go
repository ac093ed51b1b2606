package hints

import (
	"strings"
	"time"
)

// ChangeFreq is a sitemap's changefreq: how often the site says a page is likely to change. The
// protocol calls it a hint, not a command; strata uses it only to seed the revisit interval of a page
// it has no history for, and the frequency policy takes over from there.
type ChangeFreq string

// The protocol's values. The empty ChangeFreq means none was given (or it was not one of these).
const (
	Always  ChangeFreq = "always"
	Hourly  ChangeFreq = "hourly"
	Daily   ChangeFreq = "daily"
	Weekly  ChangeFreq = "weekly"
	Monthly ChangeFreq = "monthly"
	Yearly  ChangeFreq = "yearly"
	Never   ChangeFreq = "never"
)

// ParseChangeFreq reads a changefreq value, ignoring case and surrounding space.
func ParseChangeFreq(s string) (ChangeFreq, bool) {
	switch c := ChangeFreq(strings.ToLower(strings.TrimSpace(s))); c {
	case Always, Hourly, Daily, Weekly, Monthly, Yearly, Never:
		return c, true
	}
	return "", false
}

// Period is the interval between changes that c names: always 0, hourly 1 h, daily 24 h, weekly 7
// days, monthly 30 days, yearly 365 days. Never and the empty ChangeFreq report ok = false.
func (c ChangeFreq) Period() (d time.Duration, ok bool) {
	const day = 24 * time.Hour
	switch c {
	case Always:
		return 0, true
	case Hourly:
		return time.Hour, true
	case Daily:
		return day, true
	case Weekly:
		return 7 * day, true
	case Monthly:
		return 30 * day, true
	case Yearly:
		return 365 * day, true
	}
	return 0, false
}

// FrMax returns the first fr_max (revisit interval in runs) for a new page with changefreq c, when
// runs start every run apart (normally a day) and fr_max may not exceed maxFrMax. The period is
// rounded down to whole runs, so a page said to change weekly is visited at least weekly, and kept
// within [1, maxFrMax]. With daily runs: always, hourly and daily → 1, weekly → 7, monthly → 30, yearly
// → 365, never → maxFrMax (each capped at maxFrMax). ok is false for an empty or unknown c, for which
// the caller keeps its own default. maxFrMax below 1 counts as 1; run ≤ 0 counts as a day.
func (c ChangeFreq) FrMax(run time.Duration, maxFrMax int) (frMax int, ok bool) {
	maxFrMax = max(maxFrMax, 1)
	if run <= 0 {
		run = 24 * time.Hour
	}
	if c == Never {
		return maxFrMax, true
	}
	period, ok := c.Period()
	if !ok {
		return 0, false
	}
	runs := period / run // whole runs, rounded down; a Duration, so no float error
	if runs > time.Duration(maxFrMax) {
		return maxFrMax, true
	}
	return max(int(runs), 1), true
}
