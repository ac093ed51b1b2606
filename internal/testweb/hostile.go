package testweb

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// The sites below are the two sides of a trap defence: legitimate sites whose URLs look like traps
// (numbered pages, release notes), and traps (a calendar without end, session ids in URLs, a farm
// of near-identical pages, a path loop). Each returns what a measurement needs: the paths of its
// real pages, which a crawler should fetch, and, for a trap, a test of whether a path is in it.

// Hostile describes what one of these sites serves.
type Hostile struct {
	// Legit are the paths of the site's real pages: distinct content, each worth one fetch.
	Legit []string
	// Trap reports whether a requested path (with its query) is part of the site's trap; nil for a
	// site without one.
	Trap func(path string) bool
}

// proseWords is the vocabulary of generated page text.
var proseWords = strings.Fields(`river bridge harbour market station garden museum library theatre castle tower
	village forest meadow valley mountain island lake canal mill chapel school hospital bakery brewery
	council mayor teacher farmer painter writer sailor miner weaver baker doctor nurse student scholar
	history archive record letter diary map survey census ledger charter deed treaty almanac journal
	winter spring summer autumn morning evening harvest festival flood storm drought frost thaw fair
	built opened closed restored moved founded burned rebuilt extended sold bought inherited named
	stone timber brick iron copper glass wool linen grain salt coal clay slate marble oak willow ash
	north south east west upper lower old new great little long short broad narrow high low deep`)

// prose returns words words of text that depend only on key: distinct keys give distinct texts,
// even with their numbers set aside.
func prose(key string, words int) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(proseWords[r.IntN(len(proseWords))])
	}
	return b.String()
}

func htmlPage(title, body string) string {
	return "<!DOCTYPE html><html><head><title>" + title + "</title></head><body><main><h1>" + title + "</h1>" + body +
		"</main></body></html>"
}

