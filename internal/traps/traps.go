// Package traps keeps a crawl out of crawler traps that URL filters cannot see coming — endless
// calendars, session ids in URLs, farms of near-identical pages, path loops — by weighing what the
// crawl has seen of each group of URLs before it holds any of them back (Bouras et al., section 4,
// where an operator notices traps by a site's abnormal number of documents; here strata notices
// them itself).
//
// URLs are pooled into units (see [Unit]): a directory, or a URL shape whose numbers, opaque tokens
// and path loops are set aside. For each unit the Guard keeps evidence: how many of its pages were
// fetched and how many of those repeated the text of an earlier one once numbers and dates are set
// aside (package change's Norm), how many of its URLs were found on its own pages, and how many
// link levels it spans. A unit is throttled only on that evidence:
//
//   - duplicates: at least DupAfter pages fetched and DupShare of them near-duplicates (a link
//     farm, facets, session copies);
//   - pattern: a unit that feeds itself — ChainAfter URLs found on its own pages — and grows,
//     either deep (ChainDepth link levels) or wide (ChainAfter more URLs found than fetched), with
//     ChainShare of its pages near-duplicates (a calendar of empty days, a counter, a loop, session
//     ids, a farm whose index is one of its pages).
//
// Numbers that step, however regularly, are not evidence: numbered pages with text of their own are
// content, and the seed's level already bounds how deep any chain of them goes.
//
// A throttled unit's URLs are not refused: its patterned ones (see [Patterned]) join the table held
// (the store keeps them out of the due set), and each run releases a probe, one URL, oldest first. A probe that brings
// text seen before doubles the runs until the next (up to MaxProbeEvery); one that brings new text
// makes the next come a run later, and ClearAfter new texts in a row clear the unit: its URLs are
// released and its evidence starts again. So a defence never makes a page un-crawlable for ever,
// and a site that changes is let back in. The evidence lives in the store between runs; a unit
// with no new evidence for ForgetAfter runs is forgotten.
//
// Besides, a domain may gain at most MaxNewPerDomain new URLs per run and hold at most
// MaxURLsPerDomain. Every defence that fires is reported once, for the store and for strata traps.
package traps

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Config sets the Guard's limits; zero fields take the defaults.
type Config struct {
	MaxNewPerDomain  int // new URLs admitted per domain per run; default 5,000
	MaxURLsPerDomain int // URLs a domain may have in the table; default 100,000

	DupAfter int     // pages of a unit fetched before near-duplicates alone can throttle it; default 20
	DupShare float64 // share of near-duplicates that throttles a unit; default 0.8
	// ChainAfter is both the URLs of a unit found on its own pages and the pages fetched before a
	// self-feeding unit is judged (default 10); ChainDepth the link levels it must span (default 5);
	// ChainShare the share of near-duplicates that throttles it (default 0.5).
	ChainAfter int
	ChainDepth int
	ChainShare float64

	ClearAfter    int // probes with new text in a row that clear a throttled unit; default 5
	MaxProbeEvery int // most runs between two probes of a throttled unit; default 32
	ForgetAfter   int // runs without new evidence after which a unit is forgotten; default 60
}

func (c *Config) defaults() {
	setInt := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	setFloat := func(p *float64, v float64) {
		if *p <= 0 || *p > 1 {
			*p = v
		}
	}
	setInt(&c.MaxNewPerDomain, 5000)
	setInt(&c.MaxURLsPerDomain, 100_000)
	setInt(&c.DupAfter, 20)
	setFloat(&c.DupShare, 0.8)
	setInt(&c.ChainAfter, 10)
	setInt(&c.ChainDepth, 5)
	setFloat(&c.ChainShare, 0.5)
	setInt(&c.ClearAfter, 5)
	setInt(&c.MaxProbeEvery, 32)
	setInt(&c.ForgetAfter, 60)
}

// ForgetBefore is the first run whose evidence a run numbered run still keeps: older evidence is
// forgotten unless its unit holds URLs.
func (c Config) ForgetBefore(run int64) int64 {
	c.defaults()
	return run - int64(c.ForgetAfter)
}

