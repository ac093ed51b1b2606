package linkextract

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

const pageURL = "https://example.com/dir/page.html"

// a is shorthand for an anchor Link in the tables.
func a(u, text string) Link { return Link{URL: u, Text: text, Tag: "a"} }

func TestExtract(t *testing.T) {
	long := strings.Repeat("x", MaxHrefBytes)
	tests := []struct {
		name string
		html string
		want Page // Base defaults to pageURL; nil slices mean none
	}{
		// Resolution.
		{name: "relative path", html: `<a href="other.html">Other</a>`,
			want: Page{Links: []Link{a("https://example.com/dir/other.html", "Other")}}},
		{name: "root relative", html: `<a href="/top">Top</a>`,
			want: Page{Links: []Link{a("https://example.com/top", "Top")}}},
		{name: "absolute other host", html: `<a href="http://other.example/x?y=1">X</a>`,
			want: Page{Links: []Link{a("http://other.example/x?y=1", "X")}}},
		{name: "protocol relative", html: `<a href="//cdn.example.org/lib">CDN</a>`,
			want: Page{Links: []Link{a("https://cdn.example.org/lib", "CDN")}}},
		{name: "dot dot climbing stops at root", html: `<a href="../../../up.html">Up</a><a href="./sub/../same.html">S</a>`,
			want: Page{Links: []Link{a("https://example.com/up.html", "Up"), a("https://example.com/dir/same.html", "S")}}},
		{name: "query only", html: `<a href="?a=1">Q</a>`,
			want: Page{Links: []Link{a("https://example.com/dir/page.html?a=1", "Q")}}},
		{name: "fragment only is a self-link", html: `<a href="#x">Skip</a><a href="#">Top</a>`,
			want: Page{Self: 2}},
		{name: "empty href is a self-link", html: `<a href="">Here</a><a href>Bare</a>`,
			want: Page{Self: 2}},
		{name: "absolute self-link in another spelling", html: `<a href="HTTPS://Example.COM:443/dir/page.html#top">Me</a>`,
			want: Page{Self: 1}},
		{name: "path colon is not a scheme", html: `<a href="2024:report.html">R</a>`,
			want: Page{Links: []Link{a("https://example.com/dir/2024:report.html", "R")}}},
		{name: "backslashes are slashes before the query", html: `<a href="\docs\a.html?p=\x">D</a><a href="\\evil.example\x">E</a>`,
			want: Page{Links: []Link{a("https://example.com/docs/a.html?p=%5Cx", "D"), a("https://evil.example/x", "E")}}},
		{name: "stray percent escaped", html: `<a href="100%.html">P</a>`,
			want: Page{Links: []Link{a("https://example.com/dir/100%25.html", "P")}}},

		// Base.
		{name: "base absolute", html: `<head><base href="https://other.example/b/"></head><a href="x.html">X</a>`,
			want: Page{Base: "https://other.example/b/", Links: []Link{a("https://other.example/b/x.html", "X")}}},
		{name: "base relative", html: `<base href="/root/"><a href="x.html">X</a>`,
			want: Page{Base: "https://example.com/root/", Links: []Link{a("https://example.com/root/x.html", "X")}}},
		{name: "base after links still applies", html: `<a href="x.html">X</a><base href="/late/">`,
			want: Page{Base: "https://example.com/late/", Links: []Link{a("https://example.com/late/x.html", "X")}}},
		{name: "base invalid falls back to page", html: `<base href="javascript:void(0)"><a href="x.html">X</a>`,
			want: Page{Links: []Link{a("https://example.com/dir/x.html", "X")}}},
		{name: "base invalid then valid: second ignored", html: `<base href="http://bad host/"><base href="/second/"><a href="x">X</a>`,
			want: Page{Links: []Link{a("https://example.com/dir/x", "X")}}},
		{name: "second base ignored", html: `<base href="/first/"><base href="/second/"><a href="x">X</a>`,
			want: Page{Base: "https://example.com/first/", Links: []Link{a("https://example.com/first/x", "X")}}},
		{name: "base without href does not count", html: `<base target="_blank"><base href="/real/"><a href="x">X</a>`,
			want: Page{Base: "https://example.com/real/", Links: []Link{a("https://example.com/real/x", "X")}}},
		{name: "fragment against a foreign base is not self", html: `<base href="https://other.example/"><a href="#x">X</a>`,
			want: Page{Base: "https://other.example/", Links: []Link{a("https://other.example/", "X")}}},

		// rel and nofollow.
		{name: "rel nofollow any case", html: `<a href="/a" rel="NoFollow">A</a>`,
			want: Page{Links: []Link{{URL: "https://example.com/a", Text: "A", Tag: "a", Rel: "nofollow", NoFollow: true}}}},
		{name: "rel collapsed with other tokens", html: "<a href=/a rel=\"  nofollow\tNOOPENER \">A</a>",
			want: Page{Links: []Link{{URL: "https://example.com/a", Text: "A", Tag: "a", Rel: "nofollow noopener", NoFollow: true}}}},
		{name: "rel sponsored and ugc count as nofollow", html: `<a href=/s rel=sponsored>S</a><a href=/u rel="ugc">U</a>`,
			want: Page{Links: []Link{
				{URL: "https://example.com/s", Text: "S", Tag: "a", Rel: "sponsored", NoFollow: true},
				{URL: "https://example.com/u", Text: "U", Tag: "a", Rel: "ugc", NoFollow: true}}}},
		{name: "rel without nofollow token", html: `<a href=/a rel="noopener noreferrer nofollowing">A</a>`,
			want: Page{Links: []Link{{URL: "https://example.com/a", Text: "A", Tag: "a", Rel: "noopener noreferrer nofollowing"}}}},

		// Meta robots.
		{name: "meta robots noindex nofollow upper case", html: `<meta name="robots" content="NOINDEX, NOFOLLOW">`,
			want: Page{NoIndex: true, NoFollow: true}},
		{name: "meta robots none", html: `<meta name=robots content=none>`,
			want: Page{NoIndex: true, NoFollow: true}},
		{name: "meta name any case, noindex only", html: `<META NAME=" Robots " CONTENT="noindex,follow">`,
			want: Page{NoIndex: true}},
		{name: "meta name strata", html: `<meta name="strata" content="nofollow">`,
			want: Page{NoFollow: true}},
		{name: "meta for another crawler ignored", html: `<meta name="googlebot" content="none"><meta name="description" content="nofollow">`,
			want: Page{}},
		{name: "meta robots index follow", html: `<meta name="robots" content="index, follow, max-snippet:-1">`,
			want: Page{}},
		{name: "meta robots in body counts", html: `<body><p>x</p><meta name="robots" content="nofollow"></body>`,
			want: Page{NoFollow: true}},

		// Dropped.
		{name: "non-http schemes dropped", html: `<a href="javascript:void(0)">J</a><a href="mailto:a@example.com">M</a>` +
			`<a href="tel:+123">T</a><a href="data:text/html,hi">D</a><a href="ftp://example.com/f">F</a>` +
			"<a href=\"java\nscript:alert(1)\">J2</a>",
			want: Page{Dropped: 6}},
		{name: "urlnorm refusals dropped", html: `<a href="http://user:pw@example.com/">U</a><a href="http://example.com:99999/">P</a>` +
			`<a href="http://exa mple.com/">S</a><a href="//">E</a>`,
			want: Page{Dropped: 4}},
		{name: "href over 2048 bytes dropped", html: `<a href="/` + long + `">L</a><a href="/` + long[:2000] + `">OK</a>`,
			want: Page{Dropped: 1, Links: []Link{a("https://example.com/"+long[:2000], "OK")}}},

		// Spelling.
		{name: "whitespace in href", html: "<a href=\"  /a\n/b\t?c=1\r\n \">W</a>",
			want: Page{Links: []Link{a("https://example.com/a/b?c=1", "W")}}},
		{name: "entity encoded href", html: `<a href="/s?a=1&amp;b=2&#38;c=3">E</a>`,
			want: Page{Links: []Link{a("https://example.com/s?a=1&b=2&c=3", "E")}}},
		{name: "idn host to punycode", html: `<a href="http://Bücher.example/straße">B</a>`,
			want: Page{Links: []Link{a("http://xn--bcher-kva.example/stra%C3%9Fe", "B")}}},
		{name: "upper-case scheme and host", html: `<a href="HTTPS://EXAMPLE.ORG:443/Path">U</a>`,
			want: Page{Links: []Link{a("https://example.org/Path", "U")}}},

		// Sources.
		{name: "area with alt", html: `<map name=m><area href="/region" alt=" North  region " shape=rect></map><area alt=no-href>`,
			want: Page{Links: []Link{{URL: "https://example.com/region", Text: "North region", Tag: "area"}}}},
		{name: "link alternate feeds", html: `<head><link rel="alternate" type="Application/RSS+XML" title="News feed" href="/feed.rss">` +
			`<link rel="Alternate" type="application/atom+xml" href="/atom.xml"><link rel="alternate" hreflang="fr" href="/fr/">` +
			`<link rel="alternate stylesheet" href="/dark.css"><link rel="stylesheet" href="/main.css"><link rel="alternate icon" href="/i.png">` +
			`<link rel="alternate" type="application/rss+xml" href="/feed.rss"></head><a href="/feed.rss">Feed</a>`,
			want: Page{
				Alternates: []Link{
					{URL: "https://example.com/feed.rss", Text: "News feed", Tag: "link", Rel: "alternate", Type: "application/rss+xml"},
					{URL: "https://example.com/atom.xml", Tag: "link", Rel: "alternate", Type: "application/atom+xml"},
					{URL: "https://example.com/fr/", Tag: "link", Rel: "alternate"}},
				Links: []Link{a("https://example.com/feed.rss", "Feed")}}},
		{name: "anchor without href ignored", html: `<a name="top">Top</a><a id=x>X</a>`, want: Page{}},
		{name: "template content ignored", html: `<template><a href="/{{url}}">T</a></template><a href=/real>R</a>`,
			want: Page{Links: []Link{a("https://example.com/real", "R")}}},
		{name: "noscript content is markup", html: `<noscript><a href="/nojs">No JS</a></noscript>`,
			want: Page{Links: []Link{a("https://example.com/nojs", "No JS")}}},
		{name: "svg anchors ignored", html: `<svg><a href="/svg"><text>S</text></a><title>Tip</title></svg><a href=/h>H</a>`,
			want: Page{Links: []Link{a("https://example.com/h", "H")}}},

		// Duplicates.
		{name: "duplicates keep first, follow wins", html: `<a href="/d" rel=nofollow>First</a><a href="/d#frag">Second</a>` +
			`<a href="/n" rel="nofollow">N1</a><a href="/n" rel="ugc">N2</a>`,
			want: Page{Links: []Link{
				{URL: "https://example.com/d", Text: "First", Tag: "a", Rel: "nofollow"},
				{URL: "https://example.com/n", Text: "N1", Tag: "a", Rel: "nofollow", NoFollow: true}}}},
		{name: "a and area with one URL are one link", html: `<area href="/x" alt=Map><a href="/x">Text</a>`,
			want: Page{Links: []Link{{URL: "https://example.com/x", Text: "Map", Tag: "area"}}}},

		// Text and broken HTML.
		{name: "unclosed tags", html: `<div><p><a href=/a>A<p>para<div><a href="/b">B`,
			want: Page{Links: []Link{a("https://example.com/a", "A"), a("https://example.com/b", "B")}}},
		{name: "nested anchors split like browsers", html: `<a href="/outer">Outer <a href="/inner">Inner</a> tail</a>`,
			want: Page{Links: []Link{a("https://example.com/outer", "Outer"), a("https://example.com/inner", "Inner")}}},
		{name: "invalid utf-8 in text and title", html: "<title>Caf\xe9 \xff\xfe</title><a href=/c>caf\xe9</a>",
			want: Page{Title: "Caf\uFFFD \uFFFD", Links: []Link{a("https://example.com/c", "caf\uFFFD")}}},
		{name: "text collapsed with image alt and blocks", html: "<a href=/i>\n  <img src=x.png alt=\"Logo\">  <div>Home</div><div>page</div>" +
			"<span>!</span><script>var x</script>&nbsp;\x01end</a>",
			want: Page{Links: []Link{a("https://example.com/i", "Logo Home page ! end")}}},
		{name: "title collapsed", html: "<head><title>\n  Breaking\t\tNews  </title><title>Second</title></head>",
			want: Page{Title: "Breaking News"}},
		{name: "text capped at 200 bytes on a rune boundary", html: `<a href=/long>x` + strings.Repeat("é", 150) + `</a>`,
			want: Page{Links: []Link{a("https://example.com/long", "x"+strings.Repeat("é", 99))}}},
		{name: "empty page", html: ``, want: Page{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(pageURL, []byte(tt.html), Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := fill(tt.want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Extract(%q)\n got %s\nwant %s", tt.html, dump(got), dump(want))
			}
		})
	}
}

// fill gives a table's Page the defaults Extract produces.
func fill(p Page) *Page {
	if p.Base == "" {
		p.Base = pageURL
	}
	if p.Links == nil {
		p.Links = []Link{}
	}
	if p.Alternates == nil {
		p.Alternates = []Link{}
	}
	return &p
}

func dump(p *Page) string {
	b, _ := json.MarshalIndent(p, "", "  ")
	return string(b)
}

func TestExtractPageURL(t *testing.T) {
	tests := []struct{ name, url string }{
		{"empty", ""},
		{"relative", "/dir/page.html"},
		{"other scheme", "ftp://example.com/"},
		{"user info", "https://user@example.com/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Extract(tt.url, []byte(`<a href="/x">x</a>`), Options{})
			if p != nil || !errors.Is(err, urlnorm.ErrInvalid) {
				t.Fatalf("Extract(%q) = %v, %v; want nil and an error wrapping urlnorm.ErrInvalid", tt.url, p, err)
			}
			if !strings.Contains(err.Error(), "linkextract") {
				t.Errorf("error %q does not say where it comes from", err)
			}
		})
	}
	t.Run("page URL is normalised", func(t *testing.T) {
		p, err := Extract("HTTPS://Example.com/dir/page.html#frag", []byte(`<a href="page.html">me</a>`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Base != pageURL || p.Self != 1 || len(p.Links) != 0 {
			t.Errorf("got %s", dump(p))
		}
	})
}

// trapPage is a page of n distinct links.
func trapPage(n int) []byte {
	var b strings.Builder
	b.WriteString("<html><head><title>Calendar</title></head><body><ul>")
	for i := range n {
		fmt.Fprintf(&b, `<li><a href="/cal?day=%d">Day %d</a></li>`, i, i)
	}
	b.WriteString("</ul></body></html>")
	return []byte(b.String())
}

func TestMaxLinks(t *testing.T) {
	src := trapPage(5000)
	tests := []struct {
		name          string
		max           int
		wantLinks     int
		wantTruncated int
	}{
		{"default keeps all 5000", 0, 5000, 0},
		{"negative means default", -1, 5000, 0},
		{"cap 100", 100, 100, 4900},
		{"cap exactly the count", 5000, 5000, 0},
		{"cap 1", 1, 1, 4999},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Extract(pageURL, src, Options{MaxLinks: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Links) != tt.wantLinks || p.Truncated != tt.wantTruncated {
				t.Fatalf("got %d links, %d truncated; want %d, %d", len(p.Links), p.Truncated, tt.wantLinks, tt.wantTruncated)
			}
			if last := p.Links[len(p.Links)-1]; last.URL != fmt.Sprintf("https://example.com/cal?day=%d", tt.wantLinks-1) {
				t.Errorf("last link %+v is not the %dth of the page", last, tt.wantLinks)
			}
		})
	}
	t.Run("alternates share the budget", func(t *testing.T) {
		src := `<link rel=alternate href=/feed1><link rel=alternate href=/feed2><a href=/a>a</a><a href=/b>b</a>`
		p, err := Extract(pageURL, []byte(src), Options{MaxLinks: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Alternates) != 2 || len(p.Links) != 1 || p.Truncated != 1 {
			t.Errorf("got %s", dump(p))
		}
	})
	t.Run("duplicates do not use the budget", func(t *testing.T) {
		src := strings.Repeat(`<a href=/same>s</a>`, 50) + `<a href=/other>o</a>`
		p, err := Extract(pageURL, []byte(src), Options{MaxLinks: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Links) != 2 || p.Truncated != 0 {
			t.Errorf("got %s", dump(p))
		}
	})
}

// TestDeepNesting covers pages the tree parser refuses (more than 512 open elements): the
// tokenizer fallback must still find their links, base and robots directives.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("<div>", 600)
	if _, err := html.ParseWithOptions(strings.NewReader(deep), html.ParseOptionEnableScripting(false)); err == nil {
		t.Fatal("the parser accepts 600 nested elements now: the fallback below is no longer exercised; raise the depth")
	}
	tests := []struct {
		name string
		html string
		want Page
	}{
		{name: "links below the limit", html: `<html><head><title>Deep  page</title><base href="/b/">` +
			`<meta name=robots content=noindex><link rel=alternate type=application/rss+xml href=/rss title=Feed></head><body>` +
			deep + `<a href="x" rel=ugc>X <img alt=logo> <script>no</script><b>bold</b></a><a href="#top">top</a>` +
			`<a href="mailto:x@example.com">m</a><area href=/map alt=Map><a href=/y>Y<a href=/z>Z`,
			want: Page{Base: "https://example.com/b/", Title: "Deep page", NoIndex: true,
				Alternates: []Link{{URL: "https://example.com/rss", Text: "Feed", Tag: "link", Rel: "alternate", Type: "application/rss+xml"}},
				Links: []Link{
					{URL: "https://example.com/b/x", Text: "X logo bold", Tag: "a", Rel: "ugc", NoFollow: true},
					{URL: "https://example.com/b/", Text: "top", Tag: "a"},
					{URL: "https://example.com/map", Text: "Map", Tag: "area"},
					a("https://example.com/y", "Y"), a("https://example.com/z", "Z")},
				Dropped: 1}},
		{name: "noscript and second title", html: deep + `<noscript><a href=/ns>NS</a></noscript><title>T1</title><title>T2</title><a href=/after>A</a>`,
			want: Page{Title: "T1", Links: []Link{a("https://example.com/ns", "NS"), a("https://example.com/after", "A")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(pageURL, []byte(tt.html), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want := fill(tt.want); !reflect.DeepEqual(got, want) {
				t.Errorf("got %s\nwant %s", dump(got), dump(want))
			}
		})
	}
}

func TestCollapseRel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"nofollow", "nofollow"},
		{"a b", "a b"},
		{" a b", "a b"},
		{"a b ", "a b"},
		{"a  b", "a b"},
		{"A\tB", "a b"},
		{"\n", ""},
		{"a\vb", "a\vb"},
		{"Ä B", "Ä b"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := collapseRel(tt.in); got != tt.want {
				t.Errorf("collapseRel(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestConcurrent lets the race detector see Extract used from many goroutines.
func TestConcurrent(t *testing.T) {
	src := trapPage(200)
	want, err := Extract(pageURL, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := Extract(pageURL, src, Options{})
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("concurrent Extract differs: %v", err)
			}
		})
	}
	wg.Wait()
}
