// Package filter decides, for each URL strata discovers, whether to crawl it.
//
// Before a URL enters the URL table, strata asks one Filter (Bouras et al., section 4: "a single crawl
// method that takes a URL and returns a boolean value"). That filter is built from small built-in
// filters — restricting by scheme, host, domain, URL prefix, path glob, regular expression, file
// extension, query parameters, URL length, path depth, repeated path segments and link level — and
// from custom expressions (see Expr), combined with All (conjunction), Any (disjunction) and Not
// (negation) to any depth. FromConfig builds the same tree from the [filter] table of the TOML
// configuration; Default is the filter used when the user configures none.
//
// Every Decision carries a one-line Reason naming the chain of filters that decided, for example
//
//	all[2] not: host "ads.example.com" matched
//
// so an operator who spots a crawler trap can see why a URL was let in and which rule to tighten.
//
// Some filters rewrite rather than judge: the query filter can strip tracking and session
// parameters, returning the rewritten URL in Decision.URL. All passes the rewritten URL on to the
// filters after it, so a length limit placed after stripping measures the stripped URL.
//
// Filters see URLs already normalised by internal/urlnorm: lower-case scheme and host, punycode host
// names, no default port, normalised percent-encoding. Paths and queries are matched in that escaped
// form, so "/café" is seen as "/caf%C3%A9"; glob patterns are normalised the same way when loaded.
//
// Every Filter in this package is immutable once built, safe for concurrent use and pure: Decide does
// no I/O, reads no clock and returns the same Decision for the same Input.
package filter

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Input is what a filter decides on.
type Input struct {
	URL   *url.URL // normalised by internal/urlnorm; never modified by a filter
	Level int      // the level the URL would get (links go down levels; see Bouras et al.)
	Seed  bool     // the user added it as a seed
	// SeedDomains is the set of registrable domains of the seeds (for the default "stay on seed
	// domains" rule); the caller fills it once per run, with keys made by RegistrableDomain (see
	// DomainSet).
	SeedDomains map[string]bool
}

// Decision is a filter's verdict on one Input.
type Decision struct {
	Accept bool
	// Reason is the chain of filters that decided, e.g. `all[2] not: host "ads.example.com" matched`:
	// readable, one line.
	Reason string
	// URL is the URL to store instead of Input.URL when a filter rewrote it (stripped query
	// parameters); nil means unchanged. It is only set when Accept is true, and it is a new value:
	// Input.URL is never modified.
	URL *url.URL
}

// Filter decides whether strata crawls a URL. Implementations must be safe for concurrent use and
// pure (no I/O, no clock), so that a URL's fate depends only on the Input.
type Filter interface {
	Decide(in Input) Decision
}

func accept(reason string) Decision { return Decision{Accept: true, Reason: reason} }
func reject(reason string) Decision { return Decision{Reason: reason} }

var noURL = reject("no URL")

// All accepts a URL when every filter accepts it (conjunction), asking them in order and stopping at
// the first that rejects; the reason is then that filter's, prefixed with its index: `all[2] …`. A
// URL rewritten by one filter is what the filters after it see, and the final rewrite is returned.
// All with no filters accepts everything.
func All(fs ...Filter) Filter {
	return &allFilter{fs: append([]Filter(nil), fs...), indexed: true}
}

// allFilter is All; indexed is false for the implicit conjunction of a TOML table with several
// filter keys, whose children name themselves (`max_depth 6: …`) and have no meaningful index.
type allFilter struct {
	fs      []Filter
	indexed bool
}

func (a *allFilter) label(i int) string {
	if !a.indexed {
		return ""
	}
	return "all[" + strconv.Itoa(i) + "] "
}

func (a *allFilter) Decide(in Input) Decision {
	var rewritten *url.URL
	var notes []string
	for i, f := range a.fs {
		d := f.Decide(in)
		if !d.Accept {
			return reject(a.label(i) + d.Reason)
		}
		if d.URL != nil {
			in.URL = d.URL
			rewritten = d.URL
			notes = append(notes, a.label(i)+d.Reason)
		}
	}
	reason := "all: " + strconv.Itoa(len(a.fs)) + " accepted"
	if len(notes) > 0 {
		reason += " (" + strings.Join(notes, "; ") + ")"
	}
	return Decision{Accept: true, Reason: reason, URL: rewritten}
}

