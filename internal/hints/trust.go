package hints

import "fmt"

// Trust thresholds; see Trust.
const (
	// MinObservations is how many hinted fetches a host needs before its hints can be trusted or
	// distrusted: with the Beta(1,1) prior, five agreements in five give a score of 6/7 ≈ 0.86.
	MinObservations = 5
	// TrustedScore is the score from which a host's "not modified" hints are acted upon. Acting on
	// one means not fetching a page, and a wrong one leaves the page stale until its next
	// scheduled visit, so it takes a host right at least four times in five (after the prior).
	TrustedScore = 0.8
	// DistrustedScore is the score below which even a host's "modified" hints are ignored: its
	// hints are then wrong more often than right (sitemaps that stamp every page with the time
	// of generation, say) and each costs a fetch.
	DistrustedScore = 0.5
	// MaxObservations bounds the memory of a Trust: when Agreed+Disagreed reaches it, both are
	// halved, so the score follows the last few dozen observations and a host that fixes (or
	// breaks) its sitemap generator regains (or loses) trust within weeks rather than years.
	MaxObservations = 64
)

// Trust is the record of one host's hints, Xu's "honest provider" made measurable: each time a page
// is fetched while a hint about it was known (NewerThanFetch said known), the hint is compared with
// what the fetch observed. It is a small value type meant to be stored per host; the zero value is
// a host never observed.
//
// Rules, with the thresholds above:
//   - a host's "modified" hints are acted upon (the page is fetched now, whatever its schedule) unless
//     the host is Distrusted: acting costs at most one fetch, so a new host gets the benefit of the
//     doubt, and fetching is how its hints get checked;
//   - a host's "not modified" hints are acted upon (the page may be left for later) only when the host
//     is Trusted; until then the page keeps its schedule, and the fetch it makes is an observation.
//
// Only fetches the crawler made anyway should feed a Trust about "not modified" hints; a crawler
// that stops fetching pages a trusted host calls unchanged should keep a few scheduled visits (a
// minimum per period) so the score stays honest.
type Trust struct {
	Agreed    int `json:"agreed"`
	Disagreed int `json:"disagreed"`
}

// Observe returns t updated with one hinted fetch: the hint said the page had changed since the
// previous fetch (hintNewer) or had not, and the fetch found the content changed or not. A hint agrees
// when both say the same.
func (t Trust) Observe(hintNewer, contentChanged bool) Trust {
	if hintNewer == contentChanged {
		t.Agreed++
	} else {
		t.Disagreed++
	}
	if t.Agreed+t.Disagreed >= MaxObservations {
		t.Agreed, t.Disagreed = t.Agreed/2, t.Disagreed/2
	}
	return t
}

// Observations is the number of hinted fetches counted.
func (t Trust) Observations() int { return t.Agreed + t.Disagreed }

// Score is the estimated probability that the host's next hint is right: the mean of a Beta(1,1)
// prior updated with the counts, (Agreed+1)/(Agreed+Disagreed+2). A new host scores 0.5.
func (t Trust) Score() float64 {
	return float64(t.Agreed+1) / float64(t.Agreed+t.Disagreed+2)
}

// Trusted reports whether the host's "not modified" hints may be acted upon: at least
// MinObservations observations and a Score of at least TrustedScore.
func (t Trust) Trusted() bool {
	return t.Observations() >= MinObservations && t.Score() >= TrustedScore
}

// Distrusted reports whether the host's hints are to be ignored altogether: at least
// MinObservations observations and a Score below DistrustedScore.
func (t Trust) Distrusted() bool {
	return t.Observations() >= MinObservations && t.Score() < DistrustedScore
}

// Act reports whether a hint from this host should change what the crawler does: a "modified" hint
// (hintNewer) unless the host is Distrusted, a "not modified" hint only if it is Trusted.
func (t Trust) Act(hintNewer bool) bool {
	if hintNewer {
		return !t.Distrusted()
	}
	return t.Trusted()
}

func (t Trust) String() string {
	state := "learning"
	switch {
	case t.Trusted():
		state = "trusted"
	case t.Distrusted():
		state = "distrusted"
	case t.Observations() >= MinObservations:
		state = "undecided"
	}
	return fmt.Sprintf("%.2f (%d of %d hints right, %s)", t.Score(), t.Agreed, t.Observations(), state)
}
