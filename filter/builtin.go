package filter

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

// Scheme accepts URLs whose scheme is one of schemes ("http", "https"; case-insensitive). strata
// only crawls http and https, so any other scheme is an error.
func Scheme(schemes ...string) (Filter, error) {
	if len(schemes) == 0 {
		return nil, errors.New("no scheme given")
	}
	f := schemeFilter{ok: map[string]string{}}
	for _, s := range schemes {
		s = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), ":"))
		if s != "http" && s != "https" {
			return nil, fmt.Errorf("scheme %q not supported: strata crawls http and https only", s)
		}
		if _, dup := f.ok[s]; !dup {
			f.list = append(f.list, s)
		}
		f.ok[s] = ""
	}
	for s := range f.ok {
		f.ok[s] = "scheme " + q(s) + " matched"
	}
	return f, nil
}

type schemeFilter struct {
	ok   map[string]string // scheme → accept reason
	list []string
}

func (f schemeFilter) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	if r, ok := f.ok[in.URL.Scheme]; ok {
		return accept(r)
	}
	return reject("scheme " + qlist(f.list) + " did not match " + q(in.URL.Scheme))
}

// Host accepts URLs whose host is exactly one of hosts (no subdomains; the port is ignored). Names
// are normalised as urlnorm does: "Bücher.example." is stored as "xn--bcher-kva.example".
func Host(hosts ...string) (Filter, error) {
	s, err := newNameSet("host", hosts, false, false)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Domain accepts URLs whose host is one of domains or a subdomain of one: domain "example.co.uk"
// matches "example.co.uk" and "www.example.co.uk" but not "badexample.co.uk". A domain that is a
// public suffix ("co.uk", "com", "github.io") is an error, since it would let in every site
// registered under it; use Suffix when that is really meant. An IP address matches only itself.
func Domain(domains ...string) (Filter, error) {
	s, err := newNameSet("domain", domains, true, true)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Suffix accepts URLs whose host is one of suffixes or ends with "." and one of them, whether or not
// the suffix is a public suffix: suffix "ac.uk" matches every host under .ac.uk. It is Domain
// without the public-suffix check, for crawls of a whole national or academic domain.
func Suffix(suffixes ...string) (Filter, error) {
	s, err := newNameSet("suffix", suffixes, true, false)
	if err != nil {
		return nil, err
	}
	return s, nil
}

type nameSet struct {
	kind  string
	names map[string]string // name → accept reason
	subs  map[string]string // the names whose subdomains match too (not IP addresses)
	list  []string
}

func newNameSet(kind string, names []string, sub, refuseSuffix bool) (*nameSet, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no %s given", kind)
	}
	s := &nameSet{kind: kind, names: map[string]string{}, subs: map[string]string{}}
	for _, raw := range names {
		n, err := canonicalName(kind, raw)
		if err != nil {
			return nil, err
		}
		if refuseSuffix {
			if ps, icann := publicsuffix.PublicSuffix(n); ps == n && (icann || strings.Contains(n, ".")) && !isIP(n) {
				return nil, fmt.Errorf("domain %q is a public suffix, so it would match every site registered under it; "+
					"name a registrable domain (such as \"example.%s\"), or write suffix = %q if you mean all of them", n, n, n)
			}
		}
		if _, dup := s.names[n]; !dup {
			s.list = append(s.list, n)
		}
		s.names[n] = kind + " " + q(n) + " matched"
		if sub && !isIP(n) {
			s.subs[n] = s.names[n]
		}
	}
	return s, nil
}

// canonicalName normalises a host name written in the configuration the way urlnorm normalises
// hosts, and refuses what is not a bare host name.
func canonicalName(kind, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", fmt.Errorf("empty %s", kind)
	case strings.Contains(s, "://"):
		return "", fmt.Errorf("%s %q is a URL; give the host name only (or use prefix for URLs)", kind, s)
	case strings.HasPrefix(s, "*.") || strings.HasPrefix(s, "."):
		if kind == "host" {
			return "", fmt.Errorf("host %q: host matches one exact name; use domain %q for a domain and its subdomains", s, strings.TrimLeft(s, "*."))
		}
		return "", fmt.Errorf("%s %q: write it without the leading %q; %s already includes subdomains", kind, s, s[:strings.IndexByte(s, '.')+1], kind)
	case strings.ContainsAny(s, "/?#@ *"):
		return "", fmt.Errorf("%s %q is not a host name", kind, s)
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%s %q: IPv6 zones are not allowed", kind, s)
		}
		return a.String(), nil
	}
	if strings.Contains(s, ":") {
		return "", fmt.Errorf("%s %q has a port; host names are matched without ports (use an expr such as 'port == 8080')", kind, s)
	}
	u, err := urlnorm.Parse("http://" + s + "/")
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, "\": "); i >= 0 {
			msg = msg[i+3:]
		}
		return "", fmt.Errorf("%s %q is not a valid host name: %s", kind, s, msg)
	}
	return u.Hostname(), nil
}