// Event kinds.
const (
	KindMaxNew     = "max_new_per_domain"
	KindMaxURLs    = "max_urls_per_domain"
	KindPattern    = "pattern"    // a self-feeding unit of near-duplicates was throttled
	KindDuplicates = "duplicates" // a unit of near-duplicates was throttled
	KindCleared    = "cleared"    // a throttled unit's probes brought new text: its URLs are released
)

// Event is a defence that fired.
type Event struct {
	Domain  string
	Kind    string // one of the Kind constants
	Pattern string // the unit concerned, if any
	Detail  string
}

// NormCap is how many distinct texts a unit remembers for the near-duplicate check. A trap repeats
// a few texts, which stay among them; a unit of real pages soon has more than it remembers, so a
// page of it rarely matches one and is taken for new, as it should be.
const NormCap = 32

// Evidence is what the crawl has seen of a unit, across runs.
type Evidence struct {
	Judged int // pages fetched for the first time, with text
	Dups   int // of them, the text (numbers and dates aside) of an earlier page of the unit
	Found  int // URLs of the unit that joined the table
	// SelfFound counts those found on a page of the unit itself: a unit that feeds itself.
	SelfFound int
	// MinLevel and MaxLevel are the lowest and highest levels its URLs joined at (when Found > 0):
	// each link followed goes one level down, so their span is how deep the unit goes.
	MinLevel, MaxLevel int
	Norms              []uint64 // the last distinct texts' hashes, at most NormCap
}

// Depth is the link levels the unit spans.
func (e Evidence) Depth() int {
	if e.Found == 0 {
		return 0
	}
	return e.MaxLevel - e.MinLevel
}

// DupShare is the share of the unit's fetched pages that were near-duplicates.
func (e Evidence) DupShare() float64 {
	if e.Judged == 0 {
		return 0
	}
	return float64(e.Dups) / float64(e.Judged)
}

// Rule is what the Guard knows of one unit of a domain: the evidence, and whether it is throttled.
type Rule struct {
	ID     int64 // the store's id; 0 until stored
	Domain string
	Unit   string
	Evidence
	Throttled bool
	Reason    string // KindDuplicates or KindPattern while throttled
	// Streak counts the probes in a row that brought new text; ProbeEvery is the runs between
	// two probes (1 when the evidence is fresh or mixed, doubling with every repeat).
	Streak, ProbeEvery int
	FirstRun, LastRun  int64 // runs of the first and the last evidence
	Since              int64 // run it was throttled in
}

// verdict says whether evidence throttles its unit, and why.
func (c Config) verdict(e Evidence) (string, bool) {
	share := e.DupShare()
	switch {
	case e.Judged >= c.DupAfter && share >= c.DupShare:
		return KindDuplicates, true
	case e.Judged >= c.ChainAfter && e.SelfFound >= c.ChainAfter && share >= c.ChainShare &&
		(e.Depth() >= c.ChainDepth || e.SelfFound >= e.Judged+c.ChainAfter):
		// It feeds itself, repeats itself, and goes deep (a calendar, a counter) or grows faster
		// than it is read (session ids, a loop with two ways down, a farm's index).
		return KindPattern, true
	}
	return "", false
}

// Guard decides admissions for one run and gathers the evidence. It is safe for concurrent use.
type Guard struct {
	cfg Config
	run int64

	mu       sync.Mutex
	newCount map[string]int    // per domain, this run
	total    map[string]int    // per domain, in the table
	capped   map[string]string // domain → the cap it tripped
	units    map[string]*unit  // by unit key
}

type unit struct {
	Rule
	next  int  // where the next distinct text goes in Norms once it is full
	dirty bool // changed this run
}

// New returns a Guard for run; total gives the URLs each domain holds already, rules what earlier
// runs learnt (store order does not matter).
func New(cfg Config, run int64, total map[string]int, rules []Rule) *Guard {
	cfg.defaults()
	if total == nil {
		total = map[string]int{}
	}
	g := &Guard{cfg: cfg, run: run, newCount: map[string]int{}, total: total, capped: map[string]string{},
		units: make(map[string]*unit, len(rules))}
	for _, r := range rules {
		if r.ProbeEvery < 1 {
			r.ProbeEvery = 1
		}
		r.Norms = append([]uint64(nil), r.Norms...)
		g.units[r.Unit] = &unit{Rule: r}
	}
	return g
}

