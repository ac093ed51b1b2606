package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// The families of synthetic webs. A policy tuned on one shape of web can fail on another, so the
// evaluation runs on webs built differently, not only on different seeds of one generator.
const (
	// FamilyFlat is strata simulate's own web: sites whose one hub links every page, with the
	// change processes of the mix.
	FamilyFlat = "flat"
	// FamilySections is a web of documentation and project sites: a root linking sections, sections
	// linking subsections and pages, three levels deep; pages that mostly sit still, change in bursts
	// (a release, a wiki edit war), on a schedule, or fade as they age; pages added to and removed
	// from sections; and sitemaps of four kinds, from none to lying. The mix is not used.
	FamilySections = "sections"
	// FamilyHostile is built after the independent web of issue 17: eight sites of about sixty pages
	// each within three levels, Poisson, periodic, bursty and aging pages, pages created and
	// deleted, an honest sitemap, a lying one and a stale one, and three trap hosts — a link farm of
	// 5,000 near-identical pages, an endless calendar and session ids in URLs — whose pages are not
	// pages of the web: every fetch of one is a fetch wasted. Pages and the mix are not used.
	FamilyHostile = "hostile"
)

// Families lists the families a simulation can build.
func Families() []string { return []string{FamilyFlat, FamilySections, FamilyHostile} }

// SitemapMode is what a site's /sitemap.xml says.
type SitemapMode uint8

const (
	NoSitemap     SitemapMode = iota
	HonestSitemap             // every live page, its lastmod the time of its last change
	StaleSitemap              // every live page, its lastmod its birth: never updated
	LyingSitemap              // every live page, its lastmod the last midnight: "everything changed"
)

// TrapKind is the trap a site serves instead of pages.
type TrapKind uint8

const (
	NoTrap   TrapKind = iota
	LinkFarm          // a root linking /many/0.html … /many/4999.html, each "Entry N" and a link back
	Calendar          // a root linking /cal/DAY, each day linking the next and the previous, for ever
	Sessions          // a root linking /s/N?sid=…, each page linking three more with fresh session ids
)

// DateMode is what a site's Last-Modified headers say: servers differ, and a crawler that believes
// every date is as wrong as one that believes none.
type DateMode uint8

const (
	NoDates    DateMode = iota // no Last-Modified: a dynamic page
	TrueDates                  // the time of the page's last change, and 304 to If-Modified-Since: a static file
	NowDates                   // the time of the request, on every response: a page stamped when served
	BuildDates                 // the time any page of the site last changed: a static site rebuilt whole
)

// dateModes are the sites' date modes in turn, by site number: two in five tell the truth.
var dateModes = []DateMode{TrueDates, NoDates, BuildDates, TrueDates, NowDates}

// siteInfo is what a site offers besides its pages.
type siteInfo struct {
	sitemap SitemapMode
	trap    TrapKind
	dates   DateMode
}

// farmSize is the link farm's number of near-identical pages.
const farmSize = 5000

// spec is a page being drawn, before pages are put in birth order.
type spec struct {
	site   int32
	parent int // index in the specs, -1 for a root
	proc   Process
	rate   float64
	born   float64
	died   float64
}

// builder draws a web of hierarchical sites.
type builder struct {
	r     *rand.Rand
	cfg   webConfig
	specs []spec
	sites []siteInfo
	roots []int // spec index of each site's root
	hubs  []int // spec indexes of the pages that link others (roots, sections), for births
	depth int   // levels below the roots
}

func (b *builder) add(site int32, parent int, proc Process, rate, born float64) int {
	died := math.Inf(1)
	if parent >= 0 && b.cfg.deaths > 0 {
		if t := born + b.r.ExpFloat64()/b.cfg.deaths; t < float64(b.cfg.days) {
			died = t
		}
	}
	b.specs = append(b.specs, spec{site: site, parent: parent, proc: proc, rate: rate, born: born, died: died})
	return len(b.specs) - 1
}