// Pagination serves a plain site of n pages, "/" and /page/1.html … /page/(n-1).html, each with text
// of its own and links links: home, the previous and the next page, and pseudo-random others. The
// page numbers step by one and every page is found on pages of the same shape, which is what a
// stepping-number rule takes for a counter.
func (s *Site) Pagination(n, links int) Hostile {
	path := func(i int) string {
		if i == 0 {
			return "/"
		}
		return fmt.Sprintf("/page/%d.html", i)
	}
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	site := h.Sum64() // each site links its pages its own way
	var out Hostile
	for i := range n {
		r := rand.New(rand.NewPCG(site, uint64(i)))
		set := map[int]bool{}
		var order []int
		add := func(j int) {
			if j >= 0 && j < n && j != i && !set[j] {
				set[j] = true
				order = append(order, j)
			}
		}
		if i == 0 {
			for j := 1; j <= links; j++ {
				add(j)
			}
		}
		add(0)
		add(i - 1)
		add(i + 1)
		for tries := 0; len(order) < min(links, n-1) && tries < 20*links; tries++ {
			add(1 + r.IntN(n-1))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<p>%s</p><nav>", prose(fmt.Sprintf("%s page %d", s.Name, i), 120))
		for _, j := range order {
			fmt.Fprintf(&b, `<a href="%s">page %d</a> `, path(j), j)
		}
		b.WriteString("</nav>")
		s.Page(path(i), htmlPage(fmt.Sprintf("Page %d", i), b.String()))
		out.Legit = append(out.Legit, path(i))
	}
	return out
}

// Releases are the versions of DocSite's release notes: 59 of them, 0.1 … 5.8, as a real
// documentation site numbers them (release.0.7.html … release.1.10.html …).
func Releases() []string {
	var vs []string
	for major, minors := range []int{9, 11, 10, 10, 10, 9} {
		first := 0
		if major == 0 {
			first = 1
		}
		for minor := first; minor < first+minors; minor++ {
			vs = append(vs, fmt.Sprintf("%d.%d", major, minor))
		}
	}
	return vs
}

// DocSite serves a documentation site: "/" → /docs/index.html, which links 20 guide pages and the
// changelog; the changelog links the five newest release notes, and each release note its
// neighbours, so the older ones are found one by one, each on the page of the next release. Seeded
// at a level above 60, every page is reachable.
func (s *Site) DocSite() Hostile {
	var out Hostile
	page := func(p, title, body string) {
		s.Page(p, htmlPage(title, body))
		out.Legit = append(out.Legit, p)
	}
	page("/", "Project", `<p>`+prose(s.Name+" home", 60)+`</p><a href="/docs/index.html">Documentation</a>`)
	topics := strings.Fields("install quickstart configuration tutorial concepts api cli plugins testing deployment " +
		"security performance faq glossary migration contributing architecture logging storage networking")
	var idx strings.Builder
	idx.WriteString(`<p>` + prose(s.Name+" docs index", 50) + `</p><ul>`)
	for _, t := range topics {
		p := "/docs/guide/" + t + ".html"
		fmt.Fprintf(&idx, `<li><a href="%s">%s</a></li>`, p, t)
		page(p, "Guide: "+t, `<p>`+prose(s.Name+" guide "+t, 150)+`</p><a href="/docs/index.html">Index</a>`)
	}
	idx.WriteString(`<li><a href="/docs/changelog.html">Changelog</a></li></ul>`)
	page("/docs/index.html", "Documentation", idx.String())
	vs := Releases()
	rel := func(v string) string { return "/docs/release." + v + ".html" }
	var cl strings.Builder
	cl.WriteString(`<p>` + prose(s.Name+" changelog", 40) + `</p><ul>`)
	for k := len(vs) - 1; k >= len(vs)-5; k-- {
		fmt.Fprintf(&cl, `<li><a href="%s">Release %s</a></li>`, rel(vs[k]), vs[k])
	}
	cl.WriteString(`</ul>`)
	page("/docs/changelog.html", "Changelog", cl.String())
	for k, v := range vs {
		var b strings.Builder
		fmt.Fprintf(&b, `<p>%s</p><nav>`, prose(s.Name+" release "+v, 100))
		if k > 0 {
			fmt.Fprintf(&b, `<a href="%s">Previous release</a> `, rel(vs[k-1]))
		}
		if k+1 < len(vs) {
			fmt.Fprintf(&b, `<a href="%s">Next release</a> `, rel(vs[k+1]))
		}
		b.WriteString(`<a href="/docs/changelog.html">Changelog</a> <a href="/docs/index.html">Index</a></nav>`)
		page(rel(v), "Release "+v, b.String())
	}
	return out
}

// smallSite serves the real pages a trap site has besides its trap: "/" (with extra, the links into
// the trap), an about page and three news pages.
func (s *Site) smallSite(extra string) []string {
	paths := []string{"/", "/about.html", "/news/1.html", "/news/2.html", "/news/3.html"}
	var nav strings.Builder
	for _, p := range paths[1:] {
		fmt.Fprintf(&nav, `<a href="%s">%s</a> `, p, p)
	}
	s.Page("/", htmlPage("Home", `<p>`+prose(s.Name+" home", 80)+`</p><nav>`+nav.String()+extra+`</nav>`))
	for _, p := range paths[1:] {
		s.Page(p, htmlPage(p, `<p>`+prose(s.Name+p, 120)+`</p><a href="/">Home</a>`))
	}
	return paths
}

// Calendar serves a small site with an endless calendar under /calendar/Y/M/D: each day links the
// previous and the next one, for ever. Most days say there is nothing on, in words that differ only
// by the date; one day in ten has one of three events.
func (s *Site) Calendar() Hostile {
	legit := s.smallSite(`<a href="/calendar/2026/01/01">Calendar</a>`)
	events := []string{"Reading group in the library", "Choir rehearsal in the chapel", "Guided walk along the canal"}
	s.HandlePrefix("/calendar/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var y, m, d int
		if _, err := fmt.Sscanf(r.URL.Path, "/calendar/%d/%d/%d", &y, &m, &d); err != nil || m < 1 || m > 12 || d < 1 || d > 31 {
			http.NotFound(w, r)
			return
		}
		day := time.Date(y, time.Month(m), d, 12, 0, 0, 0, time.UTC)
		link := func(t time.Time) string {
			return fmt.Sprintf("/calendar/%04d/%02d/%02d", t.Year(), int(t.Month()), t.Day())
		}
		what := "Nothing is planned for this day."
		if day.YearDay()%10 == 0 {
			what = events[(day.YearDay()/10)%len(events)] + "."
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage("Calendar", fmt.Sprintf(`<p>%s</p><p>%s</p><a href="%s">Previous day</a> <a href="%s">Next day</a> <a href="/">Home</a>`,
			day.Format("Monday 2 January 2006"), what, link(day.AddDate(0, 0, -1)), link(day.AddDate(0, 0, 1)))))
	}))
	return Hostile{Legit: legit, Trap: func(p string) bool { return strings.HasPrefix(p, "/calendar/") }}
}

