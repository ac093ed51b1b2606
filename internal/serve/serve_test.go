package serve_test

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/serve"
)

func TestPages(t *testing.T) {
	f := newFixture(t)
	id := func(u string) int64 { return f.ids[u] }
	tests := []struct {
		name   string
		path   string
		status int
		want   []string // substrings of the body
		reject []string
	}{
		{"runs", "/", 200, []string{"run 3", "+21m00s", `href="/changes?run=3"`, "<svg"}, nil},
		{"runs page", "/runs", 200, []string{`<a href="/changes?run=1">1</a>`}, nil},
		{"older runs", "/runs?before=2", 200, []string{`<a href="/changes?run=1">1</a>`}, []string{`<a href="/changes?run=2">2</a>`}},
		{"runs bad cursor", "/runs?before=x", 400, []string{"before must be"}, nil},
		{"changes of the last run", "/changes", 200, []string{"Changes in run 3", front}, []string{story}},
		{"changes of run 2", "/changes?run=2", 200, []string{story}, []string{front + `"`}},
		{"changes by size", "/changes?run=3&min=40", 200, []string{front, "many/p006"}, []string{"many/p003<"}},
		{"changes by site", "/changes?run=3&site=blog.example", 200, []string{"No page changed in this run on blog.example"}, nil},
		{"changes of an unknown run", "/changes?run=99", 404, nil, nil},
		{"changes bad min", "/changes?min=500", 400, nil, nil},
		{"sites", "/sites", 200, []string{"news.example", "blog.example", "404: no robots.txt", "30.0s"}, nil},
		{"site", "/sites/news.example", 200, []string{"https://news.example/", "30.0s (robots.txt Crawl-delay)", "&lt;script&gt;", "Trap defences"}, nil},
		{"unknown site", "/sites/nowhere.example", 404, nil, nil},
		{"tree", "/tree?p=https://news.example/", 200, []string{"docs/", "many/", "story", "&#34;&gt;&lt;script&gt;"}, nil},
		{"tree below", "/tree?p=https://news.example/many/", 200, []string{"p000", "p099", "More"}, []string{"p100"}},
		{"tree of no URL", "/tree?p=javascript:alert(1)//", 400, nil, nil},
		{"page", fmt.Sprintf("/page/%d", id(front)), 200, []string{front, "changed at 1 of its last 3 usable fetches",
			"due: fr 1 counts down to 0", "elsewhere.example", "Compare two versions"}, nil},
		{"gone page", fmt.Sprintf("/page/%d", id(old)), 200, []string{`id="gone"`, "410 Gone", "no longer crawls"}, []string{`id="not-found"`}},
		{"gone page's text", fmt.Sprintf("/page/%d/text", id(old)), 404, nil, nil},
		{"page not found at its last fetch", fmt.Sprintf("/page/%d", id(moved)), 200, []string{`id="not-found"`, "fetched again in every run"},
			[]string{`id="gone"`}},
		{"a page that is there", fmt.Sprintf("/page/%d", id(front)), 200, nil, []string{`id="gone"`, `id="not-found"`}},
		{"a page that answered 404 once", fmt.Sprintf("/page/%d", id(moved)), 200, []string{`id="not-found"`}, []string{`id="gone"`}},
		{"a page that answered 410", fmt.Sprintf("/page/%d", id(old)), 200, []string{`id="gone"`, "410 Gone"}, nil},
		{"gone in the tree", "/tree?p=https://news.example/", 200, []string{`old</a> <span class="badge gone">gone</span>`},
			[]string{`missing</a> <span class="badge`}},
		{"runs count 404s and gone pages", "/", 200, []string{"3 not found (404 or 410) and 2 marked gone", `title="answers of 404 Not Found or 410 Gone">404</th>`}, nil},
		{"unknown page", "/page/999999", 404, nil, nil},
		{"page id not a number", "/page/abc", 404, nil, nil},
		{"text", fmt.Sprintf("/page/%d/text", id(front)), 200, []string{"harbour bridge"}, nil},
		{"older text", fmt.Sprintf("/page/%d/text?v=%d", id(front), f.fetches[front][0]), 200, []string{"tram line"}, nil},
		{"text of another page's version", fmt.Sprintf("/page/%d/text?v=%d", id(front), f.fetches[story][0]), 404, nil, nil},
		{"text of a fetch that stored nothing", fmt.Sprintf("/page/%d/text?v=%d", id(front), f.fetches[front][1]), 404, nil, nil},
		{"text of a page never stored", fmt.Sprintf("/page/%d/text", id(docs)), 404, nil, nil},
		{"diff", fmt.Sprintf("/page/%d/diff", id(front)), 200, []string{
			// the words that changed inside a changed line are marked; a line with no counterpart is marked whole
			`<td class="code">Headline: the <del class="w">tram line opens</del>.</td>`,
			`<td class="code">Headline: the <ins class="w">harbour bridge closes</ins>.</td>`,
			"<ins>A new line at the end.</ins>", "1 lines removed, 2 added"}, nil},
		{"diff folds", fmt.Sprintf("/page/%d/diff", id(long)), 200, []string{
			`<summary>… 37 unchanged lines (from line 1)</summary>`, `<summary>… 36 unchanged lines (from line 45)</summary>`,
			`says <del class="w">nothing</del> new.`}, nil},
		{"word diff folds", fmt.Sprintf("/page/%d/diff?mode=word", id(long)), 200, []string{
			`<details class="fold"><summary>… 38 unchanged lines</summary>Paragraph 0 of`, "<del>nothing</del><ins>something</ins>"}, nil},
		{"word diff", fmt.Sprintf("/page/%d/diff?mode=word", id(front)), 200, []string{"<del>tram line opens</del>", "<ins>harbour bridge closes</ins>"}, nil},
		{"diff of the first version", fmt.Sprintf("/page/%d/diff?to=%d", id(front), f.fetches[front][0]), 200, []string{"nothing to compare"}, nil},
		{"diff of one version", fmt.Sprintf("/page/%d/diff", id(evil)), 200, []string{"nothing to compare"}, nil},
		{"diff bad id", fmt.Sprintf("/page/%d/diff?from=-3", id(front)), 400, nil, nil},
		{"links out", fmt.Sprintf("/page/%d/links?dir=out", id(front)), 200, []string{"elsewhere.example", "external"}, nil},
		{"links in", fmt.Sprintf("/page/%d/links?dir=in", id(story)), 200, []string{front}, nil},
		{"search substring", "/search?q=MANY/p11&in=urls", 200, []string{"many/p110", "many/p119"}, []string{"many/p109"}},
		{"search prefix", "/search?q=https://news.example/docs", 200, []string{docs}, []string{story}},
		{"search nothing", "/search?q=zzz&in=urls", 200, []string{"No URL contains"}, nil},
		{"search text", "/search?q=harbour", 200, []string{`<a href="/page/1/text?v=`, "News</a>", "current version",
			"the <mark>harbour</mark> bridge"}, []string{"tram"}},
		{"search text, an older version", "/search?q=tram+line", 200, []string{"an older version", "the <mark>tram</mark> <mark>line</mark> opens"}, nil},
		{"search text by title", "/search?q=handbook", 200, []string{"Handbook</a>"}, nil},
		{"search text, folded accents and case", "/search?q=RELEASE+NOTES+-0.9", 200, []string{"release.0.7", "release.0.10"}, []string{"release.0.9<"}},
		{"search text, nothing", "/search?q=zebra", 200, []string{"No stored version contains"}, nil},
		{"search text, only a negation", "/search?q=-zebra", 400, []string{"no word to look for"}, nil},
		{"search text, FTS syntax is only words", "/search?q=%22a%22+AND+NEAR(b", 200, nil, nil},
		{"search text, a NUL and broken UTF-8 separate words", "/search?q=harbour%00%FF", 200, []string{"the <mark>harbour</mark> bridge"}, nil},
		{"search text, one site", "/search?q=blog&site=blog.example", 200, []string{"Blog</a>"}, nil},
		{"search text, another site", "/search?q=blog&site=news.example", 200, []string{"No stored version contains"}, nil},
		{"changes: new pages", "/changes?run=3&kind=new", 200, []string{`id="events"`, "Release release.0.7", rel10}, []string{long}},
		// The pages the run marked gone, as the runs table counts them: not moved, whose single 404 left it active.
		{"changes: gone pages", "/changes?run=3&kind=gone", 200, []string{story, "Story</a>", old, `<span class="badge gone">gone</span>`}, []string{moved}},
		{"changes: unlinked pages", "/changes?run=3&kind=unlinked", 200, []string{story}, []string{jsURL}},
		{"changes: kind counts", "/changes?run=3", 200, []string{"new <span class=\"count\">3</span>", "gone <span class=\"count\">2</span>"}, nil},
		{"changes: bad kind", "/changes?kind=frob", 400, []string{"kind must be"}, nil},
		{"runs: 404s and new pages", "/runs", 200, []string{`<td class="n">3</td>`, `<a href="/changes?run=3&amp;kind=gone">2</a>`,
			`<a href="/changes?run=1&amp;kind=new">5</a>`, `class="tick date"`, ">2026-11-21<", ">2026-11-23<"}, nil},
		{"tree: natural order, titles, marks", "/tree?p=https://news.example/docs/", 200, []string{"Handbook",
			`release.0.7</a> <span class="title">Release release.0.7</span> <span class="badge new">new</span>`}, nil},
		{"tree: gone marked", "/tree?p=https://news.example/", 200, []string{
			`story</a> <span class="title">Story</span> <span class="badge gone">gone</span> <span class="badge gone">gone</span> <span class="badge unlinked">no longer linked</span>`}, nil},
		{"page: timeline with dates and skipped runs", fmt.Sprintf("/page/%d", id(long)), 200, []string{`class="tick date"`,
			`not fetched (not due, or skipped with its hub)`, `<rect class="s-skip"`}, nil},
		{"page: a gone page", fmt.Sprintf("/page/%d", id(story)), 200, []string{`<span class="badge gone">gone</span>`, "s-404",
			`<span class="badge gone">404</span>`, `href="/changes?run=3&amp;kind=gone">run 3</a>`}, nil},
		{"site: timeline", "/sites/news.example", 200, []string{`class="tick date"`, "answered 404 or 410", `href="/feed.atom?site=news.example"`}, nil},
		{"breadcrumbs of a page", fmt.Sprintf("/page/%d/text", id(rel7)), 200, []string{`<li><a href="/sites">Sites</a></li><li><a href="/sites/news.example">news.example</a></li>`,
			`<a href="/tree?p=https%3A%2F%2Fnews.example%2Fdocs%2F">docs/</a>`, fmt.Sprintf(`<a href="/page/%d">release.0.7</a>`, id(rel7)), `<span aria-current="page">text</span>`}, nil},
		{"not found", "/no/such/page", 404, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.path)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Fatalf("GET %s: status %d, want %d\n%s", tt.path, rec.Code, tt.status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s: body lacks %q", tt.path, w)
				}
			}
			for _, r := range tt.reject {
				if strings.Contains(body, r) {
					t.Errorf("GET %s: body has %q", tt.path, r)
				}
			}
			checkStrataPage(t, tt.path, rec.Header(), body)
		})
	}
}

