package filter

import (
	"math"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := urlnorm.Parse(raw)
	if err != nil {
		t.Fatalf("urlnorm.Parse(%q): %v", raw, err)
	}
	return u
}

// seeds are the seed domains used by the tests unless a case says otherwise.
var seeds = DomainSet("www.example.edu", "example.co.uk", "news.example.org")

type decideCase struct {
	name    string
	f       Filter
	url     string
	level   int
	seed    bool
	accept  bool
	reason  string // expected Reason: exact unless it starts with "~", then a substring
	rewrite string // expected Decision.URL, "" for none
}

func runCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := mustParse(t, c.url)
			before := u.String()
			d := c.f.Decide(Input{URL: u, Level: c.level, Seed: c.seed, SeedDomains: seeds})
			if d.Accept != c.accept {
				t.Errorf("%s: Accept = %v, want %v (reason %q)", c.url, d.Accept, c.accept, d.Reason)
			}
			if want, ok := strings.CutPrefix(c.reason, "~"); ok {
				if !strings.Contains(d.Reason, want) {
					t.Errorf("%s: Reason = %q, want it to contain %q", c.url, d.Reason, want)
				}
			} else if c.reason != "" && d.Reason != c.reason {
				t.Errorf("%s: Reason = %q\n\t\twant %q", c.url, d.Reason, c.reason)
			}
			if strings.ContainsAny(d.Reason, "\n\r") || d.Reason == "" {
				t.Errorf("%s: Reason %q is not one non-empty line", c.url, d.Reason)
			}
			got := ""
			if d.URL != nil {
				got = d.URL.String()
				if _, err := urlnorm.Parse(got); err != nil {
					t.Errorf("rewritten URL %q does not parse: %v", got, err)
				}
			}
			if got != c.rewrite {
				t.Errorf("%s: rewritten URL = %q, want %q", c.url, got, c.rewrite)
			}
			if d.URL != nil && !d.Accept {
				t.Errorf("rejected with a rewritten URL")
			}
			if u.String() != before {
				t.Errorf("Input.URL modified: %q → %q", before, u.String())
			}
		})
	}
}

