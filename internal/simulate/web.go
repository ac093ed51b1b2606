package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Process is a page's change process.
type Process uint8

// The change processes of the synthetic web. Times are in days; the simulation's runs are daily, at
// midnight.
const (
	Static    Process = iota // never changes
	Cho                      // Poisson, rates from Cho and Garcia-Molina's measured distribution
	Zipf                     // Poisson, Zipf-distributed rates (Wolf et al.'s experiments)
	LogNormal                // Poisson, log-normal rates
	Pareto                   // renewal process with Pareto inter-update times (heavy tailed)
	Weekly                   // quasi-deterministic: on one or two fixed weekdays, at a fixed hour
	Daily                    // quasi-deterministic: every day at a fixed hour
	HubA                     // a site of Bouras's table 2, page 1: the hub changes, its children rarely
	HubB                     // a site of Bouras's table 2, page 2: the hub rarely, its children often
	Bursty                   // quiet for weeks, then a burst of edits over a few days (a wiki page, a release)
	Aging                    // an article: edited often when new, less and less as it ages
	Periodic                 // exactly every k days (k from 1 to 30), at a fixed hour: a scheduled job
	numProcesses
)

var processNames = [numProcesses]string{"static", "cho", "zipf", "lognormal", "pareto", "weekly", "daily", "hub-a", "hub-b",
	"bursty", "aging", "periodic"}

// pageProcesses are the processes whose shares are shares of pages (hub-a and hub-b are of sites).
var pageProcesses = []Process{Static, Cho, Zipf, LogNormal, Pareto, Weekly, Daily, Bursty, Aging, Periodic}

func (p Process) String() string {
	if p < numProcesses {
		return processNames[p]
	}
	return "process(" + strconv.Itoa(int(p)) + ")"
}

// Mix is the share of each change process. The shares of the page processes (static to daily) are
// shares of pages; those of hub-a and hub-b are shares of sites, whose pages then all follow the
// archetype. Shares need not add up to 1: the page shares are normalised.
type Mix [numProcesses]float64

// Presets of [ParseMix].
var presets = map[string]string{
	// Cho and Garcia-Molina (2000) measured the mean change interval of 720,000 pages visited daily
	// for four months: 23 % <= 1 day, 15 % 1 day to 1 week, 16 % 1 week to 1 month, 16 % 1 to 4
	// months, 30 % over 4 months. The reference web.
	"cho": "cho=1",
	// Wolf et al.'s section 5: 60 % Poisson, 30 % Pareto, 10 % quasi-deterministic, Zipf rates.
	"wolf": "zipf=0.6,pareto=0.3,weekly=0.1",
	// Bouras's two hub archetypes beside a Cho-calibrated web.
	"bouras": "cho=1,hub-a=0.1,hub-b=0.1",
	// Everything at once.
	"all": "static=0.15,cho=0.3,zipf=0.1,lognormal=0.1,pareto=0.15,weekly=0.1,daily=0.1,hub-a=0.05,hub-b=0.05",
}

// PresetNames lists the presets ParseMix knows.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseMix reads a preset name (cho, wolf, bouras, all) or a list such as
// "static=0.2,cho=0.6,weekly=0.2,hub-a=0.1".
func ParseMix(s string) (Mix, error) {
	var m Mix
	spec := strings.TrimSpace(s)
	if p, ok := presets[strings.ToLower(spec)]; ok {
		spec = p
	}
	if spec == "" {
		return m, fmt.Errorf("mix %q: empty (presets: %s)", s, strings.Join(PresetNames(), ", "))
	}
	for _, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return m, fmt.Errorf("mix %q: %q is not process=share (presets: %s)", s, part, strings.Join(PresetNames(), ", "))
		}
		i := slices.Index(processNames[:], strings.ToLower(strings.TrimSpace(name)))
		if i < 0 {
			return m, fmt.Errorf("mix %q: unknown process %q (known: %s)", s, name, strings.Join(processNames[:], ", "))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 1) {
			return m, fmt.Errorf("mix %q: share of %s %q: must be a number >= 0", s, name, val)
		}
		m[i] = v
	}
	if m.pageTotal() <= 0 && m[HubA]+m[HubB] <= 0 {
		return m, fmt.Errorf("mix %q: all shares are 0", s)
	}
	if m[HubA]+m[HubB] > 1 {
		return m, fmt.Errorf("mix %q: hub-a and hub-b are shares of sites and add up to more than 1", s)
	}
	return m, nil
}

