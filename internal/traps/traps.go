// Package traps keeps a crawl out of crawler traps that URL filters cannot see coming: endless
// calendars, counters that step forever, and URL prefixes that keep producing the same page under new
// names (Bouras et al., section 4, where an operator notices traps by a site's abnormal number of
// documents; here strata notices them itself).
//
// A Guard lives for one run. It admits or refuses each newly found URL: a domain may gain at most
// MaxNewPerDomain new URLs per run and hold at most MaxURLsPerDomain; a URL shape (digits replaced, the
// query reduced to its parameter names) whose numbers step by a constant amount across many new URLs
// is a calendar or counter and is refused for the rest of the run; and a URL prefix whose new pages
// turn out to be mostly duplicates of each other is throttled. Every defence that fires is reported
// once, for the store and for strata traps.
package traps

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Config sets the Guard's limits; zero fields take the defaults.
type Config struct {
	MaxNewPerDomain  int     // new URLs admitted per domain per run; default 5,000
	MaxURLsPerDomain int     // URLs a domain may have in the table; default 100,000
	StepAfter        int     // new URLs of one shape in a run before stepping is checked; default 30
	StepShare        float64 // share of gaps that must equal the commonest gap; default 0.7
	DupAfter         int     // new pages of a prefix fetched before novelty is judged; default 20
	DupShare         float64 // share of duplicates that throttles the prefix; default 0.8
}

func (c *Config) defaults() {
	if c.MaxNewPerDomain <= 0 {
		c.MaxNewPerDomain = 5000
	}
	if c.MaxURLsPerDomain <= 0 {
		c.MaxURLsPerDomain = 100_000
	}
	if c.StepAfter <= 0 {
		c.StepAfter = 30
	}
	if c.StepShare <= 0 {
		c.StepShare = 0.7
	}
	if c.DupAfter <= 0 {
		c.DupAfter = 20
	}
	if c.DupShare <= 0 {
		c.DupShare = 0.8
	}
}

// Event is a defence that fired.
type Event struct {
	Domain  string
	Kind    string // max_new_per_domain, max_urls_per_domain, pattern, duplicates
	Pattern string // the shape or prefix concerned, if any
	Detail  string
}

// Guard decides admissions for one run. It is safe for concurrent use.
type Guard struct {
	cfg Config

	mu        sync.Mutex
	newCount  map[string]int    // per domain, this run
	total     map[string]int    // per domain, in the table
	capped    map[string]string // domain → the cap it tripped
	shapes    map[string]*shape
	prefixes  map[string]*prefix
	throttled map[string]bool // prefixes
}

type shape struct {
	count   int
	numbers []int64 // the numbers in the URLs of this shape, up to a bound
	checked int     // count at the last check
	blocked bool
}

type prefix struct {
	pages  int
	dups   int
	hashes map[string]bool
}

// New returns a Guard; total gives the URLs each domain holds already.
func New(cfg Config, total map[string]int) *Guard {
	cfg.defaults()
	if total == nil {
		total = map[string]int{}
	}
	return &Guard{cfg: cfg, newCount: map[string]int{}, total: total, capped: map[string]string{},
		shapes: map[string]*shape{}, prefixes: map[string]*prefix{}, throttled: map[string]bool{}}
}

// Admit reports whether u, newly found on page from of domain, may join the table, and the event to
// record when a defence fires for the first time. Call Added after the URL was really inserted.
//
// Stepping is judged only on self-similar discoveries — a URL found on a page of its own shape, as
// each day of a calendar links to the next — so that an index listing /thread/1 … /thread/500 is
// not mistaken for a trap.
func (g *Guard) Admit(domain string, u, from *url.URL) (bool, *Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.capped[domain]; ok {
		return false, nil
	}
	if g.newCount[domain] >= g.cfg.MaxNewPerDomain {
		g.capped[domain] = "max_new_per_domain"
		return false, &Event{Domain: domain, Kind: "max_new_per_domain",
			Detail: fmt.Sprintf("%d new URLs in one run; no more from this domain until the next run", g.cfg.MaxNewPerDomain)}
	}
	if g.total[domain] >= g.cfg.MaxURLsPerDomain {
		g.capped[domain] = "max_urls_per_domain"
		return false, &Event{Domain: domain, Kind: "max_urls_per_domain",
			Detail: fmt.Sprintf("%d URLs in the table; no new ones are admitted", g.cfg.MaxURLsPerDomain)}
	}
	if g.throttled[PrefixOf(u)] {
		return false, nil
	}
	// Only a URL with a number in it can be part of a stepping pattern; keeping no shape for the
	// others bounds the guard's memory by the site's templates rather than by its pages (at 1 M
	// URLs, one shape per digit-free URL was 144 MB of the heap).
	n, numbered := numberOf(u)
	if !numbered {
		return true, nil
	}
	key := Shape(u)
	s := g.shapes[key]
	if s == nil {
		s = &shape{}
		g.shapes[key] = s
	}
	if s.blocked {
		return false, nil
	}
	if from == nil || Shape(from) != key {
		return true, nil
	}
	s.count++
	if len(s.numbers) < 4*g.cfg.StepAfter {
		s.numbers = append(s.numbers, n)
	}
	if s.count >= g.cfg.StepAfter && s.count >= 2*s.checked {
		s.checked = s.count
		if step, ok := stepping(s.numbers, g.cfg.StepShare); ok {
			s.blocked = true
			return false, &Event{Domain: domain, Kind: "pattern", Pattern: key,
				Detail: fmt.Sprintf("%d new URLs of this shape found on pages of the same shape in one run, their numbers stepping by %d (a calendar or counter)", s.count, step)}
		}
	}
	return true, nil
}