func TestBuiltins(t *testing.T) {
	https := must(Scheme("HTTPS"))
	both := must(Scheme("http", "https"))
	host := must(Host("WWW.Example.EDU.", "Bücher.example"))
	domain := must(Domain("example.co.uk", "192.0.2.7", "::1"))
	suffix := must(Suffix("ac.uk"))
	prefix := must(Prefix("HTTPS://Example.edu/News/", "//example.org/docs/"))
	bare := must(Prefix("http://example.com"))
	glob := must(PathGlob("/calendar/**", "/*/print", "/a/**/z", "**/feed", "/café/*"))
	urlRe := must(URLRegex(`[?&]print=1`, `(?i)^https://[^/]*\.EDU/`))
	pathRe := must(PathRegex(`^/(19|20)\d\d/`))
	ext := DenyExtensions(DefaultExtensions()...)
	pdfOnly := DenyExtensions(".PDF")
	strip := must(Query(QueryRules{Strip: DefaultTrackingParams()}))
	rejectQ := must(Query(QueryRules{Reject: []string{"sessionid", "PHPSESSID", "*sid"}, MaxParams: 2}))
	noQuery := must(Query(QueryRules{Reject: []string{"*"}}))
	length := MaxLength(30)
	depth := MaxDepth(2)
	repeat := MaxRepeat(3, 2)
	singles := MaxRepeat(2, 0)
	level := LevelRange(1, 3)
	levelMax := LevelRange(math.MinInt, 2)

	runCases(t, []decideCase{
		// scheme
		{name: "scheme/https", f: https, url: "https://a.example/", accept: true, reason: `scheme "https" matched`},
		{name: "scheme/http-rejected", f: https, url: "http://a.example/", reason: `scheme "https" did not match "http"`},
		{name: "scheme/both", f: both, url: "HTTP://a.example/", accept: true},

		// host: exact, normalised, port ignored
		{name: "host/exact", f: host, url: "https://www.example.edu/x", accept: true, reason: `host "www.example.edu" matched`},
		{name: "host/port-ignored", f: host, url: "https://www.example.edu:8443/x", accept: true},
		{name: "host/punycode", f: host, url: "http://bücher.example/", accept: true, reason: `host "xn--bcher-kva.example" matched`},
		{name: "host/trailing-dot", f: host, url: "http://www.example.edu./", accept: true},
		{name: "host/subdomain-rejected", f: host, url: "https://cs.www.example.edu/", reason: `host ["www.example.edu" "xn--bcher-kva.example"] did not match host "cs.www.example.edu"`},
		{name: "host/parent-rejected", f: host, url: "https://example.edu/"},

		// domain: registrable-domain aware
		{name: "domain/itself", f: domain, url: "http://example.co.uk/", accept: true, reason: `domain "example.co.uk" matched`},
		{name: "domain/subdomain", f: domain, url: "http://www.news.example.co.uk/", accept: true},
		{name: "domain/lookalike", f: domain, url: "http://badexample.co.uk/", reason: `~did not match host "badexample.co.uk"`},
		{name: "domain/as-label-elsewhere", f: domain, url: "http://example.co.uk.evil.example/"},
		{name: "domain/ipv4", f: domain, url: "http://192.0.2.7:8080/", accept: true},
		{name: "domain/ipv4-no-subnets", f: domain, url: "http://1.192.0.2.7/"},
		{name: "domain/ipv6", f: domain, url: "http://[::1]:8080/", accept: true, reason: `domain "::1" matched`},

		// suffix: public suffixes allowed
		{name: "suffix/ox", f: suffix, url: "https://www.ox.ac.uk/", accept: true, reason: `suffix "ac.uk" matched`},
		{name: "suffix/other", f: suffix, url: "https://www.ox.co.uk/"},
		{name: "suffix/lookalike", f: suffix, url: "https://www.jac.uk/"},

		// seed_domains
		{name: "seed_domains/same-registrable", f: SeedDomains(), url: "https://cs.example.edu/", accept: true, reason: `seed_domains: "example.edu" is a seed domain`},
		{name: "seed_domains/co.uk", f: SeedDomains(), url: "https://shop.example.co.uk/", accept: true},
		{name: "seed_domains/other", f: SeedDomains(), url: "https://example.com/", reason: `seed_domains: "example.com" is not a seed domain`},
		{name: "seed_domains/sibling-under-suffix", f: SeedDomains(), url: "https://other.co.uk/"},
		{name: "seed_domains/seed", f: SeedDomains(), url: "https://elsewhere.example/", seed: true, accept: true, reason: "seed_domains: URL is a seed"},

		// prefix
		{name: "prefix/match", f: prefix, url: "https://example.edu/News/2024/a.html", accept: true, reason: `prefix "https://example.edu/News/" matched`},
		{name: "prefix/case-of-path-matters", f: prefix, url: "https://example.edu/news/"},
		{name: "prefix/scheme-matters", f: prefix, url: "http://example.edu/News/x"},
		{name: "prefix/any-scheme-http", f: prefix, url: "http://example.org/docs/a", accept: true, reason: `prefix "//example.org/docs/" matched`},
		{name: "prefix/any-scheme-https", f: prefix, url: "https://example.org/docs/", accept: true},
		{name: "prefix/host-boundary", f: bare, url: "http://example.com.evil.example/"},
		{name: "prefix/host-root", f: bare, url: "http://example.com/a", accept: true, reason: `prefix "http://example.com/" matched`},

		// path_glob
		{name: "glob/double-star", f: glob, url: "http://a.example/calendar/2024/01/01", accept: true, reason: `path_glob "/calendar/**" matched`},
		{name: "glob/double-star-dir-itself", f: glob, url: "http://a.example/calendar", accept: true},
		{name: "glob/double-star-not-prefix-word", f: glob, url: "http://a.example/calendars"},
		{name: "glob/single-star-one-segment", f: glob, url: "http://a.example/news/print", accept: true, reason: `path_glob "/*/print" matched`},
		{name: "glob/single-star-not-two", f: glob, url: "http://a.example/news/x/print"},
		{name: "glob/middle-double-star-zero", f: glob, url: "http://a.example/a/z", accept: true},
		{name: "glob/middle-double-star-many", f: glob, url: "http://a.example/a/b/c/z", accept: true},
		{name: "glob/leading-double-star", f: glob, url: "http://a.example/blog/2024/feed", accept: true},
		{name: "glob/leading-double-star-root", f: glob, url: "http://a.example/feed", accept: true},
		{name: "glob/non-ascii", f: glob, url: "http://a.example/caf%C3%A9/menu", accept: true},
		{name: "glob/query-ignored", f: glob, url: "http://a.example/other?p=/calendar/x"},

		// regular expressions
		{name: "url_regex/query", f: urlRe, url: "http://a.example/x?y=2&print=1", accept: true, reason: `url_regex "[?&]print=1" matched`},
		{name: "url_regex/case-insensitive", f: urlRe, url: "https://www.mit.edu/", accept: true},
		{name: "url_regex/miss", f: urlRe, url: "http://a.example/print=1", reason: `url_regex ["[?&]print=1" "(?i)^https://[^/]*\\.EDU/"] did not match URL "http://a.example/print=1"`},
		{name: "path_regex/year", f: pathRe, url: "http://a.example/2024/05/x", accept: true},
		{name: "path_regex/not-query", f: pathRe, url: "http://a.example/x?/2024/"},

		// deny_extensions
		{name: "ext/jpg", f: ext, url: "http://a.example/img/photo.jpg", reason: `deny_extensions: ".jpg" denied`},
		{name: "ext/upper", f: ext, url: "http://a.example/PHOTO.JPEG"},
		{name: "ext/pdf", f: ext, url: "http://a.example/paper.pdf?download=1"},
		{name: "ext/matrix-param", f: ext, url: "http://a.example/a/file.zip;jsessionid=AB12"},
		{name: "ext/css", f: ext, url: "http://a.example/site.css"},
		{name: "ext/woff2", f: ext, url: "http://a.example/f.woff2"},
		{name: "ext/exe", f: ext, url: "http://a.example/setup.exe"},
		{name: "ext/html", f: ext, url: "http://a.example/index.html", accept: true, reason: `deny_extensions: ".html" allowed`},
		{name: "ext/htm", f: ext, url: "http://a.example/index.htm", accept: true},
		{name: "ext/php", f: ext, url: "http://a.example/index.php?id=3", accept: true},
		{name: "ext/asp", f: ext, url: "http://a.example/default.asp", accept: true},
		{name: "ext/txt", f: ext, url: "http://a.example/robots.txt", accept: true},
		{name: "ext/xml", f: ext, url: "http://a.example/sitemap.xml", accept: true},
		{name: "ext/none", f: ext, url: "http://a.example/about", accept: true, reason: "deny_extensions: no extension"},
		{name: "ext/dir", f: ext, url: "http://a.example/photos.jpg/", accept: true},
		{name: "ext/dotted-dir", f: ext, url: "http://a.example/v1.2/readme", accept: true},
		{name: "ext/custom", f: pdfOnly, url: "http://a.example/a.PDF"},
		{name: "ext/custom-others", f: pdfOnly, url: "http://a.example/a.jpg", accept: true},

		// query: strip
		{name: "query/strip", f: strip, url: "http://a.example/p?id=3&utm_source=x&UTM_Medium=y&fbclid=z", accept: true,
			reason: `query: stripped ["utm_source" "UTM_Medium" "fbclid"]`, rewrite: "http://a.example/p?id=3"},
		{name: "query/strip-all", f: strip, url: "http://a.example/p?PHPSESSID=abc", accept: true, rewrite: "http://a.example/p"},
		{name: "query/strip-encoded-name", f: strip, url: "http://a.example/p?a=1&%73id=9&b=2", accept: true, rewrite: "http://a.example/p?a=1&b=2"},
		{name: "query/strip-keeps-order-and-spelling", f: strip, url: "http://a.example/p?z=%2F&gclid=1&a=b+c&&a=2", accept: true, rewrite: "http://a.example/p?z=%2F&a=b+c&a=2"},
		{name: "query/strip-path-param", f: strip, url: "http://a.example/shop/cart;jsessionid=0A1B?x=1", accept: true,
			reason: `query: stripped "jsessionid"`, rewrite: "http://a.example/shop/cart?x=1"},
		{name: "query/keep-other-path-param", f: strip, url: "http://a.example/a;v=2;jsessionid=0A/b", accept: true, rewrite: "http://a.example/a;v=2/b"},
		{name: "query/nothing-to-strip", f: strip, url: "http://a.example/p?id=3&page=2", accept: true, reason: "query: 2 parameters, none stripped"},
		{name: "query/no-query", f: strip, url: "http://a.example/p", accept: true, reason: "query: none"},
		{name: "query/not-a-prefix-match", f: strip, url: "http://a.example/p?sidebar=1&utm=2", accept: true},
		// query: reject and max_params
		{name: "query/reject", f: rejectQ, url: "http://a.example/p?SessionID=1", reason: `query: parameter "SessionID" rejected`},
		{name: "query/reject-glob", f: rejectQ, url: "http://a.example/p?usid=1"},
		{name: "query/reject-path-param", f: rejectQ, url: "http://a.example/p;phpsessid=1", reason: `query: path parameter "phpsessid" rejected`},
		{name: "query/max-params-ok", f: rejectQ, url: "http://a.example/p?a=1&b=2", accept: true},
		{name: "query/max-params", f: rejectQ, url: "http://a.example/p?a=1&b=2&c=3", reason: "query: 3 parameters (max_params 2)"},
		{name: "query/reject-every", f: noQuery, url: "http://a.example/p?a", reason: `query: parameter "a" rejected`},
		{name: "query/reject-every-no-query", f: noQuery, url: "http://a.example/p", accept: true},

		// max_length
		{name: "length/ok", f: length, url: "http://a.example/1234567890123", accept: true, reason: "max_length 30: 30 bytes"},
		{name: "length/long", f: length, url: "http://a.example/12345678901234", reason: "max_length 30: 31 bytes"},
		// max_depth
		{name: "depth/root", f: depth, url: "http://a.example/", accept: true, reason: "max_depth 2: depth 0"},
		{name: "depth/two", f: depth, url: "http://a.example/a/b.html", accept: true},
		{name: "depth/two-trailing-slash", f: depth, url: "http://a.example/a/b/", accept: true},
		{name: "depth/three", f: depth, url: "http://a.example/a/b/c", reason: "max_depth 2: depth 3"},
		{name: "depth/empty-segments-count", f: depth, url: "http://a.example/a//b"},
		// max_repeat
		{name: "repeat/three-times-ok", f: repeat, url: "http://a.example/a/x/a/y/a", accept: true},
		{name: "repeat/four-times", f: repeat, url: "http://a.example/a/x/a/y/a/z/a", reason: `max_repeat: segment "a" occurs 4 times (max 3)`},
		{name: "repeat/pair-three-times", f: repeat, url: "http://a.example/a/b/a/b/a/b", reason: `max_repeat: segments "a/b" occur 3 times (max 2)`},
		{name: "repeat/pair-twice-ok", f: repeat, url: "http://a.example/a/b/a/b", accept: true},
		{name: "repeat/empty-segments", f: repeat, url: "http://a.example/x////////y"},
		{name: "repeat/no-pairs-check", f: singles, url: "http://a.example/a/b/x/a/b/y", accept: true, reason: "max_repeat: no segment more than 2 times"},
		{name: "repeat/long-path-map", f: repeat, url: "http://a.example/" + strings.Repeat("s/", 40) + "end", reason: `max_repeat: segment "s" occurs 40 times (max 3)`},
		{name: "repeat/long-path-ok", f: repeat, url: "http://a.example/" + numberedSegments(40), accept: true},
		// level
		{name: "level/in", f: level, url: "http://a.example/", level: 2, accept: true, reason: "level 2 within 1..3"},
		{name: "level/below", f: level, url: "http://a.example/", level: 0, reason: "level 0 outside 1..3"},
		{name: "level/above", f: level, url: "http://a.example/", level: 4},
		{name: "level/open-min", f: levelMax, url: "http://a.example/", level: -5, accept: true, reason: "level -5 within ≤ 2"},
	})
}

