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

func TestShape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://a.example/calendar/2026/11", "a.example/calendar/N/N"},
		{"https://a.example/page?time=101", "a.example/page?time=N"},
		{"https://a.example/x?b=2&a=v1", "a.example/x?a=vN&b=N"},
		{"https://a.example/s?sid=0123456789abcdef0123456789abcdef", "a.example/s?sid=*"},
		{"https://a.example/", "a.example/"},
	}
	for _, tt := range tests {
		if got := traps.Shape(mustURL(t, tt.in)); got != tt.want {
			t.Errorf("Shape(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := traps.PrefixOf(mustURL(t, "https://a.example/forum/thread/9")); got != "a.example/forum" {
		t.Errorf("PrefixOf = %q", got)
	}
}

func TestSteppingChainIsRefused(t *testing.T) {
	tests := []struct {
		name    string
		next    func(i int) string
		refused bool
	}{
		{"time counter", func(i int) string { return fmt.Sprintf("https://a.example/page?time=%d", 100+i) }, true},
		{"calendar days", func(i int) string {
			return fmt.Sprintf("https://a.example/cal/2026/%02d/%02d", 1+i/28, 1+i%28)
		}, true},
		{"random ids", func(i int) string { return fmt.Sprintf("https://a.example/item/%d", (i*7919+13)%100003*37) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := traps.New(traps.Config{}, nil)
			from := mustURL(t, tt.next(0))
			refusedAt := -1
			var ev *traps.Event
			for i := 1; i < 200; i++ {
				u := mustURL(t, tt.next(i))
				ok, e := g.Admit("a.example", u, from)
				if e != nil {
					ev = e
				}
				if !ok {
					refusedAt = i
					break
				}
				g.Added("a.example")
				from = u // each page links to the next: self-similar discovery
			}
			if (refusedAt > 0) != tt.refused {
				t.Fatalf("refused at %d; want refused %v", refusedAt, tt.refused)
			}
			if tt.refused && (ev == nil || ev.Kind != "pattern" || refusedAt > 60) {
				t.Errorf("event %+v at URL %d; want a pattern event within 60 URLs", ev, refusedAt)
			}
		})
	}
}

func TestIndexOfSequentialIDsIsNotATrap(t *testing.T) {
	g := traps.New(traps.Config{}, nil)
	index := mustURL(t, "https://forum.example/forum/")
	for i := 1; i <= 500; i++ {
		u := mustURL(t, fmt.Sprintf("https://forum.example/thread/%d", i))
		if ok, e := g.Admit("forum.example", u, index); !ok {
			t.Fatalf("thread %d refused (%+v): an index of sequential ids is not a trap", i, e)
		}
		g.Added("forum.example")
	}
}

func TestCaps(t *testing.T) {
	g := traps.New(traps.Config{MaxNewPerDomain: 10, MaxURLsPerDomain: 15}, map[string]int{"b.example": 14})
	for i := 0; i < 10; i++ {
		u := mustURL(t, fmt.Sprintf("https://a.example/p%d", i))
		if ok, _ := g.Admit("a.example", u, nil); !ok {
			t.Fatalf("URL %d refused before the cap", i)
		}
		g.Added("a.example")
	}
	ok, e := g.Admit("a.example", mustURL(t, "https://a.example/more"), nil)
	if ok || e == nil || e.Kind != "max_new_per_domain" {
		t.Errorf("11th new URL: %v, %+v; want refused with a max_new_per_domain event", ok, e)
	}
	if _, e := g.Admit("a.example", mustURL(t, "https://a.example/again"), nil); e != nil {
		t.Error("the cap's event was reported twice")
	}
	g.Admit("b.example", mustURL(t, "https://b.example/1"), nil)
	g.Added("b.example")
	if ok, e := g.Admit("b.example", mustURL(t, "https://b.example/2"), nil); ok || e == nil || e.Kind != "max_urls_per_domain" {
		t.Errorf("a domain at its table cap: %v, %+v", ok, e)
	}
	if ok, _ := g.Admit("c.example", mustURL(t, "https://c.example/"), nil); !ok {
		t.Error("another domain was affected by a.example's cap")
	}
}

func TestDuplicatePrefixIsThrottled(t *testing.T) {
	g := traps.New(traps.Config{}, nil)
	var ev *traps.Event
	for i := 0; i < 30 && ev == nil; i++ {
		ev = g.Fetched("a.example", mustURL(t, fmt.Sprintf("https://a.example/facet/%d", i)), "same-hash")
	}
	if ev == nil || ev.Kind != "duplicates" || !strings.Contains(ev.Pattern, "a.example/facet") {
		t.Fatalf("event %+v; want the facet prefix throttled", ev)
	}
	if ok, _ := g.Admit("a.example", mustURL(t, "https://a.example/facet/999"), nil); ok {
		t.Error("a throttled prefix still admits URLs")
	}
	if ok, _ := g.Admit("a.example", mustURL(t, "https://a.example/news/1"), nil); !ok {
		t.Error("another prefix of the domain was throttled")
	}
	g2 := traps.New(traps.Config{}, nil)
	for i := 0; i < 50; i++ {
		if e := g2.Fetched("a.example", mustURL(t, fmt.Sprintf("https://a.example/news/%d", i)), fmt.Sprint(i)); e != nil {
			t.Fatalf("distinct pages throttled: %+v", e)
		}
	}
}
