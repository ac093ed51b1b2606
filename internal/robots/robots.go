package robots

import (
	"slices"
	"strings"
	"time"
)

// MaxSize is the number of bytes of a robots.txt that are parsed; RFC 9309 §2.5 asks crawlers to
// parse at least 500 KiB, and reading no more bounds the memory and time a hostile file can cost.
const MaxSize = 500 << 10

// robotsPath is the one path every policy allows (RFC 9309 §2.2.2): fetching the policy itself.
const robotsPath = "/robots.txt"

// policy says whether a Rules was parsed from a file or stands for a blanket decision.
type policy uint8

const (
	policyParsed policy = iota // the zero value, like an empty file, allows everything
	policyAllowAll
	policyDisallowAll
)

// Rules is the parsed policy of one host; immutable and safe for concurrent use.
//
// The zero Rules, like an empty robots.txt, allows everything. A nil *Rules disallows everything
// but /robots.txt, so that a policy that was never obtained fails safe.
type Rules struct {
	policy policy
	// agents maps a lower-case product token, or "*", to the groups that name it, in file order.
	// Groups are shared between agents named in the same group rather than copied, so that many
	// User-agent lines over many rules cannot multiply memory.
	agents   map[string][]*group
	sitemaps []string
}

// group is one group of a robots.txt: the rules and crawl-delay that follow its User-agent lines.
type group struct {
	rules    []rule // sorted by rankBefore once parsing is done
	delay    time.Duration
	hasDelay bool
}

var (
	allowAll    = &Rules{policy: policyAllowAll}
	disallowAll = &Rules{policy: policyDisallowAll}
)

// AllowAll returns a policy that allows everything, as RFC 9309 §2.3.1.3 asks when robots.txt is
// unavailable (a 4xx status).
func AllowAll() *Rules { return allowAll }

// DisallowAll returns a policy that allows nothing but /robots.txt, as RFC 9309 §2.3.1.4 asks
// when robots.txt is unreachable (a 5xx status or a network error).
func DisallowAll() *Rules { return disallowAll }

// FromStatus rebuilds the policy of a fetch from its HTTP status and body: a 2xx body is parsed, a
// 4xx means allow all, and anything else, including 0 for a network error, means disallow all.
//
// 429 Too Many Requests is the one 4xx treated as unreachable: the server is asking us to slow
// down, and reading it as "no robots.txt" would have us crawl everything at once.
func FromStatus(status int, body []byte) *Rules {
	switch outcomeOf(status) {
	case Parsed:
		return Parse(body)
	case Unavailable:
		return AllowAll()
	default:
		return DisallowAll()
	}
}

// outcomeOf classifies a final HTTP status; FromStatus and Fetch share it so they cannot disagree.
func outcomeOf(status int) Outcome {
	switch {
	case status >= 200 && status <= 299:
		return Parsed
	case status == 429:
		return Unreachable
	case status >= 400 && status <= 499:
		return Unavailable
	default:
		return Unreachable
	}
}

// Allowed reports whether agent may fetch pathQuery. agent is the crawler's product token, e.g.
// "strata" (see ProductToken), not its whole User-Agent header. pathQuery is the URL's path plus
// "?query" if there is one, escaped or not; an empty path means "/", and a fragment is ignored.
func (r *Rules) Allowed(agent, pathQuery string) bool {
	path := preparePath(pathQuery)
	if path == robotsPath {
		return true
	}
	if r == nil {
		return false
	}
	switch r.policy {
	case policyAllowAll:
		return true
	case policyDisallowAll:
		return false
	}
	bestLen, bestAllow := -1, true
	for _, g := range r.groupsFor(agent) {
		// Rules are sorted longest first, Allow before Disallow at equal length, so the first
		// match is this group's winner and the loop can stop as soon as no rule can beat the
		// winner of an earlier group.
		for i := range g.rules {
			ru := &g.rules[i]
			if ru.length < bestLen || (ru.length == bestLen && (bestAllow || !ru.allow)) {
				break
			}
			if ru.matches(path) {
				bestLen, bestAllow = ru.length, ru.allow
				break
			}
		}
	}
	return bestAllow
}

// CrawlDelay returns the Crawl-delay that applies to agent, if the file gives one. Only the
// groups that decide Allowed for agent count: a delay in the "*" group does not apply to an agent
// that has its own group. If those groups give several, the largest is returned.
func (r *Rules) CrawlDelay(agent string) (time.Duration, bool) {
	if r == nil || r.policy != policyParsed {
		return 0, false
	}
	var delay time.Duration
	found := false
	for _, g := range r.groupsFor(agent) {
		if g.hasDelay && (!found || g.delay > delay) {
			delay, found = g.delay, true
		}
	}
	return delay, found
}

// Sitemaps returns the values of the file's Sitemap lines, wherever they appear, in file order.
// The slice is a copy, so the caller may keep or change it.
func (r *Rules) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// groupsFor returns the groups that apply to agent: those naming it, else those naming "*".
func (r *Rules) groupsFor(agent string) []*group {
	key := strings.ToLower(strings.TrimSpace(agent))
	if gs, ok := r.agents[key]; ok && key != "" {
		return gs
	}
	return r.agents["*"]
}

// ProductToken returns the product token at the start of a User-Agent string: its leading run of
// letters, digits, '-' and '_', after any leading blanks. It takes
// "strata/0.1 (+https://example.org/bot)" to "strata", and a string that does not start with a
// token, such as "" or "ツ", to "". RFC 9309 §2.2.1 matches groups against this token.
func ProductToken(userAgent string) string {
	s := strings.TrimLeft(userAgent, " \t")
	i := 0
	for i < len(s) && isTokenByte(s[i]) {
		i++
	}
	return s[:i]
}

// isTokenByte reports whether c may appear in a product token. RFC 9309 allows only letters, '-'
// and '_'; digits are accepted too because real crawler names contain them.
func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
