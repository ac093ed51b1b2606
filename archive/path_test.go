package archive

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var pagePathTests = []struct {
	name string
	url  string
	want string
}{
	// Host directory.
	{"paper example over https", "https://www.mysite.com/d1/d2", "www.mysite.com/d1/d2"},
	{"plain http is marked", "http://www.mysite.com/d1/d2", "www.mysite.com_http/d1/d2"},
	{"port and http", "http://127.0.0.1:8080/", "127.0.0.1_8080_http"},
	{"port over https", "https://example.com:8443/", "example.com_8443"},
	{"default port kept if given", "https://example.com:443/", "example.com_443"},
	{"root", "https://example.com/", "example.com"},
	{"empty path is root", "https://example.com", "example.com"},
	{"punycode host as is", "https://xn--bcher-kva.example/", "xn--bcher-kva.example"},
	{"unicode host escaped", "https://bücher.example/", "b%c3%bccher.example"},
	{"ipv6 host", "https://[2001:db8::1]:8443/x", "2001%3adb8%3a%3a1_8443/x"},
	{"ipv6 loopback http", "http://[::1]/", "%3a%3a1_http"},
	{"ipv6 zone", "http://[fe80::1%25en0]/", "fe80%3a%3a1%25en0_http"},
	{"upper-case host", "http://Example.COM/", "example.com~u381_http"},
	{"underscore in host", "https://my_host:81/", "my%5fhost_81"},
	{"host trailing dot", "https://example.com./", "example.com%2e"},
	{"host named like a device", "https://con/", "%63on"},
	{"host named like the manifest", "https://manifest.jsonl/", "%6danifest.jsonl"},
	{"other scheme", "ftp://example.com/x", "example.com_ftp/x"},
	{"upper-case scheme", "HTTP://example.com/", "example.com_http"},
	{"no host", "http:foo/bar", "_nohost_http/foo/bar"},
	{"relative reference", "/rel/path", "_nohost_/rel/path"},
	{"user info ignored", "https://user:pw@example.com/x", "example.com/x"},

	// Segments.
	{"trailing slash", "https://example.com/d1/d2/", "example.com/d1/d2/_index"},
	{"index.html is ordinary", "https://example.com/index.html", "example.com/index.html"},
	{"double slash", "https://example.com/a//b", "example.com/a/_index/b"},
	{"only slashes", "https://example.com//", "example.com/_index/_index"},
	{"escaped slash stays in segment", "https://example.com/a%2Fb/c", "example.com/a%2fb/c"},
	{"real slash", "https://example.com/a/b/c", "example.com/a/b/c"},
	{"raw dot-dot", "https://example.com/a/../b", "example.com/a/%2e%2e/b"},
	{"escaped dot-dot", "https://example.com/%2e%2E/x", "example.com/%2e%2e/x"},
	{"raw dot", "https://example.com/./x", "example.com/%2e/x"},
	{"NUL", "https://example.com/a%00b", "example.com/a%00b"},
	{"control bytes", "https://example.com/%01%1F%7F", "example.com/%01%1f%7f"},
	{"non-UTF-8", "https://example.com/%FF%FEx", "example.com/%ff%fex"},
	{"UTF-8", "https://example.com/caf%C3%A9", "example.com/caf%c3%a9"},
	{"percent sign", "https://example.com/100%25", "example.com/100%25"},
	{"space and quotes", "https://example.com/a%20%22b%22", "example.com/a%20%22b%22"},
	{"trailing space", "https://example.com/a%20", "example.com/a%20"},
	{"trailing dot", "https://example.com/a.", "example.com/a%2e"},
	{"trailing dots", "https://example.com/a..", "example.com/a.%2e"},
	{"tilde", "https://example.com/~user", "example.com/%7euser"},
	{"escaped tilde is tilde", "https://example.com/%7Euser", "example.com/%7euser"},
	{"safe punctuation", "https://example.com/a-b_c.d=e+f", "example.com/a-b_c.d=e+f"},
	{"shell metacharacters", "https://example.com/'(a)'*$x", "example.com/%27%28a%29%27%2a%24x"},

	// Case.
	{"capitalised", "https://example.com/About", "example.com/about~u1"},
	{"lower", "https://example.com/about", "example.com/about"},
	{"all caps", "https://example.com/ABOUT", "example.com/about~u1f"},
	{"file name caps", "https://example.com/README.md", "example.com/readme.md~u3f"},
	{"escaped capital is capital", "https://example.com/%41", "example.com/a~u1"},
	{"letters after escapes count", "https://example.com/%C3%A9X", "example.com/%c3%a9x~u1"},

	// Sub-delimiters, literal and escaped.
	{"literal colon", "https://example.com/a:b", "example.com/a%3ab"},
	{"escaped colon", "https://example.com/a%3Ab", "example.com/a%3ab~p1"},
	{"escaped colon lower-case hex", "https://example.com/a%3ab", "example.com/a%3ab~p1"},
	{"second of two escaped", "https://example.com/@a%40", "example.com/%40a%40~p2"},
	{"literal plus", "https://example.com/a+b", "example.com/a+b"},
	{"escaped plus", "https://example.com/a%2Bb", "example.com/a+b~p1"},
	{"case and escape", "https://example.com/A%3Ab", "example.com/a%3ab~u1p1"},

	// Reserved names.
	{"our page file", "https://example.com/page.html", "example.com/%70age.html"},
	{"our page prefix", "https://example.com/page.anything", "example.com/%70age.anything"},
	{"our page file upper", "https://example.com/Page.TXT", "example.com/%70age.txt~u71"},
	{"page alone is fine", "https://example.com/page", "example.com/page"},
	{"manifest", "https://example.com/manifest.jsonl", "example.com/%6danifest.jsonl"},
	{"marker lookalike", "https://example.com/_index", "example.com/%5findex"},
	{"query marker lookalike", "https://example.com/_q_x", "example.com/%5fq_x"},
	{"hidden", "https://example.com/.git/config", "example.com/%2egit/config"},
	{"well-known", "https://example.com/.well-known/x", "example.com/%2ewell-known/x"},
	{"option lookalike", "https://example.com/-rf", "example.com/%2drf"},
	{"plus first", "https://example.com/+1", "example.com/%2b1"},
	{"zsh equals", "https://example.com/=ls", "example.com/%3dls"},
	{"windows CON", "https://example.com/CON", "example.com/%63on~u7"},
	{"windows con", "https://example.com/con", "example.com/%63on"},
	{"windows nul with extension", "https://example.com/nul.txt", "example.com/%6eul.txt"},
	{"windows nul with two extensions", "https://example.com/nul.tar.gz", "example.com/%6eul.tar.gz"},
	{"windows com1", "https://example.com/com1", "example.com/%63om1"},
	{"windows com0", "https://example.com/com0", "example.com/%63om0"},
	{"windows lpt9", "https://example.com/LPT9.x", "example.com/%6cpt9.x~u7"},
	{"windows aux trailing dot", "https://example.com/aux.", "example.com/%61ux%2e"},
	{"not a device: console", "https://example.com/console", "example.com/console"},
	{"not a device: com10", "https://example.com/com10", "example.com/com10"},

	// Query and fragment.
	{"query", "https://example.com/search?q=go&page=2", "example.com/search/_q_q=go%26page=2"},
	{"empty query", "https://example.com/search?", "example.com/search/_q_"},
	{"fragment dropped", "https://example.com/search#results", "example.com/search"},
	{"query and fragment", "https://example.com/search?q=1#x", "example.com/search/_q_q=1"},
	{"query case", "https://example.com/x?Q=A", "example.com/x/_q_q=a~u3"},
	{"query escapes kept", "https://example.com/x?q=a%20b", "example.com/x/_q_q=a%2520b"},
	{"query escaped ampersand", "https://example.com/x?a=1%26b=2", "example.com/x/_q_a=1%2526b=2"},
	{"query on root", "https://example.com/?x=1", "example.com/_q_x=1"},
	{"query after slash", "https://example.com/d/?x", "example.com/d/_index/_q_x"},
	{"query with slash and dots", "https://example.com/x?/../..", "example.com/x/_q_%2f..%2f.%2e"},
	{"query with tilde", "https://example.com/x?~", "example.com/x/_q_%7e"},
}

