package frequency

import "time"

// Quasi-deterministic pages (Wolf et al., paper 004, section 2): pages whose updates come at known
// times, such as a weekly bulletin published every Monday. A Poisson rate spreads their crawls
// evenly over the week; crawling them on the day their change becomes visible — never before it, the
// update's release time — costs one crawl a week and keeps them fresh.
//
// strata learns the days from the page's own fetches: with daily runs, every change is first seen
// on some weekday, and a page whose changes are first seen on one, two or three weekdays only, and
// on most fetches made on those days, is quasi-deterministic. Weekdays are UTC days, as the run
// times are stored.

// Observation is what one fetch of a page says about when it changes: the content differed, or did
// not, from the previous fetch's, made at From.
type Observation struct {
	From, To time.Time
	Changed  bool
}

// Observations turns the times and outcomes of a page's successful fetches (oldest first) into
// observations between consecutive ones.
func Observations(at []time.Time, changed []bool) []Observation {
	var out []Observation
	for i := 1; i < len(at) && i < len(changed); i++ {
		out = append(out, Observation{From: at[i-1], To: at[i], Changed: changed[i]})
	}
	return out
}

// Release-day detection thresholds; see [ReleaseDays].
const (
	minDailyLooks   = 14 // two weeks of daily fetches
	minDailyChanges = 4
	maxReleaseDays  = 3
	minDayShare     = 0.5 // of the fetches made on a release day that see a change
	minClustered    = 0.8 // of all changes seen that fall on release days
)

// ReleaseDays returns the weekdays (bit d set for time.Weekday d) on which a page's changes are
// first seen, or 0 when they do not cluster on at most three weekdays.
//
// Only observations between fetches on consecutive UTC days (daily fetches, whatever the start
// window rotates) place a change on a day: two fetches on the same day say nothing about weekdays,
// and runs repeated minutes apart (a test compressing a month into an hour) must not make every page
// look released on today's weekday, and then never due again. With at least 14 of
// them and 4 changes among them, a weekday is a release day when at least 2 fetches were made on it
// and at least half of them saw a change; the page is quasi-deterministic when there are 1 to 3
// release days and at least 80 % of the changes were seen on them.
//
// A page strata already crawls only on its release days has few daily observations left; current
// is its mask so far, kept as long as the fetches made on release days keep seeing changes on at
// least half of them and no change is seen on another day.
func ReleaseDays(obs []Observation, current uint8) uint8 {
	var seen, looks [7]int
	daily, changes := 0, 0
	for _, o := range obs {
		if !dailyLook(o) {
			continue
		}
		wd := o.To.UTC().Weekday()
		looks[wd]++
		daily++
		if o.Changed {
			seen[wd]++
			changes++
		}
	}
	if daily >= minDailyLooks && changes >= minDailyChanges {
		var mask uint8
		days, onDays := 0, 0
		for d := range 7 {
			if looks[d] >= 2 && float64(seen[d]) >= minDayShare*float64(looks[d]) {
				mask |= 1 << d
				days++
				onDays += seen[d]
			}
		}
		if days >= 1 && days <= maxReleaseDays && float64(onDays) >= minClustered*float64(changes) {
			return mask
		}
		return 0
	}
	if current == 0 {
		return 0
	}
	// Too few daily looks to judge afresh: keep the mask while the evidence agrees with it.
	onLooks, onSeen := 0, 0
	for _, o := range obs {
		wd := o.To.UTC().Weekday()
		switch {
		case current&(1<<wd) != 0:
			onLooks++
			if o.Changed {
				onSeen++
			}
		case o.Changed && dailyLook(o):
			return 0 // a change seen on another day, from a daily look: no longer quasi-deterministic
		}
	}
	if onLooks > 0 && float64(onSeen) < minDayShare*float64(onLooks) {
		return 0
	}
	return current
}

// dailyLook reports whether an observation runs from one UTC day to the next: it pins what it saw to
// the day it ended on.
func dailyLook(o Observation) bool {
	from, to := o.From.UTC(), o.To.UTC()
	y, m, d := from.Date()
	next := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	return !to.Before(next) && to.Before(next.AddDate(0, 0, 1))
}

// ReleaseDue reports whether a page with the given release days, last fetched at last, is due at
// now: a release day has begun since the day of the last fetch (UTC days), or a week has passed.
// A page is thus fetched on its release day, after the release, never before it.
func ReleaseDue(mask uint8, last, now time.Time) bool {
	if mask == 0 {
		return false
	}
	l := time.Date(last.UTC().Year(), last.UTC().Month(), last.UTC().Day(), 0, 0, 0, 0, time.UTC)
	n := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	days := int(n.Sub(l).Hours()/24 + 0.5)
	if days >= 7 {
		return true
	}
	for k := 1; k <= days; k++ {
		if mask&(1<<l.AddDate(0, 0, k).Weekday()) != 0 {
			return true
		}
	}
	return false
}

// WeekdayNames spells a release-day mask, e.g. "Mon, Thu".
func WeekdayNames(mask uint8) string {
	s := ""
	for d := time.Monday; d <= time.Saturday+1; d++ {
		wd := d % 7
		if mask&(1<<wd) != 0 {
			if s != "" {
				s += ", "
			}
			s += wd.String()[:3]
		}
	}
	return s
}
