package testweb

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
)

// NewArticleWeb returns a web of pages pages per site (at least 1) shaped like a news site: every
// page is an article of about size bytes that links to links distinct pages of its own site (at
// least 2: the seed "/" and the pages after it, in a ring), so a crawler reaches the whole site
// Depth levels below the seed. The markup is what real pages carry around their text: a head of
// meta tags, an inline style sheet, JSON-LD and inline scripts, an SVG icon sprite, a header with
// navigation and a search form, the article (headings, paragraphs with inline links and emphasis,
// a figure, a quote), related stories, a sidebar of most-read stories, a footer and more scripts.
// About a third of the bytes are visible text. Links repeat, as on real pages (the navigation again
// in the footer); every one leads to a page the site serves, so a crawl makes no 404s.
func NewArticleWeb(pages, links, size int) *LoadWeb {
	lw := NewLoadWeb(pages)
	lw.Links = max(links, 2)
	lw.Size = max(size, 1)
	lw.fixed = newArticleParts()
	return lw
}

// Depth is the number of levels below the seed that reach every page: a crawler that follows links
// that deep from the seed crawls the whole site.
func (lw *LoadWeb) Depth() int {
	if lw.Links == 0 {
		return min(lw.Pages-1, 1)
	}
	step := lw.Links - 1 // the pages a page links to beyond the seed
	return (lw.Pages - 1 + step - 1) / step
}

// articleParts is the markup every article shares, built once per web.
type articleParts struct {
	style, script, sprite, tail string
}

func newArticleParts() articleParts {
	r := rand.New(rand.NewPCG(1, 2))
	var style strings.Builder
	for i := 0; style.Len() < 4500; i++ {
		fmt.Fprintf(&style, ".c%d-%s{margin:%dpx %dpx;padding:0 %dpx;color:#%06x;font:%dpx/1.%d system-ui,sans-serif}\n",
			i, loadWords[r.IntN(len(loadWords))], r.IntN(40), r.IntN(40), r.IntN(20), r.IntN(1<<24), 12+r.IntN(10), r.IntN(9))
	}
	var script strings.Builder
	script.WriteString("window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}\n")
	for i := 0; script.Len() < 7000; i++ {
		fmt.Fprintf(&script, "(function(w,d){var el=d.querySelectorAll('[data-slot=\"%s-%d\"]');for(var i=0;i<el.length;i++){el[i].setAttribute('data-ready','%d');w.__q%d=(w.__q%d||0)+el[i].offsetHeight}})(window,document);\n",
			loadWords[r.IntN(len(loadWords))], i, r.IntN(1000), i%7, i%7)
	}
	var sprite strings.Builder
	sprite.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" style="display:none">`)
	for i := 0; sprite.Len() < 3500; i++ {
		fmt.Fprintf(&sprite, `<symbol id="icon-%d" viewBox="0 0 24 24"><title>icon %d</title><path d="M%d %dL%d %dC%d %d %d %d %d %dZ"/></symbol>`,
			i, i, r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24), r.IntN(24))
	}
	sprite.WriteString(`</svg>`)
	var tail strings.Builder
	tail.WriteString(`<script src="/static/app.js" defer></script><script>`)
	for i := 0; tail.Len() < 5000; i++ {
		fmt.Fprintf(&tail, "document.addEventListener('DOMContentLoaded',function(){var n=document.getElementById('w%d');if(n){n.className+=' is-%s';}});\n",
			i, loadWords[r.IntN(len(loadWords))])
	}
	tail.WriteString(`</script>`)
	return articleParts{style: style.String(), script: script.String(), sprite: sprite.String(), tail: tail.String()}
}

// articleTargets returns the pages page i links to: the seed, then the pages after i in a ring
// (never the seed twice, never i itself), links in all, or fewer on a small site.
func (lw *LoadWeb) articleTargets(i int) []int {
	t := []int{0}
	for k := 1; len(t) < lw.Links && k < lw.Pages; k++ {
		j := (i + k) % lw.Pages
		if j == 0 {
			continue
		}
		t = append(t, j)
	}
	return t
}