func numberedSegments(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("s")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("/")
	}
	return b.String()
}

// TestComposition builds all/any/not trees at least five deep and checks the reason chains.
func TestComposition(t *testing.T) {
	ads := must(Host("ads.example.com"))
	edu := must(Domain("example.edu"))
	cal := must(PathGlob("/calendar/**"))
	https := must(Scheme("https"))

	// Depth 6: all → any → not → all → not → any → leaf.
	deep := All(
		https,
		Any(
			Not(All(edu, Not(Any(cal, ads)))), // not (an example.edu page outside calendars and ads)
			MaxDepth(1),
		),
		Not(ads),
	)
	withNames := All(https, Named("no ads", Not(ads)))

	runCases(t, []decideCase{
		{name: "brief-example", f: All(https, https, Not(ads)), url: "https://ads.example.com/x",
			reason: `all[2] not: host "ads.example.com" matched`},
		{name: "deep/shallow-page-elsewhere", f: deep, url: "https://other.example/", accept: true,
			reason: `all: 3 accepted`},
		{name: "deep/edu-page-rejected-by-double-negation", f: deep, url: "https://www.example.edu/a/b",
			reason: `all[1] any: none accepted ([0] not: all: 2 accepted; [1] max_depth 1: depth 2)`},
		{name: "deep/edu-calendar-accepted-through-five-levels", f: deep, url: "https://www.example.edu/calendar/2024/05",
			accept: true},
		{name: "deep/edu-calendar-reason", f: deep.(*allFilter).fs[1], url: "https://www.example.edu/calendar/2024/05",
			accept: true, reason: `any[0] not: all[1] not: any[0] path_glob "/calendar/**" matched`},
		{name: "deep/ads-rejected-at-the-end", f: deep, url: "https://ads.example.com/",
			reason: `all[2] not: host "ads.example.com" matched`},
		{name: "deep/http-rejected-first", f: deep, url: "http://ads.example.com/",
			reason: `all[0] scheme "https" did not match "http"`},
		{name: "named", f: withNames, url: "https://ads.example.com/",
			reason: `all[1] [no ads] not: host "ads.example.com" matched`},
		{name: "empty-all-accepts", f: All(), url: "http://a.example/", accept: true, reason: "all: 0 accepted"},
		{name: "empty-any-rejects", f: Any(), url: "http://a.example/", reason: "any: none accepted ()"},
	})

	// Eight levels, built so that the decisive path runs through every level: the chain names them all.
	never := MaxDepth(-1)
	var f Filter = ads // accepts
	f = Any(never, f)  // 1 accepts
	f = Not(f)         // 2 rejects
	f = All(https, f)  // 3 rejects
	f = Any(never, f)  // 4 rejects
	f = Not(f)         // 5 accepts
	f = Any(never, f)  // 6 accepts
	f = Not(f)         // 7 rejects
	f = All(https, f)  // 8 rejects
	d := f.Decide(Input{URL: mustParse(t, "https://ads.example.com/")})
	want := `all[1] not: any[1] not: any: none accepted ([0] max_depth -1: depth 0; [1] all[1] not: any[1] host "ads.example.com" matched)`
	if d.Accept || d.Reason != want {
		t.Errorf("depth 8: %v %q\n\t\twant %q", d.Accept, d.Reason, want)
	}
	if d := f.Decide(Input{URL: mustParse(t, "https://other.example/")}); !d.Accept {
		t.Errorf("depth 8, other host: %q", d.Reason)
	}
}

