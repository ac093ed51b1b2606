package traps_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/traps"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestShapeAndUnit(t *testing.T) {
	tests := []struct {
		in, shape, unit string
		patterned       bool
	}{
		{"https://a.example/calendar/2026/11", "a.example/calendar/N/N", "a.example/calendar/N/", true},
		{"https://a.example/page?time=101", "a.example/page?time=N", "a.example/page?time", true},
		{"https://a.example/x?b=2&a=v1", "a.example/x?a=vN&b=N", "a.example/x?a&b", true},
		{"https://a.example/s?sid=0123456789abcdef0123456789abcdef", "a.example/s?sid=*", "a.example/s?sid", true},
		{"https://a.example/", "a.example/", "a.example/", false},
		{"https://a.example/docs/intro", "a.example/docs/intro", "a.example/docs/", false},
		{"https://a.example/many/7.html", "a.example/many/N.html", "a.example/many/", true},
		{"https://a.example/docs/release.1.10.html", "a.example/docs/release.N.N.html", "a.example/docs/", true},
		// A session id in the path is one token, whatever its letters and digits.
		{"https://a.example/(S(8f14e45fceea167a0001))/shop/item-3.html", "a.example/*/shop/item-N.html", "a.example/*/shop/", true},
		{"https://a.example/(S(a3c9e0b1d2f4e5a60002))/shop/", "a.example/*/shop/", "a.example/*/shop/", true},
		// Hex ids with one or two letters are tokens too: 1 in 125 random 20-digit hex ids has
		// fewer than three, and the pages under them must pool with the others.
		{"https://a.example/(S(823880863bb554280018))/shop/item-5.html", "a.example/*/shop/item-N.html", "a.example/*/shop/", true},
		{"https://a.example/(S(14870517832803240064a))/shop/", "a.example/*/shop/", "a.example/*/shop/", true},
		// A long word with a number in it is not.
		{"https://a.example/guides/windows10installation.html", "a.example/guides/windowsNinstallation.html", "a.example/guides/", true},
		// Loops: however the loop was walked, one shape.
		{"https://a.example/loop/a/b/a/", "a.example/loop/…", "a.example/loop/…", true},
		{"https://a.example/loop/b/a/a/b/", "a.example/loop/…", "a.example/loop/…", true},
		{"https://a.example/loop/a/b/", "a.example/loop/a/b/", "a.example/loop/a/b/", false},
		// Numbers that repeat are dates, not loops.
		{"https://a.example/cal/2026/01/01", "a.example/cal/N/N/N", "a.example/cal/N/N/", true},
		{"https://a.example/about.html", "a.example/about.html", "a.example/", false},
	}
	for _, tt := range tests {
		u := mustURL(t, tt.in)
		if got := traps.Shape(u); got != tt.shape {
			t.Errorf("Shape(%s) = %q, want %q", tt.in, got, tt.shape)
		}
		if got := traps.Unit(u); got != tt.unit {
			t.Errorf("Unit(%s) = %q, want %q", tt.in, got, tt.unit)
		}
		if got := traps.Patterned(u); got != tt.patterned {
			t.Errorf("Patterned(%s) = %v, want %v", tt.in, got, tt.patterned)
		}
	}
}

// crawlUnit plays the guard through a crawl of n pages of one unit: page i is found on page from(i)
// (-1: on a page of another unit) at level 100 - depth(i), and its text hash is text(i). It returns
// the page at which the unit was throttled (-1: never) and the event.
func crawlUnit(t *testing.T, g *traps.Guard, n int, page func(i int) string, from func(i int) int, depth func(i int) int,
	text func(i int) uint64) (int, *traps.Event) {
	t.Helper()
	for i := range n {
		u := mustURL(t, page(i))
		fromUnit := "elsewhere.example/"
		if f := from(i); f >= 0 {
			fromUnit = traps.Unit(mustURL(t, page(f)))
		}
		d, ev := g.Admit("a.example", u, fromUnit)
		if ev != nil || !d.Admit {
			t.Fatalf("page %d: refused (%+v)", i, ev)
		}
		g.Added("a.example", d, 100-depth(i))
	}
	for i := range n {
		if ch := g.Fetched("a.example", mustURL(t, page(i)), text(i)); ch.Throttled {
			return i, ch.Event
		}
	}
	return -1, nil
}