// SessionIDs serves a small site with a shop whose links each carry a new session id in the path,
// as cookieless ASP.NET sessions do: /(S(id))/shop/item-3.html is the same page for every id, and
// every page links the shop's nine pages, each under a fresh id.
func (s *Site) SessionIDs() Hostile {
	var next atomic.Uint64
	sid := func() string {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%d", s.Name, next.Add(1))
		return fmt.Sprintf("(S(%016x%04x))", h.Sum64(), next.Load()%0xffff)
	}
	shopLinks := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, `<a href="/%s/shop/">Shop</a> `, sid())
		for k := 1; k <= 8; k++ {
			fmt.Fprintf(&b, `<a href="/%s/shop/item-%d.html">Item %d</a> `, sid(), k, k)
		}
		return b.String()
	}
	legit := s.smallSite(`<a href="/shop/">Shop</a>`)
	s.Handle("/shop/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage("Shop", `<p>Please choose an item.</p>`+shopLinks()))
	}))
	s.HandlePrefix("/(S(", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !ok || !strings.HasPrefix(rest, "shop/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage("Shop", `<p>`+prose(s.Name+rest, 90)+`</p>`+shopLinks()))
	}))
	return Hostile{Legit: append(legit, "/shop/"), Trap: func(p string) bool { return strings.HasPrefix(p, "/(S(") }}
}

// LinkFarm serves a small site with an index, /many/, of n links to tiny near-identical pages
// /many/1.html … /many/n.html: "Entry N" and a link back.
func (s *Site) LinkFarm(n int) Hostile {
	legit := s.smallSite(`<a href="/many/">Entries</a>`)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<a href="/many/%d.html">%d</a> `, i, i)
	}
	s.Page("/many/", htmlPage("Entries", b.String()))
	s.HandlePrefix("/many/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/many/%d.html", &i); err != nil || i < 1 || i > n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><body><p>Entry %d</p><a href="/many/">back</a></body></html>`, i)
	}))
	return Hostile{Legit: append(legit, "/many/"), Trap: func(p string) bool { return strings.HasPrefix(p, "/many/") && p != "/many/" }}
}

// Loop serves a small site with an archive page, /loop/, served the same at every path below it
// and linking relatively to a/ and b/: /loop/a/, /loop/a/b/, /loop/a/b/a/ … without end.
func (s *Site) Loop() Hostile {
	legit := s.smallSite(`<a href="/loop/">Archive</a>`)
	s.HandlePrefix("/loop/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, htmlPage("Archive", `<p>The archive of the parish records, by year and by family.</p><a href="a/">Families</a> <a href="b/">Years</a>`))
	}))
	return Hostile{Legit: append(legit, "/loop/"), Trap: func(p string) bool { return strings.HasPrefix(p, "/loop/") && p != "/loop/" }}
}