// leafProcess draws a process and mean rate for a page of a documentation or project site.
func (b *builder) leafProcess(hostile bool) (Process, float64) {
	u := b.r.Float64()
	slow := func() float64 { return choRate(0.62 * b.r.Float64()) } // Cho's slower three fifths: a week to years
	switch {
	case u < 0.30:
		return Static, 0
	case u < 0.50:
		return Cho, slow()
	case u < 0.65:
		return Bursty, 1 / (20 + 60*b.r.Float64())
	case u < 0.80:
		return Periodic, 1 / float64(periodicDays[2+b.r.IntN(len(periodicDays)-2)]) // 3 to 30 days
	case u < 0.90 || !hostile:
		return Aging, 0.05 + 0.2*b.r.Float64()
	default:
		return Cho, choRate(0.77 + 0.23*b.r.Float64()) // Cho's fastest: daily or more
	}
}

// newFamilyWeb draws a web of the sections or hostile family.
func newFamilyWeb(cfg webConfig, family string) *Web {
	b := &builder{r: rand.New(rand.NewPCG(cfg.seed, 0xfa111e5)), cfg: cfg, depth: 3}
	hostile := family == FamilyHostile
	sites, perSite := cfg.sites, max(cfg.pages/max(cfg.sites, 1), 4)
	if hostile {
		sites, perSite = 8, 60
	}
	for s := range sites {
		site := int32(s)
		info := siteInfo{dates: dateModes[s%len(dateModes)]}
		switch {
		case hostile && s == 0:
			info.sitemap = HonestSitemap
		case hostile && s == 1:
			info.sitemap = LyingSitemap
		case hostile && s == 2:
			info.sitemap = StaleSitemap
		case !hostile:
			info.sitemap = SitemapMode(s % 4)
		}
		b.sites = append(b.sites, info)
		root := b.add(site, -1, Cho, choRate(0.5+0.3*b.r.Float64()), 0)
		b.roots = append(b.roots, root)
		b.hubs = append(b.hubs, root)
		left := perSite - 1
		sections := 3 + b.r.IntN(5)
		for k := 0; k < sections && left > 0; k++ {
			sec := b.add(site, root, Periodic, 1/float64(periodicDays[3+b.r.IntN(3)]), 0) // weekly to monthly
			b.hubs = append(b.hubs, sec)
			left--
			n := left / (sections - k)
			sub := -1
			if n > 12 && b.r.IntN(2) == 0 { // a subsection: the third level
				sub = b.add(site, sec, Cho, choRate(0.3*b.r.Float64()), 0)
				b.hubs = append(b.hubs, sub)
				left--
				n--
			}
			for j := 0; j < n && left > 0; j++ {
				parent := sec
				if sub >= 0 && j%2 == 1 {
					parent = sub
				}
				proc, rate := b.leafProcess(hostile)
				b.add(site, parent, proc, rate, 0)
				left--
			}
		}
	}
	initial := len(b.specs)
	// Pages created later, under a random hub of a random real site.
	for d := range cfg.days {
		for range poisson(b.r, cfg.births*float64(initial)) {
			parent := b.hubs[b.r.IntN(len(b.hubs))]
			proc, rate := b.leafProcess(hostile)
			b.add(b.specs[parent].site, parent, proc, rate, float64(d)+b.r.Float64())
		}
	}
	if hostile {
		for _, trap := range []TrapKind{LinkFarm, Calendar, Sessions} {
			site := int32(len(b.sites))
			b.sites = append(b.sites, siteInfo{trap: trap})
			root := b.add(site, -1, Static, 0, 0)
			b.roots = append(b.roots, root)
		}
	}
	return b.web()
}

// web puts the drawn pages in birth order, draws their changes and fills in the links.
func (b *builder) web() *Web {
	order := make([]int, len(b.specs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return b.specs[order[i]].born < b.specs[order[j]].born })
	id := make([]int32, len(b.specs))
	for k, i := range order {
		id[i] = int32(k)
	}
	w := &Web{days: b.cfg.days, sites: b.sites, roots: make([]int32, len(b.roots)), children: make([][]int32, len(b.roots))}
	linkChanges := make([][]float64, len(b.specs)) // per spec: the times its list of links changed
	for _, i := range order {
		sp := b.specs[i]
		if sp.parent >= 0 {
			if sp.born > 0 {
				linkChanges[sp.parent] = append(linkChanges[sp.parent], sp.born)
			}
			if !math.IsInf(sp.died, 1) {
				linkChanges[sp.parent] = append(linkChanges[sp.parent], sp.died)
			}
		}
	}
	for _, i := range order {
		sp := b.specs[i]
		p := page{site: sp.site, parent: -1, root: sp.parent < 0, proc: sp.proc, born: sp.born, died: sp.died, rate: sp.rate}
		if sp.parent >= 0 {
			p.parent = id[sp.parent]
			w.children[sp.site] = append(w.children[sp.site], id[i])
		} else {
			w.roots[sp.site] = id[i]
		}
		if sp.born == 0 {
			w.initial++
		}
		end := min(sp.died, float64(b.cfg.days))
		times := drawChanges(b.r, sp.proc, sp.rate, sp.born, end)
		for _, t := range linkChanges[i] {
			if t < end {
				times = append(times, t)
			}
		}
		slices.Sort(times)
		if n := len(linkChanges[i]); n > 0 {
			p.rate += float64(n) / float64(b.cfg.days)
		}
		p.lo = int32(len(w.times))
		w.times = append(w.times, times...)
		p.hi = int32(len(w.times))
		w.pages = append(w.pages, p)
	}
	w.linkKids()
	return w
}