// Decision is the Guard's answer about a newly found URL.
type Decision struct {
	Admit bool // the URL may join the table
	// Hold, when non-zero, is the rule that throttles the URL's unit: the URL joins the table
	// held by it, not due until a probe or the rule's end releases it.
	Hold int64
	unit string
	self bool // found on a page of its own unit
}

// Admit says whether u, newly found on a page of unit fromUnit (Unit of the page; "" for none), may
// join the table, and whether held, and returns the event to record when a cap is reached. Call
// Added once the URL was really inserted.
func (g *Guard) Admit(domain string, u *url.URL, fromUnit string) (Decision, *Event) {
	key := Unit(u)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.capped[domain]; ok {
		return Decision{}, nil
	}
	if g.newCount[domain] >= g.cfg.MaxNewPerDomain {
		g.capped[domain] = KindMaxNew
		return Decision{}, &Event{Domain: domain, Kind: KindMaxNew,
			Detail: fmt.Sprintf("%d new URLs in one run; no more from this domain until the next run", g.cfg.MaxNewPerDomain)}
	}
	if g.total[domain] >= g.cfg.MaxURLsPerDomain {
		g.capped[domain] = KindMaxURLs
		return Decision{}, &Event{Domain: domain, Kind: KindMaxURLs,
			Detail: fmt.Sprintf("%d URLs in the table; no new ones are admitted", g.cfg.MaxURLsPerDomain)}
	}
	d := Decision{Admit: true, unit: key, self: fromUnit == key}
	if un := g.units[key]; un != nil && un.Throttled && Patterned(u) {
		// Until the rule is stored (ID 0) its URLs join due; the crawler holds them then.
		d.Hold = un.ID
	}
	return d, nil
}

// Added records that a URL Admit let in was inserted at level.
func (g *Guard) Added(domain string, d Decision, level int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.newCount[domain]++
	g.total[domain]++
	if d.unit == "" {
		return
	}
	un := g.unitFor(domain, d.unit)
	if un.Found == 0 || level < un.MinLevel {
		un.MinLevel = level
	}
	if un.Found == 0 || level > un.MaxLevel {
		un.MaxLevel = level
	}
	un.Found++
	if d.self {
		un.SelfFound++
	}
	un.touch(g.run)
}

func (g *Guard) unitFor(domain, key string) *unit {
	un := g.units[key]
	if un == nil {
		un = &unit{Rule: Rule{Domain: domain, Unit: key, ProbeEvery: 1, FirstRun: g.run}}
		g.units[key] = un
	}
	return un
}

func (un *unit) touch(run int64) {
	un.LastRun = run
	un.dirty = true
}

// Change is what a fetched page changed about its unit's rule.
type Change struct {
	Event *Event
	// Throttled: the unit has just been throttled; store Rule, tell the Guard its ID (SetID) and
	// hold the unit's URLs. Cleared: its throttle has just ended; store Rule and release them.
	Throttled, Cleared bool
	Rule               Rule
}