func TestPagePath(t *testing.T) {
	if len(pagePathTests) < 40 {
		t.Fatalf("only %d cases", len(pagePathTests))
	}
	for _, tt := range pagePathTests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got := PagePath(u)
			if got != tt.want {
				t.Errorf("PagePath(%q) = %q, want %q", tt.url, got, tt.want)
			}
			checkPagePath(t, got)
		})
	}
}

// TestPagePathDistinct checks injectivity over the table: URLs that are different after
// normalisation must not share a directory.
func TestPagePathDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, tt := range pagePathTests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		got := PagePath(u)
		key, ok := canonicalKey(u)
		if !ok {
			key = tt.url // outside the normaliser's range: distinct by its spelling
		}
		if prev, dup := seen[got]; dup && prev != key {
			t.Errorf("%q and %q both map to %q", prev, key, got)
		}
		seen[got] = key
	}
}

func TestPagePathLong(t *testing.T) {
	longSeg := strings.Repeat("a", 4000)
	manySegs := strings.Repeat("/ab", 2000)
	tests := []struct {
		name, url, want string
	}{
		{"4000-byte segment", "https://example.com/" + longSeg,
			"example.com/" + strings.Repeat("a", 174) + "~h" + "82396ec9191a22922e88923e"},
		{"4000-byte segment then more", "https://example.com/" + longSeg + "/x",
			"example.com/" + strings.Repeat("a", 174) + "~h" + "82396ec9191a22922e88923e/x"},
		{"long escapes are not split", "https://example.com/" + strings.Repeat("%C3%A9", 100),
			"example.com/" + strings.Repeat("%c3%a9", 29) + "~h" + "cf06850853055781e3a391e1"},
		{"case mask pushes past the limit", "https://example.com/" + strings.Repeat("A", 190),
			"example.com/" + strings.Repeat("a", 174) + "~h" + "08ee116da74a5c72e45151f3"},
		{"2000 segments fold", "https://example.com" + manySegs,
			"example.com" + strings.Repeat("/ab", 665) + "/_more~h" + "e1b3462ae6608781f3219bdebb5940c6"},
		{"long query", "https://example.com/s?q=" + strings.Repeat("x", 300),
			"example.com/s/_q_q=" + strings.Repeat("x", 169) + "~h" + "90caaf37f9e03ebfc4d2973a"},
		{"long host", "https://" + strings.Repeat("h", 250) + ".example:8080/",
			strings.Repeat("h", 174) + "~h" + "07067aef7038b8bc78dfad12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got := PagePath(u)
			if got != tt.want {
				t.Errorf("PagePath(%.60q...) =\n%q\nwant\n%q", tt.url, got, tt.want)
			}
			checkPagePath(t, got)
		})
	}
}

