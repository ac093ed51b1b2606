package hints

import "time"

// ClockTolerance is how far apart a lastmod and a Date header must be before NewerThanFetch calls
// one of them later. Both come from the site, but often from two machines (the CMS that writes the
// sitemap, the front end or cache that answers), and a page saved a second before it was served
// carries a lastmod within a second of its Date; two minutes covers NTP-synchronised machines and
// that lag, and a page that really changed within two minutes of our fetch is left to the schedule.
const ClockTolerance = 2 * time.Minute

// NewerThanFetch reports whether lastmod, a date the site wrote, says the page changed after our
// last fetch of it. siteDate is the Date header the site sent with that fetch: the site's own clock
// at that moment. Comparing the site's date with the site's clock makes the answer right however far
// the site's clock is from ours; comparing with our fetch time would see every page of a site whose
// clock runs a month fast as changed, and none of one whose clock runs a month slow.
//
// known is false when the answer cannot be trusted either way: the site sent no Date (siteDate is
// zero), there is no lastmod, or lastmod's bounds (see Stamp.Bounds) reach within ClockTolerance of
// siteDate — a date-only lastmod of the day we fetched does not say whether the change came before
// or after. Callers then fall back to their schedule and record no trust observation.
func NewerThanFetch(lastmod Stamp, siteDate time.Time) (newer, known bool) {
	if lastmod.IsZero() || siteDate.IsZero() {
		return false, false
	}
	earliest, latest := lastmod.Bounds()
	switch {
	case earliest.After(siteDate.Add(ClockTolerance)):
		return true, true
	case latest.Before(siteDate.Add(-ClockTolerance)):
		return false, true
	}
	return false, false
}