// article generates page i of site in an article web.
func (lw *LoadWeb) article(site string, i int) []byte {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", site, i)
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(i)))
	word := func() string { return loadWords[r.IntN(len(loadWords))] }
	targets := lw.articleTargets(i)
	href := func(k int) string { return LoadPath(targets[k%len(targets)]) }
	label := func(k int) string {
		p := targets[k%len(targets)]
		return site + " " + loadWords[p%len(loadWords)] + " " + loadWords[(p*7+3)%len(loadWords)]
	}
	title := strings.Join([]string{word(), word(), word(), word()}, " ")
	b := make([]byte, 0, lw.Size+4096)
	add := func(s ...string) {
		for _, x := range s {
			b = append(b, x...)
		}
	}
	sentence := func() {
		n := 8 + r.IntN(14)
		for w := 0; w < n; w++ {
			x := word()
			if w == 0 {
				x = strings.ToUpper(x[:1]) + x[1:]
			}
			add(x)
			switch {
			case w == n-1:
				add(". ")
			case r.IntN(9) == 0:
				add(", ")
			default:
				add(" ")
			}
		}
	}

	add(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
		`<title>`, title, ` | `, site, `</title>`,
		`<meta name="description" content="`, title, ` and what it means for `, site, `">`,
		`<meta property="og:title" content="`, title, `"><meta property="og:type" content="article">`,
		`<meta property="og:site_name" content="`, site, `"><meta name="twitter:card" content="summary_large_image">`,
		`<link rel="canonical" href="`, LoadPath(i), `"><link rel="stylesheet" href="/static/site.css">`,
		`<link rel="preload" href="/static/font.woff2" as="font" type="font/woff2" crossorigin>`,
		`<link rel="icon" href="/favicon.ico"><style>`, lw.fixed.style, `</style>`,
		`<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"`, title,
		`","publisher":{"@type":"Organization","name":"`, site, `"},"datePublished":"2024-03-`, strconv.Itoa(10+i%18), `T08:00:00Z"}</script>`,
		`<script>`, lw.fixed.script, `</script></head>`)
	add(`<body class="article-page layout-wide">`, lw.fixed.sprite,
		`<header class="site-header" id="top"><div class="container header-inner"><a class="logo" href="/"><svg class="icon" aria-hidden="true"><use href="#icon-1"></use></svg><span>`, site, `</span></a>`,
		`<nav class="main-nav" aria-label="Main"><ul class="nav-list">`)
	for k := 0; k < 5; k++ {
		add(`<li class="nav-item"><a class="nav-link" href="`, href(k), `">`, label(k), `</a></li>`)
	}
	add(`</ul></nav><form class="search-form" action="/search" role="search"><label for="q" class="visually-hidden">Search</label>`,
		`<input id="q" type="search" name="q" placeholder="Search `, site, `"><button type="submit" class="btn btn-search">Search</button></form></div></header>`,
		`<div class="breadcrumbs container"><a href="/">Home</a> <span class="sep">›</span> <span>`, word(), `</span></div>`,
		`<main id="content" class="container main-grid"><article class="story" itemscope itemtype="https://schema.org/NewsArticle">`,
		`<h1 class="story-title" itemprop="headline">`, title, `</h1>`,
		`<div class="byline"><span class="author" itemprop="author">By `, word(), ` `, word(), `</span> <time datetime="2024-03-`, strconv.Itoa(10+i%18), `">March `,
		strconv.Itoa(10+i%18), `, 2024</time></div>`,
		`<figure class="lead-image"><img src="/img/`, strconv.Itoa(i), `.jpg" alt="`, title, `" width="800" height="450" loading="lazy"><figcaption>`)
	sentence()
	add(`</figcaption></figure><div class="story-body" itemprop="articleBody">`)

	// The story runs until the page reaches its size less what follows the story.
	const after = 3300
	inline := 5 // the next link target used inside the story
	for p := 0; len(b) < lw.Size-after-len(lw.fixed.tail); p++ {
		switch {
		case p > 0 && p%5 == 0:
			add(`<h2 class="story-subhead" id="s`, strconv.Itoa(p), `">`, word(), ` `, word(), ` `, word(), `</h2>`)
		case p > 0 && p%9 == 0:
			add(`<blockquote class="pull-quote"><p>`)
			sentence()
			add(`</p></blockquote>`)
		}
		add(`<p class="story-paragraph" data-index="`, strconv.Itoa(p), `">`)
		for s, n := 0, 3+r.IntN(4); s < n; s++ {
			switch {
			case s == 1 && p%2 == 0 && inline < 10:
				add(`<a class="inline-link" href="`, href(inline), `">`, label(inline), `</a> `)
				inline++
			case s == 2 && p%3 == 0:
				add(`<em>`, word(), ` `, word(), `</em> `)
			case s == 2 && p%3 == 1:
				add(`<strong>`, word(), `</strong> `)
			}
			sentence()
		}
		add(`</p>`)
	}
	for ; inline < 10; inline++ { // a short page still links to every target
		add(`<p class="read-more">Read more: <a href="`, href(inline), `">`, label(inline), `</a></p>`)
	}
	add(`<div class="ad-slot" data-slot="in-story" aria-hidden="true"></div></div>`,
		`<aside class="related"><h2 class="related-title">Related stories</h2><ul class="related-list">`)
	for k := 10; k < 15; k++ {
		add(`<li class="related-item"><a class="related-link" href="`, href(k), `"><img src="/img/thumb-`, strconv.Itoa(k), `.jpg" alt="" width="120" height="80" loading="lazy"><span>`, label(k), `</span></a></li>`)
	}
	add(`</ul></aside></article><aside class="sidebar"><section class="widget most-read"><h3 class="widget-title">Most read</h3><ol class="most-read-list">`)
	for k := 15; k < 20; k++ {
		add(`<li class="most-read-item"><a href="`, href(k), `">`, label(k), `</a></li>`)
	}
	add(`</ol></section><div class="ad-slot" data-slot="sidebar" style="min-height:250px"></div>`,
		`<section class="widget newsletter"><h3 class="widget-title">Newsletter</h3><p>Get the `, site, ` briefing every morning.</p>`,
		`<form action="/subscribe"><input type="email" name="email" placeholder="you@example.org"><button class="btn">Subscribe</button></form></section></aside></main>`,
		`<footer class="site-footer"><div class="container"><ul class="footer-links">`)
	for k := 1; k < 5; k++ {
		add(`<li><a href="`, href(k), `">`, label(k), `</a></li>`)
	}
	add(`</ul><p class="copyright">© 2024 `, site, `. All rights reserved.</p></div></footer>`, lw.fixed.tail, `</body></html>`)
	return b
}