// checkStrataPage holds for every page of strata's own: the strict policy, and no script at all,
// whatever the archive holds.
func checkStrataPage(t *testing.T, path string, h http.Header, body string) {
	t.Helper()
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") ||
		strings.Contains(csp, "unsafe") {
		t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("GET %s: headers %v", path, h)
	}
	if ct := h.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	lower := strings.ToLower(body)
	for _, bad := range []string{"<script", `href="javascript:`, `src="javascript:`, " onerror=", " onload=", "<img"} {
		if strings.Contains(lower, bad) {
			t.Errorf("GET %s: strata's page contains %q", path, bad)
		}
	}
}

func TestHostileContentIsEscaped(t *testing.T) {
	f := newFixture(t)
	pages := []string{
		fmt.Sprintf("/page/%d", f.ids[evil]),
		fmt.Sprintf("/page/%d/text", f.ids[evil]),
		fmt.Sprintf("/page/%d", f.ids[hostileURL]),
		fmt.Sprintf("/page/%d", f.ids[jsURL]),
		fmt.Sprintf("/page/%d", f.ids[front]), // links to jsURL
		"/tree?p=https://news.example/",
		"/search?q=script&in=urls",
		"/search?q=script",
		"/search?q=evil",
		"/sites/news.example",
		"/changes?run=1&kind=new",
	}
	for _, p := range pages {
		rec := f.get(t, p)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d\n%s", p, rec.Code, rec.Body)
		}
		checkStrataPage(t, p, rec.Header(), rec.Body.String())
	}
	text := f.get(t, fmt.Sprintf("/page/%d/text", f.ids[evil])).Body.String()
	if !strings.Contains(text, html.EscapeString(hostileTitle)) && !strings.Contains(text, "&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;") {
		t.Errorf("the hostile title is not shown escaped:\n%s", text)
	}
	search := f.get(t, "/search?q=script&in=urls").Body.String()
	if !strings.Contains(search, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the hostile URL is not listed escaped:\n%s", search)
	}
}