// Hand-built URLs reach states url.Parse never produces.
func TestPagePathBuilt(t *testing.T) {
	tests := []struct {
		name string
		u    *url.URL
		want string
	}{
		{"nil", nil, "_nohost_"},
		{"zero", &url.URL{}, "_nohost_"},
		{"raw path keeps escaped slash", &url.URL{Scheme: "https", Host: "a", Path: "/x/y", RawPath: "/x%2Fy"}, "a/x%2fy"},
		{"raw path that does not match is ignored", &url.URL{Scheme: "https", Host: "a", Path: "/x/y", RawPath: "/zz"}, "a/x/y"},
		{"path without leading slash", &url.URL{Scheme: "https", Host: "a", Path: "b/c"}, "a/b/c"},
		{"non-numeric port", &url.URL{Scheme: "https", Host: "a:x_"}, "a%3ax%5f"},
		{"force query", &url.URL{Scheme: "https", Host: "a", Path: "/", ForceQuery: true}, "a/_q_"},
		{"odd scheme", &url.URL{Scheme: "Svn+SSH", Host: "a", Path: "/"}, "a_svn%2bssh"},
		{"NUL in path", &url.URL{Scheme: "https", Host: "a", Path: "/\x00/\xff"}, "a/%00/%ff"},
		{"NUL in host", &url.URL{Scheme: "https", Host: "a\x00b"}, "a%00b"},
		{"dot host", &url.URL{Scheme: "https", Host: ".."}, "%2e%2e"},
		{"slash host", &url.URL{Scheme: "https", Host: "a/b", Path: "/c"}, "a%2fb/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PagePath(tt.u)
			if got != tt.want {
				t.Errorf("PagePath = %q, want %q", got, tt.want)
			}
			checkPagePath(t, got)
		})
	}
}

