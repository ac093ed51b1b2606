package hints

import (
	"slices"
	"time"
)

// DefaultC is the c of Unknown when the caller has no better value: one access's worth, so a page
// with weight 0 (no in-links, no user priority) still gains priority as it ages instead of never
// being crawled when the run is short.
const DefaultC = 1.0

// Unknown is equation 5, the score of a page whose update times are unknown (Xu's normal user, or a
// host whose hints are not trusted): the triangle
//
//	S = ½ · (t_now − t_LC) · (N + c)
//
// with t_LC the last crawl, N the weight and c a small constant (DefaultC). It is 0 when now is not
// after lastCrawl.
func Unknown(now, lastCrawl time.Time, weight, c float64) float64 {
	if !now.After(lastCrawl) {
		return 0
	}
	return 0.5 * now.Sub(lastCrawl).Hours() * (weight + c)
}

// Known is equation 4, the score of a page whose missed updates are known (Xu's smart user: the
// lastmod of a sitemap, the date of a feed item):
//
//	S = Σ_{m=0}^{U} (t_m − t_{m−1}) · N_{t_m}
//
// read as follows. t_0 < … < t_{U−1} are the U missed updates, the updates after the last crawl
// t_LC (= t_{−1}) and not after now; the sum's last term, m = U, closes the staircase at t_U = t_now
// (the printed range has one term more than there are updates, and the page stays stale until it is
// crawled). N_t is the number of accesses that hit the stale page from the last crawl to t: with the
// weight read as N_{t_now} for the whole window, as in Unknown, and accesses spread evenly over it,
// N_t = weight · (t − t_0) / (t_now − t_LC), zero before the first missed update. Each term is a
// rectangle under the growing count of stale accesses.
//
// Updates must be on our clock (see Clock.ToOurs). Those not in (lastCrawl, now] are ignored; with
// none left the page is known to be fresh and the score is 0, which is the point of a trusted hint.
//
// Consequences worth knowing when mixing the two scores: with one known update just after the last
// crawl, Known = weight · (t_now − t_LC), twice Unknown's triangle (for c = 0), so a confirmed change
// outranks an unconfirmed one of the same age and weight; Known never exceeds that rectangle; and it
// grows with the time since the first missed update.
func Known(now, lastCrawl time.Time, updates []time.Time, weight float64) float64 {
	if !now.After(lastCrawl) {
		return 0
	}
	missed := make([]time.Time, 0, len(updates)+1)
	for _, u := range updates {
		if u.After(lastCrawl) && !u.After(now) {
			missed = append(missed, u)
		}
	}
	if len(missed) == 0 {
		return 0
	}
	slices.SortFunc(missed, time.Time.Compare)
	missed = append(missed, now) // t_U
	window := now.Sub(lastCrawl).Hours()
	first := missed[0]
	stale := func(t time.Time) float64 { return weight * t.Sub(first).Hours() / window } // N_t
	s, prev := 0.0, lastCrawl
	for _, t := range missed {
		s += t.Sub(prev).Hours() * stale(t)
		prev = t
	}
	return s
}