// Fetched records the hash of the normalised text (package change's Norm) of a page of u fetched
// for the first time, and says what that changed.
func (g *Guard) Fetched(domain string, u *url.URL, norm uint64) Change {
	key := Unit(u)
	g.mu.Lock()
	defer g.mu.Unlock()
	un := g.unitFor(domain, key)
	dup := un.remember(norm)
	un.Judged++
	if dup {
		un.Dups++
	}
	un.touch(g.run)
	if un.Throttled { // a probe
		if dup {
			un.Streak = 0
			un.ProbeEvery = min(2*un.ProbeEvery, g.cfg.MaxProbeEvery)
			return Change{}
		}
		un.Streak++
		un.ProbeEvery = 1
		if un.Streak < g.cfg.ClearAfter {
			return Change{}
		}
		ev := &Event{Domain: domain, Kind: KindCleared, Pattern: key,
			Detail: fmt.Sprintf("%d probes in a row brought text not seen before under this pattern: its held URLs are released and its evidence starts again", un.Streak)}
		un.Evidence = Evidence{Norms: un.Norms}
		un.Throttled, un.Reason, un.Streak, un.Since, un.next = false, "", 0, 0, len(un.Norms)%NormCap
		return Change{Event: ev, Cleared: true, Rule: un.copy()}
	}
	reason, ok := g.cfg.verdict(un.Evidence)
	if !ok {
		return Change{}
	}
	un.Throttled, un.Reason, un.Since, un.Streak, un.ProbeEvery = true, reason, g.run, 0, 1
	ev := &Event{Domain: domain, Kind: reason, Pattern: key}
	switch reason {
	case KindDuplicates:
		ev.Detail = fmt.Sprintf("%d of %d pages fetched under this pattern repeated an earlier one's text (numbers and dates aside): its URLs are held, one probed per run while they keep repeating it less often",
			un.Dups, un.Judged)
	default:
		ev.Detail = fmt.Sprintf("%d of its URLs were found on its own pages, %d link levels deep, and %d of %d pages fetched repeated an earlier one's text (a calendar, counter, session id or loop): its URLs are held, one probed per run while they keep repeating it less often",
			un.SelfFound, un.Depth(), un.Dups, un.Judged)
	}
	return Change{Event: ev, Throttled: true, Rule: un.copy()}
}

// remember reports whether norm is among the unit's remembered texts, and remembers it if not.
func (un *unit) remember(norm uint64) bool {
	for _, n := range un.Norms {
		if n == norm {
			return true
		}
	}
	if len(un.Norms) < NormCap {
		un.Norms = append(un.Norms, norm)
	} else {
		un.Norms[un.next] = norm
		un.next = (un.next + 1) % NormCap
	}
	return false
}

func (un *unit) copy() Rule {
	r := un.Rule
	r.Norms = append([]uint64(nil), un.Norms...)
	return r
}

// SetID tells the Guard the store's id of a unit's rule, once stored.
func (g *Guard) SetID(key string, id int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if un := g.units[key]; un != nil {
		un.ID = id
	}
}

// Throttled returns the rules that throttle a unit now.
func (g *Guard) Throttled() []Rule {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Rule
	for _, un := range g.units {
		if un.Throttled {
			out = append(out, un.copy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Unit < out[j].Unit })
	return out
}

// Dirty returns what to store at the end of the run: the rules whose evidence changed and is worth
// keeping — a unit that is throttled, that has shown a near-duplicate, or that feeds itself and has
// not yet shown enough distinct pages to be above suspicion — and the ids of stored rules whose
// unit has proved clean (2·DupAfter pages, under a tenth of them repeats), to drop. A unit of
// distinct pages that links only elsewhere is never stored: the table stays as small as what is
// suspicious.
func (g *Guard) Dirty() (keep []Rule, drop []int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, un := range g.units {
		if !un.dirty {
			continue
		}
		un.dirty = false
		clean := !un.Throttled && un.Judged >= 2*g.cfg.DupAfter && un.DupShare() < 0.1
		switch {
		case clean && un.ID != 0:
			drop = append(drop, un.ID)
			un.ID = 0
		case clean:
		case un.Throttled || un.ID != 0 || un.Dups > 0 || un.SelfFound > 0:
			keep = append(keep, un.copy())
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].Unit < keep[j].Unit })
	sort.Slice(drop, func(i, j int) bool { return drop[i] < drop[j] })
	return keep, drop
}

// Shape reduces a URL to its pattern: runs of digits become N; a path segment or query value that
// looks like an opaque token (a session id, a hash) becomes *; a path that comes back to a segment
// it went through (a loop, /a/b/a/b/…) is cut there with …; the query becomes its parameter names,
// sorted, each with the shape of its value. /calendar/2026/11?day=22 → host/calendar/N/N?day=N.
func Shape(u *url.URL) string {
	var b strings.Builder
	b.WriteString(u.Host)
	b.WriteString(shapePath(u.EscapedPath()))
	if u.RawQuery != "" {
		q := u.Query()
		b.WriteByte('?')
		for i, k := range sortedNames(q) {
			if i > 0 {
				b.WriteByte('&')
			}
			v := q.Get(k)
			if len(v) > 24 || opaque(v) {
				v = "*" // long opaque values (tokens, ids) vary without meaning
			}
			b.WriteString(k + "=" + digitsToN(v))
		}
	}
	return b.String()
}

