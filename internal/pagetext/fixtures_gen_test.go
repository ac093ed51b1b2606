package pagetext

// This file generates the fixture pages in testdata/ (run
// `go test ./internal/pagetext/ -run TestGenerateFixtures -gen-fixtures`).
// The pages are committed; the generator is kept so that they can be
// changed consistently. They imitate common real-world templates.
//
// Every text unit of a page carries a marker token saying what it is, so
// that quality_test.go can count what an extractor kept:
//
//	ARTICLEn  main content (article paragraphs, headings, list items, rows)
//	NAVLINKn  navigation: menus, breadcrumbs, pagination, prev/next
//	SIDEBARn  sidebars, "most read", related-article widgets, facets
//	FOOTERn   footers, legal lines, signatures
//	COMMENTn  reader comments (main content for some, noise for others)
//	HIDDENn   text a browser does not show (never acceptable in output)
//
// Text between <!--ROT--> and <!--/ROT--> rotates between crawls (dates,
// visit counters, "most read" counts): the stability test changes the
// digits in those regions only.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var genFixtures = flag.Bool("gen-fixtures", false, "rewrite testdata/*.html from the generator")

// fixtureNames lists the fixture pages in the order reports use.
var fixtureNames = []string{"news", "university", "blog", "forum", "docs", "catalog", "calendar", "broken"}