// TestPagePathOnDisk creates every directory of the table with the page files in it, including
// pages that are parents of pages, to catch names this file system refuses.
func TestPagePathOnDisk(t *testing.T) {
	run := filepath.Join(t.TempDir(), RunDir(time.Date(2026, 11, 22, 3, 15, 0, 0, time.UTC)))
	for _, tt := range pagePathTests {
		u, _ := url.Parse(tt.url)
		dir := filepath.Join(run, filepath.FromSlash(PagePath(u)))
		if !strings.HasPrefix(dir, run+string(filepath.Separator)) {
			t.Fatalf("%q escapes the run directory: %q", tt.url, dir)
		}
		for _, f := range []string{"page.html", "page.txt", "page.json"} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), []byte(tt.url), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(run, "manifest.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every page.html must still hold its own URL: no page shared or overwrote another's directory.
	for _, tt := range pagePathTests {
		u, _ := url.Parse(tt.url)
		key, _ := canonicalKey(u)
		b, err := os.ReadFile(filepath.Join(run, filepath.FromSlash(PagePath(u)), "page.html"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := url.Parse(string(b)); string(b) != tt.url && !sameKey(got, key) {
			t.Errorf("%q: page.html holds %q", tt.url, b)
		}
	}
}

func sameKey(u *url.URL, key string) bool {
	k, ok := canonicalKey(u)
	return ok && k == key
}

func TestRunDir(t *testing.T) {
	start := time.Date(2026, 11, 22, 4, 15, 0, 999, time.FixedZone("CET", 3600))
	name := RunDir(start)
	if name != "2026-11-22T031500Z" {
		t.Fatalf("RunDir = %q", name)
	}
	if a, b := RunDir(start), RunDir(start.Add(time.Hour)); a >= b {
		t.Errorf("run directories do not sort by time: %q >= %q", a, b)
	}
}

// checkPagePath checks the promises PagePath makes for every input.
func checkPagePath(t *testing.T, r string) {
	t.Helper()
	if r == "" || r[0] == '/' || path.Clean(r) != r {
		t.Fatalf("not a clean relative path: %q", r)
	}
	if len(r) > maxPath {
		t.Fatalf("path of %d bytes: %.80q...", len(r), r)
	}
	for i, seg := range strings.Split(r, "/") {
		if err := checkName(seg); err != "" {
			t.Fatalf("element %d %q of %q: %s", i, seg, r, err)
		}
	}
}

func checkName(seg string) string {
	switch {
	case seg == "" || seg == "." || seg == "..":
		return "empty or dot"
	case len(seg) > maxName:
		return "too long"
	case seg[len(seg)-1] == '.':
		return "trailing dot"
	case strings.IndexByte(".-+=", seg[0]) >= 0:
		return "bad first byte"
	case seg[0] == '_' && !strings.HasPrefix(seg, markIndex) && !strings.HasPrefix(seg, markQuery) &&
		!strings.HasPrefix(seg, markFold) && !strings.HasPrefix(seg, markNoHost):
		return "unknown marker"
	case strings.HasPrefix(seg, "page.") || strings.HasPrefix(seg, "manifest."):
		return "our own file name"
	case reservedStart(seg) && seg[0] != '_':
		return "windows device name"
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case isSafe(c):
		case c == '%':
			if i+2 >= len(seg) || !isLowerHex(seg[i+1]) || !isLowerHex(seg[i+2]) {
				return "bad escape"
			}
			i += 2
		case c == '~':
			if i+1 >= len(seg) || strings.IndexByte("uph", seg[i+1]) < 0 {
				return "bad suffix"
			}
		default:
			return "unsafe byte"
		}
	}
	return ""
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// canonicalKey is a small stand-in for strata's normaliser, coarse enough that two URLs it keeps
// apart are certainly different after normalisation: scheme and host in lower case, escapes of
// unreserved bytes decoded and other escapes in upper-case hex, empty path as "/", no fragment and
// no user information. It reports false for URLs the normaliser would reject.
func canonicalKey(u *url.URL) (string, bool) {
	scheme := strings.ToLower(u.Scheme)
	if u.Opaque != "" || (scheme != "http" && scheme != "https") {
		return "", false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	var b strings.Builder
	b.WriteString(scheme + "://" + strings.ToLower(u.Hostname()) + ":" + u.Port())
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			c := unhex(p[i+1])<<4 | unhex(p[i+2])
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
				b.WriteByte(c)
			} else {
				b.WriteString(strings.ToUpper(p[i : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?" + u.RawQuery)
	}
	return b.String(), true
}

func FuzzPagePath(f *testing.F) {
	for _, tt := range pagePathTests {
		f.Add(tt.url)
	}
	f.Add("http://a/" + strings.Repeat("%2F", 700) + "?" + strings.Repeat("~", 300))
	f.Add("https://a" + strings.Repeat("/x", 1100))
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		r := PagePath(u)
		checkPagePath(t, r)
		if again := PagePath(u); again != r {
			t.Fatalf("not deterministic: %q then %q", r, again)
		}
	})
}

// FuzzPagePathBuilt feeds PagePath URLs that url.Parse would never return.
func FuzzPagePathBuilt(f *testing.F) {
	f.Add("https", "a:80", "/x", "/x", "q", "", false)
	f.Add("", "", "", "", "", "a/../b", true)
	f.Add("HTTP", "[::1]:x", "/a\x00b/../", "/a%2Fb", "\xff", "", false)
	f.Fuzz(func(t *testing.T, scheme, host, p, rawPath, rawQuery, opaque string, force bool) {
		u := &url.URL{Scheme: scheme, Host: host, Path: p, RawPath: rawPath, RawQuery: rawQuery,
			Opaque: opaque, ForceQuery: force}
		checkPagePath(t, PagePath(u))
	})
}

// FuzzPagePathInjective checks that URLs that differ after normalisation get different
// directories. Random pairs almost never collide, so each input is also compared with variants
// of itself that keep or change its meaning in the ways the encoding has to tell apart: a letter
// in the other case, a byte percent-encoded.
func FuzzPagePathInjective(f *testing.F) {
	pairs := [][2]string{
		{"https://a/a:b", "https://a/a%3Ab"},
		{"https://a/About", "https://a/about"},
		{"https://a/d/", "https://a/d"},
		{"https://a/d?", "https://a/d"},
		{"https://a/d?", "https://a/d/"},
		{"https://a/About", "https://a/about1"},
		{"https://a/About", "https://a/about~u1"},
		{"https://a/d/_index", "https://a/d/"},
		{"https://a/page.html", "https://a/%70age.html"},
		{"http://a/", "https://a/"},
		{"https://a:8080/", "https://a_8080/"},
		{"https://a/x?q=a%26b", "https://a/x?q=a&b"},
		{"https://a/a%2Fb", "https://a/a/b"},
		{"https://a/CON", "https://a/con"},
		{"https://a/" + strings.Repeat("a", 300), "https://a/" + strings.Repeat("a", 299) + "b"},
	}
	for _, p := range pairs {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, err := url.Parse(a)
		if err != nil {
			return
		}
		ka, ok := canonicalKey(ua)
		if !ok {
			return
		}
		pa := PagePath(ua)
		compare := func(s string) {
			u, err := url.Parse(s)
			if err != nil {
				return
			}
			k, ok := canonicalKey(u)
			if ok && k != ka && PagePath(u) == pa {
				t.Fatalf("%q and %q are different URLs (%q, %q) but both map to %q", a, s, ka, k, pa)
			}
		}
		compare(b)
		for i := 0; i < len(a) && i < 256; i++ {
			c := a[i]
			switch {
			case 'a' <= c && c <= 'z':
				compare(a[:i] + string(c-'a'+'A') + a[i+1:])
			case 'A' <= c && c <= 'Z':
				compare(a[:i] + string(c-'A'+'a') + a[i+1:])
			}
			compare(a[:i] + "%" + strings.ToUpper(string(appendEscape(nil, c)[1:])) + a[i+1:])
			switch c {
			case '/':
				compare(a[:i] + a[i+1:])
				compare(a[:i] + "?" + a[i+1:])
			case '?':
				compare(a[:i] + a[i+1:])
				compare(a[:i] + "/" + a[i+1:])
			}
		}
	})
}

func TestCheckNameRejects(t *testing.T) {
	// The fuzz tests are only as good as this checker.
	for _, bad := range []string{"", ".", "..", "a.", ".a", "-a", "_x", "page.html", "manifest.jsonl",
		"con", "nul.txt", "A", "a b", "a%2", "a%2F", "a~x", strings.Repeat("a", 201), "\xff", "a/b"} {
		if checkName(bad) == "" {
			t.Errorf("checkName(%q) accepted", bad)
		}
	}
	for _, good := range []string{"a", "_index", "_q_", "a~u1", "%2e", "a%2e", "x~h0f", "com10"} {
		if msg := checkName(good); msg != "" {
			t.Errorf("checkName(%q): %s", good, msg)
		}
	}
}