// TestStripThreading checks that all passes a stripped URL on, and that any/not treat rewrites sensibly.
func TestStripThreading(t *testing.T) {
	strip := must(Query(QueryRules{Strip: []string{"utm_*"}}))
	long := "http://a.example/p?utm_source=newsletter&utm_medium=email&id=1"
	short := "http://a.example/p?id=1"
	limit := MaxLength(len(short))
	onlyShort := must(URLRegex(`^http://a\.example/p\?id=1$`))

	runCases(t, []decideCase{
		{name: "strip-then-length", f: All(strip, limit), url: long, accept: true, rewrite: short,
			reason: `all: 2 accepted (all[0] query: stripped ["utm_source" "utm_medium"])`},
		{name: "length-then-strip", f: All(limit, strip), url: long,
			reason: `all[0] max_length 23: 62 bytes`},
		{name: "later-filters-see-rewrite", f: All(strip, onlyShort, limit), url: long, accept: true, rewrite: short},
		{name: "two-strips-compose", f: All(strip, must(Query(QueryRules{Strip: []string{"id"}}))), url: long,
			accept: true, rewrite: "http://a.example/p"},
		{name: "nested-all", f: All(All(strip), Not(Not(onlyShort))), url: long, accept: true, rewrite: short},
		{name: "any-returns-accepting-rewrite", f: Any(MaxDepth(-1), strip), url: long, accept: true, rewrite: short},
		{name: "not-never-rewrites", f: Not(Not(strip)), url: long, accept: true},
		{name: "rejection-drops-rewrite", f: All(strip, MaxLength(5)), url: long},
		{name: "default-strips", f: Default(), url: "https://www.example.edu/a?fbclid=1&x=2", accept: true,
			rewrite: "https://www.example.edu/a?x=2"},
	})
}