// linkKids fills in each page's children from the pages' parents.
func (w *Web) linkKids() {
	w.kids = make([][]int32, len(w.pages))
	for i := range w.pages {
		if p := w.pages[i].parent; p >= 0 {
			w.kids[p] = append(w.kids[p], int32(i))
		}
	}
}

// depth is how many levels below its seed a web's deepest page lies: the seeds' level.
func (w *Web) depth() int {
	d := 1
	for i := range w.pages {
		k := 0
		for p := w.pages[i].parent; p >= 0; p = w.pages[p].parent {
			k++
		}
		d = max(d, k)
	}
	return d
}

// isTrap reports whether site s is a trap host.
func (w *Web) isTrap(s int32) bool { return int(s) < len(w.sites) && w.sites[s].trap != NoTrap }

// trapPage renders a trap host's page at path, or reports that the path is not one of its.
func trapPage(kind TrapKind, path, query string) (string, bool) {
	var b strings.Builder
	switch kind {
	case LinkFarm:
		if path == "/" {
			b.WriteString("<h1>Directory</h1><ul>")
			for n := range farmSize {
				fmt.Fprintf(&b, `<li><a href="/many/%d.html">Entry %d</a></li>`, n, n)
			}
			b.WriteString("</ul>")
			return b.String(), true
		}
		var n int
		if _, err := fmt.Sscanf(path, "/many/%d.html", &n); err != nil || n < 0 || n >= farmSize {
			return "", false
		}
		fmt.Fprintf(&b, `<p>Entry %d</p><a href="/">back</a>`, n)
	case Calendar:
		day := 0
		if path != "/" {
			if _, err := fmt.Sscanf(path, "/cal/%d", &day); err != nil {
				return "", false
			}
		}
		fmt.Fprintf(&b, `<h1>Events of day %d</h1><p>No events.</p><a href="/cal/%d">next day</a> <a href="/cal/%d">previous day</a>`,
			day, day+1, day-1)
	case Sessions:
		if path != "/" && !strings.HasPrefix(path, "/s/") {
			return "", false
		}
		sid := fnv64(query)
		b.WriteString("<h1>Shop</h1><p>Welcome back.</p>")
		for k := range 3 {
			fmt.Fprintf(&b, `<a href="/s/%d?sid=%x">item %d</a> `, k, fnv64(fmt.Sprint(sid, k)), k)
		}
	default:
		return "", false
	}
	return b.String(), true
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func (m SitemapMode) String() string {
	switch m {
	case NoSitemap:
		return "none"
	case HonestSitemap:
		return "honest"
	case StaleSitemap:
		return "stale"
	case LyingSitemap:
		return "lying"
	}
	return fmt.Sprintf("sitemap(%d)", uint8(m))
}

func (m DateMode) String() string {
	switch m {
	case NoDates:
		return "none"
	case TrueDates:
		return "true"
	case NowDates:
		return "now"
	case BuildDates:
		return "build"
	}
	return fmt.Sprintf("dates(%d)", uint8(m))
}

func (k TrapKind) String() string {
	switch k {
	case NoTrap:
		return ""
	case LinkFarm:
		return "link farm"
	case Calendar:
		return "calendar"
	case Sessions:
		return "sessions"
	}
	return fmt.Sprintf("trap(%d)", uint8(k))
}
