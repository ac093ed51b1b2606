// Package outcome defines, once, what one fetch found — a new page, a change, no change, a 304, a
// 404 or 410, an error — for every count and label strata shows: the run summary, status, history,
// serve, export and the run manifests.
//
// A fetch is described by the facts its row in the fetches table holds (Fetch); Of turns them into
// a Kind. The definitions:
//
//	new          the fetch stored the page's first version: no earlier fetch of the page stored one
//	changed      it stored a version whose words differ from the previous version's (a non-trivial
//	             change; numbers, dates and times set aside)
//	unchanged    a usable 200 whose words are the previous version's; when only its bytes differed
//	             (a counter, a date) the version is stored all the same, and Trivial says so
//	not_modified a 304 answer to a conditional request
//	not_found    a 404 or 410: the site's word that the page is not there, not an error
//	redirect     a 3xx; its target is a URL of its own
//	error        no usable answer: no response at all, a 5xx, or a 200 that could not be read or
//	             stored (its error is recorded)
//	other        any other status (403, 429, …)
//
// Every fetch has exactly one Kind, so the kinds of a run's fetches add up to its fetches.
package outcome

import "fmt"

// Kind is what one fetch found. Its value is the name used in JSON, manifests and counts.
type Kind string

// The kinds, in the order a summary lists them.
const (
	New         Kind = "new"
	Changed     Kind = "changed"
	Unchanged   Kind = "unchanged"
	NotModified Kind = "not_modified"
	NotFound    Kind = "not_found"
	Redirect    Kind = "redirect"
	Error       Kind = "error"
	Other       Kind = "other"
)

// Fetch is what a fetch's row says about it.
type Fetch struct {
	Status      int  // HTTP status; 0 when there was no response
	Changed     bool // fetches.changed: the stored version's words differ from the previous one's
	NotModified bool // a 304 to a conditional request
	Failed      bool // an error is recorded with the fetch
	Stored      bool // the fetch stored a version (fetches.archive_path is set)
	First       bool // no earlier fetch of the page stored a version
}

// Of returns the kind of a fetch.
func Of(f Fetch) Kind {
	switch {
	case f.Stored && f.First:
		return New
	case f.Stored && f.Changed:
		return Changed
	case f.Stored:
		return Unchanged // new bytes, same words
	case f.NotModified:
		return NotModified
	case f.Status == 404 || f.Status == 410:
		return NotFound
	case f.Status >= 300 && f.Status < 400:
		return Redirect
	case f.Status == 0 || f.Status >= 500 || f.Failed && f.Status == 200:
		return Error
	case f.Status == 200:
		return Unchanged
	}
	return Other
}

// Trivial reports an unchanged fetch whose bytes differed: a version stored with the same words.
func (f Fetch) Trivial() bool { return Of(f) == Unchanged && f.Stored }

// Label says in a few words what a fetch found, the same in strata history and serve: "new",
// "changed 12%" (magnitude is the share of the text that changed, negative when unknown),
// "unchanged", "new bytes, same words", "not modified (304)", "not found (404)", "redirect (301)",
// "error", "HTTP 403".
func Label(f Fetch, magnitude float64) string {
	switch k := Of(f); {
	case k == Changed && magnitude >= 0:
		return fmt.Sprintf("changed %.0f%%", 100*magnitude)
	case f.Trivial():
		return "new bytes, same words"
	case k == NotModified:
		return "not modified (304)"
	case k == NotFound:
		return fmt.Sprintf("not found (%d)", f.Status)
	case k == Redirect:
		return fmt.Sprintf("redirect (%d)", f.Status)
	case k == Other:
		return fmt.Sprintf("HTTP %d", f.Status)
	default:
		return string(k)
	}
}

// Counts tallies the kinds of a set of fetches, a run's.
type Counts struct {
	Fetched     int // fetches that got a response (status > 0), whatever its kind
	New         int
	Changed     int
	Unchanged   int // Trivial ones included
	Trivial     int // of Unchanged, those stored with new bytes and the same words
	NotModified int
	NotFound    int
	Redirects   int
	Errors      int
	Other       int
}

// Add counts one fetch.
func (c *Counts) Add(f Fetch) {
	if f.Status > 0 {
		c.Fetched++
	}
	switch Of(f) {
	case New:
		c.New++
	case Changed:
		c.Changed++
	case Unchanged:
		c.Unchanged++
		if f.Stored {
			c.Trivial++
		}
	case NotModified:
		c.NotModified++
	case NotFound:
		c.NotFound++
	case Redirect:
		c.Redirects++
	case Error:
		c.Errors++
	default:
		c.Other++
	}
}