func (m Mix) pageTotal() float64 {
	t := 0.0
	for _, p := range pageProcesses {
		t += m[p]
	}
	return t
}

// String writes the mix as ParseMix reads it.
func (m Mix) String() string {
	var parts []string
	for p := range numProcesses {
		if m[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%g", p, m[p]))
		}
	}
	return strings.Join(parts, ",")
}

// page is one page of the synthetic web.
type page struct {
	site   int32
	parent int32   // the hub that links it; -1 for a site's root
	root   bool    // the site's hub, linking every other page of the site
	proc   Process // its change process
	born   float64 // 0 for the pages of the initial crawl
	died   float64 // +Inf while it lives
	rate   float64 // its true mean change rate per day (what "optimal-true" and "proportional" know)
	lo, hi int32   // its change times are web.times[lo:hi], ascending
}

// Web is the synthetic web: every page that exists at some time in [0, days), and every change.
type Web struct {
	days  int
	pages []page
	times []float64
	// children[s] lists the non-root pages of site s by birth time; roots[s] is the site's hub.
	children [][]int32
	roots    []int32
	// kids[i] lists the pages page i links, by birth time: what its hub page shows.
	kids [][]int32
	// sites holds what each site offers besides its pages: a sitemap, a trap.
	sites   []siteInfo
	initial int // pages born at 0: the first initial pages of pages
}

// webConfig is what the web generator needs from the simulation's Config.
type webConfig struct {
	family             string
	pages, sites, days int
	mix                Mix
	births, deaths     float64
	siteCorrelation    float64
	seed               uint64
}

// Parameters of the rate distributions, in changes per day.
const (
	zipfMeanRate    = 0.5  // the Zipf pages' mean rate before the cap
	maxRate         = 24.0 // hourly: the fastest any page changes
	logNormalMedian = 0.05 // once in 20 days
	logNormalSigma  = 1.5
	paretoShape     = 1.5 // heavy tailed: finite mean, infinite variance
	quasiProb       = 0.9 // probability that a scheduled update happens
	hubAHubRate     = 2.3 // 1 − e^−2.3 ≈ 0.9: the hub changes at 9 of 10 daily visits
	hubAChildRate   = 0.0105
	hubBHubRate     = 0.105 // 1 change in 10 daily visits
	hubBChildRate   = 0.22  // 1 − e^−2.2 ≈ 0.89 of the children change within 10 days
)

// choBins is Cho and Garcia-Molina's distribution of mean change intervals (days), slowest first,
// with the share of pages in each; within a bin the interval is log-uniform.
var choBins = []struct{ share, lo, hi float64 }{
	{0.30, 120, 1000},
	{0.16, 30, 120},
	{0.16, 7, 30},
	{0.15, 1, 7},
	{0.23, 0.25, 1},
}

// choRate maps a quantile u in (0, 1) to a rate of Cho's distribution: u near 0 is the slowest page.
func choRate(u float64) float64 {
	for _, b := range choBins {
		if u < b.share {
			return 1 / (b.lo * math.Pow(b.hi/b.lo, 1-u/b.share))
		}
		u -= b.share
	}
	return 1 / choBins[len(choBins)-1].lo
}

// normQuantile is the standard normal quantile function.
func normQuantile(u float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*u) }

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// generator draws the web.
type generator struct {
	cfg      webConfig
	r        *rand.Rand
	w        *Web
	siteZ    []float64 // each site's latent rate level
	siteKind []Process // Static for an ordinary site, HubA or HubB for an archetype
	zipfH    float64   // harmonic number for the Zipf rates
	zipfN    float64
}