// Any accepts a URL when at least one filter accepts it (disjunction), asking them in order and
// stopping at the first that accepts; its Decision (including any rewritten URL) is returned with
// the reason prefixed `any[i] `. When none accepts, the reason lists every filter's. Any with no
// filters rejects everything.
func Any(fs ...Filter) Filter {
	return &anyFilter{fs: append([]Filter(nil), fs...)}
}

type anyFilter struct{ fs []Filter }

func (a *anyFilter) Decide(in Input) Decision {
	reasons := make([]string, 0, len(a.fs))
	for i, f := range a.fs {
		d := f.Decide(in)
		if d.Accept {
			d.Reason = "any[" + strconv.Itoa(i) + "] " + d.Reason
			return d
		}
		reasons = append(reasons, "["+strconv.Itoa(i)+"] "+d.Reason)
	}
	return reject("any: none accepted (" + strings.Join(reasons, "; ") + ")")
}

// Not inverts f (negation): it accepts what f rejects and rejects what f accepts, with the reason
// `not: ` followed by f's. Not never rewrites a URL.
func Not(f Filter) Filter { return notFilter{f} }

type notFilter struct{ f Filter }

func (n notFilter) Decide(in Input) Decision {
	d := n.f.Decide(in)
	return Decision{Accept: !d.Accept, Reason: "not: " + d.Reason}
}

// Named labels f so that reasons read `[name] …`; the TOML form is a name key beside the filter.
func Named(name string, f Filter) Filter { return namedFilter{"[" + oneLine(name) + "] ", f} }

type namedFilter struct {
	prefix string
	f      Filter
}

func (n namedFilter) Decide(in Input) Decision {
	d := n.f.Decide(in)
	d.Reason = n.prefix + d.Reason
	return d
}

// RegistrableDomain returns the registrable domain ("eTLD+1") of host according to the public
// suffix list: "www.example.co.uk" → "example.co.uk", "alice.github.io" → "alice.github.io". A port
// and a trailing dot are ignored and the result is lower case. IP addresses are returned as they are
// (IPv6 without brackets), and so are hosts that have no registrable domain: a public suffix itself
// ("co.uk") or a single-label name ("localhost").
func RegistrableDomain(host string) string {
	h := strings.TrimRight(strings.ToLower(stripPort(host)), ".")
	if h == "" {
		return ""
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return h
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}

// DomainSet returns the set of registrable domains of hosts (host names, or host:port), for
// Input.SeedDomains.
func DomainSet(hosts ...string) map[string]bool {
	m := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		if d := RegistrableDomain(h); d != "" {
			m[d] = true
		}
	}
	return m
}

// stripPort removes a port from host ("example.com:8080", "[::1]:8080") and the brackets of an IPv6
// literal; a bare IPv6 address is returned unchanged.
func stripPort(host string) string {
	if strings.HasPrefix(host, "[") {
		if i := strings.IndexByte(host, ']'); i > 0 {
			return host[1:i]
		}
		return host
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.IndexByte(host, ':') == i {
		return host[:i]
	}
	return host
}

// hostname is the URL's host name without port or brackets, lower case, without a trailing dot.
func hostname(u *url.URL) string {
	return strings.TrimRight(strings.ToLower(u.Hostname()), ".")
}

// q quotes s for a reason: one line, and at most about 100 bytes of it.
func q(s string) string {
	const max = 100
	if len(s) > max {
		cut := max
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// qlist quotes a list for a reason: one item bare, several in brackets, long lists shortened.
func qlist(items []string) string {
	if len(items) == 1 {
		return q(items[0])
	}
	const show = 3
	parts := make([]string, 0, show+1)
	for i, it := range items {
		if i == show {
			parts = append(parts, fmt.Sprintf("…+%d", len(items)-show))
			break
		}
		parts = append(parts, q(it))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// oneLine collapses runs of white space (including newlines) into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