// TestVerdictWeighsEvidence is the table: numbers that step are not evidence; pages that
// repeat each other are, and less so when the unit does not feed itself.
func TestVerdictWeighsEvidence(t *testing.T) {
	chain := func(i int) int { return i - 1 } // each page found on the one before
	index := func(int) int { return -1 }      // every page found on an index elsewhere
	deep := func(i int) int { return i }      // one level down per page
	flat := func(int) int { return 1 }        // all one level below the index
	distinct := func(i int) uint64 { return uint64(1000 + i) }
	same := func(int) uint64 { return 7 }
	oneInTen := func(i int) uint64 { // a calendar: one day in ten has an event
		if i%10 == 0 {
			return uint64(100 + i)
		}
		return 7
	}
	pageN := func(i int) string { return fmt.Sprintf("https://a.example/page/%d.html", i+1) }
	tests := []struct {
		name      string
		n         int
		page      func(int) string
		from      func(int) int
		depth     func(int) int
		text      func(int) uint64
		throttled bool
		kind      string
		within    int
	}{
		{"numbered pages with text of their own, found one on the other", 50, pageN, chain, deep, distinct, false, "", 0},
		{"release notes found each on the next", 59, func(i int) string {
			return fmt.Sprintf("https://a.example/docs/release.%d.%d.html", i/10, i%10)
		}, chain, deep, distinct, false, "", 0},
		{"an index of distinct threads", 500, func(i int) string { return fmt.Sprintf("https://a.example/thread/%d", i) },
			index, flat, distinct, false, "", 0},
		{"a calendar of empty days, each linking the next", 100, func(i int) string {
			return fmt.Sprintf("https://a.example/cal/2026/%02d/%02d", 1+i/28, 1+i%28)
		}, chain, deep, oneInTen, true, traps.KindPattern, 12},
		{"a counter whose pages differ by the number", 100, func(i int) string { return fmt.Sprintf("https://a.example/page?time=%d", 100+i) },
			chain, deep, same, true, traps.KindPattern, 12},
		{"a farm of near-identical pages on an index elsewhere", 500, func(i int) string { return fmt.Sprintf("https://a.example/many/%d.html", i) },
			index, flat, same, true, traps.KindDuplicates, 20},
		{"half the pages repeat but the unit does not feed itself", 100, pageN, index, flat, func(i int) uint64 {
			if i%2 == 0 {
				return 7
			}
			return uint64(i)
		}, false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := traps.New(traps.Config{}, 1, nil, nil)
			at, ev := crawlUnit(t, g, tt.n, tt.page, tt.from, tt.depth, tt.text)
			if (at >= 0) != tt.throttled {
				t.Fatalf("throttled at page %d (%+v); want throttled %v", at, ev, tt.throttled)
			}
			if tt.throttled && (ev == nil || ev.Kind != tt.kind || at+1 > tt.within) {
				t.Errorf("event %+v after %d pages; want %s within %d pages", ev, at+1, tt.kind, tt.within)
			}
		})
	}
}

// throttle makes the guard throttle the farm a.example/many/ and gives its rule id 7.
func throttle(t *testing.T, g *traps.Guard) traps.Rule {
	t.Helper()
	for i := range 20 {
		u := mustURL(t, fmt.Sprintf("https://a.example/many/%d.html", i))
		d, _ := g.Admit("a.example", u, "a.example/")
		g.Added("a.example", d, 1)
		if ch := g.Fetched("a.example", u, 7); ch.Throttled {
			g.SetID(ch.Rule.Unit, 7)
			ch.Rule.ID = 7
			return ch.Rule
		}
	}
	t.Fatal("the farm was not throttled")
	return traps.Rule{}
}

func TestThrottledUnitIsHeldNotRefused(t *testing.T) {
	g := traps.New(traps.Config{}, 1, nil, nil)
	r := throttle(t, g)
	if r.Unit != "a.example/many/" || !r.Throttled || r.ProbeEvery != 1 {
		t.Fatalf("rule %+v", r)
	}
	tests := []struct {
		url  string
		hold int64
	}{
		{"https://a.example/many/999.html", 7},
		{"https://a.example/many/about.html", 0}, // a page with a name of its own is never held
		{"https://a.example/news/1.html", 0},     // another unit
	}
	for _, tt := range tests {
		d, ev := g.Admit("a.example", mustURL(t, tt.url), "a.example/")
		if !d.Admit || d.Hold != tt.hold || ev != nil {
			t.Errorf("%s: %+v, %+v; want admitted, held by %d", tt.url, d, ev, tt.hold)
		}
	}
}

func TestProbesBackOffAndClear(t *testing.T) {
	g := traps.New(traps.Config{MaxProbeEvery: 8}, 1, nil, nil)
	throttle(t, g)
	every := func() int {
		for _, r := range g.Throttled() {
			return r.ProbeEvery
		}
		return -1
	}
	probe := func(i int, text uint64) traps.Change {
		return g.Fetched("a.example", mustURL(t, fmt.Sprintf("https://a.example/many/%d.html", 100+i)), text)
	}
	for i, want := range []int{2, 4, 8, 8} { // repeats: each probe doubles the wait, up to MaxProbeEvery
		if ch := probe(i, 7); ch.Cleared || ch.Throttled || every() != want {
			t.Fatalf("repeat probe %d: %+v, every %d runs; want %d", i, ch, every(), want)
		}
	}
	// New text: the next probe comes a run later, and the fifth in a row clears the unit.
	for i := range 5 {
		ch := probe(10+i, uint64(500+i))
		if i < 4 && (ch.Cleared || every() != 1) {
			t.Fatalf("new probe %d: %+v, every %d runs", i, ch, every())
		}
		if i == 4 && (!ch.Cleared || ch.Event == nil || ch.Event.Kind != traps.KindCleared || ch.Rule.Throttled || ch.Rule.ID != 7) {
			t.Fatalf("fifth new probe: %+v; want the unit cleared", ch)
		}
	}
	if len(g.Throttled()) != 0 {
		t.Error("a cleared unit is still throttled")
	}
	if d, _ := g.Admit("a.example", mustURL(t, "https://a.example/many/5000.html"), "a.example/"); d.Hold != 0 {
		t.Error("a cleared unit still holds new URLs")
	}
	// A repeat in the streak starts it again.
	g2 := traps.New(traps.Config{}, 1, nil, nil)
	throttle(t, g2)
	for i, text := range []uint64{501, 502, 503, 504, 7, 505, 506, 507, 508} {
		ch := g2.Fetched("a.example", mustURL(t, fmt.Sprintf("https://a.example/many/%d.html", 100+i)), text)
		if ch.Cleared {
			t.Fatalf("cleared at probe %d although a repeat broke the streak", i)
		}
	}
}