// Patterned reports whether u is one of many a template makes — a number, an opaque token or a loop
// in its path, or a query — rather than a page with a name of its own. Only patterned URLs are
// ever held: /many/about.html in a directory full of /many/N.html is left alone.
func Patterned(u *url.URL) bool {
	if u.RawQuery != "" {
		return true
	}
	p := u.EscapedPath()
	if strings.ContainsAny(p, "0123456789") {
		return true
	}
	return strings.ContainsAny(shapePath(p), "*…")
}

// Unit is the group of URLs whose evidence is pooled: for a URL with a query, its shaped path and
// the query's parameter names (host/page?time); for a loop, its shape (host/loop/… for
// /loop/a/b/a/); otherwise the directory of its shape (host/many/ for /many/7.html, host/*/shop/
// for /(S(8f14e45fceea167a))/shop/item-3.html).
func Unit(u *url.URL) string {
	path := shapePath(u.EscapedPath())
	if u.RawQuery != "" {
		return u.Host + path + "?" + strings.Join(sortedNames(u.Query()), "&")
	}
	if !strings.HasSuffix(path, "/…") {
		path = path[:strings.LastIndexByte(path, '/')+1]
	}
	return u.Host + path
}

func sortedNames(q url.Values) []string {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// shapePath shapes each segment of an escaped path. A path that goes through a segment with a
// letter twice is a loop (a relative link resolved on the page it leads to, again and again):
// whatever comes after its first segment is cut to …, so that /loop/a/b/a/ and /loop/b/a/a/b/ are
// one shape however the loop was walked. It runs for every link a crawl finds, so the common
// path — no loop, no digit — allocates nothing.
func shapePath(p string) string {
	if p == "" {
		return "/"
	}
	if first, ok := loopOf(p); ok {
		return "/" + shapeSeg(first) + "/…"
	}
	if !strings.ContainsAny(p, "0123456789") {
		return p // no number, and a token has digits: nothing to shape
	}
	var b strings.Builder
	b.Grow(len(p))
	for i, s := range strings.Split(p, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(shapeSeg(s))
	}
	return b.String()
}

// loopOf reports whether path p goes through a segment with a letter twice, and returns its first
// segment.
func loopOf(p string) (string, bool) {
	var segs [16]string // most paths have fewer segments; a longer one compares against its first 16
	n := 0
	first := ""
	for rest := strings.TrimPrefix(p, "/"); rest != ""; {
		s, tail, _ := strings.Cut(rest, "/")
		rest = tail
		if first == "" {
			first = s
		}
		if s == "" || !hasLetter(s) {
			continue
		}
		for _, t := range segs[:n] {
			if t == s {
				return first, true
			}
		}
		if n < len(segs) {
			segs[n] = s
			n++
		}
	}
	return "", false
}

func shapeSeg(s string) string {
	if opaque(s) {
		return "*"
	}
	if !strings.ContainsAny(s, "0123456789") {
		return s
	}
	return digitsToN(s)
}

// opaque reports whether s holds a token rather than words and numbers: a run of 16 letters and
// digits or more, with at least 3 digits and a letter (a session id, a hash). release.1.10.html,
// my-post-2024 and windows10installation are not tokens; (S(8f14e45fceea167a)) is, and so is
// (S(823880863bb554280018)): one random hex id in 125 has fewer than three letters, and the pages
// under such ids must pool with the others of their unit.
func opaque(s string) bool {
	run, letters, digits := 0, 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch c := s[i]; {
			case c >= '0' && c <= '9':
				run, digits = run+1, digits+1
				continue
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
				run, letters = run+1, letters+1
				continue
			}
		}
		if run >= 16 && letters >= 1 && digits >= 3 {
			return true
		}
		run, letters, digits = 0, 0, 0
	}
	return false
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
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
