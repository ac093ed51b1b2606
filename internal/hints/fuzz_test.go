package hints_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

// addFixtures seeds a fuzz corpus with every fixture, plain and gzipped.
func addFixtures(f *testing.F, add func([]byte)) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
		add(mustGzip(f, b))
	}
}

// checkEntries asserts what every parse result promises, whatever the input.
func checkEntries(t *testing.T, es []hints.Entry, maxEntries int) {
	t.Helper()
	if len(es) > maxEntries {
		t.Fatalf("%d entries, cap %d", len(es), maxEntries)
	}
	for _, e := range es {
		checkURL(t, e.URL)
		checkDate(t, e.LastMod)
		if e.Priority < 0 || e.Priority > 1 {
			t.Fatalf("priority %v outside [0, 1]", e.Priority)
		}
		if _, ok := hints.ParseChangeFreq(string(e.ChangeFreq)); e.ChangeFreq != "" && !ok {
			t.Fatalf("changefreq %q", e.ChangeFreq)
		}
	}
}

func checkURL(t *testing.T, u string) {
	t.Helper()
	canon, err := urlnorm.Parse(u)
	if err != nil || canon.String() != u {
		t.Fatalf("URL %q is not canonical (%v)", u, err)
	}
	if h := canon.Hostname(); h != "example.com" && h != "www.example.com" {
		t.Fatalf("URL %q on a host the document may not speak for", u)
	}
}

func checkDate(t *testing.T, st hints.Stamp) {
	t.Helper()
	if st.IsZero() {
		return
	}
	earliest, latest := st.Bounds()
	if st.At.Year() < 1991 || earliest.After(siteNow.Add(24*time.Hour)) || latest.Before(earliest) {
		t.Fatalf("implausible date kept: %v (%v … %v)", st, earliest, latest)
	}
}

func FuzzParseSitemap(f *testing.F) {
	addFixtures(f, func(b []byte) { f.Add(b, uint16(0), uint8(0)) })
	f.Add([]byte(urlset(5)), uint16(300), uint8(3))
	f.Add([]byte("https://example.com/a\nhttps://example.com/b\n"), uint16(30), uint8(1))
	f.Fuzz(func(t *testing.T, src []byte, maxBytes uint16, maxEntries uint8) {
		lim := hints.Limits{MaxBytes: int64(maxBytes), MaxEntries: int(maxEntries), SiteNow: siteNow,
			Hosts: []string{"www.example.com"}}
		capEntries := hints.MaxEntries
		if maxEntries > 0 {
			capEntries = int(maxEntries)
		}
		r := &countingReader{r: bytes.NewReader(src)}
		sm, err := hints.ParseSitemap(r, mustURL(t, "https://example.com/sitemap.xml"), lim)
		if err != nil {
			if sm != nil {
				t.Fatal("both a result and an error")
			}
			return
		}
		checkEntries(t, sm.URLs, capEntries)
		if len(sm.URLs)+len(sm.Children) > capEntries {
			t.Fatalf("%d URLs and %d children, cap %d", len(sm.URLs), len(sm.Children), capEntries)
		}
		for _, c := range sm.Children {
			checkURL(t, c.URL)
			checkDate(t, c.LastMod)
		}
		// Uncompressed input is read at most one buffer (4 kB) past the cap.
		if maxBytes > 0 && !bytes.HasPrefix(src, []byte{0x1f, 0x8b}) && r.n > int64(maxBytes)+4096+1 {
			t.Fatalf("read %d bytes with a cap of %d", r.n, maxBytes)
		}
		if sm.Truncated && sm.Err != nil {
			t.Fatalf("both Truncated and Err (%v)", sm.Err)
		}
	})
}

func FuzzParseFeed(f *testing.F) {
	addFixtures(f, func(b []byte) { f.Add(b, uint16(0), uint8(0)) })
	f.Add([]byte(rss(4)), uint16(250), uint8(2))
	f.Add([]byte(atom(4)), uint16(250), uint8(2))
	f.Add([]byte(jsonFeed(4)), uint16(200), uint8(2))
	f.Fuzz(func(t *testing.T, src []byte, maxBytes uint16, maxEntries uint8) {
		lim := hints.Limits{MaxBytes: int64(maxBytes), MaxEntries: int(maxEntries), SiteNow: siteNow,
			Hosts: []string{"www.example.com"}}
		capEntries := hints.MaxEntries
		if maxEntries > 0 {
			capEntries = int(maxEntries)
		}
		feed, err := hints.ParseFeed(bytes.NewReader(src), mustURL(t, "https://example.com/feed"), lim)
		if err != nil {
			if feed != nil {
				t.Fatal("both a result and an error")
			}
			return
		}
		checkEntries(t, feed.URLs, capEntries)
		switch feed.Format {
		case hints.FormatRSS, hints.FormatAtom, hints.FormatJSON:
		default:
			t.Fatalf("format %q", feed.Format)
		}
	})
}

func FuzzParseStamp(f *testing.F) {
	for _, s := range []string{"2024", "2024-05", "2024-05-01", "2024-05-01T10:30Z", "2024-05-01T10:30:15+02:00",
		"2024-05-01T10:30:15.123-05:00", "2024-05-01T10:30:15", "2024-05-01 10:30:15+0200",
		"Wed, 01 May 2024 10:30:15 GMT", "1 May 2024 10:30 +0100", "0000", "9999-12-31T23:59:59.999999999-14:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := hints.ParseStamp(s)
		if err != nil {
			return
		}
		if st.IsZero() && st.Precision == hints.PrecisionNone {
			t.Fatalf("ParseStamp(%q) succeeded with no precision", s)
		}
		if st.At.Location() != time.UTC {
			t.Fatalf("ParseStamp(%q).At in %v", s, st.At.Location())
		}
		if e, l := st.Bounds(); l.Before(e) || e.After(st.At) {
			t.Fatalf("ParseStamp(%q) bounds %v … %v around %v", s, e, l, st.At)
		}
		again, err := hints.ParseStamp(st.String())
		if err != nil || !again.At.Equal(st.At) || again.Zoneless != st.Zoneless {
			t.Fatalf("ParseStamp(%q) = %+v; its String %q reads back as %+v, %v", s, st, st.String(), again, err)
		}
	})
}