func TestDefault(t *testing.T) {
	f := Default()
	if f != Default() {
		t.Error("Default builds a new filter each time")
	}
	runCases(t, []decideCase{
		{name: "seed-domain-page", f: f, url: "https://www.example.edu/research/index.html", accept: true,
			reason: "[default] all: 6 accepted"},
		{name: "subdomain-of-seed", f: f, url: "http://library.example.edu/", accept: true},
		{name: "co.uk-seed", f: f, url: "https://www.example.co.uk/", accept: true},
		{name: "other-domain", f: f, url: "https://www.example.com/",
			reason: `[default] all[1] seed_domains: "example.com" is not a seed domain`},
		{name: "seed-elsewhere", f: f, url: "https://seed.example.net/", seed: true, accept: true},
		{name: "image", f: f, url: "https://www.example.edu/logo.PNG",
			reason: `[default] all[2] deny_extensions: ".png" denied`},
		{name: "tracking-stripped", f: f, url: "https://www.example.edu/?utm_campaign=x", accept: true,
			rewrite: "https://www.example.edu/", reason: `[default] all: 6 accepted (all[3] query: stripped "utm_campaign")`},
		{name: "too-long", f: f, url: "https://www.example.edu/" + strings.Repeat("x", 2048),
			reason: "[default] all[4] max_length 2048: 2072 bytes"},
		{name: "long-only-because-of-tracking", f: f, url: "https://www.example.edu/a?utm_content=" + strings.Repeat("x", 2048),
			accept: true, rewrite: "https://www.example.edu/a"},
		{name: "loop", f: f, url: "https://www.example.edu/a/b/a/b/a/b/",
			reason: `[default] all[5] max_repeat: segments "a/b" occur 3 times (max 2)`},
		{name: "session-path-param", f: f, url: "https://www.example.edu/cart;jsessionid=1", accept: true,
			rewrite: "https://www.example.edu/cart"},
	})
	// No seed domains at all: nothing but seeds gets in.
	d := f.Decide(Input{URL: mustParse(t, "https://www.example.edu/")})
	if d.Accept || !strings.Contains(d.Reason, "no seed domains given") {
		t.Errorf("no seed domains: %+v", d)
	}
}

