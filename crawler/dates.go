package crawler

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/store"
)

// A server's Last-Modified can say when a page last changed, which tells a page that changes daily
// from one that changes monthly at the first fetch, where undated visits need a dozen. Many servers
// tell the truth (a static file's modification time); many do not: a date stamped on every response,
// the time the whole site was last built, a date that never moves. strata believes an origin's dates
// only once they agreed with what it saw of its pages, and a page's never again once they did not.

// dateChange fills in what the response's Last-Modified says of the page's last change, checked
// against what strata saw of the page since its last fetch (u): rec.Dated and rec.DatedAge, the
// time from the dated change to the response, on the server's clock; and rec.DateCheck:
//
//   - +1: the date agrees — the text did not change and neither did the date (or the server
//     answered 304), or the text changed and the date falls after the last fetch;
//   - -1: the date contradicts what strata saw — it moved while the text did not (a date stamped on
//     every response, a site rebuilt, an edit the text extraction sets aside), or the text changed
//     and the date falls before the last fetch, or it lies in the future; the page is not dated;
//   - 0: nothing to check it against (a first fetch, no date before).
//
// It runs after change detection, for a response with a usable answer.
func dateChange(rec *store.FetchRecord, u *store.DueURL, resp *fetch.Response, fetched time.Time) {
	if resp == nil || !(rec.NotModified || rec.Status == http.StatusOK && rec.ContentHash != "") {
		return
	}
	raw := resp.LastModified
	if rec.NotModified && raw == "" {
		raw = u.LastModified // a 304 need not repeat it
	}
	lm, err := http.ParseTime(raw)
	if err != nil {
		return
	}
	ref := resp.Date // the server's clock, like the date
	if ref.IsZero() {
		ref = fetched
	}
	if lm.After(ref.Add(time.Minute)) {
		rec.DateCheck = -1
		return
	}
	prev, prevErr := http.ParseTime(u.LastModified)
	switch {
	case u.ContentHash == "" && !rec.NotModified:
		// The first version: nothing to check.
	case !rec.Changed:
		if prevErr == nil {
			rec.DateCheck = agree(lm.Equal(prev))
		}
	case !u.SiteDate.IsZero():
		rec.DateCheck = agree(lm.After(u.SiteDate))
	}
	if rec.DateCheck >= 0 {
		rec.Dated, rec.DatedAge = true, max(ref.Sub(lm), 0)
	}
}

func agree(ok bool) int {
	if ok {
		return 1
	}
	return -1
}

// Dates decides whose Last-Modified dates the change-rate estimates believe, and turns their ages
// into runs.
type Dates struct {
	// RunLength is the time between runs; zero believes no date.
	RunLength time.Duration
	// Origins is each origin's record (store.DB.OriginDates).
	Origins map[string]store.Dates
}

// Believed reports whether the dates of pageURL's origin are to be believed: they agreed with what
// strata saw at least trustedAgreed times, and contradicted it at most once in trustedShare.
func (d Dates) Believed(pageURL string) bool {
	if d.RunLength <= 0 {
		return false
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		return false
	}
	r := d.Origins[u.Scheme+"://"+u.Host]
	return r.Agreed >= trustedAgreed && r.Contradicted*trustedShare <= r.Agreed
}

const (
	// trustedAgreed is how many agreeing dates an origin needs before its dates are believed: a few
	// pages refetched, enough that a date stamped on every response or a site rebuilt every day
	// would have contradicted one of them.
	trustedAgreed = 3
	// trustedShare: an origin is believed while at most one in trustedShare of its dates
	// contradicted what strata saw — the pages with a counter or a clock in them, which are not
	// dated anyway.
	trustedShare = 10
)

// records returns a page's records for the frequency policies: with its dates, in runs, when
// believed is set, else undated.
func (d Dates) records(in []store.Record, believed bool) []frequency.Record {
	out := FrequencyRecords(in)
	if !believed || d.RunLength <= 0 {
		return out
	}
	for i, r := range in {
		if r.Dated {
			out[i].Dated, out[i].Age = true, float64(r.Age)/float64(d.RunLength)
		}
	}
	return out
}

// runLength is the typical time between runs: the median gap between the starts of the last runs,
// at least a minute; a day when fewer than two runs are known.
func runLength(starts []time.Time) time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(starts); i++ {
		if g := starts[i-1].Sub(starts[i]).Abs(); g > 0 {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return 24 * time.Hour
	}
	slices.Sort(gaps)
	return max(gaps[len(gaps)/2], time.Minute)
}
