package hints_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
)

func TestNewerThanFetch(t *testing.T) {
	site := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) // the Date header of our last fetch
	tests := []struct {
		lastmod      string
		newer, known bool
	}{
		{"2024-05-01T13:00:00Z", true, true},
		{"2024-05-01T11:00:00Z", false, true},
		{"2024-05-01T12:03:00Z", true, true},   // beyond the two-minute tolerance
		{"2024-05-01T12:01:00Z", false, false}, // within it: the schedule decides
		{"2024-05-01T11:59:00Z", false, false},
		{"2024-05-01T11:57:00Z", false, true},
		{"2024-05-01T14:00:00+02:00", false, false}, // 12:00 UTC: the same moment
		{"2024-05-01T13:00:00+02:00", false, true},  // 11:00 UTC
		{"2024-05-01", false, false},                // a date alone may be before or after noon
		{"2024-04-29", false, true},                 // ends 2024-04-30T12:00Z at the latest
		{"2024-04-30", false, false},                // may end at 2024-05-01T12:00Z somewhere
		{"2024-05-03", true, true},                  // starts 2024-05-02T10:00Z at the earliest
		{"2024-05-02", false, false},                // may start 2024-05-01T10:00Z
		{"2024-05-01T15:00:00", false, false},       // no zone: 01:00Z at the earliest
		{"2024-05-02T03:00:00", true, true},         // no zone: 13:00Z at the earliest
		{"2024-04-30T23:00:00", false, true},        // no zone: 11:00Z at the latest
		{"2024-05-01T10:00Z", false, true},
		{"2024-05-01T11:58:30Z", false, false},
		{"2024", false, false},
		{"2023", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.lastmod, func(t *testing.T) {
			st, err := hints.ParseStamp(tt.lastmod)
			if err != nil {
				t.Fatal(err)
			}
			newer, known := hints.NewerThanFetch(st, site)
			if newer != tt.newer || known != tt.known {
				t.Errorf("NewerThanFetch = %v, %v; want %v, %v", newer, known, tt.newer, tt.known)
			}
		})
	}
	t.Run("no Date header", func(t *testing.T) {
		st, _ := hints.ParseStamp("2024-05-02T00:00:00Z")
		if newer, known := hints.NewerThanFetch(st, time.Time{}); newer || known {
			t.Errorf("NewerThanFetch without Date = %v, %v; want false, false", newer, known)
		}
	})
	t.Run("no lastmod", func(t *testing.T) {
		if newer, known := hints.NewerThanFetch(hints.Stamp{}, site); newer || known {
			t.Errorf("NewerThanFetch without lastmod = %v, %v; want false, false", newer, known)
		}
	})
}

// skewedSite is a loopback web site whose clock is off by skew: it sends that clock in its Date
// header and writes it into its sitemap's lastmod when a page is edited.
type skewedSite struct {
	skew    time.Duration
	noDate  bool
	mu      sync.Mutex
	edited  time.Time // the page's last edit, on the site's clock
	version int
}

func (s *skewedSite) now() time.Time { return time.Now().Add(s.skew).UTC().Truncate(time.Second) }

// edit changes the page at the site's time at.
func (s *skewedSite) edit(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edited, s.version = at, s.version+1
}

func (s *skewedSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noDate {
		w.Header()["Date"] = nil // net/http adds our clock's Date otherwise
	} else {
		w.Header().Set("Date", s.now().Format(http.TimeFormat))
	}
	switch r.URL.Path {
	case "/page":
		fmt.Fprintf(w, "<p>version %d</p>", s.version)
	case "/sitemap.xml":
		fmt.Fprintf(w, `<urlset><url><loc>http://%s/page</loc><lastmod>%s</lastmod></url></urlset>`,
			r.Host, s.edited.Format(time.RFC3339))
	default:
		http.NotFound(w, r)
	}
}

// get fetches path from srv and returns the Date header as sent, the body, and our clock when the
// response arrived.
func get(t *testing.T, srv *httptest.Server, path string) (siteDate time.Time, body string, ours time.Time) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ours = time.Now()
	if h := resp.Header.Get("Date"); h != "" {
		if siteDate, err = http.ParseTime(h); err != nil {
			t.Fatal(err)
		}
	}
	return siteDate, string(b), ours
}

// TestSkewedSiteClock crawls loopback sites whose clocks are months off in both directions: a
// sitemap lastmod is judged against the Date the site sent with our last fetch, so the answer is
// right whatever the skew, where judging it against our own clock is wrong.
func TestSkewedSiteClock(t *testing.T) {
	const months = 90 * 24 * time.Hour
	tests := []struct {
		name    string
		skew    time.Duration
		edit    bool // edit the page after our fetch
		noDate  bool
		newer   bool
		known   bool
		naiveOK bool // whether comparing with our own fetch time happens to give the right answer
	}{
		{name: "clock right, edited", skew: 0, edit: true, newer: true, known: true, naiveOK: true},
		{name: "clock right, untouched", skew: 0, newer: false, known: true, naiveOK: true},
		{name: "clock months slow, edited", skew: -months, edit: true, newer: true, known: true},
		{name: "clock months slow, untouched", skew: -months, newer: false, known: true, naiveOK: true},
		{name: "clock months fast, edited", skew: months, edit: true, newer: true, known: true, naiveOK: true},
		{name: "clock months fast, untouched", skew: months, newer: false, known: true},
		{name: "no Date header", skew: -months, edit: true, noDate: true, newer: false, known: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := &skewedSite{skew: tt.skew, noDate: tt.noDate}
			site.edit(site.now().Add(-time.Hour)) // last edited an hour before our fetch
			srv := httptest.NewServer(site)
			defer srv.Close()

			fetchDate, before, fetchedAt := get(t, srv, "/page") // our last fetch; its Date is stored
			if tt.edit {
				site.edit(site.now().Add(10 * time.Minute)) // an edit the site stamps after our fetch
			}
			sitemapDate, doc, _ := get(t, srv, "/sitemap.xml")
			sm, err := hints.ParseSitemap(strings.NewReader(doc), mustURL(t, srv.URL+"/sitemap.xml"),
				hints.Limits{SiteNow: sitemapDate})
			if err != nil || len(sm.URLs) != 1 || sm.URLs[0].LastMod.IsZero() {
				t.Fatalf("sitemap %q: %+v, %v", doc, sm, err)
			}
			lastmod := sm.URLs[0].LastMod

			newer, known := hints.NewerThanFetch(lastmod, fetchDate)
			if newer != tt.newer || known != tt.known {
				t.Errorf("NewerThanFetch = %v, %v; want %v, %v", newer, known, tt.newer, tt.known)
			}
			if _, after, _ := get(t, srv, "/page"); (after != before) != tt.edit {
				t.Fatalf("page changed = %v, want %v: the fixture is wrong", after != before, tt.edit)
			}
			if tt.noDate {
				return
			}
			// The same decision against our clock: wrong for the skewed sites, which is why the
			// site's Date is stored.
			naive, _ := hints.NewerThanFetch(lastmod, fetchedAt)
			if (naive == tt.edit) != tt.naiveOK {
				t.Errorf("comparing with our clock says newer=%v; the test expects that to be %s", naive,
					map[bool]string{true: "right", false: "wrong"}[tt.naiveOK])
			}
		})
	}
}