// Added records that a URL of domain was inserted.
func (g *Guard) Added(domain string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.newCount[domain]++
	g.total[domain]++
}

// Fetched records the content hash of a page fetched for the first time, and returns an event when
// its prefix turns out to produce mostly duplicates: the prefix is then throttled for the run.
func (g *Guard) Fetched(domain string, u *url.URL, hash string) *Event {
	if hash == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key := PrefixOf(u)
	p := g.prefixes[key]
	if p == nil {
		p = &prefix{hashes: map[string]bool{}}
		g.prefixes[key] = p
	}
	p.pages++
	if p.hashes[hash] {
		p.dups++
	} else {
		p.hashes[hash] = true
	}
	if !g.throttled[key] && p.pages >= g.cfg.DupAfter && float64(p.dups) >= g.cfg.DupShare*float64(p.pages) {
		g.throttled[key] = true
		return &Event{Domain: domain, Kind: "duplicates", Pattern: key,
			Detail: fmt.Sprintf("%d of %d new pages under this prefix were duplicates; no more admitted this run", p.dups, p.pages)}
	}
	return nil
}

// Shape reduces a URL to its pattern: runs of digits become N, and the query becomes its parameter
// names, sorted, each with the shape of its value. /calendar/2026/11?day=22 → host/calendar/N/N?day=N.
func Shape(u *url.URL) string {
	var b strings.Builder
	b.WriteString(u.Host)
	b.WriteString(digitsToN(u.EscapedPath()))
	if u.RawQuery != "" {
		q := u.Query()
		names := make([]string, 0, len(q))
		for k := range q {
			names = append(names, k)
		}
		sort.Strings(names)
		b.WriteByte('?')
		for i, k := range names {
			if i > 0 {
				b.WriteByte('&')
			}
			v := q.Get(k)
			if len(v) > 24 {
				v = "*" // long opaque values (tokens, ids) vary without meaning
			}
			b.WriteString(k + "=" + digitsToN(v))
		}
	}
	return b.String()
}

// PrefixOf is the URL's host and first path segment: the unit whose novelty is judged.
func PrefixOf(u *url.URL) string {
	p := strings.TrimPrefix(u.EscapedPath(), "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	return u.Host + "/" + p
}

func digitsToN(s string) string {
	var b strings.Builder
	inDigits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			if !inDigits {
				b.WriteByte('N')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteByte(c)
	}
	return b.String()
}

// numberOf reads all the digits of a URL's path and query as one number — 2026/11/22 is 20261122 —
// so that consecutive calendar days or counter values differ by a constant step.
func numberOf(u *url.URL) (int64, bool) {
	var digits []byte
	for _, s := range []string{u.EscapedPath(), u.RawQuery} {
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				digits = append(digits, s[i])
			}
		}
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	return n, err == nil
}

// stepping reports whether the distinct numbers, sorted, mostly differ by one common step.
func stepping(numbers []int64, share float64) (int64, bool) {
	seen := map[int64]bool{}
	var xs []int64
	for _, n := range numbers {
		if !seen[n] {
			seen[n] = true
			xs = append(xs, n)
		}
	}
	if len(xs) < 10 {
		return 0, false
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	gaps := map[int64]int{}
	var best int64
	for i := 1; i < len(xs); i++ {
		d := xs[i] - xs[i-1]
		gaps[d]++
		if gaps[d] > gaps[best] {
			best = d
		}
	}
	return best, float64(gaps[best]) >= share*float64(len(xs)-1)
}