func TestGenerateFixtures(t *testing.T) {
	if !*genFixtures {
		t.Skip("run with -gen-fixtures to rewrite testdata/*.html")
	}
	gens := map[string]func(*fx){
		"news": genNews, "university": genUniversity, "blog": genBlog, "forum": genForum,
		"docs": genDocs, "catalog": genCatalog, "calendar": genCalendar, "broken": genBroken,
	}
	for _, name := range fixtureNames {
		f := &fx{counts: map[string]int{}}
		gens[name](f)
		out := f.b.String()
		if n := len(out); n < 10<<10 || n > 80<<10 {
			t.Errorf("%s: %d bytes, want 10-80 KB", name, n)
		}
		if err := os.WriteFile(filepath.Join("testdata", name+".html"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes, tokens %v", name, len(out), f.counts)
	}
}

// fx accumulates one fixture page.
type fx struct {
	b      strings.Builder
	counts map[string]int
}

// tok returns the next marker of kind.
func (f *fx) tok(kind string) string {
	f.counts[kind]++
	return fmt.Sprintf("%s%d", kind, f.counts[kind])
}

func (f *fx) w(format string, args ...any) { fmt.Fprintf(&f.b, format, args...) }

func (f *fx) raw(s string) { f.b.WriteString(s) }

// art, nav, side, foot and com prefix a text with the next marker.
func (f *fx) art(s string) string  { return f.tok("ARTICLE") + " " + s }
func (f *fx) nav(s string) string  { return f.tok("NAVLINK") + " " + s }
func (f *fx) side(s string) string { return f.tok("SIDEBAR") + " " + s }
func (f *fx) foot(s string) string { return f.tok("FOOTER") + " " + s }
func (f *fx) com(s string) string  { return f.tok("COMMENT") + " " + s }
func (f *fx) hid(s string) string  { return f.tok("HIDDEN") + " " + s }

func slug(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == ' ' || c == '-':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// siteCSS is the kind of inline stylesheet real pages carry.
const siteCSS = `:root{--brand:#0b4f6c;--accent:#e4572e;--text:#1d1d1f;--muted:#6e6e73;--bg:#fff;--max:72rem}
*,*::before,*::after{box-sizing:border-box}html{-webkit-text-size-adjust:100%;font-size:100%}
body{margin:0;font:1rem/1.6 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--text);background:var(--bg)}
a{color:var(--brand);text-decoration:none}a:hover,a:focus{text-decoration:underline}
.container{max-width:var(--max);margin:0 auto;padding:0 1rem}.grid{display:grid;grid-template-columns:repeat(12,1fr);gap:1.5rem}
.col-8{grid-column:span 8}.col-4{grid-column:span 4}@media (max-width:48rem){.col-8,.col-4{grid-column:span 12}}
.site-header{border-bottom:1px solid #e5e5ea;padding:.75rem 0}.site-header .logo img{height:2.25rem}
.menu{display:flex;flex-wrap:wrap;gap:1rem;list-style:none;margin:0;padding:0}.menu li{position:relative}
.menu .sub{display:none;position:absolute;top:100%;left:0;background:#fff;box-shadow:0 4px 12px rgba(0,0,0,.12);z-index:20}
.menu li:hover>.sub{display:block}.breadcrumbs{font-size:.875rem;color:var(--muted)}.breadcrumbs li{display:inline}
.breadcrumbs li+li::before{content:"\203A";padding:0 .4rem}.article h1{font-size:2.25rem;line-height:1.2;margin:.5rem 0 1rem}
.article .byline{color:var(--muted);font-size:.9rem}.article figure{margin:1.5rem 0}.article figcaption{font-size:.85rem;color:var(--muted)}
.article blockquote{border-left:4px solid var(--accent);margin:1.5rem 0;padding:.25rem 1rem;font-style:italic}
.widget{border-top:3px solid var(--brand);padding-top:.75rem;margin-bottom:2rem}.widget h3{font-size:1rem;text-transform:uppercase;letter-spacing:.05em}
.widget ol,.widget ul{padding-left:1.2rem}.site-footer{background:#111;color:#ccc;padding:2rem 0;margin-top:3rem;font-size:.875rem}
.site-footer a{color:#eee}.cookie{position:fixed;bottom:0;left:0;right:0;background:#222;color:#fff;padding:1rem}
.btn{display:inline-block;padding:.5rem 1rem;border-radius:.25rem;background:var(--brand);color:#fff;border:0}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}
pre{background:#f6f8fa;padding:1rem;overflow:auto;font:.875rem/1.45 SFMono-Regular,Consolas,"Liberation Mono",Menlo,monospace}
code{font-family:SFMono-Regular,Consolas,"Liberation Mono",Menlo,monospace;font-size:.9em}
.pagination{display:flex;gap:.5rem;list-style:none;padding:0}.pagination .current{font-weight:700}
.card{border:1px solid #e5e5ea;border-radius:.5rem;padding:1rem}.card .price{font-weight:700;font-size:1.1rem}
.rating{color:#f5a623}.badge{display:inline-block;padding:0 .4rem;border-radius:.2rem;background:#eef;font-size:.75rem}
`

// analyticsJS is the kind of tag-manager snippet real pages carry.
const analyticsJS = `window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());
gtag('config','G-8Q2XK4M1ZP',{anonymize_ip:true,cookie_flags:'SameSite=None;Secure'});
(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});var f=d.getElementsByTagName(s)[0],
j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;j.src='https://www.googletagmanager.com/gtm.js?id='+i+dl;
f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','GTM-K7P3QWX');
document.addEventListener('DOMContentLoaded',function(){var b=document.querySelector('.cookie');if(!b)return;
if(localStorage.getItem('consent')==='1'){b.remove();return}b.style.display='block';
b.querySelector('button').addEventListener('click',function(){localStorage.setItem('consent','1');b.remove()})});
var HIDDEN0="this string is in a script and must never be extracted";
`

// head writes a realistic <head>.
func (f *fx) head(title, desc, lang, charset string) {
	f.w(`<!DOCTYPE html>
<html lang="%s">
<head>
<meta charset="%s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<meta name="description" content="%s">
<meta property="og:title" content="%s">
<meta property="og:type" content="website">
<meta name="twitter:card" content="summary_large_image">
<link rel="icon" href="/favicon.ico" sizes="any">
<link rel="stylesheet" href="/assets/css/main.3f9a1c.css">
<style>
%s</style>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-8Q2XK4M1ZP"></script>
<script>
%s</script>
</head>
`, lang, charset, title, desc, title, siteCSS, analyticsJS)
}

// cookieBanner writes a consent banner hidden until a script shows it.
func (f *fx) cookieBanner() {
	f.w(`<div class="cookie" style="display:none" role="dialog" aria-live="polite">
<p>%s</p><button type="button" class="btn">Accept</button>
</div>
<div class="modal" hidden><p>%s</p></div>
<span class="visually-hidden" aria-hidden="true">%s</span>
`, f.hid("We use cookies to improve your experience and to measure our audience."),
		f.hid("Sign in to continue reading. Subscribers get unlimited access."),
		f.hid("Opens in a new window"))
}

func genNews(f *fx) {
	f.head("Harbour dredging plan approved after two-year dispute | The Harbour Gazette",
		"The port authority has approved a plan to dredge the inner harbour.", "en", "utf-8")
	f.raw(`<body class="article-page">
<a class="skip" href="#main">Skip to content</a>
`)
	f.cookieBanner()
	f.raw(`<header class="site-header"><div class="container">
<a class="logo" href="/"><img src="/img/logo.svg" alt="The Harbour Gazette"></a>
<nav class="primary" aria-label="Main"><ul class="menu">
`)
	sections := map[string][]string{
		"News":     {"Local", "Region", "Politics", "Courts", "Education", "Health"},
		"Business": {"Port and Shipping", "Property", "Jobs", "Markets"},
		"Sport":    {"Football", "Rowing", "Cricket", "Results"},
		"Opinion":  {"Editorials", "Letters", "Columnists"},
		"Culture":  {"Music", "Theatre", "Books", "Food and Drink"},
		"Weather":  nil,
		"Events":   nil,
	}
	for _, s := range []string{"News", "Business", "Sport", "Opinion", "Culture", "Weather", "Events"} {
		f.w(`<li><a href="/%s/">%s</a>`, slug(s), f.nav(s))
		if subs := sections[s]; len(subs) > 0 {
			f.raw(`<ul class="sub">`)
			for _, sub := range subs {
				f.w(`<li><a href="/%s/%s/">%s</a></li>`, slug(s), slug(sub), f.nav(sub))
			}
			f.raw(`</ul>`)
		}
		f.raw("</li>\n")
	}
	f.w(`</ul></nav>
<form class="search" action="/search" role="search"><label for="q" class="sr-only">Search</label><input id="q" name="q" placeholder="Search"><button>Go</button></form>
</div></header>
<div class="ticker" aria-label="Breaking"><div class="container"><strong>Breaking:</strong> <a href="/news/local/ferry-timetable-change/">%s</a></div></div>
<div class="container grid">
<main id="main" class="col-8">
<nav class="breadcrumbs" aria-label="Breadcrumb"><ol><li><a href="/">%s</a></li><li><a href="/news/">%s</a></li><li><a href="/news/local/">%s</a></li></ol></nav>
<article class="article">
<h1>%s</h1>
<p class="byline">%s</p>
<figure><img src="/img/2024/05/dredger.jpg" alt="A dredger at the harbour mouth" width="960" height="540"><figcaption>%s</figcaption></figure>
`, f.side("Ferry timetable changes from Monday"), f.nav("Home"), f.nav("News"), f.nav("Local"),
		f.art("Harbour dredging plan approved after two-year dispute"),
		f.art("By Miriam Okafor, Local Affairs Correspondent. Published 13 May 2024."),
		f.art("A survey vessel working near the harbour mouth in March."))
	paras := []string{
		"The port authority has approved a plan to deepen the inner harbour by two metres, ending a dispute with fishermen and environmental groups that began in the spring of 2022. The board voted five to two on Monday evening after a meeting that ran for more than four hours.",
		"Under the plan, about 310,000 cubic metres of sediment will be removed from the turning basin and the approach channel over three winters, when fewer boats use the harbour and when the migrating eel population is at its lowest. The work is expected to cost 14.2 million euros.",
		"Supporters say the deeper water is needed to keep the harbour open to the newer generation of feeder container ships, which draw up to nine metres when fully loaded. \"Without this, the larger lines will simply stop calling here,\" said the authority's chief executive, Lars Pedersen.",
		"Opponents argued that the sediment contains heavy metals left by the shipyard that operated on the north quay until 1987, and that disturbing it could harm the mussel beds at the river mouth. The approved plan includes a requirement to test each section before dredging and to take contaminated material to a licensed landfill rather than dumping it at sea.",
		"The fishermen's cooperative, which had threatened legal action, said it would not appeal. Its chair, Annelie Brandt, said the testing requirement was a significant concession. \"We did not get everything, but we got the part that matters for the mussels,\" she said.",
		"The environmental group Coastwatch was less satisfied. In a statement it said the monitoring period of twelve months after the work was too short to detect long-term effects, and that it would ask the regional government to review the decision.",
		"Work on the first section, along the east quay, is due to begin in November. The authority says shipping will continue during the work, but that some berths will be closed for up to three weeks at a time. A timetable of closures will be published on its website in September.",
		"Residents of the harbour district have been invited to an information evening at the maritime museum on 4 June, where engineers will explain how noise and night working will be limited.",
	}
	for i, p := range paras {
		if i == 3 {
			f.w("<h2>%s</h2>\n", f.art("Concerns about contamination"))
		}
		if i == 5 {
			f.w("<blockquote><p>%s</p></blockquote>\n", f.art("We did not get everything, but we got the part that matters for the mussels."))
		}
		f.w("<p>%s</p>\n", f.art(p))
	}
	f.w(`<h2>%s</h2>
<ul>
<li>%s</li>
<li>%s</li>
<li>%s</li>
</ul>
<p class="tags">Topics: <a href="/topic/port/">%s</a> <a href="/topic/environment/">%s</a></p>
<div class="share"><a href="https://twitter.com/intent/tweet">%s</a> <a href="https://www.facebook.com/sharer/sharer.php">%s</a> <a href="mailto:?subject=Harbour">%s</a></div>
</article>
<section class="related widget"><h3>%s</h3><ul>
`, f.art("What happens next"),
		f.art("November 2024: testing and dredging of the east quay section."),
		f.art("Winter 2025: the turning basin, in two halves."),
		f.art("Winter 2026: the approach channel and final survey."),
		f.side("Port"), f.side("Environment"), f.side("Share on X"), f.side("Share on Facebook"), f.side("Email"),
		f.side("Related articles"))
	for _, r := range []string{"Fishermen threaten legal action over dredging", "Shipyard pollution: what the 1987 survey found",
		"Feeder lines warn over harbour depth", "Mussel harvest best in a decade", "Council backs new ferry terminal"} {
		f.w(`<li><a href="/news/local/%s/">%s</a></li>`+"\n", slug(r), f.side(r))
	}
	f.raw(`</ul></section>
</main>
<aside class="col-4 sidebar">
<section class="widget most-read"><h3>`)
	f.raw(f.side("Most read"))
	f.raw("</h3><!--ROT--><ol>\n")
	for i, r := range []string{"Road closures for the harbour festival", "New bakery opens on Quay Street", "Rowing club wins regional title",
		"Letters: the parking problem", "Weather: a warm weekend ahead"} {
		f.w(`<li><a href="/news/local/%s/">%s</a> <span class="views">%d reads</span></li>`+"\n", slug(r), f.side(r), 9120-i*1311)
	}
	f.w(`</ol><!--/ROT--></section>
<section class="widget newsletter"><h3>%s</h3><p>%s</p>
<form action="/newsletter" method="post"><input type="email" name="email" placeholder="you@example.com"><button class="btn">Subscribe</button></form></section>
<section class="widget ad"><p class="label">%s</p><a href="https://ads.example.net/click?id=88213"><img src="https://ads.example.net/banner/88213.gif" alt="Advertisement"></a></section>
</aside>
</div>
<footer class="site-footer"><div class="container">
<ul class="menu">
`, f.side("Newsletter"), f.side("The day's local news in your inbox every morning at seven."), f.side("Advertisement"))
	for _, l := range []string{"About us", "Contact", "Advertise", "Jobs at the Gazette", "Corrections", "Privacy policy", "Cookie settings", "Terms of use", "Accessibility", "RSS feeds"} {
		f.w(`<li><a href="/%s/">%s</a></li>`, slug(l), f.foot(l))
	}
	f.w(`</ul>
<p>%s</p>
<p class="updated"><!--ROT-->%s<!--/ROT--></p>
</div></footer>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Harbour dredging plan approved after two-year dispute","datePublished":"2024-05-13T18:40:00+02:00","author":{"@type":"Person","name":"Miriam Okafor"},"publisher":{"@type":"Organization","name":"The Harbour Gazette"}}</script>
<script src="/assets/js/app.91c2e0.js" defer></script>
</body>
</html>
`, f.foot("© 2024 The Harbour Gazette Ltd. All rights reserved. Registered in the harbour district, company number 0481223."),
		f.foot("Last updated: Tue, 14 May 2024 09:31:07 GMT · 48,213 readers today"))
}

func genUniversity(f *fx) {
	f.raw(`<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" "http://www.w3.org/TR/html4/loose.dtd">
<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>Department of Soil Science - University of Northmoor</title>
<link rel="stylesheet" type="text/css" href="/css/dept.css">
<style type="text/css">
body { font-family: Verdana, Arial, sans-serif; font-size: 13px; margin: 0; background: #f3f1ea; }
td.nav { background: #2f4f2f; width: 190px; vertical-align: top; padding: 12px; }
td.nav a { color: #fff; display: block; padding: 3px 0; }
td.main { background: #fff; vertical-align: top; padding: 16px 24px; }
.banner { background: #2f4f2f url(/img/banner.jpg) no-repeat right; height: 90px; color: #fff; }
.staff td { border-bottom: 1px solid #ccc; padding: 4px 8px; }
.small { font-size: 11px; color: #666; }
</style>
<script type="text/javascript">
function MM_swapImgRestore() { var i,x,a=document.MM_sr; for(i=0;a&&i<a.length&&(x=a[i])&&x.oSrc;i++) x.src=x.oSrc; }
function MM_preloadImages() { var d=document; if(d.images){ if(!d.MM_p) d.MM_p=new Array();
 var i,j=d.MM_p.length,a=MM_preloadImages.arguments; for(i=0; i<a.length; i++)
 if (a[i].indexOf("#")!=0){ d.MM_p[j]=new Image; d.MM_p[j++].src=a[i];}}}
</script>
</head>
<body onload="MM_preloadImages('/img/nav_over.gif')">
<table width="100%" cellpadding="0" cellspacing="0" border="0">
<tr><td colspan="2" class="banner"><a href="http://www.northmoor.ac.uk/"><img src="/img/crest.gif" alt="University of Northmoor" border="0"></a>
`)
	f.w(`<span class="small"><a href="http://www.northmoor.ac.uk/">%s</a> | <a href="/a-z/">%s</a> | <a href="/contact/">%s</a> | <a href="/intranet/">%s</a></span></td></tr>
<tr>
<td class="nav">
`, f.nav("University home"), f.nav("A-Z index"), f.nav("Contact us"), f.nav("Staff intranet"))
	for _, l := range []string{"Department home", "About the department", "Undergraduate study", "Postgraduate study", "PhD opportunities",
		"Research groups", "Publications", "Seminars", "Facilities", "Soil laboratory", "Field station", "People", "Vacancies", "News archive", "How to find us"} {
		f.w(`<a href="/soils/%s.html">%s</a><br>`+"\n", slug(l), f.nav(l))
	}
	f.w(`<br><br>
<a href="/library/">%s</a><br>
<a href="/it-services/">%s</a><br>
</td>
<td class="main">
<h1>%s</h1>
`, f.nav("Library"), f.nav("IT services"), f.art("Department of Soil Science"))
	intro := []string{
		"The Department of Soil Science is one of the oldest of its kind in the country. Since 1921 we have studied how soils form, how they store water, carbon and nutrients, and how farming, forestry and a changing climate alter them. We teach about 140 undergraduates and 45 postgraduate students and host 22 academic staff.",
		"Our research combines long-term field experiments, some of which have run without interruption since 1948, with modern laboratory methods including stable-isotope analysis, X-ray computed tomography of soil cores and DNA sequencing of soil microbial communities.",
		"We work closely with farmers, water companies and government agencies, and our field station at Hollins Moor is open to visiting researchers throughout the year. Enquiries about using the station should be sent to the station manager.",
	}
	for _, p := range intro {
		f.w("<p>%s\n", f.art(p))
	}
	f.w(`<h2>%s</h2>
<ul>
`, f.art("Research groups"))
	for _, g := range []string{
		"Soil physics and hydrology: water flow through structured soils, drainage and flooding.",
		"Soil carbon: how much carbon soils store and how quickly they lose it after ploughing.",
		"Soil biology: microbial communities, earthworms and the breakdown of organic matter.",
		"Pedology and land evaluation: mapping soils and judging what land is fit for.",
		"Contaminated land: heavy metals and persistent pollutants in urban and industrial soils.",
	} {
		f.w("<li>%s\n", f.art(g))
	}
	f.w(`</ul>
<h2>%s</h2>
<p>%s</p>
<table class="staff" cellspacing="0" cellpadding="0">
<tr><th>%s</th><th>Role</th><th>Room</th><th>Phone</th></tr>
`, f.art("Academic staff"), f.art("Heads of group and principal investigators. For a full list, see the People page."), f.art("Name"))
	staff := [][4]string{
		{"Prof. Helen Marsh", "Head of Department, soil physics", "G.14", "01632 960 411"},
		{"Dr Rajesh Iyer", "Reader, soil carbon", "1.07", "01632 960 418"},
		{"Dr Agnieszka Nowak", "Senior Lecturer, soil biology", "1.12", "01632 960 425"},
		{"Prof. Tomas Lindqvist", "Professor of Pedology", "2.03", "01632 960 402"},
		{"Dr Chiara Benedetti", "Lecturer, contaminated land", "2.09", "01632 960 437"},
		{"Dr Owen Pritchard", "Lecturer, hydrology", "2.11", "01632 960 440"},
		{"Dr Fatima Zahra El Idrissi", "Research Fellow, isotopes", "Lab B", "01632 960 452"},
		{"Mr David Okonkwo", "Field Station Manager", "Hollins Moor", "01632 960 499"},
	}
	for _, s := range staff {
		f.w("<tr><td><a href=\"/soils/people/%s.html\">%s</a></td><td>%s</td><td>%s</td><td>%s</td></tr>\n", slug(s[0]), f.art(s[0]), s[1], s[2], s[3])
	}
	f.w(`</table>
<h2>%s</h2>
`, f.art("News"))
	news := []string{
		"14 March 2024. Dr Nowak's group has been awarded a three-year grant to study how earthworm populations recover after the conversion of arable land to grassland.",
		"2 February 2024. Our long-term tillage experiment at Hollins Moor passed its 75th year. A special issue of the European Journal of Soil Science collects papers on its results.",
		"18 December 2023. Congratulations to Sara Lindgren, who passed her PhD viva on water repellency in peat soils without corrections.",
		"30 November 2023. The department's soil monolith collection, 212 soil profiles from across Europe, has been catalogued and photographed and can now be searched online.",
	}
	for _, n := range news {
		f.w("<p>%s</p>\n", f.art(n))
	}
	f.w(`<h2>%s</h2>
<p>%s<br>
%s<br>
%s<br>
%s</p>
<p>%s</p>
</td>
</tr>
<tr><td colspan="2" align="center" class="small">
<hr>
%s<br>
<a href="/disclaimer.html">%s</a> | <a href="/privacy.html">%s</a> | <a href="/accessibility.html">%s</a> | <a href="/foi.html">%s</a><br>
<!--ROT-->%s<!--/ROT-->
</td></tr>
</table>
<script type="text/javascript">
var sc_project=4412871; var sc_invisible=1; var sc_security="a7c0d1e2";
document.write("<img src='//c.statcounter.example/" + sc_project + "/0/" + sc_security + "/1/' alt='' width='1' height='1'>");
</script>
<noscript><div class="statcounter"><img src="//c.statcounter.example/4412871/0/a7c0d1e2/1/" alt="web counter"> HIDDEN99 noscript counter</div></noscript>
</body>
</html>
`, f.art("Contact"), f.art("Department of Soil Science"), f.art("University of Northmoor, Hollins Building"), f.art("Northmoor NM4 7QT"),
		f.art("Telephone 01632 960 400"), f.art("Undergraduate enquiries: soils-ug@northmoor.ac.uk. Postgraduate enquiries: soils-pg@northmoor.ac.uk."),
		f.foot("© University of Northmoor 2024. Registered charity number 1137442."),
		f.foot("Disclaimer"), f.foot("Privacy"), f.foot("Accessibility"), f.foot("Freedom of information"),
		f.foot("Page last modified 14/05/2024 09:31 by webmaster-soils. Visitors since 1 January 2009: 1029341"))
	// Pad with a large but realistic block of tracking and menu data, as
	// old content management systems emit.
	f.raw("<script type=\"text/javascript\">\nvar deptMenu = [\n")
	for i := range 60 {
		f.w("  {id: %d, label: \"Menu item %d\", href: \"/soils/page-%d.html\", children: []},\n", i, i, i)
	}
	f.raw("];\n</script>\n")
}

func genBlog(f *fx) {
	f.head("Why my sourdough stopped rising (and how I fixed it) – Flour &amp; Water",
		"A long look at a starter that went flat.", "en-GB", "UTF-8")
	f.raw(`<body class="post-template-default single single-post postid-2187 single-format-standard wp-embed-responsive">
<div id="page" class="site">
`)
	f.cookieBanner()
	f.w(`<header id="masthead" class="site-header"><div class="site-branding"><p class="site-title"><a href="/" rel="home">%s</a></p><p class="site-description">%s</p></div>
<nav id="site-navigation" class="main-navigation"><button class="menu-toggle" aria-controls="primary-menu" aria-expanded="false">Menu</button>
<div class="menu-primary-container"><ul id="primary-menu" class="menu">
`, f.nav("Flour & Water"), f.nav("Notes from a home baker"))
	for _, l := range []string{"Home", "Recipes", "Bread", "Pastry", "Techniques", "Equipment", "About", "Contact"} {
		f.w(`<li class="menu-item"><a href="/%s/">%s</a></li>`, slug(l), f.nav(l))
	}
	f.w(`</ul></div></nav></header>
<div id="content" class="site-content"><div id="primary" class="content-area"><main id="main" class="site-main">
<article id="post-2187" class="post-2187 post type-post status-publish format-standard hentry category-bread">
<header class="entry-header"><h1 class="entry-title">%s</h1>
<div class="entry-meta"><span class="posted-on">%s</span> <span class="byline">by <a href="/author/ruth/">Ruth</a></span></div></header>
<div class="entry-content">
`, f.art("Why my sourdough stopped rising (and how I fixed it)"), f.art("Posted on 2 April 2024"))
	paras := []string{
		"For three years my starter, a rye and white mix I call Gerald, behaved perfectly. Fed at night, it doubled by breakfast, and the loaves that came out of it were open, glossy and sour in the right way. Then, in January, it stopped. Not dead, exactly: it bubbled a little, smelled fine, but it barely rose, and the bread was dense enough to use as a doorstop.",
		"This post is the long version of what I tried, in the order I tried it, including the things that did not work. If you are in a hurry, skip to the end: the short version is that my kitchen got colder and my flour changed, and both mattered.",
		"The first suspect was temperature. In winter the kitchen drops to about 16 degrees at night, against 21 in summer. Yeast and bacteria both slow down a lot in the cold, so a starter that peaks in eight hours at 21 degrees can take fourteen at 16. I had been feeding on the same schedule and using it long before it peaked.",
		"I moved the jar into the oven with only the light on, which holds it at around 25 degrees. That helped, but not enough: the rise went from barely anything to perhaps half, and it still collapsed early.",
		"The second suspect was the flour. My usual bag had been replaced on the shop shelf by a new brand with a lower protein content and, it turned out, a much finer grind. Finer flour absorbs water differently, and at my usual 100 per cent hydration the starter had become a thin batter that could not hold the gas.",
	}
	for _, p := range paras {
		f.w("<p>%s</p>\n", f.art(p))
	}
	f.w(`<h2>%s</h2>
<ol>
<li>%s</li>
<li>%s</li>
<li>%s</li>
<li>%s</li>
</ol>
<blockquote class="wp-block-quote"><p>%s</p><cite>%s</cite></blockquote>
<p>%s</p>
<p>%s</p>
<h2>%s</h2>
<p>%s</p>
</div>
<footer class="entry-footer"><span class="cat-links">Posted in <a href="/category/bread/" rel="category tag">%s</a></span> <span class="tags-links">Tagged <a href="/tag/sourdough/">%s</a>, <a href="/tag/starter/">%s</a></span></footer>
</article>
<nav class="navigation post-navigation" aria-label="Posts"><div class="nav-links"><div class="nav-previous"><a href="/2024/03/rye-crackers/" rel="prev">%s</a></div><div class="nav-next"><a href="/2024/04/hot-cross-buns/" rel="next">%s</a></div></div></nav>
<div id="comments" class="comments-area">
<h2 class="comments-title">%s</h2>
<ol class="comment-list">
`, f.art("What I changed"),
		f.art("Feed at a ratio of 1:5:5 instead of 1:1:1, so the starter has more to eat overnight."),
		f.art("Drop the hydration to 80 per cent, which gives a thick paste that traps gas."),
		f.art("Keep the jar at 24 to 26 degrees, in the oven with the light on."),
		f.art("Use it at its peak, when the dome just starts to flatten, not on a fixed schedule."),
		f.art("A starter is a culture, not an ingredient: it responds to everything around it."),
		f.art("My grandmother, more or less"),
		f.art("After a week of this, Gerald was doubling in about six hours again, and the first loaf was back to normal: an open crumb, a crust that crackled as it cooled, and the sourness I like."),
		f.art("One last thing that surprised me: the rye. When I switched the rye part of the feed from the shop's light rye to a dark wholegrain rye from a small mill, the starter became noticeably more active. Wholegrain rye carries more wild yeast and more of the enzymes that feed it."),
		f.art("Summary"),
		f.art("If your starter slows down in winter, check the temperature first, then the flour, then the feeding ratio. Change one thing at a time and write down what happens."),
		f.side("Bread"), f.side("sourdough"), f.side("starter"),
		f.nav("Previous post: Rye crackers with caraway"), f.nav("Next post: Hot cross buns, the slow way"),
		f.com("8 thoughts on “Why my sourdough stopped rising”"))
	comments := [][2]string{
		{"Tom B.", "Exactly the same thing happened to mine this winter. I never thought about the flour changing. Going to try the 1:5:5 feed tonight."},
		{"Ruth", "Let me know how it goes, Tom! It took about four feeds before I saw a real difference."},
		{"Mareike", "The oven-light trick works, but I once forgot the starter was in there and preheated for pizza. Put a note on the oven door."},
		{"Jon", "Have you tried a proofing box? Expensive, but I have had no trouble since I bought one."},
		{"Priya", "Lovely write-up. The point about using it at its peak rather than on a schedule is the one nobody tells beginners."},
		{"Alex", "Dark rye made a huge difference for me as well. Which mill do you buy from?"},
		{"Ruth", "Alex, it is a small water mill about an hour from here; I will write a post about it in the summer."},
		{"Sam", "Saved this for next winter. Thank you for including the things that did not work."},
	}
	for i, c := range comments {
		f.w(`<li id="comment-%d" class="comment"><article class="comment-body"><footer class="comment-meta"><div class="comment-author vcard"><b class="fn">%s</b> <span class="says">says:</span></div><div class="comment-metadata"><a href="#comment-%d"><time datetime="2024-04-0%dT10:1%d:00+01:00">%s</time></a></div></footer><div class="comment-content"><p>%s</p></div><div class="reply"><a rel="nofollow" class="comment-reply-link" href="#respond">Reply</a></div></article></li>
`, 4100+i, c[0], 4100+i, 3+i/3, i, f.com(fmt.Sprintf("%d April 2024 at 10:1%d am", 3+i/3, i)), f.com(c[1]))
	}
	f.w(`</ol>
<div id="respond" class="comment-respond"><h3 class="comment-reply-title">%s</h3>
<form action="/wp-comments-post.php" method="post" id="commentform"><p class="comment-notes">%s</p>
<p><label for="comment">Comment</label><textarea id="comment" name="comment"></textarea></p><p><input name="submit" type="submit" value="Post Comment"></p></form></div>
</div>
</main></div>
<aside id="secondary" class="widget-area">
<section class="widget widget_search"><form role="search" action="/"><input type="search" name="s"><button>Search</button></form></section>
<section class="widget widget_recent_entries"><h2 class="widget-title">%s</h2><ul>
`, f.com("Leave a Reply"), f.com("Your email address will not be published. Required fields are marked *"), f.side("Recent Posts"))
	for _, r := range []string{"Hot cross buns, the slow way", "Why my sourdough stopped rising", "Rye crackers with caraway", "A visit to the water mill", "Focaccia for a crowd"} {
		f.w(`<li><a href="/%s/">%s</a></li>`, slug(r), f.side(r))
	}
	f.w(`</ul></section>
<section class="widget widget_archive"><h2 class="widget-title">%s</h2><ul>
`, f.side("Archives"))
	for _, m := range []string{"April 2024", "March 2024", "February 2024", "January 2024", "December 2023", "November 2023", "October 2023", "September 2023", "August 2023", "July 2023", "June 2023", "May 2023"} {
		f.w(`<li><a href="/%s/">%s</a></li>`, slug(m), f.side(m))
	}
	f.w(`</ul></section>
<section class="widget widget_tag_cloud"><h2 class="widget-title">%s</h2><div class="tagcloud">
`, f.side("Tags"))
	for i, t := range []string{"baguette", "brioche", "croissant", "enriched dough", "equipment", "flour", "focaccia", "pizza", "rye", "sourdough", "spelt", "starter", "wholegrain"} {
		f.w(`<a href="/tag/%s/" class="tag-cloud-link" style="font-size: %dpt;">%s</a>`+"\n", slug(t), 8+i%5*2, f.side(t))
	}
	f.w(`</div></section>
</aside>
</div>
<footer id="colophon" class="site-footer"><div class="site-info"><a href="https://wordpress.org/">%s</a><span class="sep"> | </span>%s <!--ROT--><span class="timing">%s</span><!--/ROT--></div></footer>
</div>
<script src="/wp-includes/js/wp-embed.min.js?ver=6.4.3"></script>
<script src="/wp-includes/js/comment-reply.min.js?ver=6.4.3"></script>
</body>
</html>
`, f.foot("Proudly powered by WordPress"), f.foot("Theme: Twenty Nineteen."), f.foot("Page generated in 0.231 seconds with 48 queries."))
}

func genForum(f *fx) {
	f.head("Pump on Leroy-Somer motor overheating after rewind - Workshop Talk", "Forum thread", "en", "utf-8")
	f.w(`<body id="phpbb" class="section-viewtopic ltr">
<div id="wrap" class="wrap">
<div class="headerbar" role="banner"><a href="./index.php" id="logo">%s</a><p>%s</p></div>
<div class="navbar" role="navigation"><ul id="nav-main" class="nav-main linklist">
<li><a href="/app.php/help/faq">%s</a></li><li><a href="./search.php">%s</a></li><li><a href="./memberlist.php">%s</a></li><li><a href="./ucp.php?mode=register">%s</a></li><li><a href="./ucp.php?mode=login">%s</a></li></ul>
<ul id="nav-breadcrumbs" class="nav-breadcrumbs linklist"><li class="breadcrumbs"><span class="crumb"><a href="./index.php">%s</a></span> <span class="crumb"><a href="./viewforum.php?f=7">%s</a></span> <span class="crumb"><a href="./viewforum.php?f=19">%s</a></span></li></ul></div>
<div id="page-body" class="page-body" role="main">
<h2 class="topic-title"><a href="./viewtopic.php?t=88123">%s</a></h2>
<div class="action-bar bar-top"><a href="./posting.php?mode=reply&amp;t=88123" class="button">%s</a>
<div class="pagination">%s &bull; <ul><li class="active"><span>1</span></li><li><a class="button" href="./viewtopic.php?t=88123&amp;start=15">2</a></li><li><a href="./viewtopic.php?t=88123&amp;start=15">%s</a></li></ul></div></div>
`, f.nav("Workshop Talk"), f.nav("Motors, pumps, lathes and the people who fix them"),
		f.nav("FAQ"), f.nav("Search"), f.nav("Members"), f.nav("Register"), f.nav("Login"),
		f.nav("Board index"), f.nav("Electrical"), f.nav("Motors and drives"),
		f.art("Pump on Leroy-Somer motor overheating after rewind"), f.nav("Post Reply"),
		f.nav("17 posts"), f.nav("Next"))
	posts := []struct{ user, rank, joined, posts, body, sig string }{
		{"kestrel_mech", "Member", "Mar 2019", "412", "Hi all. We had the 7.5 kW motor on our main coolant pump rewound last month after a winding failure. Since it came back it runs about 25 degrees hotter than before at the same load, measured on the frame with an IR thermometer. Current draw is within nameplate, 14.8 A against 15.2 A rated. Any ideas what the rewinder might have done differently?", "Two lathes, one mill, too many projects."},
		{"old_sparky", "Moderator", "Jan 2011", "9,877", "First question: did they keep the same number of turns and the same wire gauge? A few rewinders use a slightly smaller gauge when they cannot get the original, which raises the resistance and the copper losses. Ask for the winding data sheet; a good shop records it.", "If it smokes, it was wired by the customer."},
		{"kestrel_mech", "Member", "Mar 2019", "412", "Good point. I phoned them and they said same turns, but they used 1.25 mm wire instead of 1.30 mm because that was what they had in stock. Is that enough to explain 25 degrees?", "Two lathes, one mill, too many projects."},
		{"Henrik_L", "Senior Member", "Aug 2015", "2,341", "It is a start. Copper area goes with the square of the diameter, so 1.25 against 1.30 is about 8 per cent less copper and 8 per cent more resistance. Copper losses go up by the same proportion at the same current. That alone is maybe 5 to 8 degrees, not 25. I would also check the cooling fan: was it refitted the right way round, and is the cowl clear?", ""},
		{"kestrel_mech", "Member", "Mar 2019", "412", "Well, that was embarrassing. The fan was fine but the cowl had a cardboard insert from the rewind shop's packing still stuffed in the back. Removed it and we are down to about 8 degrees over the old temperature, which matches your estimate for the wire.", "Two lathes, one mill, too many projects."},
		{"old_sparky", "Moderator", "Jan 2011", "9,877", "Ha, you would not believe how often that happens. 8 degrees on a class F insulation motor is within margin, but I would tell the rewinder; they should have asked before changing the gauge.", "If it smokes, it was wired by the customer."},
	}
	for i, p := range posts {
		f.w(`<div id="p%d" class="post has-profile bg%d"><div class="inner">
<dl class="postprofile" id="profile%d"><dt class="has-profile-rank"><a href="./memberlist.php?mode=viewprofile&amp;u=%d" class="username">%s</a></dt><dd class="profile-rank">%s</dd><dd class="profile-posts"><strong>Posts:</strong> %s</dd><dd class="profile-joined"><strong>Joined:</strong> %s</dd></dl>
<div class="postbody"><div id="post_content%d"><h3><a href="#p%d">%s</a></h3>
<p class="author"><a class="unread" href="./viewtopic.php?p=%d#p%d">Post</a> <span class="responsive-hide">by <strong>%s</strong> &raquo; </span>%s</p>
<div class="content">%s</div>
`, 700100+i, i%2+1, 700100+i, 3300+i, f.side(p.user), f.side(p.rank), p.posts, p.joined, 700100+i, 700100+i,
			f.art("Re: Pump on Leroy-Somer motor overheating after rewind"), 700100+i, 700100+i, p.user,
			f.side(fmt.Sprintf("Mon May 13, 2024 %d:%02d pm", 1+i, 10+i*7)), f.art(p.body))
		if p.sig != "" {
			f.w(`<div id="sig%d" class="signature">%s</div>`+"\n", 700100+i, f.foot(p.sig))
		}
		f.raw(`</div></div>
<div class="back2top"><a href="#top" class="top" title="Top">Top</a></div>
</div></div>
<hr class="divider">
`)
	}
	f.w(`<div class="action-bar bar-bottom"><a href="./posting.php?mode=reply&amp;t=88123" class="button">%s</a>
<form method="post" action="./viewtopic.php?t=88123"><label>Display: <select name="st"><option>All posts</option><option>1 day</option><option>7 days</option><option>2 weeks</option><option>1 month</option><option>3 months</option><option>6 months</option><option>1 year</option></select></label></form>
<div class="pagination">%s &bull; <ul><li class="active"><span>1</span></li><li><a class="button" href="./viewtopic.php?t=88123&amp;start=15">2</a></li></ul></div></div>
<div class="jumpbox"><span>%s</span><ul>
`, f.nav("Post Reply"), f.nav("17 posts"), f.nav("Jump to"))
	for _, j := range []string{"General discussion", "Introductions", "Lathes", "Milling", "Welding", "Electrical", "Motors and drives", "Control panels", "Hydraulics", "For sale and wanted", "Off topic"} {
		f.w(`<li><a href="./viewforum.php?f=%d">%s</a></li>`, len(j), f.nav(j))
	}
	f.w(`</ul></div>
<div class="stat-block online-list"><h3>%s</h3><p><!--ROT-->%s<!--/ROT--></p></div>
</div>
<div id="page-footer" class="page-footer" role="contentinfo"><div class="navbar"><ul class="linklist"><li><a href="./index.php">%s</a></li><li><a href="./ucp.php?mode=delete_cookies">%s</a></li><li>%s</li></ul></div>
<div class="copyright">%s<br>%s</div></div>
</div>
<script src="./assets/javascript/core.js?assets_version=92"></script>
<script src="./styles/prosilver/template/forum_fn.js?assets_version=92"></script>
</body>
</html>
`, f.side("Who is online"), f.side("Users browsing this forum: 3 members, 41 guests. In total there are 212 users online. Most users ever online was 1841 on Sun Jan 08, 2023 7:02 pm"),
		f.foot("Board index"), f.foot("Delete cookies"), f.foot("All times are UTC"),
		f.foot("Powered by phpBB® Forum Software © phpBB Limited"), f.foot("Style by Arty - phpBB 3.3 by MrGaby"))
	// phpBB pages carry a large inline language/config block.
	f.raw("<script>\nvar phpbb = {lang: {\n")
	for i := range 40 {
		f.w("  \"L_STRING_%d\": \"Interface string number %d, used by the forum's client-side code\",\n", i, i)
	}
	f.raw("}};\n</script>\n")
}

func genDocs(f *fx) {
	f.head("Configuration — tidewater 2.4 documentation", "Configuring tidewater", "en", "utf-8")
	f.w(`<body>
<div class="wy-grid-for-nav">
<nav data-toggle="wy-nav-shift" class="wy-nav-side"><div class="wy-side-scroll"><div class="wy-side-nav-search"><a href="index.html" class="icon icon-home">%s</a><div class="version">2.4</div>
<div role="search"><form id="rtd-search-form" class="wy-form" action="search.html" method="get"><input type="text" name="q" placeholder="Search docs"></form></div></div>
<div class="wy-menu wy-menu-vertical" role="navigation" aria-label="Navigation menu"><p class="caption"><span class="caption-text">%s</span></p><ul class="current">
`, f.nav("tidewater"), f.nav("Contents"))
	for _, l := range []string{"Installation", "Quick start", "Configuration", "Data sources", "Schedules", "Command-line reference", "Python API", "Plugins", "Deployment", "Troubleshooting", "Changelog", "Contributing"} {
		cls := ""
		if l == "Configuration" {
			cls = ` class="current"`
		}
		f.w(`<li class="toctree-l1"><a%s href="%s.html">%s</a>`, cls, slug(l), f.nav(l))
		if l == "Configuration" {
			f.w(`<ul><li class="toctree-l2"><a href="#file-format">%s</a></li><li class="toctree-l2"><a href="#options">%s</a></li><li class="toctree-l2"><a href="#environment-variables">%s</a></li></ul>`,
				f.nav("File format"), f.nav("Options"), f.nav("Environment variables"))
		}
		f.raw("</li>\n")
	}
	f.w(`</ul></div></div></nav>
<section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><div class="wy-nav-content"><div class="rst-content">
<div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li><a href="index.html">%s</a> &raquo;</li><li>%s</li><li class="wy-breadcrumbs-aside"><a href="_sources/configuration.rst.txt" rel="nofollow">%s</a></li></ul><hr></div>
<div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article"><div itemprop="articleBody">
<section id="configuration"><h1>%s<a class="headerlink" href="#configuration" title="Permalink to this heading">¶</a></h1>
<p>%s</p>
<section id="file-format"><h2>%s<a class="headerlink" href="#file-format" title="Permalink to this heading">¶</a></h2>
<p>%s</p>
<div class="highlight-toml notranslate"><div class="highlight"><pre><span></span><span class="k">[station]</span>
<span class="n">name</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="s">"Harbour mouth"</span>
<span class="n">latitude</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="mf">53.5511</span>
<span class="n">interval</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="s">"10m"</span>

<span class="k">[[source]]</span>
<span class="n">kind</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="s">"gauge"</span>
<span class="n">url</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="s">"https://gauges.example.org/api/v2/readings"</span>
<span class="n">timeout</span><span class="w"> </span><span class="o">=</span><span class="w"> </span><span class="s">"30s"</span>
</pre></div></div>
<p>%s</p>
</section>
<section id="options"><h2>%s<a class="headerlink" href="#options" title="Permalink to this heading">¶</a></h2>
<p>%s</p>
<table class="docutils align-default"><colgroup><col style="width: 25%%"><col style="width: 15%%"><col style="width: 15%%"><col style="width: 45%%"></colgroup>
<thead><tr class="row-odd"><th class="head"><p>%s</p></th><th class="head"><p>Type</p></th><th class="head"><p>Default</p></th><th class="head"><p>Description</p></th></tr></thead>
<tbody>
`, f.nav("Docs"), f.nav("Configuration"), f.nav("View page source"),
		f.art("Configuration"),
		f.art("tidewater reads its settings from a TOML file, from environment variables and from the command line, in increasing order of precedence: a flag beats an environment variable, which beats the file. This page describes the file and every option."),
		f.art("File format"),
		f.art("The file is looked for at the path given by --config, then at ./tidewater.toml, then at ~/.config/tidewater/config.toml. The first file found is used; the others are not merged. A minimal file names the station and one data source:"),
		f.art("Durations are written with a unit (s, m, h). Unknown keys are an error, so that a misspelt option is not silently ignored."),
		f.art("Options"),
		f.art("All options of the [station] table. Options of [[source]] are described in Data sources."),
		f.art("Option"))
	opts := [][4]string{
		{"name", "string", "(required)", "A human-readable name, used in reports and file names."},
		{"latitude", "float", "(required)", "Latitude of the station in decimal degrees, WGS 84."},
		{"longitude", "float", "(required)", "Longitude of the station in decimal degrees, WGS 84."},
		{"interval", "duration", "10m", "How often to poll each source. Values under 1m are rejected."},
		{"timezone", "string", "UTC", "Time zone used when printing times; data is always stored in UTC."},
		{"retention", "duration", "8760h", "How long to keep raw readings before they are thinned to hourly means."},
		{"datum", "string", "LAT", "Vertical datum for water levels: LAT, MSL or a local chart datum name."},
		{"alert_level", "float", "none", "Level in metres above which an alert is sent. Leave unset for no alerts."},
	}
	for i, o := range opts {
		f.w(`<tr class="row-%s"><td><p><code class="docutils literal notranslate"><span class="pre">%s</span></code></p></td><td><p>%s</p></td><td><p>%s</p></td><td><p>%s</p></td></tr>`+"\n",
			[]string{"even", "odd"}[i%2], f.art(o[0]), o[1], o[2], o[3])
	}
	f.w(`</tbody></table>
<div class="admonition note"><p class="admonition-title">Note</p><p>%s</p></div>
</section>
<section id="environment-variables"><h2>%s<a class="headerlink" href="#environment-variables" title="Permalink to this heading">¶</a></h2>
<p>%s</p>
<div class="highlight-console notranslate"><div class="highlight"><pre><span></span><span class="gp">$ </span><span class="nb">export</span><span class="w"> </span><span class="nv">TIDEWATER_STATION_INTERVAL</span><span class="o">=</span>5m
<span class="gp">$ </span>tidewater<span class="w"> </span>run<span class="w"> </span>--config<span class="w"> </span>harbour.toml
<span class="go">2024-05-14T09:00:00Z INFO polling 1 source every 5m0s</span>
</pre></div></div>
<p>%s</p>
<ul class="simple">
<li><p>%s</p></li>
<li><p>%s</p></li>
<li><p>%s</p></li>
</ul>
</section>
</section>
</div></div>
<footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer"><a href="quick-start.html" class="btn btn-neutral float-left" title="Quick start" accesskey="p" rel="prev"><span class="fa fa-arrow-circle-left" aria-hidden="true"></span> %s</a><a href="data-sources.html" class="btn btn-neutral float-right" title="Data sources" accesskey="n" rel="next">%s <span class="fa fa-arrow-circle-right" aria-hidden="true"></span></a></div>
<hr><div role="contentinfo"><p>%s</p><p><!--ROT-->%s<!--/ROT--></p></div>
%s
</footer>
</div></div></section>
</div>
<script>jQuery(function () { SphinxRtdTheme.Navigation.enable(true); });</script>
<script src="_static/documentation_options.js?v=2.4.0"></script><script src="_static/doctools.js?v=888ff710"></script><script src="_static/sphinx_highlight.js?v=dc90522c"></script>
</body>
</html>
`, f.art("Options given on the command line are not written back to the file. Use tidewater config dump to print the effective configuration with the source of every value."),
		f.art("Environment variables"),
		f.art("Every option can be set with an environment variable named TIDEWATER_ followed by the table and the option in upper case, joined by underscores:"),
		f.art("Environment variables are read once at start-up. Three variables are not options but control tidewater itself:"),
		f.art("TIDEWATER_CONFIG: the configuration file, like --config."),
		f.art("TIDEWATER_LOG: the log level, one of debug, info, warn or error."),
		f.art("TIDEWATER_NO_COLOR: disables coloured output when set to any value."),
		f.nav("Previous"), f.nav("Next"),
		f.foot("© Copyright 2019-2024, the tidewater authors."),
		f.foot("Last updated on May 14, 2024 at 09:31. Revision 7c1e4a92."),
		f.foot("Built with Sphinx using a theme provided by Read the Docs."))
	f.raw("<script>\nvar DOCUMENTATION_OPTIONS = {\n")
	for i := range 30 {
		f.w("  SEARCH_INDEX_CHUNK_%d: \"%s\",\n", i, strings.Repeat("ab12", 12))
	}
	f.raw("};\n</script>\n")
}

func genCatalog(f *fx) {
	f.head("Cordless drills | Toolhouse", "Cordless drills and drivers at Toolhouse", "en", "utf-8")
	f.raw("<body class=\"category-page\">\n")
	f.cookieBanner()
	f.w(`<header class="site-header"><div class="container"><a href="/" class="logo">%s</a>
<form class="search" action="/search"><input name="q" placeholder="Search 20,000 products"><button>Search</button></form>
<ul class="account"><li><a href="/account">%s</a></li><li><a href="/basket">%s</a></li></ul></div>
<nav class="mega"><ul class="menu">
`, f.nav("Toolhouse"), f.nav("My account"), f.nav("Basket (0)"))
	for _, c := range []string{"Power tools", "Hand tools", "Garden", "Plumbing", "Electrical", "Decorating", "Timber", "Fixings", "Workwear", "Offers"} {
		f.w(`<li><a href="/c/%s">%s</a><ul class="sub">`, slug(c), f.nav(c))
		for j := range 4 {
			f.w(`<li><a href="/c/%s/%d">%s</a></li>`, slug(c), j, f.nav(fmt.Sprintf("%s range %d", c, j+1)))
		}
		f.raw("</ul></li>\n")
	}
	f.w(`</ul></nav></header>
<div class="container">
<ol class="breadcrumbs"><li><a href="/">%s</a></li><li><a href="/c/power-tools">%s</a></li><li>%s</li></ol>
<div class="grid">
<aside class="col-3 facets"><h2>%s</h2>
`, f.nav("Home"), f.nav("Power tools"), f.nav("Cordless drills"), f.side("Filter by"))
	facets := map[string][]string{
		"Brand":   {"Bosch (14)", "DeWalt (11)", "Makita (12)", "Milwaukee (6)", "Ryobi (9)", "Einhell (7)"},
		"Voltage": {"12 V (15)", "18 V (38)", "36 V (6)"},
		"Price":   {"Under 50 (8)", "50 to 100 (19)", "100 to 200 (21)", "Over 200 (11)"},
		"Rating":  {"4 stars and up (41)", "3 stars and up (55)"},
	}
	for _, k := range []string{"Brand", "Voltage", "Price", "Rating"} {
		f.w("<fieldset><legend>%s</legend><ul>", f.side(k))
		for _, v := range facets[k] {
			f.w(`<li><label><input type="checkbox" name="%s" value="%s"> %s</label></li>`, slug(k), slug(v), f.side(v))
		}
		f.raw("</ul></fieldset>\n")
	}
	f.w(`</aside>
<main class="col-9">
<h1>%s</h1>
<p class="intro">%s</p>
<div class="toolbar"><span>%s</span> <label>Sort by <select><option>Relevance</option><option>Price: low to high</option><option>Price: high to low</option><option>Rating</option></select></label></div>
<ul class="products">
`, f.art("Cordless drills"),
		f.art("Cordless drill drivers and combi drills from the leading brands. All 18 V tools work with batteries of the same brand, so check which system you already own before buying a bare unit."),
		f.nav("Showing 1-24 of 59 products"))
	brands := []string{"Bosch", "DeWalt", "Makita", "Milwaukee", "Ryobi", "Einhell"}
	kinds := []string{"combi drill", "drill driver", "hammer drill", "compact drill driver"}
	for i := range 24 {
		b := brands[i%len(brands)]
		k := kinds[i%len(kinds)]
		v := []string{"18 V", "12 V", "18 V", "36 V"}[i%4]
		price := 49 + (i*37)%230
		f.w(`<li class="card"><a href="/p/%d"><img src="/img/p/%d.jpg" alt="" loading="lazy"><h3>%s</h3></a>
<p class="specs">%s</p><p class="price">£%d.%02d</p><p class="rating" title="%d.%d out of 5"><span class="stars">★★★★☆</span> <span class="count">(%d)</span></p>
<p class="stock">%s</p><form action="/basket/add" method="post"><input type="hidden" name="sku" value="%d"><button class="btn">Add to basket</button></form></li>
`, 10400+i, 10400+i, f.art(fmt.Sprintf("%s %s %s, %s", b, v, k, []string{"bare unit", "2 x 2.0 Ah batteries", "1 x 4.0 Ah battery", "in case"}[i%4])),
			f.art(fmt.Sprintf("%d Nm torque, %d-speed gearbox, %s chuck", 30+i*3%60, 1+i%2, []string{"10 mm", "13 mm"}[i%2])),
			price, (i*13)%100, 3+i%2, i*7%10, 12+i*17%300, f.side([]string{"In stock for delivery", "Collect today", "Low stock"}[i%3]), 10400+i)
	}
	f.w(`</ul>
<nav class="pager" aria-label="Pages"><ul class="pagination"><li class="current">%s</li><li><a href="?page=2">%s</a></li><li><a href="?page=3">%s</a></li><li><a href="?page=2" rel="next">%s</a></li></ul></nav>
<section class="seo-text"><h2>%s</h2><p>%s</p><p>%s</p></section>
</main>
</div>
<section class="recently-viewed"><h2>%s</h2><ul><li><a href="/p/8812">%s</a></li><li><a href="/p/9932">%s</a></li></ul></section>
</div>
<footer class="site-footer"><div class="container">
`, f.nav("1"), f.nav("2"), f.nav("3"), f.nav("Next page"),
		f.art("Choosing a cordless drill"),
		f.art("A drill driver is enough for putting up shelves and assembling furniture. If you drill into brick or concrete, choose a combi drill, which adds a hammer action. For regular masonry work an SDS hammer drill is faster and easier on the wrists."),
		f.art("Torque, measured in newton metres, tells you how hard the drill can turn a screw. Around 40 Nm is plenty for home use; trade models go over 100 Nm."),
		f.side("Recently viewed"), f.side("Stanley 24 in tool box"), f.side("Bosch 18 V 2.0 Ah battery"))
	for _, col := range [][]string{
		{"Help", "Delivery", "Returns", "Track an order", "Contact us"},
		{"About Toolhouse", "Our stores", "Careers", "Trade accounts", "Sustainability"},
		{"Legal", "Terms and conditions", "Privacy", "Cookies", "Modern slavery statement"},
	} {
		f.w(`<div class="col"><h4>%s</h4><ul>`, f.foot(col[0]))
		for _, l := range col[1:] {
			f.w(`<li><a href="/%s">%s</a></li>`, slug(l), f.foot(l))
		}
		f.raw("</ul></div>\n")
	}
	f.w(`<p>%s</p><p><!--ROT-->%s<!--/ROT--></p></div></footer>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"ItemList","numberOfItems":59}</script>
</body>
</html>
`, f.foot("© 2024 Toolhouse Retail Ltd. Prices include VAT."), f.foot("Prices and stock checked 14 May 2024 09:31 for store 0417."))
}

func genCalendar(f *fx) {
	f.head("Events in May 2024 | Riverside Community Centre", "What's on", "en", "utf-8")
	f.w(`<body class="calendar month-view">
<header class="site-header"><a href="/" class="logo">%s</a>
<nav><ul class="menu">
`, f.nav("Riverside Community Centre"))
	for _, l := range []string{"Home", "What's on", "Room hire", "Cafe", "Clubs and groups", "Volunteer", "Donate", "Contact"} {
		f.w(`<li><a href="/%s/">%s</a></li>`, slug(l), f.nav(l))
	}
	f.w(`</ul></nav></header>
<main id="main">
<h1>%s</h1>
<p>%s</p>
<div class="cal-nav"><a href="/events/?month=2024-04" rel="prev">%s</a> | <a href="/events/?month=2024-05&amp;view=week">%s</a> | <a href="/events/?month=2024-05&amp;view=list">%s</a> | <a href="/events/?month=2024-06" rel="next">%s</a> | <a href="/events/?month=2025-05">%s</a></div>
<table class="month" summary="Calendar of events">
<caption>%s</caption>
<thead><tr><th>Mon</th><th>Tue</th><th>Wed</th><th>Thu</th><th>Fri</th><th>Sat</th><th>Sun</th></tr></thead>
<tbody>
`, f.art("Events in May 2024"),
		f.art("Everyone is welcome at our events. Most are free; where there is a charge it is shown on the event page. Click a day to see the full details."),
		f.nav("« April 2024"), f.nav("Week view"), f.nav("List view"), f.nav("June 2024 »"), f.nav("Same month next year"),
		f.art("May 2024"))
	events := map[int][]string{
		1: {"Toddler music, 10:00"}, 2: {"Knit and natter, 14:00"}, 4: {"Repair cafe, 10:00-13:00"},
		6: {"Bank holiday: centre closed"}, 7: {"Chair yoga, 11:00"}, 8: {"Knit and natter, 14:00", "Film club: Local Hero, 19:30"},
		10: {"Coffee morning, 10:30"}, 11: {"Plant swap, 10:00"}, 14: {"Chair yoga, 11:00", "Council drop-in surgery, 17:00"},
		15: {"Knit and natter, 14:00"}, 17: {"Quiz night, 19:30"}, 18: {"Spring fair, 11:00-16:00"},
		21: {"Chair yoga, 11:00"}, 22: {"Knit and natter, 14:00", "Book group: The Road Home, 19:00"}, 24: {"Coffee morning, 10:30"},
		25: {"Repair cafe, 10:00-13:00"}, 27: {"Bank holiday: centre closed"}, 28: {"Chair yoga, 11:00"}, 29: {"Half-term craft club, 10:00"},
		30: {"Half-term craft club, 10:00"}, 31: {"Ceilidh, 19:00"},
	}
	// May 2024 starts on a Wednesday.
	day := 1 - 2
	for week := 0; week < 5; week++ {
		f.raw("<tr>")
		for dow := 0; dow < 7; dow++ {
			if day < 1 || day > 31 {
				f.raw(`<td class="other-month"></td>`)
				day++
				continue
			}
			cls := "day"
			if day == 14 {
				cls = "day today"
			}
			f.w(`<td class="%s"><a class="daynum" href="/events/?day=2024-05-%02d">%d</a>`, cls, day, day)
			for _, e := range events[day] {
				f.w(`<a class="event" href="/events/%s-2024-05-%02d/">%s</a>`, slug(e), day, f.art(e))
			}
			f.raw("</td>")
			day++
		}
		f.raw("</tr>\n")
	}
	f.w(`</tbody></table>
<div class="subscribe"><a href="/events/ical/">%s</a> <a href="/events/feed/">%s</a></div>
<h2>%s</h2>
<ul class="upcoming"><!--ROT-->
<li>%s</li>
<li>%s</li>
<li>%s</li>
<!--/ROT--></ul>
</main>
<aside class="sidebar"><section class="widget"><h3>%s</h3><ul>
`, f.nav("Subscribe (iCal)"), f.nav("RSS feed"), f.side("Coming up next"),
		f.side("Today, 14 May: Chair yoga, 11:00 (in 1 hour 29 minutes)"), f.side("Today, 14 May: Council drop-in surgery, 17:00"), f.side("Wednesday 15 May: Knit and natter, 14:00"),
		f.side("Browse by category"))
	for _, c := range []string{"Children and families", "Health and wellbeing", "Arts and crafts", "Music and dance", "Film", "Community meetings", "Fairs and markets"} {
		f.w(`<li><a href="/events/category/%s/">%s</a></li>`, slug(c), f.side(c))
	}
	f.w(`</ul></section>
<section class="widget"><h3>%s</h3><ul>
`, f.side("Archive"))
	for y := 2024; y >= 2019; y-- {
		for _, m := range []string{"December", "September", "June", "March"} {
			f.w(`<li><a href="/events/?month=%d-%s">%s</a></li>`, y, slug(m), f.nav(fmt.Sprintf("%s %d", m, y)))
		}
	}
	f.w(`</ul></section></aside>
<footer class="site-footer"><p>%s</p><p>%s</p><p><!--ROT-->%s<!--/ROT--></p></footer>
<script src="/js/calendar.min.js"></script>
</body>
</html>
`, f.foot("Riverside Community Centre, 12 Mill Lane. Registered charity 1098877."),
		f.foot("Opening hours: Monday to Saturday 9:00-21:00."),
		f.foot("Today is Tuesday 14 May 2024. Calendar generated at 09:31:07."))
	f.raw("<script>\nvar calendarEvents = [\n")
	for d := 1; d <= 31; d++ {
		for i, e := range events[d] {
			f.w("  {\"date\": \"2024-05-%02d\", \"seq\": %d, \"title\": %q, \"room\": \"Main hall\", \"free\": true},\n", d, i, e)
		}
	}
	for i := range 50 {
		f.w("  {\"date\": \"2024-06-%02d\", \"seq\": 0, \"title\": \"Recurring event %d\", \"room\": \"Room %d\", \"free\": false},\n", i%30+1, i, i%4+1)
	}
	f.raw("];\n</script>\n")
}

// genBroken writes a hand-maintained 1990s page with unclosed and
// mis-nested tags, and latin-1 bytes in a page that says it is UTF-8.
func genBroken(f *fx) {
	f.w(`<HTML>
<HEAD>
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=utf-8">
<TITLE>Heimatverein M`+"\xfc"+`hlbach - Chronik der M`+"\xfc"+`hle</TITLE>
<META NAME="GENERATOR" CONTENT="Mozilla/4.7 [de] (Win98; I) [Netscape]">
<SCRIPT LANGUAGE="JavaScript">
<!--
function popup(url) { window.open(url,'bild','width=640,height=480,scrollbars=yes'); }
var HIDDEN98 = "inside a script in a comment";
//-->
</SCRIPT>
</HEAD>
<BODY BGCOLOR="#FFFFEE" TEXT="#000000" LINK="#0000CC" VLINK="#660099">
<CENTER>
<FONT FACE="Arial" SIZE=2>
<A HREF=index.html>%s</A> | <A HREF=verein.html>%s</A> | <A HREF=chronik.html>%s</A> | <A HREF=termine.html>%s</A> | <A HREF=gaestebuch.html>%s</A> | <A HREF=links.html>%s</A>
</FONT>
</CENTER>
<HR WIDTH="80%%">
<H1><FONT COLOR="#663300">%s</FONT></H1>
<P><B>%s
<P>%s
<P><I>%s</B></I>
<TABLE BORDER=0 WIDTH=600>
<TR><TD VALIGN=TOP><IMG SRC="muehle1.jpg" WIDTH=200 HEIGHT=150 ALT="Die M`+"\xfc"+`hle um 1910">
<TD VALIGN=TOP><FONT SIZE=2>%s</FONT>
</TABLE>
<H2>%s</H2>
<UL>
<LI>%s
<LI>%s
<LI>%s
<LI>%s
</UL>
<P>%s<BR>
%s<BR><BR>
%s
<DIV CLASS=zitat><P>%s</DIV></P>
<H2>%s</H2>
<P>%s
<P>%s
<TABLE BORDER=1 CELLPADDING=3>
<TR><TH>%s<TH>Ereignis
<TR><TD>1742<TD>%s
<TR><TD>1811<TD>%s
<TR><TD>1894<TD>%s
<TR><TD>1956<TD>%s
<TR><TD>1988<TD>%s
</TABLE>
<P>%s
<P>%s</P></P></P>
</B></FONT></TD></TR>
<CENTER><FONT SIZE=1>
<HR>
%s<BR>
<!--ROT-->%s<!--/ROT--><BR>
<A HREF="mailto:webmaster@heimatverein-muehlbach.de">%s</A>
</FONT></CENTER>
<IMG SRC="/cgi-bin/counter.pl?page=chronik" WIDTH=1 HEIGHT=1>
`, f.nav("Startseite"), f.nav("Der Verein"), f.nav("Chronik"), f.nav("Termine"), f.nav("G"+"\xe4"+"stebuch"), f.nav("Links"),
		f.art("Chronik der M"+"\xfc"+"hle am Mühlbach"),
		f.art("Die alte Wassermühle am Ortsrand ist das älteste erhaltene Gebäude unseres Dorfes. Sie wurde 1742 als Getreidemühle erbaut und blieb bis 1956 in Betrieb."),
		f.art("Über zweihundert Jahre lang mahlte die Mühle das Korn der Bauern aus Mühlbach und den Nachbardörfern. Der Müller erhielt dafür einen Teil des Mehls, die sogenannte Metze."),
		f.art("Diese Seite wird vom Heimatverein gepflegt und laufend ergänzt."),
		f.art("Das Foto links zeigt die M"+"\xfc"+"hle um 1910, aufgenommen vom Lehrer Anton Wei"+"\xdf"+". Das Original h"+"\xe4"+"ngt im Vereinsheim."),
		f.art("Die wichtigsten Teile der Mühle"),
		f.art("Das oberschl"+"\xe4"+"chtige Wasserrad, 5,20 m Durchmesser"),
		f.art("Zwei Mahlgänge mit Steinen aus der Eifel"),
		f.art("Der Sackaufzug, angetrieben vom Wasserrad"),
		f.art("Die Wohnung des Müllers im ersten Stock"),
		f.art("Wer die Mühle besichtigen möchte, meldet sich bitte beim Vorsitzenden."),
		f.art("Führungen finden von Mai bis Oktober am ersten Sonntag im Monat statt."),
		f.art("Der Eintritt ist frei, über eine Spende für den Erhalt der Mühle freuen wir uns."),
		f.art("\"Wer zuerst kommt, mahlt zuerst\" – das Sprichwort stammt aus der Zeit, als die Bauern an der Mühle warten mussten."),
		f.art("Geschichte"),
		f.art("1811 brannte die Mühle nach einem Blitzschlag fast vollständig ab und wurde von der Familie Hofmann wieder aufgebaut. 1894 wurde ein zweiter Mahlgang eingebaut, 1956 stellte der letzte Müller, Josef Hofmann, den Betrieb ein."),
		f.art("Seit 1988 gehört die Mühle dem Heimatverein, der sie mit Hilfe vieler Freiwilliger restauriert hat. Das Wasserrad dreht sich seit 1995 wieder."),
		f.art("Jahr"),
		f.art("Bau der Mühle durch Johann Peter Schäfer"),
		f.art("Brand nach Blitzschlag, Wiederaufbau"),
		f.art("Zweiter Mahlgang"),
		f.art("Stilllegung"),
		f.art("Kauf durch den Heimatverein"),
		f.art("Quellen: Gemeindearchiv Mühlbach, Kirchenbücher, Erinnerungen von Maria Hofmann (1921-2009)."),
		f.art("Text: Karl-Heinz Becker. Fotos: Archiv des Heimatvereins."),
		f.foot("© 1999-2024 Heimatverein Mühlbach e.V."),
		f.foot("Letzte Änderung: 14.05.2024 - Besucher: 004213"),
		f.foot("Mail an den Webmaster"))
	// Old pages were often padded with a long guest-book excerpt and
	// spacer markup; keep the page over 10 KB with more of the chronicle.
	f.raw("<P><FONT SIZE=2>\n")
	for i, y := range []int{1750, 1763, 1772, 1789, 1801, 1816, 1830, 1848, 1866, 1871, 1890, 1914, 1918, 1923, 1933, 1945, 1949, 1961, 1972, 1990, 2001, 2012} {
		f.w("<B>%d</B> &ndash; %s<BR>\n", y, f.art(fmt.Sprintf("Eintrag %d aus dem Mühlenbuch: Der Müller vermerkt Wasserstand, Mahlmenge und Preise für Roggen und Weizen; der Text ist hier gekürzt wiedergegeben.", i+1)))
	}
	f.raw("</FONT>\n<TABLE><TR><TD><FONT COLOR=\"#FFFFEE\" SIZE=1>")
	f.raw(strings.Repeat("&nbsp;", 400))
	f.raw("</FONT></TD></TR></TABLE>\n</BODY>\n")
}
