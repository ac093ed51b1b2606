package simulate

import (
	"math"
	"slices"
)

// score judges a policy by the pages its runs fetched, against the web's true history: fetches[d]
// lists the page requests of the run at day d.
func (w *Web) score(name string, fetches [][]fetch, days int) PolicyResult {
	type state struct {
		lastFetch float64 // < 0 before the first successful fetch
		next      int32   // index in w.times of the first change after lastFetch
	}
	st := make([]state, len(w.pages))
	for i := range st {
		st[i] = state{lastFetch: -1, next: w.pages[i].lo}
	}
	r := PolicyResult{Name: name, Fetched: make([][]int32, days), DailyFetches: make([]int, days), DailyFresh: make([]float64, days)}
	sites := w.siteResults(days)
	siteFresh := make([][4]float64, len(sites)) // fresh and stale page-days, and those of the second half
	var total, found int
	var freshT, staleT, ageT, delay float64
	// foundAt is when a new page was first linked from a page the policy fetched (NaN until then),
	// kidPos how far through its children each linking page's fetches have looked.
	foundAt := make([]float64, len(w.pages))
	for i := range foundAt {
		foundAt[i] = math.NaN()
	}
	kidPos := make([]int, len(w.pages))
	var foundDelay float64
	for d := range days {
		t := float64(d)
		for _, f := range fetches[d] {
			r.Fetched[d] = append(r.Fetched[d], f.page)
			total++
			p, s := &w.pages[f.page], &st[f.page]
			if d > 0 { // run 0 is every policy's same full crawl
				sites[p.site].Fetches++
			}
			if 2*d >= days {
				sites[p.site].LateFetches++
			}
			if !f.ok || p.died <= t || p.born > t {
				continue
			}
			first := s.lastFetch < 0
			j := s.next
			k := int32(0)
			for j+k < p.hi && w.times[j+k] <= t {
				k++
			}
			if k > 1 {
				r.Missed += int(k - 1)
			}
			if first || k > 0 {
				found++
			}
			if first && p.born > 0 {
				r.NewFetched++
				delay += t - p.born
				// A page found another way (a sitemap) or in this very run counts as found now.
				if math.IsNaN(foundAt[f.page]) {
					foundAt[f.page] = t
				}
				at := foundAt[f.page]
				foundDelay += t - at
				if t-at <= 2 && at <= float64(days-3) {
					r.FoundIn2++
				}
			}
			s.lastFetch, s.next = t, j+k
			// The new pages this page links at t are found.
			kids := w.kids[f.page]
			for kidPos[f.page] < len(kids) && w.pages[kids[kidPos[f.page]]].born <= t {
				c := kids[kidPos[f.page]]
				if math.IsNaN(foundAt[c]) && w.pages[c].born > 0 {
					foundAt[c] = t
				}
				kidPos[f.page]++
			}
		}
		slices.Sort(r.Fetched[d])
		r.DailyFetches[d] = len(fetches[d])
		// Freshness and age of every live page over [d, d+1).
		a0, a1 := t, t+1
		var fresh, stale, age float64
		for i := range w.pages {
			p := &w.pages[i]
			if p.born >= a1 {
				break // pages are in birth order
			}
			a, b := max(a0, p.born), min(a1, p.died)
			if b <= a {
				continue
			}
			s := &st[i]
			c := p.born // a page never fetched is stale since it appeared
			if s.lastFetch >= 0 {
				c = math.Inf(1)
				if s.next < p.hi {
					c = w.times[s.next]
				}
			}
			sf := &siteFresh[p.site]
			late := 2*d >= days
			if c >= b {
				fresh += b - a
				sf[0] += b - a
				if late {
					sf[2] += b - a
				}
				continue
			}
			from := max(a, c)
			fresh += from - a
			stale += b - from
			sf[0] += from - a
			sf[1] += b - from
			if late {
				sf[2] += from - a
				sf[3] += b - from
			}
			age += ((b-c)*(b-c) - (from-c)*(from-c)) / 2
		}
		freshT, staleT, ageT = freshT+fresh, staleT+stale, ageT+age
		r.DailyFresh[d] = fresh / max(fresh+stale, 1e-300)
	}
	// Changes still waiting at the end whose versions were overwritten, and the new pages.
	end := float64(days)
	for i := range w.pages {
		p, s := &w.pages[i], &st[i]
		if p.born > 0 && p.born < end {
			r.NewPages++
		}
		if n := int(p.hi - s.next); n > 1 {
			r.Missed += n - 1
		}
	}
	for i := range sites {
		f := siteFresh[i]
		sites[i].Freshness = f[0] / max(f[0]+f[1], 1e-300)
		sites[i].LateFreshness = f[2] / max(f[2]+f[3], 1e-300)
	}
	r.Sites = sites
	r.FetchesPerDay = float64(total) / float64(days)
	r.Freshness = freshT / max(freshT+staleT, 1e-300)
	if staleT > 0 {
		r.MeanStaleAge = ageT / staleT
	}
	if total > 0 {
		r.Efficiency = float64(found) / float64(total)
	}
	if n := len(w.times); n > 0 {
		r.MissedShare = float64(r.Missed) / float64(n)
	}
	if r.NewFetched > 0 {
		r.DiscoveryDelay = delay / float64(r.NewFetched)
		r.FoundDelay = foundDelay / float64(r.NewFetched)
	}
	for i := range w.pages {
		if at := foundAt[i]; at <= float64(days-3) { // false for NaN: never found
			r.NewFound++
		}
	}
	return r
}

// oracleFetches is what a crawler that knew every change would fetch, with no budget: at each run,
// exactly the live pages that changed or appeared since the run before.
func oracleFetches(w *Web, days int) [][]fetch {
	out := make([][]fetch, days)
	for i := range w.pages {
		p := &w.pages[i]
		last := -1 // the run that last fetched it
		for d := range days {
			t := float64(d)
			if p.born > t || p.died <= t {
				continue
			}
			if last < 0 || w.version(int32(i), t) != w.version(int32(i), float64(last)) {
				out[d] = append(out[d], fetch{page: int32(i), ok: true})
				last = d
			}
		}
	}
	return out
}

// siteResults returns a SiteResult per site with what the web knows of it: the kinds of its sitemap,
// dates and trap, its pages and its changes after the initial crawl.
func (w *Web) siteResults(days int) []SiteResult {
	out := make([]SiteResult, len(w.sites))
	for s, info := range w.sites {
		out[s] = SiteResult{Site: s, Sitemap: info.sitemap.String(), Dates: info.dates.String(), Trap: info.trap.String()}
	}
	end := float64(days)
	for i := range w.pages {
		p := &w.pages[i]
		if int(p.site) >= len(out) {
			continue
		}
		out[p.site].Pages++
		for _, t := range w.times[p.lo:p.hi] {
			if t > 0 && t < end {
				out[p.site].Changes++
			}
			if 2*t >= end && t < end {
				out[p.site].LateChanges++
			}
		}
	}
	return out
}
