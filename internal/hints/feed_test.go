package hints_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/hints"
)

// rss returns an RSS 2.0 feed of n items https://example.com/i0 … i(n-1).
func rss(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<item><title>%d</title><link>https://example.com/i%d</link><pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>\n", i, i)
	}
	b.WriteString("</channel></rss>\n")
	return b.String()
}

// jsonFeed returns a JSON Feed of n items https://example.com/j0 … j(n-1).
func jsonFeed(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":"%d","url":"https://example.com/j%d","date_modified":"2024-05-01T10:00:00Z"}`, i, i)
	}
	return `{"version":"https://jsonfeed.org/version/1.1","title":"t","items":[` + "\n" + strings.Join(items, ",\n") + "\n]}"
}

// atom returns an Atom feed of n entries https://example.com/a0 … a(n-1).
func atom(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `<entry><title>%d</title><link href="https://example.com/a%d"/><updated>2024-05-01T10:00:00Z</updated></entry>`+"\n", i, i)
	}
	b.WriteString("</feed>\n")
	return b.String()
}

func mustParseFeed(tb testing.TB, src, base string, lim hints.Limits) *hints.Feed {
	tb.Helper()
	f, err := hints.ParseFeed(strings.NewReader(src), mustURL(tb, base), lim)
	if err != nil {
		tb.Fatalf("ParseFeed: %v", err)
	}
	return f
}

func TestParseFeedCaps(t *testing.T) {
	formats := []struct {
		name   string
		gen    func(int) string
		mark   string // where the 7th item starts
		prefix string
	}{
		{"rss", rss, "<item><title>6<", "https://example.com/i"},
		{"atom", atom, "<entry><title>6<", "https://example.com/a"},
		{"json", jsonFeed, `{"id":"6"`, "https://example.com/j"},
	}
	for _, ft := range formats {
		doc := ft.gen(10)
		at := strings.Index(doc, ft.mark)
		tests := []struct {
			name      string
			lim       hints.Limits
			want      int
			truncated bool
		}{
			{"whole", hints.Limits{}, 10, false},
			{"exactly the document", hints.Limits{MaxBytes: int64(len(doc))}, 10, false},
			{"cut inside the seventh item", hints.Limits{MaxBytes: int64(at + 20)}, 6, true},
			{"entry cap", hints.Limits{MaxEntries: 4}, 4, true},
		}
		for _, tt := range tests {
			t.Run(ft.name+"/"+tt.name, func(t *testing.T) {
				tt.lim.SiteNow = siteNow
				f := mustParseFeed(t, doc, "https://example.com/feed", tt.lim)
				if len(f.URLs) != tt.want || f.Truncated != tt.truncated || f.Err != nil {
					t.Fatalf("%d URLs, Truncated %v, Err %v; want %d, %v, nil", len(f.URLs), f.Truncated, f.Err,
						tt.want, tt.truncated)
				}
				for i, e := range f.URLs {
					if want := fmt.Sprintf("%s%d", ft.prefix, i); e.URL != want || e.LastMod.IsZero() {
						t.Errorf("URLs[%d] = %s %v, want %s with a date", i, e.URL, e.LastMod, want)
					}
				}
			})
		}
	}
}

func TestParseFeedBroken(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want int
	}{
		{"rss bad tag in fourth item", strings.Replace(rss(6), "<title>3</title>", "<title>3</tit>", 1), 3},
		{"atom ends mid entry", atom(5)[:strings.Index(atom(5), "<entry><title>2<")+30], 2},
		{"json bad value in third item", strings.Replace(jsonFeed(5), `"id":"2"`, `"id":2x`, 1), 2},
		{"rss broken before any item", `<rss version="2.0"><channel><title>t</tit></channel></rss>`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := hints.ParseFeed(strings.NewReader(tt.src), mustURL(t, "https://example.com/feed"),
				hints.Limits{SiteNow: siteNow})
			if tt.want == 0 {
				if err == nil && (len(f.URLs) != 0 || f.Err == nil) {
					t.Errorf("ParseFeed = %d URLs, Err %v; want an error", len(f.URLs), f.Err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.URLs) != tt.want || f.Err == nil || f.Truncated {
				t.Errorf("%d URLs, Err %v, Truncated %v; want %d, an error, false", len(f.URLs), f.Err, f.Truncated, tt.want)
			}
			if f.Err != nil && !strings.HasPrefix(f.Err.Error(), "parse feed https://example.com/feed: ") {
				t.Errorf("Err %q does not name the operation and the feed", f.Err)
			}
		})
	}
}

func TestParseFeedHosts(t *testing.T) {
	// A feed on feeds.example.com, linked from www.example.com, lists www.example.com's articles.
	src := `<rss version="2.0"><channel><title>t</title>` +
		`<item><link>https://www.example.com/a</link></item>` +
		`<item><link>https://feeds.example.com/b</link></item>` +
		`<item><link>https://tracker.example.net/c</link></item>` +
		`<item><link>/relative</link></item></channel></rss>`
	for _, tt := range []struct {
		hosts []string
		want  string
	}{
		{nil, "https://feeds.example.com/b https://feeds.example.com/relative"},
		{[]string{"www.example.com"}, "https://www.example.com/a https://feeds.example.com/b https://feeds.example.com/relative"},
	} {
		t.Run(fmt.Sprint(tt.hosts), func(t *testing.T) {
			f := mustParseFeed(t, src, "https://feeds.example.com/rss", hints.Limits{Hosts: tt.hosts})
			if got := strings.Join(urls(f.URLs), " "); got != tt.want {
				t.Errorf("URLs %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseFeedRefuses(t *testing.T) {
	for _, tt := range []struct{ name, src string }{
		{"empty", ""},
		{"html", "<html><body>gone</body></html>"},
		{"sitemap", urlset(2)},
		{"json without version", `{"items":[{"url":"https://example.com/x"}]}`},
		{"text", "https://example.com/a\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := hints.ParseFeed(strings.NewReader(tt.src), mustURL(t, "https://example.com/feed"), hints.Limits{})
			if !errors.Is(err, hints.ErrNotFeed) || f != nil {
				t.Errorf("ParseFeed = %v, %v; want an error wrapping ErrNotFeed", f, err)
			}
		})
	}
}
