package frequency

import (
	"cmp"
	"math"
	"slices"
)

// Candidate is a due page competing for a place in a run whose budget cannot fetch everything due.
type Candidate struct {
	Domain string // its politeness domain: never-fetched pages are shared out among domains
	New    bool   // never fetched
	// Level orders a domain's never-fetched pages: the highest (nearest a seed) first, so a crawl
	// goes down the levels as Bouras et al.'s does.
	Level int
	// Value orders known pages: what fetching the page now is worth to the policy, the highest
	// first ([GainValue], [WaitValue]).
	Value float64
	// Key breaks ties, the lowest first: the page's URL, so the choice does not depend on the order
	// in which concurrent workers happened to find pages.
	Key string
}

// Share is what is left of a run's budget.
type Share struct {
	Left int // page fetches the run may still make
	// New is how many of them never-fetched pages may take before known pages are served:
	// WebFountain's separate queue for new URLs, so that discovery cannot crowd out the recrawls.
	New int
	// Allowance is how many more never-fetched pages each domain may take before known pages are
	// served, for the rest of the run: its fair share of the run's budget less what it took in the
	// run's earlier rounds (see FairShare). A domain missing from the map may take none.
	Allowance map[string]int
	// Spill lets the never-fetched pages beyond their domains' allowances take what is left: the
	// last resort of a run that has nothing else to fetch.
	Spill bool
	// Rotate moves the order in which domains take turns, so that no domain is always first when
	// the new pages' share does not divide evenly; the run's id is a good value.
	Rotate int
}

// FairShare is each domain's share of a run's budget when domains domains have something to fetch:
// ⌈budget / domains⌉, at least one page.
func FairShare(budget, domains int) int {
	return max((budget+domains-1)/max(domains, 1), 1)
}

// Pick chooses the candidates a run fetches with what is left of its budget and returns their
// indices in cands, at most sh.Left of them:
//
//  1. never-fetched pages, up to sh.New: a page that is not in the archive at all is certainly
//     stale, so it comes before any known page. Their domains take turns, one page each, each its
//     nearest-to-a-seed first, and no domain takes more than its allowance, its fair share of the
//     whole run: a domain with few new pages gets them all, and one that grows without end (a link
//     farm, a calendar) cannot take the others' budget, in one round or over a run's rounds;
//  2. known pages by Value, the highest first;
//  3. with Spill set and budget still left, the never-fetched pages beyond the allowances, taking
//     turns the same way.
//
// The result depends only on its arguments.
func Pick(cands []Candidate, sh Share) []int {
	left := max(sh.Left, 0)
	var known []int
	byDomain := map[string][]int{}
	for i, c := range cands {
		if c.New {
			byDomain[c.Domain] = append(byDomain[c.Domain], i)
		} else {
			known = append(known, i)
		}
	}
	within, over := newTurns(cands, byDomain, sh.Rotate, sh.Allowance)
	first := within[:min(max(sh.New, 0), left, len(within))]
	out := append([]int(nil), first...)
	left -= len(first)
	slices.SortFunc(known, func(a, b int) int {
		if c := cmp.Compare(cands[b].Value, cands[a].Value); c != 0 {
			return c
		}
		return cmp.Compare(cands[a].Key, cands[b].Key)
	})
	k := min(left, len(known))
	out = append(out, known[:k]...)
	left -= k
	if sh.Spill {
		for _, list := range [][]int{within[len(first):], over} { // beyond sh.New, then beyond the allowances
			k := min(left, len(list))
			out = append(out, list[:k]...)
			left -= k
		}
	}
	return out
}

// newTurns lists the never-fetched pages in the order Pick takes them: the domains take turns, in an
// order of names rotated by rotate, each giving its pages nearest a seed first, then by Key. A
// domain gives at most its allowance (nil: no limit); the pages over it are returned apart, in the
// same order of turns.
func newTurns(cands []Candidate, byDomain map[string][]int, rotate int, allowance map[string]int) (turns, over []int) {
	domains := make([]string, 0, len(byDomain))
	for d, list := range byDomain {
		domains = append(domains, d)
		slices.SortFunc(list, func(a, b int) int {
			if c := cmp.Compare(cands[b].Level, cands[a].Level); c != 0 {
				return c
			}
			return cmp.Compare(cands[a].Key, cands[b].Key)
		})
	}
	slices.Sort(domains)
	if n := len(domains); n > 0 {
		r := ((rotate % n) + n) % n
		domains = append(domains[r:], domains[:r]...)
	}
	for turn := 0; ; turn++ {
		took := false
		for _, d := range domains {
			if list := byDomain[d]; turn < len(list) {
				if allowance != nil && turn >= allowance[d] {
					over = append(over, list[turn])
				} else {
					turns = append(turns, list[turn])
				}
				took = true
			}
		}
		if !took {
			return turns, over
		}
	}
}

// GainValue is what fetching a known page now is worth to the time-average freshness of the archive:
// the stored copy is stale with probability 1 − exp(−rate · runs) (certainly, when the site says it
// changed: updated), a fetch makes it fresh, and it then stays fresh until its next change, which
// comes after (1 − exp(−rate · horizon)) / rate runs on average within the horizon runs before the
// page is fetched again. The product, times the page's weight, is the fresh time the fetch buys (in
// runs): Cho and Garcia-Molina's reason not to chase the fastest pages — a page that changes every
// hour is stale almost surely, but a fetch keeps it fresh only for an hour — and Wolf et al.'s
// marginal gain, for one crawl at one moment. A rate <= 0 (never seen changing) is worth nothing
// unless the site says it changed; a weight <= 0 or NaN counts as 1; a horizon below one run as one.
func GainValue(rate, runs, horizon, weight float64, updated bool) float64 {
	if !(weight > 0) {
		weight = 1
	}
	horizon = max(horizon, 1)
	rate = max(rate, 0)
	p := 1.0
	if !updated {
		p = -math.Expm1(-rate * max(runs, 0))
	}
	fresh := horizon // the limit as the rate goes to 0
	if x := rate * horizon; x > 1e-9 {
		fresh = -math.Expm1(-x) / rate
	}
	v := weight * p * fresh
	if math.IsNaN(v) {
		return weight * horizon
	}
	return v
}

// WaitValue is the uniform policy's value of a known page: the runs since its last fetch, so the
// pages that waited longest go first and a budget visits every page in turn (round robin).
func WaitValue(runs float64) float64 { return max(runs, 0) }