// TestEvidenceOutlivesTheRun checks that a guard starts where the last one ended: a farm fetched
// five pages per run, as a budget spreads it, is throttled in its fourth run, not never.
func TestEvidenceOutlivesTheRun(t *testing.T) {
	var rules []traps.Rule
	throttledIn := 0
	for run := int64(1); run <= 10 && throttledIn == 0; run++ {
		g := traps.New(traps.Config{}, run, nil, rules)
		for k := range 5 {
			u := mustURL(t, fmt.Sprintf("https://a.example/many/%d.html", 5*int(run)+k))
			d, _ := g.Admit("a.example", u, "elsewhere.example/")
			g.Added("a.example", d, 1)
			if g.Fetched("a.example", u, 7).Throttled {
				throttledIn = int(run)
			}
		}
		keep, drop := g.Dirty()
		if len(drop) != 0 {
			t.Fatalf("run %d dropped %v", run, drop)
		}
		rules = keep
	}
	if throttledIn != 4 {
		t.Errorf("throttled in run %d, want 4 (20 pages at 5 a run)", throttledIn)
	}
}

func TestDirtyKeepsOnlyWhatIsSuspicious(t *testing.T) {
	g := traps.New(traps.Config{}, 3, nil, []traps.Rule{{ID: 9, Domain: "a.example", Unit: "a.example/blog/", Evidence: traps.Evidence{Judged: 39}}})
	fetch := func(p string, text uint64, fromOwn bool) {
		u := mustURL(t, "https://a.example"+p)
		from := "elsewhere.example/"
		if fromOwn {
			from = traps.Unit(u)
		}
		d, _ := g.Admit("a.example", u, from)
		g.Added("a.example", d, 1)
		g.Fetched("a.example", u, text)
	}
	fetch("/plain/a", 1, false)          // distinct, found elsewhere: nothing to keep
	fetch("/self/a", 2, true)            // feeds itself: kept until proved clean
	fetch("/dups/a", 3, false)           // a repeat: kept
	fetch("/dups/b", 3, false)           //
	fetch("/blog/post-forty", 40, false) // the 40th distinct page of a stored unit: proved clean, dropped
	keep, drop := g.Dirty()
	var units []string
	for _, r := range keep {
		units = append(units, r.Unit)
	}
	if got := strings.Join(units, " "); got != "a.example/dups/ a.example/self/" {
		t.Errorf("kept %q", got)
	}
	if len(drop) != 1 || drop[0] != 9 {
		t.Errorf("dropped %v, want the clean stored unit 9", drop)
	}
	if keep, drop := g.Dirty(); len(keep)+len(drop) != 0 {
		t.Errorf("a second Dirty returned %v, %v", keep, drop)
	}
}

func TestCaps(t *testing.T) {
	g := traps.New(traps.Config{MaxNewPerDomain: 10, MaxURLsPerDomain: 15}, 1, map[string]int{"b.example": 14}, nil)
	for i := 0; i < 10; i++ {
		u := mustURL(t, fmt.Sprintf("https://a.example/p%d", i))
		d, _ := g.Admit("a.example", u, "")
		if !d.Admit {
			t.Fatalf("URL %d refused before the cap", i)
		}
		g.Added("a.example", d, 0)
	}
	d, e := g.Admit("a.example", mustURL(t, "https://a.example/more"), "")
	if d.Admit || e == nil || e.Kind != traps.KindMaxNew {
		t.Errorf("11th new URL: %+v, %+v; want refused with a max_new_per_domain event", d, e)
	}
	if _, e := g.Admit("a.example", mustURL(t, "https://a.example/again"), ""); e != nil {
		t.Error("the cap's event was reported twice")
	}
	d, _ = g.Admit("b.example", mustURL(t, "https://b.example/1"), "")
	g.Added("b.example", d, 0)
	if d, e := g.Admit("b.example", mustURL(t, "https://b.example/2"), ""); d.Admit || e == nil || e.Kind != traps.KindMaxURLs {
		t.Errorf("a domain at its table cap: %+v, %+v", d, e)
	}
	if d, _ := g.Admit("c.example", mustURL(t, "https://c.example/"), ""); !d.Admit {
		t.Error("another domain was affected by a.example's cap")
	}
}