func isIP(h string) bool {
	if h == "" {
		return false
	}
	if c := h[len(h)-1]; !(c >= '0' && c <= '9') && !strings.Contains(h, ":") {
		return false // no top-level domain is numeric: cheap test before parsing
	}
	_, err := netip.ParseAddr(h)
	return err == nil
}

func (s *nameSet) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	h := hostname(in.URL)
	if r, ok := s.names[h]; ok {
		return accept(r)
	}
	if len(s.subs) > 0 && !isIP(h) {
		for i := 0; i < len(h); i++ {
			if h[i] == '.' {
				if r, ok := s.subs[h[i+1:]]; ok {
					return accept(r)
				}
			}
		}
	}
	return reject(s.kind + " " + qlist(s.list) + " did not match host " + q(h))
}

// SeedDomains accepts URLs whose registrable domain (see RegistrableDomain) is in
// Input.SeedDomains, and every seed (Input.Seed): the crawl stays on the sites the user named.
func SeedDomains() Filter { return seedDomains{} }

type seedDomains struct{}

func (seedDomains) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	if in.Seed {
		return accept("seed_domains: URL is a seed")
	}
	d := RegistrableDomain(in.URL.Host)
	if in.SeedDomains[d] {
		return accept("seed_domains: " + q(d) + " is a seed domain")
	}
	if len(in.SeedDomains) == 0 {
		return reject("seed_domains: no seed domains given")
	}
	return reject("seed_domains: " + q(d) + " is not a seed domain")
}

// Prefix accepts URLs that start with one of prefixes, compared after both are normalised (so
// "HTTP://Example.COM" becomes "http://example.com/", which no longer matches
// "http://example.com.evil.example/"). A prefix starting with "//" matches both http and https.
// Prefixes are plain string prefixes: "https://example.org/docs" also matches "/docs-old"; end a
// directory with "/" to avoid that.
func Prefix(prefixes ...string) (Filter, error) {
	if len(prefixes) == 0 {
		return nil, errors.New("no prefix given")
	}
	f := &prefixFilter{}
	for _, raw := range prefixes {
		p := strings.TrimSpace(raw)
		anyScheme := strings.HasPrefix(p, "//")
		in := p
		if anyScheme {
			in = "http:" + p
		}
		u, err := urlnorm.Parse(in)
		if err != nil {
			return nil, fmt.Errorf("prefix %q is not an absolute http(s) URL (or a //host/path prefix for both schemes): %v", p, err)
		}
		s := u.String()
		if anyScheme {
			s = strings.TrimPrefix(s, "http:")
		}
		f.list = append(f.list, s)
	}
	return f, nil
}

type prefixFilter struct{ list []string }

func (f *prefixFilter) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	s := in.URL.String()
	rest := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		rest = s[i+1:]
	}
	for _, p := range f.list {
		if strings.HasPrefix(p, "//") && strings.HasPrefix(rest, p) || strings.HasPrefix(s, p) {
			return accept("prefix " + q(p) + " matched")
		}
	}
	return reject("prefix " + qlist(f.list) + " did not match " + q(s))
}