func TestRawViewIsSandboxed(t *testing.T) {
	f := newFixture(t)
	fid := f.fetches[evil][0]
	rec := f.get(t, fmt.Sprintf("/raw/%d", fid))
	if rec.Code != 200 || rec.Body.String() != hostileBody {
		t.Fatalf("GET /raw/%d: %d %q", fid, rec.Code, rec.Body)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"sandbox", "default-src 'none'", "img-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("raw Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "allow-scripts") || strings.Contains(csp, "allow-same-origin") || strings.Contains(csp, "script-src") {
		t.Errorf("raw Content-Security-Policy %q lets script in", csp)
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("raw headers: %v", rec.Header())
	}

	frame := f.get(t, fmt.Sprintf("/page/%d/html?v=%d", f.ids[evil], fid)).Body.String()
	m := regexp.MustCompile(`<iframe[^>]*>`).FindString(frame)
	if !strings.Contains(m, `sandbox=""`) || !strings.Contains(m, fmt.Sprintf(`src="/raw/%d"`, fid)) {
		t.Errorf("the frame view's iframe is %q, want an empty sandbox attribute and src /raw/%d", m, fid)
	}
	if strings.Contains(frame, "pwned") {
		t.Error("the frame view embeds the archived bytes")
	}

	for _, p := range []string{"/raw/999999", "/raw/x", fmt.Sprintf("/raw/%d", f.fetches[front][1])} {
		if rec := f.get(t, p); rec.Code != 404 {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
		}
	}
}