// newWeb draws a synthetic web. The same config gives the same web.
func newWeb(cfg webConfig) *Web {
	if cfg.family != "" && cfg.family != FamilyFlat {
		return newFamilyWeb(cfg, cfg.family)
	}
	g := &generator{cfg: cfg, r: rand.New(rand.NewPCG(cfg.seed, 0x5eed)), w: &Web{days: cfg.days}}
	g.zipfN = float64(max(cfg.pages, 1))
	for k := 1; k <= cfg.pages; k++ {
		g.zipfH += 1 / float64(k)
	}
	g.siteZ = make([]float64, cfg.sites)
	g.siteKind = make([]Process, cfg.sites)
	g.w.children = make([][]int32, cfg.sites)
	g.w.roots = make([]int32, cfg.sites)
	for s := range g.siteZ {
		g.siteZ[s] = g.r.NormFloat64()
		switch u := g.r.Float64(); {
		case u < cfg.mix[HubA]:
			g.siteKind[s] = HubA
		case u < cfg.mix[HubA]+cfg.mix[HubB]:
			g.siteKind[s] = HubB
		}
	}
	// The initial pages: the first of each site is its root.
	type pending struct {
		site int32
		born float64
	}
	var all []pending
	for i := range cfg.pages {
		all = append(all, pending{site: int32(i % cfg.sites)})
	}
	// Births over the days: a Poisson number per day, at a uniform time of the day, on a uniform site.
	for d := range cfg.days {
		n := poisson(g.r, cfg.births*float64(cfg.pages))
		for range n {
			all = append(all, pending{site: int32(g.r.IntN(cfg.sites)), born: float64(d) + g.r.Float64()})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].born < all[j].born })
	rootChanges := make([][]float64, cfg.sites) // births and deaths change the root's list of links
	seenRoot := make([]bool, cfg.sites)
	for _, a := range all {
		id := int32(len(g.w.pages))
		p := page{site: a.site, parent: -1, born: a.born, died: math.Inf(1)}
		if !seenRoot[a.site] {
			seenRoot[a.site], p.root = true, true
			g.w.roots[a.site] = id
		} else {
			g.w.children[a.site] = append(g.w.children[a.site], id)
			if a.born > 0 {
				rootChanges[a.site] = append(rootChanges[a.site], a.born)
			}
			if cfg.deaths > 0 {
				if t := a.born + g.r.ExpFloat64()/cfg.deaths; t < float64(cfg.days) {
					p.died = t
					rootChanges[a.site] = append(rootChanges[a.site], t)
				}
			}
		}
		if a.born == 0 {
			g.w.initial++
		}
		g.w.pages = append(g.w.pages, p)
	}
	for i := range g.w.pages {
		p := &g.w.pages[i]
		p.lo = int32(len(g.w.times))
		g.changes(p, rootChanges)
		p.hi = int32(len(g.w.times))
		if !p.root {
			p.parent = g.w.roots[p.site]
		}
	}
	g.w.sites = make([]siteInfo, cfg.sites)
	for i := range g.w.sites {
		g.w.sites[i].dates = dateModes[i%len(dateModes)]
	}
	g.w.linkKids()
	return g.w
}

// quantile draws a page's rate quantile: a Gaussian copula with the site's latent level, so that the
// pages of a site are alike (correlation siteCorrelation²) while the distribution over all pages
// stays exactly the process's.
func (g *generator) quantile(site int32) float64 {
	c := g.cfg.siteCorrelation
	z := c*g.siteZ[site] + math.Sqrt(1-c*c)*g.r.NormFloat64()
	return min(max(normCDF(z), 1e-12), 1-1e-12)
}

func (g *generator) pickProcess() Process {
	u := g.r.Float64() * g.cfg.mix.pageTotal()
	for _, p := range pageProcesses {
		if u < g.cfg.mix[p] {
			return p
		}
		u -= g.cfg.mix[p]
	}
	return Cho
}

// changes draws the page's process and appends its change times in [born, min(died, days)).
func (g *generator) changes(p *page, rootChanges [][]float64) {
	end := min(p.died, float64(g.cfg.days))
	start := len(g.w.times)
	switch g.siteKind[p.site] {
	case HubA:
		p.proc, p.rate = HubA, hubAChildRate
		if p.root {
			p.rate = hubAHubRate
		}
	case HubB:
		p.proc, p.rate = HubB, hubBChildRate
		if p.root {
			p.rate = hubBHubRate
		}
	default:
		if g.cfg.mix.pageTotal() <= 0 {
			p.proc = Cho
		} else {
			p.proc = g.pickProcess()
		}
		u := g.quantile(p.site)
		switch p.proc {
		case Cho:
			p.rate = choRate(u)
		case Zipf:
			rank := 1 + math.Floor((1-u)*g.zipfN)
			p.rate = min(zipfMeanRate*g.zipfN/g.zipfH/rank, maxRate)
		case LogNormal, Pareto:
			p.rate = min(logNormalMedian*math.Exp(logNormalSigma*normQuantile(u)), maxRate)
		case Weekly:
			days := 1 + g.r.IntN(2)
			p.rate = quasiProb * float64(days) / 7
		case Daily:
			p.rate = quasiProb
		case Bursty, Aging:
			p.rate = choRate(u)
		case Periodic:
			p.rate = 1 / float64(periodicDays[g.r.IntN(len(periodicDays))])
		}
	}
	g.w.times = append(g.w.times, drawChanges(g.r, p.proc, p.rate, p.born, end)...)
	if p.root {
		for _, t := range rootChanges[p.site] {
			if t < end {
				g.w.times = append(g.w.times, t)
			}
		}
		slices.Sort(g.w.times[start:])
		p.rate += float64(len(rootChanges[p.site])) / float64(g.cfg.days)
	}
}