// PathGlob accepts URLs whose path matches one of the glob patterns: "*" matches within one path
// segment, "**" across segments, "?" one character other than "/"; everything else is literal. A
// pattern is matched against the whole (escaped) path and must start with "/" or "**". "/a/**"
// matches "/a" and everything below it, and "/a/**/b" matches "/a/b" and "/a/x/y/b".
func PathGlob(patterns ...string) (Filter, error) {
	if len(patterns) == 0 {
		return nil, errors.New("no glob pattern given")
	}
	f := &regexFilter{kind: "path_glob", onPath: true}
	for _, g := range patterns {
		src, err := globToRegexp(g)
		if err != nil {
			return nil, err
		}
		f.res = append(f.res, regexp.MustCompile(src))
		f.list = append(f.list, g)
	}
	return f, nil
}

func globToRegexp(g string) (string, error) {
	if g == "" {
		return "", errors.New("empty path_glob")
	}
	if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "**") {
		return "", fmt.Errorf("path_glob %q must start with \"/\" or \"**\": it is matched against the whole path", g)
	}
	if strings.Contains(g, "***") {
		return "", fmt.Errorf("path_glob %q: \"***\" means nothing; use \"*\" within a segment or \"**\" across segments", g)
	}
	if strings.ContainsAny(g, "#") || strings.Contains(g, "?") && strings.Contains(g, "=") {
		return "", fmt.Errorf("path_glob %q: globs match the path only; use url_regex or query for the query string", g)
	}
	var b strings.Builder
	b.WriteString("^")
	lit := 0 // start of the pending literal run
	flush := func(end int) {
		if end > lit {
			b.WriteString(regexp.QuoteMeta(urlnorm.EscapePath(g[lit:end])))
		}
	}
	for i := 0; i < len(g); {
		var re string
		n := 0
		switch {
		case strings.HasPrefix(g[i:], "/**/"):
			re, n = "(?:/|/.*/)", 4
		case g[i:] == "/**":
			re, n = "(?:/.*)?", 3
		case i == 0 && strings.HasPrefix(g, "**/"):
			re, n = "(?:.*/)?", 3
		case strings.HasPrefix(g[i:], "**"):
			re, n = ".*", 2
		case g[i] == '*':
			re, n = "[^/]*", 1
		case g[i] == '?':
			re, n = "[^/]", 1
		default:
			i++
			continue
		}
		flush(i)
		b.WriteString(re)
		i += n
		lit = i
	}
	flush(len(g))
	b.WriteString("$")
	return b.String(), nil
}

// URLRegex accepts URLs whose full normalised form (u.String()) contains a match of one of the RE2
// patterns. Patterns are not anchored: add ^ and $ for that, and (?i) to ignore case.
func URLRegex(patterns ...string) (Filter, error) {
	return newRegexFilter("url_regex", false, patterns)
}

// PathRegex is URLRegex applied to the escaped path only (no scheme, host or query).
func PathRegex(patterns ...string) (Filter, error) {
	return newRegexFilter("path_regex", true, patterns)
}

// MaxPatternLength caps regular expressions and globs, as expressions are capped by MaxExprLength.
const MaxPatternLength = 4096

func newRegexFilter(kind string, onPath bool, patterns []string) (Filter, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("no %s pattern given", kind)
	}
	f := &regexFilter{kind: kind, onPath: onPath}
	for _, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("empty %s (it would match every URL)", kind)
		}
		if len(p) > MaxPatternLength {
			return nil, fmt.Errorf("%s longer than %d bytes", kind, MaxPatternLength)
		}
		re, err := regexp.Compile(p)
		if err != nil {
			var se *syntax.Error
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%s %s: %s in %q", kind, q(p), se.Code, se.Expr)
			}
			return nil, fmt.Errorf("%s %s: %v", kind, q(p), err)
		}
		f.res = append(f.res, re)
		f.list = append(f.list, p)
	}
	return f, nil
}

type regexFilter struct {
	kind   string
	onPath bool
	res    []*regexp.Regexp
	list   []string
}

func (f *regexFilter) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	var s string
	if f.onPath {
		s = in.URL.EscapedPath()
	} else {
		s = in.URL.String()
	}
	for i, re := range f.res {
		if re.MatchString(s) {
			return accept(f.kind + " " + q(f.list[i]) + " matched")
		}
	}
	what := "URL"
	if f.onPath {
		what = "path"
	}
	return reject(f.kind + " " + qlist(f.list) + " did not match " + what + " " + q(s))
}

