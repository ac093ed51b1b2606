package robots

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNormalise(t *testing.T) {
	tests := []struct {
		name, in string
		isRule   bool
		want     string
	}{
		// The table of RFC 9309 §2.2.2: "Path" to "Path to Match".
		{"rfc plain query", "/foo/bar?baz=quz", false, "/foo/bar?baz=quz"},
		{"rfc reserved in query", "/foo/bar?baz=https://foo.bar", false, "/foo/bar?baz=https%3A%2F%2Ffoo.bar"},
		{"rfc non-ASCII", "/foo/bar/\u30c4", false, "/foo/bar/%E3%83%84"},
		{"rfc encoded non-ASCII", "/foo/bar/%E3%83%84", false, "/foo/bar/%E3%83%84"},
		{"rfc encoded unreserved", "/foo/bar/%62%61%7A", false, "/foo/bar/baz"},

		{"unchanged", "/a/b.html?x=1&y=2", false, "/a/b.html?x=1&y=2"},
		{"tilde", "/%7Ejoe", false, "/~joe"},
		{"lower-case hex", "/a%3cb%2f", false, "/a%3Cb%2F"},
		{"lower-case non-ASCII escape", "/%e3%83%84", false, "/%E3%83%84"},
		{"stray percent", "/100%", false, "/100%25"},
		{"percent with one hex digit", "/%4", false, "/%254"},
		{"percent with bad hex", "/%zz", false, "/%25zz"},
		{"escaped percent stays", "/%25", false, "/%25"},
		{"no double decoding", "/%2541", false, "/%2541"},
		{"space and controls", "/a b\t\x01\x7f", false, "/a%20b%09%01%7F"},
		{"unsafe characters", "/\"<>[\\]^`{|}", false, "/%22%3C%3E%5B%5C%5D%5E%60%7B%7C%7D"},
		{"star in path", "/a*b", false, "/a%2Ab"},
		{"dollar in path", "/a$", false, "/a%24"},
		{"star in rule", "/a*b", true, "/a*b"},
		{"dollar in rule", "/a$b", true, "/a%24b"},
		{"reserved in path kept", "/a:b@c;d=e+f,g!h'i(j)k&l", false, "/a:b@c;d=e+f,g!h'i(j)k&l"},
		{"second question mark", "/a?b?c", false, "/a?b%3Fc"},
		{"at and colon in query", "/a?u=x@y:z", false, "/a?u=x%40y%3Az"},
		{"encoded slash in path kept", "/a%2Fb", false, "/a%2Fb"},
		{"invalid UTF-8", "/\xff", false, "/%FF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := normalise(tc.in, tc.isRule)
			if got != tc.want {
				t.Errorf("normalise(%q, %v) = %q, want %q", tc.in, tc.isRule, got, tc.want)
			}
			if again := normalise(got, tc.isRule); again != got {
				t.Errorf("not idempotent: normalise(%q) = %q", got, again)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern  string
		anchored bool
		path     string
		want     bool
	}{
		{"/a", false, "/a", true},
		{"/a", false, "/ab", true},
		{"/a", false, "/", false},
		{"/a", false, "/b/a", false}, // matching starts at the first octet
		{"/a", true, "/a", true},
		{"/a", true, "/ab", false},
		{"*", false, "/anything", true},
		{"*", false, "", true},
		{"*.gif", true, "/x.gif", true},
		{"*.gif", true, "/x.gif.bak", false},
		{"*.gif", true, "/x.gif/y.gif", true},
		{"/*.php", false, "/index.php?x", true},
		{"/a*b", false, "/x/a/b", false},
		{"/a*b", false, "/a/b", true},
		{"/a*b*c", false, "/abc", true},
		{"/a*b*c", false, "/acb", false},
		{"/a*b*c", true, "/abcc", true},
		{"/a*b*c", true, "/abcd", false},
		{"/a*bc", true, "/abcbc", true}, // the last piece must end the path, not be leftmost
		{"/a*", true, "/abc", true},
		{"/a*", true, "/", false},
		{"/*/x", false, "//x", true},
		{"/aa*aa", true, "/aaa", false}, // pieces may not overlap
		{"/aa*aa", true, "/aaaa", true},
	}
	for _, tc := range tests {
		name := tc.pattern
		if tc.anchored {
			name += "$"
		}
		t.Run(name+" "+tc.path, func(t *testing.T) {
			if got := globMatch(tc.pattern, tc.anchored, tc.path); got != tc.want {
				t.Errorf("globMatch(%q, %v, %q) = %v, want %v", tc.pattern, tc.anchored, tc.path, got, tc.want)
			}
			if ref := refMatch(tc.pattern, tc.anchored, tc.path); ref != tc.want {
				t.Errorf("refMatch(%q, %v, %q) = %v, want %v (the test's own reference is wrong)",
					tc.pattern, tc.anchored, tc.path, ref, tc.want)
			}
		})
	}
}

// refMatch is an obviously correct, quadratic dynamic-programming matcher that globMatch is
// checked against here and in FuzzGlob.
func refMatch(pattern string, anchored bool, s string) bool {
	if !anchored {
		pattern += "*"
	}
	// ok[j]: pattern[:i] matches s[:j], for the current i.
	ok := make([]bool, len(s)+1)
	ok[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(s)+1)
		if pattern[i] == '*' {
			seen := false
			for j := 0; j <= len(s); j++ {
				seen = seen || ok[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(s); j++ {
				next[j] = ok[j-1] && s[j-1] == pattern[i]
			}
		}
		ok = next
	}
	return ok[len(s)]
}

func TestNewRule(t *testing.T) {
	tests := []struct {
		value    string
		pattern  string
		anchored bool
		length   int
	}{
		{"/a", "/a", false, 2},
		{"/a$", "/a", true, 3},
		{"*", "*", false, 1},
		{"*.gif$", "*.gif", true, 6},
		{"a/b", "/a/b", false, 4}, // a forgotten leading slash
		{"/a**b", "/a*b", false, 5},
		{"/~a", "/~a", false, 3},
		{"/%7Ea", "/~a", false, 3}, // ranked by the normalised rule, so both spellings tie
		{"/\u30c4", "/%E3%83%84", false, 10},
		{"/a$$", "/a%24", true, 6},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			r := newRule(tc.value, false)
			if r.pattern != tc.pattern || r.anchored != tc.anchored || r.length != tc.length {
				t.Errorf("newRule(%q) = {%q, anchored %v, length %d}, want {%q, %v, %d}",
					tc.value, r.pattern, r.anchored, r.length, tc.pattern, tc.anchored, tc.length)
			}
		})
	}
}

func TestParseDelay(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10", 10 * time.Second, true},
		{"2.5", 2500 * time.Millisecond, true},
		{"0", 0, true},
		{"0.1", 100 * time.Millisecond, true},
		{".5", 500 * time.Millisecond, true},
		{"5.", 5 * time.Second, true},
		{"99999999999999999999999", maxDelay, true},
		{"1" + strings.Repeat("0", 400), maxDelay, true},
		{"", 0, false},
		{".", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1e3", 0, false},
		{"soon", 0, false},
		{"10 seconds", 0, false},
		{"1.2.3", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"0x10", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseDelay(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseDelay(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCrawlDelay(t *testing.T) {
	// Every group has a rule: a group holding only a Crawl-delay would not end before the next
	// User-agent line, and would merge with it (see TestDeviation04).
	const body = "User-agent: *\n" +
		"Disallow: /tmp\n" +
		"Crawl-delay: 3\n" +
		"\n" +
		"User-agent: strata\n" +
		"Disallow: /private\n" +
		"Crawl-delay: 2.5\n" +
		"\n" +
		"User-agent: nodelay\n" +
		"Disallow: /x\n" +
		"\n" +
		"User-agent: badbot\n" +
		"Crawl-delay: soon\n" +
		"Disallow: /\n" +
		"\n" +
		"User-agent: twice\n" +
		"Crawl-delay: 1\n" +
		"Disallow: /a\n" +
		"User-agent: twice\n" +
		"crawldelay: 7\n" +
		"Crawl-delay: 4\n"
	r := Parse([]byte(body))
	tests := []struct {
		agent string
		want  time.Duration
		ok    bool
	}{
		{"strata", 2500 * time.Millisecond, true},
		{"STRATA", 2500 * time.Millisecond, true},
		{"other", 3 * time.Second, true},      // falls back to "*"
		{"nodelay", 0, false},                 // has its own group, so "*"'s delay does not apply
		{"badbot", 0, false},                  // invalid value ignored, the group's rules kept
		{"twice", 7 * time.Second, true},      // merged groups: the largest delay
		{"", 3 * time.Second, true},           // an empty agent obeys "*"
		{"strata/1.0", 3 * time.Second, true}, // not a product token: names no group
		{"  strata ", 2500 * time.Millisecond, true},
	}
	for _, tc := range tests {
		t.Run(tc.agent, func(t *testing.T) {
			got, ok := r.CrawlDelay(tc.agent)
			if got != tc.want || ok != tc.ok {
				t.Errorf("CrawlDelay(%q) = %v, %v; want %v, %v", tc.agent, got, ok, tc.want, tc.ok)
			}
		})
	}
	if r.Allowed("badbot", "/x") {
		t.Error("badbot's Disallow was lost with its invalid Crawl-delay")
	}
	for _, blanket := range []*Rules{AllowAll(), DisallowAll(), nil} {
		if d, ok := blanket.CrawlDelay("strata"); ok || d != 0 {
			t.Errorf("CrawlDelay on a blanket policy = %v, %v; want 0, false", d, ok)
		}
	}
}

func TestParseDetails(t *testing.T) {
	tests := []struct {
		name   string
		robots string
		checks []verdict
	}{
		{
			name:   "typos are accepted",
			robots: "useragent: strata\ndisalow: /a\ndissallow: /b\nUser agent: other\ndisallow: /c\n",
			checks: []verdict{{"strata", "/a", false}, {"strata", "/b", false}, {"other", "/c", false}, {"strata", "/c", true}},
		},
		{
			name:   "agent with version",
			robots: "User-agent: Strata/2.0\nDisallow: /\n",
			checks: []verdict{{"strata", "/x", false}},
		},
		{
			name:   "agent is not a prefix",
			robots: "User-agent: strat\nDisallow: /\nUser-agent: stratabot\nDisallow: /\n",
			checks: []verdict{{"strata", "/x", true}},
		},
		{
			name:   "star must stand alone",
			robots: "User-agent: *bot\nDisallow: /\n",
			checks: []verdict{{"strata", "/x", true}, {"*bot", "/x", true}},
		},
		{
			name:   "empty user-agent value keeps its rules out of other groups",
			robots: "User-agent: strata\nDisallow: /a\nUser-agent:\nDisallow: /b\n",
			checks: []verdict{{"strata", "/a", false}, {"strata", "/b", true}},
		},
		{
			name:   "junk lines are skipped one by one",
			robots: "<html>\nUser-agent: *\n\x00\x01garbage\nno colon here at all\n: empty name\nDisallow: /x\n</html>\n",
			checks: []verdict{{"strata", "/x", false}, {"strata", "/y", true}},
		},
		{
			name:   "whitespace around names and values",
			robots: "  User-agent  :  strata  \n\tDisallow\t:\t/x\t\n",
			checks: []verdict{{"strata", "/x", false}},
		},
		{
			name:   "missing colon needs a known name and a value",
			robots: "User-agent strata\nDisallow\nDisallow /x\nforbid /y\n",
			checks: []verdict{{"strata", "/x", false}, {"strata", "/y", true}, {"strata", "/", true}},
		},
		{
			name:   "value with colons",
			robots: "User-agent: *\nDisallow: /a:b\n",
			checks: []verdict{{"strata", "/a:b", false}, {"strata", "/a%3Ab", true}},
		},
		{
			name:   "path forms",
			robots: "User-agent: *\nDisallow: /p\n",
			checks: []verdict{
				{"strata", "", true},
				{"strata", "p", false}, // a missing leading slash is added
				{"strata", "/p#frag", false},
				{"strata", "?q", true},
				{"strata", "/robots.txt", true},
				{"strata", "/robots.%74xt", true}, // the same URL, spelt with an escape
			},
		},
		{
			name:   "query only",
			robots: "User-agent: *\nDisallow: /*?\n",
			checks: []verdict{{"strata", "/a?b=1", false}, {"strata", "?x", false}, {"strata", "/a", true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.robots))
			for _, c := range tc.checks {
				if got := r.Allowed(c.agent, c.path); got != c.allowed {
					t.Errorf("Allowed(%q, %q) = %v, want %v", c.agent, c.path, got, c.allowed)
				}
			}
		})
	}
}

func TestFromStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		status       int
		privateAllow bool
		publicAllow  bool
	}{
		{200, false, true},
		{204, false, true},
		{299, false, true},
		{400, true, true},
		{401, true, true},
		{403, true, true},
		{404, true, true},
		{410, true, true},
		{429, false, false}, // too many requests: back off, as for a 5xx
		{500, false, false},
		{503, false, false},
		{599, false, false},
		{0, false, false},
		{100, false, false},
		{304, false, false},
		{600, false, false},
		{-1, false, false},
	}
	for _, tc := range tests {
		t.Run("status "+strconv.Itoa(tc.status), func(t *testing.T) {
			r := FromStatus(tc.status, body)
			if got := r.Allowed("strata", "/private"); got != tc.privateAllow {
				t.Errorf("Allowed(/private) = %v, want %v", got, tc.privateAllow)
			}
			if got := r.Allowed("strata", "/public"); got != tc.publicAllow {
				t.Errorf("Allowed(/public) = %v, want %v", got, tc.publicAllow)
			}
			if !r.Allowed("strata", "/robots.txt") {
				t.Error("/robots.txt disallowed")
			}
		})
	}
}

func TestBlankets(t *testing.T) {
	var zero Rules
	tests := []struct {
		name  string
		rules *Rules
		want  bool
	}{
		{"AllowAll", AllowAll(), true},
		{"DisallowAll", DisallowAll(), false},
		{"nil fails safe", nil, false},
		{"zero value is an empty file", &zero, true},
		{"empty file", Parse(nil), true},
		{"whitespace file", Parse([]byte(" \n\t\r\n")), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rules.Allowed("strata", "/x"); got != tc.want {
				t.Errorf("Allowed(/x) = %v, want %v", got, tc.want)
			}
			if !tc.rules.Allowed("strata", "/robots.txt") {
				t.Error("/robots.txt disallowed")
			}
			if s := tc.rules.Sitemaps(); len(s) != 0 {
				t.Errorf("Sitemaps() = %q, want none", s)
			}
		})
	}
}

func TestCapSize(t *testing.T) {
	line := "Disallow: /x\n"
	tests := []struct {
		name string
		body string
		want int // length kept
	}{
		{"small", "abc", 3},
		{"just under", strings.Repeat("a", MaxSize-1), MaxSize - 1},
		{"exactly, ending in newline", strings.Repeat("a", MaxSize-1) + "\n", MaxSize},
		{"exactly, cut line dropped", strings.Repeat(line, MaxSize/len(line)) + strings.Repeat("b", MaxSize%len(line)),
			MaxSize / len(line) * len(line)},
		{"over, cut line dropped", strings.Repeat(line, MaxSize), MaxSize / len(line) * len(line)},
		{"over, CR endings", strings.Repeat("Disallow: /x\r", MaxSize), MaxSize / len(line) * len(line)},
		{"one huge line", strings.Repeat("a", MaxSize+1), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(capSize([]byte(tc.body))); got != tc.want {
				t.Errorf("len(capSize) = %d, want %d", got, tc.want)
			}
		})
	}
}