// periodicDays are the periods of the periodic process.
var periodicDays = []int{1, 2, 3, 7, 14, 30}

// Parameters of the bursty and aging processes.
const (
	burstRate   = 3.0 // edits per day within a burst
	burstMinLen = 1.0 // days
	burstMaxLen = 4.0
	ageTau      = 5.0 // days: an aging page's rate halves every 3.5 days
)

// drawChanges draws the change times of a page of process proc and mean rate rate (per day) in
// [born, end), ascending.
func drawChanges(r *rand.Rand, proc Process, rate, born, end float64) []float64 {
	var out []float64
	if !(rate > 0) || proc == Static {
		return nil
	}
	switch proc {
	case Cho, Zipf, LogNormal, HubA, HubB:
		for t := born + r.ExpFloat64()/rate; t < end; t += r.ExpFloat64() / rate {
			out = append(out, t)
		}
	case Pareto:
		// Inter-update times with P(U > u) = (xm/u)^α for u >= xm and mean α·xm/(α−1) = 1/rate.
		// The process starts well before the page's birth, so that its birth falls at a random point
		// of an interval, as in a process observed in equilibrium.
		xm := (paretoShape - 1) / paretoShape / rate
		t := born - 20/rate*r.Float64()
		for t < end {
			t += xm / math.Pow(1-r.Float64(), 1/paretoShape)
			if t >= born && t < end {
				out = append(out, t)
			}
		}
	case Weekly, Daily:
		hour := (6 + 14*r.Float64()) / 24 // a working-day hour
		var weekdays [7]bool
		if proc == Daily {
			weekdays = [7]bool{true, true, true, true, true, true, true}
		} else {
			n := min(max(int(math.Round(rate*7/quasiProb)), 1), 5)
			for _, d := range r.Perm(5)[:n] { // Monday to Friday; day 0 is a Monday
				weekdays[d] = true
			}
		}
		for d := math.Floor(born); d < end; d++ {
			if t := d + hour; weekdays[int(d)%7] && t >= born && t < end && r.Float64() < quasiProb {
				out = append(out, t)
			}
		}
	case Bursty:
		// Bursts of burstRate edits a day, lasting burstMinLen to burstMaxLen days, arriving as a
		// Poisson process so that the mean rate is rate. Started before the birth, as for Pareto.
		length := burstMinLen + (burstMaxLen-burstMinLen)*r.Float64()
		every := burstRate * length / rate // mean days between bursts
		for t := born - every*r.Float64(); t < end; t += r.ExpFloat64() * every {
			for e := t + r.ExpFloat64()/burstRate; e < t+length && e < end; e += r.ExpFloat64() / burstRate {
				if e >= born {
					out = append(out, e)
				}
			}
		}
		slices.Sort(out)
	case Aging:
		// Rate λ0·exp(−age/τ) after birth, by thinning a Poisson process of rate λ0; λ0 is set so that
		// the first 30 days average rate.
		lambda0 := rate * 30 / (ageTau * (1 - math.Exp(-30/ageTau)))
		for t := born + r.ExpFloat64()/lambda0; t < end; t += r.ExpFloat64() / lambda0 {
			if r.Float64() < math.Exp(-(t-born)/ageTau) {
				out = append(out, t)
			}
		}
	case Periodic:
		k := math.Round(1 / rate)
		hour := r.Float64()
		for t := math.Floor(born) + math.Floor(k*r.Float64()) + hour; t < end; t += k {
			if t >= born {
				out = append(out, t)
			}
		}
	}
	return out
}

// poisson draws a Poisson number with mean m (Knuth's method for small m, a normal approximation
// above 30).
func poisson(r *rand.Rand, m float64) int {
	if m <= 0 {
		return 0
	}
	if m > 30 {
		return max(int(math.Round(m+math.Sqrt(m)*r.NormFloat64())), 0)
	}
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