func TestPagination(t *testing.T) {
	f := newFixture(t)
	t.Run("changes", func(t *testing.T) {
		ids := follow(t, f, "/changes?run=3", `<td class="page"><a href="/page/(\d+)">`, `<a href="(/changes\?[^"]+)">More changes`)
		byID := map[string]string{}
		for u, id := range f.ids {
			byID[fmt.Sprint(id)] = u
		}
		var urls []string
		for _, id := range ids {
			urls = append(urls, byID[id])
		}
		if len(urls) != 61 { // the front page and 60 of many/
			t.Fatalf("walked %d changes, want 61: %v", len(urls), urls)
		}
		seen := map[string]bool{}
		for _, u := range urls {
			if seen[u] {
				t.Errorf("%s listed twice", u)
			}
			seen[u] = true
		}
		// Biggest first: p006 (0.6) comes before p005 (0.5), and the front page (0.4) between.
		pos := func(s string) int {
			for i, u := range urls {
				if strings.HasSuffix(u, s) {
					return i
				}
			}
			return -1
		}
		if !(pos("p006") < pos("p005") && pos("p005") < pos(".example/") && pos(".example/") < pos("p003")) {
			t.Errorf("changes are not biggest first: %v", urls)
		}
	})
	t.Run("tree", func(t *testing.T) {
		names := follow(t, f, "/tree?p=https://news.example/many/", `<li class="leaf">\s*<a href="/page/\d+">([^<]+)</a>`, `<a href="(/tree\?[^"]+)">More`)
		if len(names) != 120 || names[0] != "p000" || names[119] != "p119" {
			t.Errorf("walked %d entries: %v", len(names), names)
		}
	})
	t.Run("search", func(t *testing.T) {
		hits := follow(t, f, "/search?q=https://news.example/many/", `<li><a href="/page/\d+">([^<]+)</a>`, `<a href="(/search\?[^"]+)">More`)
		if len(hits) != 120 {
			t.Errorf("walked %d hits, want 120", len(hits))
		}
	})
}