func TestRegistrableDomain(t *testing.T) {
	for _, c := range []struct{ host, want string }{
		{"www.example.co.uk", "example.co.uk"},
		{"example.co.uk", "example.co.uk"},
		{"co.uk", "co.uk"},
		{"uk", "uk"},
		{"a.b.c.example.com", "example.com"},
		{"WWW.Example.COM", "example.com"},
		{"www.example.com.", "example.com"},
		{"www.example.com..", "example.com"},
		{"www.example.com:8080", "example.com"},
		{"alice.github.io", "alice.github.io"},
		{"www.alice.github.io", "alice.github.io"},
		{"github.io", "github.io"},
		{"www.ox.ac.uk", "ox.ac.uk"},
		{"localhost", "localhost"},
		{"localhost:8080", "localhost"},
		{"foo.localhost", "foo.localhost"},
		{"intranet", "intranet"},
		{"127.0.0.1", "127.0.0.1"},
		{"192.0.2.1:8080", "192.0.2.1"},
		{"::1", "::1"},
		{"[::1]:8080", "::1"},
		{"[2001:db8::1]", "2001:db8::1"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"www.xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"www.example.xn--p1ai", "example.xn--p1ai"}, // .рф
		{"", ""},
		{".", ""},
	} {
		if got := RegistrableDomain(c.host); got != c.want {
			t.Errorf("RegistrableDomain(%q) = %q, want %q", c.host, got, c.want)
		}
	}
	got := DomainSet("www.example.edu", "cs.example.edu:8080", "", "localhost")
	if len(got) != 2 || !got["example.edu"] || !got["localhost"] {
		t.Errorf("DomainSet = %v", got)
	}
}

func TestDomainArguments(t *testing.T) {
	for _, c := range []struct {
		kind, arg string
		err       string // "" = accepted
		matches   string // a URL the filter must accept
	}{
		{"domain", "co.uk", `domain "co.uk" is a public suffix`, ""},
		{"domain", "CO.UK.", `domain "co.uk" is a public suffix`, ""},
		{"domain", "com", "public suffix", ""},
		{"domain", "ac.uk", `write suffix = "ac.uk"`, ""},
		{"domain", "github.io", "public suffix", ""},
		{"domain", "xn--p1ai", "public suffix", ""},
		{"domain", "localhost", "", "http://localhost:8080/"},
		{"domain", "intranet", "", "http://wiki.intranet/"},
		{"domain", "Example.CO.uk.", "", "http://www.example.co.uk/"},
		{"domain", "bücher.de", "", "http://shop.xn--bcher-kva.de/"},
		{"domain", "127.0.0.1", "", "http://127.0.0.1:8000/"},
		{"domain", "[::1]", "", "http://[::1]/"},
		{"domain", "example.com:8080", "has a port", ""},
		{"domain", "*.example.com", `without the leading "*."`, ""},
		{"domain", ".example.com", `without the leading "."`, ""},
		{"domain", "https://example.com/", "is a URL", ""},
		{"domain", "example.com/path", "not a host name", ""},
		{"domain", "", "empty domain", ""},
		{"domain", "exa mple.com", "not a host name", ""},
		{"domain", "a..b", "not a valid host name", ""},
		{"host", "*.example.com", `use domain "example.com"`, ""},
		{"host", "WWW.EXAMPLE.COM.", "", "https://www.example.com/"},
		{"suffix", "ac.uk", "", "http://www.cam.ac.uk/"},
		{"suffix", "co.uk", "", "http://anything.co.uk/"},
	} {
		var f Filter
		var err error
		switch c.kind {
		case "domain":
			f, err = Domain(c.arg)
		case "host":
			f, err = Host(c.arg)
		case "suffix":
			f, err = Suffix(c.arg)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s(%q): err = %v, want one containing %q", c.kind, c.arg, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s(%q): %v", c.kind, c.arg, err)
			continue
		}
		if d := f.Decide(Input{URL: mustParse(t, c.matches)}); !d.Accept {
			t.Errorf("%s(%q) rejected %s: %s", c.kind, c.arg, c.matches, d.Reason)
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"scheme-ftp", second(Scheme("ftp")), `scheme "ftp" not supported`},
		{"scheme-none", second(Scheme()), "no scheme"},
		{"prefix-relative", second(Prefix("/docs/")), "not an absolute"},
		{"prefix-mailto", second(Prefix("mailto:a@b")), "not an absolute"},
		{"glob-relative", second(PathGlob("calendar/**")), `must start with "/"`},
		{"glob-triple", second(PathGlob("/a/***")), `"***"`},
		{"glob-query", second(PathGlob("/a?x=1")), "path only"},
		{"regex-bad", second(URLRegex("a(b")), "missing closing )"},
		{"regex-empty", second(PathRegex("")), "empty path_regex"},
		{"regex-huge", second(URLRegex(strings.Repeat("a", MaxPatternLength+1))), "longer than"},
		{"query-empty", second(Query(QueryRules{})), "query rules are empty"},
		{"query-bad-name", second(Query(QueryRules{Strip: []string{"a=b"}})), "not a parameter name"},
		{"query-negative", second(Query(QueryRules{MaxParams: -1})), "negative"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, c.err, c.want)
		}
	}
}