// DenyExtensions rejects URLs whose last path segment ends in one of the file extensions exts
// (case-insensitive, with or without the dot; ";params" after the name are ignored) and accepts all
// others, including those with no extension.
func DenyExtensions(exts ...string) Filter {
	f := extFilter{deny: make(map[string]bool, len(exts))}
	for _, e := range exts {
		e = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), "."))
		if e != "" {
			f.deny[e] = true
		}
	}
	return f
}

// DefaultExtensions returns the extensions DenyExtensions rejects by default: files that are not
// text for a reader — images, audio, video, archives and disk images, office documents and PDF,
// fonts, style sheets and scripts, executables and packages. Pages (.html, .htm, .php, .asp, .aspx,
// .jsp, .cgi), text (.txt, .xml, .json, .csv, .rss) and URLs with no extension are not in it.
func DefaultExtensions() []string {
	return append([]string(nil), defaultExtensions...)
}

var defaultExtensions = []string{
	// images
	"jpg", "jpeg", "jpe", "jfif", "png", "gif", "bmp", "tif", "tiff", "webp", "svg", "svgz", "ico",
	"heic", "heif", "avif", "psd", "raw", "cr2", "nef", "xcf",
	// audio
	"mp3", "wav", "ogg", "oga", "opus", "flac", "aac", "m4a", "wma", "mid", "midi", "aif", "aiff", "ra", "ram",
	// video
	"mp4", "m4v", "mov", "avi", "wmv", "flv", "mkv", "webm", "mpg", "mpeg", "3gp", "ogv", "asf", "rm", "swf", "vob",
	// archives, compressed files, disk images
	"zip", "tar", "gz", "tgz", "bz2", "tbz", "tbz2", "xz", "txz", "7z", "rar", "z", "lz", "lzma", "zst",
	"cab", "jar", "war", "iso", "img", "dmg",
	// office documents
	"pdf", "doc", "docx", "dot", "xls", "xlsx", "xlsm", "ppt", "pptx", "pps", "ppsx", "odt", "ods", "odp",
	"odg", "rtf", "pages", "numbers", "key", "epub", "mobi", "ps", "eps",
	// fonts
	"woff", "woff2", "ttf", "otf", "eot",
	// style sheets and scripts
	"css", "js", "mjs", "map",
	// executables and packages
	"exe", "msi", "dll", "so", "bin", "apk", "deb", "rpm", "class", "pkg",
}

type extFilter struct{ deny map[string]bool }

func (f extFilter) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	e := extension(in.URL.EscapedPath())
	if e == "" {
		return accept("deny_extensions: no extension")
	}
	if f.deny[strings.ToLower(e)] {
		return reject("deny_extensions: " + q("."+strings.ToLower(e)) + " denied")
	}
	return accept("deny_extensions: " + q("."+e) + " allowed")
}

// extension returns the file extension of the last segment of an escaped path, without the dot and
// without ";params", or "".
func extension(p string) string {
	seg := p[strings.LastIndexByte(p, '/')+1:]
	if i := strings.IndexByte(seg, ';'); i >= 0 {
		seg = seg[:i]
	}
	i := strings.LastIndexByte(seg, '.')
	if i < 0 {
		return ""
	}
	return seg[i+1:]
}

// MaxLength rejects URLs longer than n bytes in their normalised form.
func MaxLength(n int) Filter { return maxLength(n) }

type maxLength int

func (m maxLength) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	l := len(in.URL.String())
	r := "max_length " + strconv.Itoa(int(m)) + ": " + strconv.Itoa(l) + " bytes"
	if l > int(m) {
		return reject(r)
	}
	return accept(r)
}

// MaxDepth rejects URLs whose path has more than n segments. Depth counts the slashes of the path
// without its trailing slash: "/" is 0, "/a" and "/a/" are 1, "/a/b/c.html" is 3, "/a//b" is 3.
func MaxDepth(n int) Filter { return maxDepth(n) }

type maxDepth int

// Depth is the path depth MaxDepth measures, and the expression variable depth.
func Depth(u *url.URL) int {
	return strings.Count(strings.TrimSuffix(u.EscapedPath(), "/"), "/")
}

func (m maxDepth) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	d := Depth(in.URL)
	r := "max_depth " + strconv.Itoa(int(m)) + ": depth " + strconv.Itoa(d)
	if d > int(m) {
		return reject(r)
	}
	return accept(r)
}