// follow reads the items of a paginated list, following its next links to the end.
func follow(t *testing.T, f *fixture, path, item, next string) []string {
	t.Helper()
	itemRE, nextRE := regexp.MustCompile(item), regexp.MustCompile(next)
	var out []string
	for pages := 0; path != ""; pages++ {
		if pages > 20 {
			t.Fatalf("more than 20 pages from %s", path)
		}
		rec := f.get(t, path)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body)
		}
		body := rec.Body.String()
		for _, m := range itemRE.FindAllStringSubmatch(body, -1) {
			out = append(out, html.UnescapeString(m[1]))
		}
		path = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	return out
}

func TestHostHeaderIsChecked(t *testing.T) {
	f := newFixture(t)
	srv, err := serve.New(serve.Options{DB: f.db, Archive: f.arch, AllowedHosts: []string{"localhost", "127.0.0.1", "::1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:8377", 200},
		{"localhost:8377", 200},
		{"[::1]:8377", 200},
		{"attacker.example:8377", http.StatusMisdirectedRequest},
		{"127.0.0.1.attacker.example", http.StatusMisdirectedRequest},
	} {
		req, _ := http.NewRequest(http.MethodGet, "/", nil)
		req.Host = tt.host
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("Host %s: %d, want %d", tt.host, rec.Code, tt.want)
		}
	}
}

func TestOnlyGet(t *testing.T) {
	f := newFixture(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(m, "/runs", strings.NewReader("x"))
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /runs: %d, want 405", m, rec.Code)
		}
	}
}

func TestFeed(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		path   string
		status int
		want   []string
		reject []string
	}{
		{"all", "/feed.atom", 200, []string{`<feed xmlns="http://www.w3.org/2005/Atom">`, "<title>Changed: News</title>",
			"<updated>2026-11-23T", `href="http://127.0.0.1:8377/page/1/diff?to=`}, nil},
		{"a site's new and gone pages", "/feed.atom?site=news.example&kind=new,gone", 200, []string{"<title>Gone: Story</title>",
			"<title>New: Release release.0.7</title>", `<category term="new">`}, []string{"Changed:", "Blog"}},
		{"another site", "/feed.atom?site=blog.example", 200, []string{"<title>New: Blog</title>"}, []string{"news.example/"}},
		{"big changes only", "/feed.atom?kind=changed&min=50", 200, []string{"many/p005", "many/p006"}, []string{"Changed: News<", "many/p004"}},
		{"one page", fmt.Sprintf("/feed.atom?page=%d", f.ids[front]), 200, []string{"<title>strata: https://news.example/</title>",
			"<title>Changed: News</title>", "<title>New: News</title>",
			// the entry quotes the lines that changed, as plain text
			"- Headline: the tram line opens.&#xA;+ Headline: the harbour bridge closes."}, []string{"many/"}},
		{"hostile title", fmt.Sprintf("/feed.atom?page=%d", f.ids[evil]), 200, []string{"&lt;script&gt;"}, []string{"<script"}},
		{"unknown page", "/feed.atom?page=999999", 404, nil, nil},
		{"bad kind", "/feed.atom?kind=frob", 400, []string{"kind must be"}, nil},
		{"bad min", "/feed.atom?min=200", 400, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := f.get(t, tt.path)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Fatalf("GET %s: %d, want %d\n%s", tt.path, rec.Code, tt.status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s lacks %q\n%s", tt.path, w, body)
				}
			}
			for _, r := range tt.reject {
				if strings.Contains(body, r) {
					t.Errorf("GET %s has %q", tt.path, r)
				}
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script") {
				t.Errorf("GET %s: Content-Security-Policy %q", tt.path, csp)
			}
			if tt.status == 200 && rec.Header().Get("Content-Type") != "application/atom+xml; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", tt.path, rec.Header().Get("Content-Type"))
			}
		})
	}
}
