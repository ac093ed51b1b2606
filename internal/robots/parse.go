package robots

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// directive is the kind of a robots.txt line.
type directive uint8

const (
	dirUnknown directive = iota
	dirUserAgent
	dirAllow
	dirDisallow
	dirCrawlDelay
	dirSitemap
)

// directives maps lower-case line names to their kind. Besides the RFC 9309 names and the two
// common extensions it accepts the typos Google's parser accepts, because sites that wrote them
// mean them.
var directives = map[string]directive{
	"user-agent": dirUserAgent,
	"useragent":  dirUserAgent,
	"user agent": dirUserAgent,

	"allow": dirAllow,

	"disallow":  dirDisallow,
	"dissallow": dirDisallow,
	"dissalow":  dirDisallow,
	"disalow":   dirDisallow,
	"diasllow":  dirDisallow,
	"disallaw":  dirDisallow,

	"crawl-delay": dirCrawlDelay,
	"crawldelay":  dirCrawlDelay,
	"crawl delay": dirCrawlDelay,

	"sitemap":  dirSitemap,
	"site-map": dirSitemap,
}

// maxDelay is what an absurdly large Crawl-delay is clamped to: the largest Duration, which the
// caller will cap anyway, instead of an overflowed, possibly negative, conversion.
const maxDelay = time.Duration(math.MaxInt64)

// Parse parses a robots.txt body. It never fails: lines it cannot understand are skipped one by
// one, and only the first MaxSize bytes are read (see the package documentation).
func Parse(body []byte) *Rules {
	body = trimBOM(capSize(body))
	p := parser{rules: &Rules{agents: make(map[string][]*group)}}
	for len(body) > 0 {
		var line []byte
		line, body = nextLine(body)
		p.line(line)
	}
	for _, g := range p.groups {
		slices.SortStableFunc(g.rules, rankBefore)
	}
	return p.rules
}

// parser holds the state of one Parse.
type parser struct {
	rules  *Rules
	groups []*group // every group, in file order
	cur    *group   // the group the next rule goes to; nil before the first User-agent line
	// sawRule records that cur has had an Allow or Disallow line, so that the next User-agent
	// line starts a new group instead of adding an agent to cur (RFC 9309 §2.2).
	sawRule bool
}

// line applies one line of the file, without its line ending.
func (p *parser) line(raw []byte) {
	if i := bytes.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	kind, value, ok := splitLine(raw)
	if !ok {
		return
	}
	switch kind {
	case dirUserAgent:
		if p.cur == nil || p.sawRule {
			p.cur = &group{}
			p.groups = append(p.groups, p.cur)
			p.sawRule = false
		}
		name := agentName(value)
		if name == "" {
			// Still part of the group, so the rules that follow stay with it, but it names
			// no agent those rules could apply to.
			return
		}
		if gs := p.rules.agents[name]; len(gs) == 0 || gs[len(gs)-1] != p.cur {
			p.rules.agents[name] = append(gs, p.cur)
		}
	case dirAllow, dirDisallow:
		if p.cur == nil {
			return // a rule outside any group applies to no one
		}
		p.sawRule = true
		if value == "" {
			return // an empty pattern matches nothing: "Disallow:" allows everything
		}
		p.cur.rules = append(p.cur.rules, newRule(value, kind == dirAllow))
	case dirCrawlDelay:
		if p.cur == nil {
			return
		}
		if d, ok := parseDelay(value); ok && (!p.cur.hasDelay || d > p.cur.delay) {
			p.cur.delay, p.cur.hasDelay = d, true
		}
	case dirSitemap:
		if value != "" {
			p.rules.sitemaps = append(p.rules.sitemaps, value)
		}
	}
}

// splitLine splits a comment-free line into its directive and trimmed value. ok is false for a
// blank line, an unknown name or a line that is not "name: value".
func splitLine(raw []byte) (kind directive, value string, ok bool) {
	line := trimBlanks(raw)
	if len(line) == 0 {
		return dirUnknown, "", false
	}
	var name []byte
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = trimBlanks(line[:i]), string(trimBlanks(line[i+1:]))
	} else {
		// Google's parser accepts a missing colon after a known name ("disallow /"), since
		// the intent is plain; without a value there is nothing to accept.
		i := bytes.IndexAny(line, " \t")
		if i < 0 {
			return dirUnknown, "", false
		}
		name, value = line[:i], string(trimBlanks(line[i+1:]))
	}
	kind, ok = directives[string(bytes.ToLower(name))]
	return kind, value, ok
}

// agentName returns the lower-case product token a User-agent value names: "*" for the global
// group, "" if the value names no valid token.
func agentName(value string) string {
	field := value
	if i := strings.IndexAny(field, " \t"); i >= 0 {
		field = field[:i]
	}
	if field == "*" {
		return "*"
	}
	return strings.ToLower(ProductToken(field))
}

// parseDelay parses a Crawl-delay value: a non-negative decimal number of seconds.
func parseDelay(value string) (time.Duration, bool) {
	digits, dot := 0, false
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	// Only digits and one dot remain, so the only possible error is a range error, for which
	// ParseFloat returns +Inf and the clamp below applies.
	secs, _ := strconv.ParseFloat(value, 64)
	nanos := math.Round(secs * float64(time.Second))
	if nanos >= float64(maxDelay) {
		return maxDelay, true
	}
	return time.Duration(nanos), true
}

// capSize cuts body to MaxSize bytes. A body that reaches MaxSize may have been cut mid-line, by
// us or by the fetch, so its last unterminated line is dropped as well.
func capSize(body []byte) []byte {
	if len(body) < MaxSize {
		return body
	}
	body = body[:MaxSize]
	return body[:bytes.LastIndexAny(body, "\r\n")+1]
}

// trimBOM drops a UTF-8 byte order mark, or a truncated one as Google's parser does, from the
// start of body.
func trimBOM(body []byte) []byte {
	const bom = "\xEF\xBB\xBF"
	for i := len(bom); i > 0; i-- {
		if bytes.HasPrefix(body, []byte(bom[:i])) {
			return body[i:]
		}
	}
	return body
}

// nextLine splits off the first line of body, ended by LF, CRLF or CR.
func nextLine(body []byte) (line, rest []byte) {
	i := bytes.IndexAny(body, "\r\n")
	if i < 0 {
		return body, nil
	}
	line, rest = body[:i], body[i+1:]
	if body[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
		rest = rest[1:]
	}
	return line, rest
}

// trimBlanks trims the whitespace RFC 9309 allows around names and values, plus vertical tab and
// form feed, which some editors leave behind.
func trimBlanks(b []byte) []byte {
	return bytes.Trim(b, " \t\v\f")
}