// MaxRepeat rejects URLs in which one path segment occurs more than segment times, or one pair of
// adjacent segments more than pair times — the mark of relative-link loops such as
// "/a/b/a/b/a/b/…". A limit of 0 turns that check off. Segments are compared in their escaped form,
// case-sensitively; empty segments ("//") count too.
func MaxRepeat(segment, pair int) Filter {
	m := maxRepeat{segment: segment, pair: pair}
	m.ok = fmt.Sprintf("max_repeat: no segment more than %d times, no pair more than %d times", segment, pair)
	switch {
	case segment <= 0 && pair <= 0:
		m.ok = "max_repeat: no limit"
	case segment <= 0:
		m.ok = fmt.Sprintf("max_repeat: no pair more than %d times", pair)
	case pair <= 0:
		m.ok = fmt.Sprintf("max_repeat: no segment more than %d times", segment)
	}
	return m
}

type maxRepeat struct {
	segment, pair int
	ok            string
}

func (m maxRepeat) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	p := strings.TrimSuffix(strings.TrimPrefix(in.URL.EscapedPath(), "/"), "/")
	if p == "" || (m.segment <= 0 || strings.Count(p, "/")+1 <= m.segment) && (m.pair <= 0 || strings.Count(p, "/") <= m.pair) {
		return accept(m.ok) // too few segments to exceed either limit
	}
	// starts[i] is where segment i begins; a sentinel len(p)+1 follows the last, so segment i is
	// p[starts[i]:starts[i+1]-1] and the pair i, i+1 is p[starts[i]:starts[i+2]-1], without copying.
	var buf [64]int
	starts := append(buf[:0], 0)
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			starts = append(starts, i+1)
		}
	}
	starts = append(starts, len(p)+1)
	n := len(starts) - 1
	if m.segment > 0 {
		if s, c := mostRepeated(n, func(i int) string { return p[starts[i] : starts[i+1]-1] }); c > m.segment {
			return reject(fmt.Sprintf("max_repeat: segment %s occurs %d times (max %d)", q(s), c, m.segment))
		}
	}
	if m.pair > 0 && n > 1 {
		if s, c := mostRepeated(n-1, func(i int) string { return p[starts[i] : starts[i+2]-1] }); c > m.pair {
			return reject(fmt.Sprintf("max_repeat: segments %s occur %d times (max %d)", q(s), c, m.pair))
		}
	}
	return accept(m.ok)
}

// mostRepeated returns the item occurring most often among item(0..n-1) (the first such) and its
// count: quadratic without allocation for short paths, a map for long ones.
func mostRepeated(n int, item func(int) string) (string, int) {
	best, bestN := "", 0
	if n <= 32 {
		for i := 0; i < n; i++ {
			s := item(i)
			c := 1
			for j := i + 1; j < n; j++ {
				if item(j) == s {
					c++
				}
			}
			if c > bestN {
				best, bestN = s, c
			}
		}
		return best, bestN
	}
	counts := make(map[string]int)
	for i := 0; i < n; i++ {
		s := item(i)
		counts[s]++
		if c := counts[s]; c > bestN {
			best, bestN = s, c
		}
	}
	return best, bestN
}

// LevelRange accepts URLs whose level (Input.Level) is between min and max inclusive. Use
// math.MinInt or math.MaxInt for an open end.
func LevelRange(min, max int) Filter { return levelRange{min, max} }

type levelRange struct{ min, max int }

func (l levelRange) String() string {
	switch {
	case l.min == math.MinInt && l.max == math.MaxInt:
		return "any"
	case l.min == math.MinInt:
		return "≤ " + strconv.Itoa(l.max)
	case l.max == math.MaxInt:
		return "≥ " + strconv.Itoa(l.min)
	}
	return strconv.Itoa(l.min) + ".." + strconv.Itoa(l.max)
}

func (l levelRange) Decide(in Input) Decision {
	if in.Level < l.min || in.Level > l.max {
		return reject("level " + strconv.Itoa(in.Level) + " outside " + l.String())
	}
	return accept("level " + strconv.Itoa(in.Level) + " within " + l.String())
}