func second(_ Filter, err error) error { return err }

func TestNilURL(t *testing.T) {
	for _, f := range []Filter{Default(), must(Expr("true")), must(Prefix("http://a.example/")), MaxDepth(1), MaxRepeat(1, 1)} {
		if d := f.Decide(Input{}); d.Accept {
			t.Errorf("%T accepted a nil URL", f)
		}
	}
}

// TestConcurrent runs the shared filters from many goroutines; with -race it checks they are safe.
func TestConcurrent(t *testing.T) {
	fs := []Filter{Default()}
	for _, name := range exampleNames {
		fs = append(fs, loadExample(t, name))
	}
	urls := []string{
		"https://www.example.edu/a/b?utm_source=x",
		"https://www.ox.ac.uk/cart;jsessionid=1",
		"https://www.bbc.co.uk/news/print?view=print",
		"https://www.example.edu/calendar/2024",
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, f := range fs {
					for _, raw := range urls {
						u, _ := urlnorm.Parse(raw)
						f.Decide(Input{URL: u, Level: i % 3, SeedDomains: seeds})
					}
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkDefault(b *testing.B) {
	in := Input{SeedDomains: seeds}
	for _, c := range []struct{ name, url string }{
		{"accept", "https://www.example.edu/research/groups/index.html"},
		{"strip", "https://www.example.edu/news/article?id=42&utm_source=x&utm_medium=y"},
		{"reject-domain", "https://www.example.com/a/b"},
		{"reject-ext", "https://www.example.edu/img/logo.png"},
	} {
		u := mustParse(b, c.url)
		in.URL = u
		f := Default()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Decide(in)
			}
		})
	}
}
