package crawler

import (
	"net/http"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/store"
)

// TestDateChange checks what a response's Last-Modified is taken to say, against what strata saw of
// the page since its last fetch, for the servers of the simulator's date modes and a few more.
func TestDateChange(t *testing.T) {
	day := func(d float64) time.Time {
		return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(d * float64(24*time.Hour)))
	}
	hdr := func(d float64) string { return day(d).Format(http.TimeFormat) }
	known := store.DueURL{ContentHash: "h1", LastModified: hdr(3), SiteDate: day(10)} // fetched at day 10
	tests := []struct {
		name  string
		u     store.DueURL
		rec   store.FetchRecord
		lm    string
		date  time.Time // the response's Date
		dated bool
		age   time.Duration
		check int
	}{
		{"first fetch: dated, nothing to check", store.DueURL{}, store.FetchRecord{Status: 200, ContentHash: "h1"}, hdr(3), day(10), true, 7 * 24 * time.Hour, 0},
		{"unchanged, same date: agrees", known, store.FetchRecord{Status: 200, ContentHash: "h1"}, hdr(3), day(20), true, 17 * 24 * time.Hour, 1},
		{"unchanged, a new date: a date stamped on every response", known, store.FetchRecord{Status: 200, ContentHash: "h1"}, hdr(20), day(20), false, 0, -1},
		{"changed, dated after the last fetch: agrees", known, store.FetchRecord{Status: 200, ContentHash: "h2", Changed: true}, hdr(18), day(20), true, 2 * 24 * time.Hour, 1},
		{"changed, dated before the last fetch: a date that never moves", known, store.FetchRecord{Status: 200, ContentHash: "h2", Changed: true}, hdr(3), day(20), false, 0, -1},
		{"304 without a date: the last one holds", known, store.FetchRecord{Status: 304, NotModified: true}, "", day(20), true, 17 * 24 * time.Hour, 1},
		{"304 with another date", known, store.FetchRecord{Status: 304, NotModified: true}, hdr(15), day(20), false, 0, -1},
		{"a date in the future", known, store.FetchRecord{Status: 200, ContentHash: "h1"}, hdr(21), day(20), false, 0, -1},
		{"no date", known, store.FetchRecord{Status: 200, ContentHash: "h1"}, "", day(20), false, 0, 0},
		{"a date that does not parse", known, store.FetchRecord{Status: 200, ContentHash: "h1"}, "yesterday", day(20), false, 0, 0},
		{"changed, no date before: nothing to check", store.DueURL{ContentHash: "h1"}, store.FetchRecord{Status: 200, ContentHash: "h2", Changed: true}, hdr(18), day(20), true, 2 * 24 * time.Hour, 0},
		{"an error answer dates nothing", known, store.FetchRecord{Status: 500}, hdr(3), day(20), false, 0, 0},
		{"no Date header: strata's clock", store.DueURL{}, store.FetchRecord{Status: 200, ContentHash: "h1"}, hdr(3), time.Time{}, true, 17 * 24 * time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tt.rec
			resp := &fetch.Response{Status: rec.Status, NotModified: rec.NotModified, LastModified: tt.lm, Date: tt.date}
			dateChange(&rec, &tt.u, resp, day(20))
			if rec.Dated != tt.dated || rec.DatedAge != tt.age || rec.DateCheck != tt.check {
				t.Errorf("dated %v, age %v, check %+d; want %v, %v, %+d", rec.Dated, rec.DatedAge, rec.DateCheck, tt.dated, tt.age, tt.check)
			}
		})
	}
}

func TestDatesBelieved(t *testing.T) {
	d := Dates{RunLength: 24 * time.Hour, Origins: map[string]store.Dates{
		"https://true.example":  {Agreed: 40, Contradicted: 2},
		"https://new.example":   {Agreed: 2},
		"https://build.example": {Agreed: 30, Contradicted: 12},
	}}
	for u, want := range map[string]bool{
		"https://true.example/a/b.html": true,
		"http://true.example/a/b.html":  false, // another origin
		"https://new.example/":          false, // too few agreeing dates yet
		"https://build.example/x":       false,
		"https://none.example/x":        false,
		"::":                            false,
	} {
		if got := d.Believed(u); got != want {
			t.Errorf("Believed(%s) = %v, want %v", u, got, want)
		}
	}
	if (Dates{Origins: d.Origins}).Believed("https://true.example/") {
		t.Error("believed dates without a run length to measure them in")
	}
	recs := []store.Record{{Run: 1, Dated: true, Age: 36 * time.Hour}, {Run: 3, Changed: true}}
	if got := d.records(recs, true); !got[0].Dated || got[0].Age != 1.5 || got[1].Dated {
		t.Errorf("records believed: %+v", got)
	}
	if got := d.records(recs, false); got[0].Dated {
		t.Errorf("records not believed: %+v", got)
	}
}

func TestRunLength(t *testing.T) {
	at := func(h float64) time.Time { return time.Unix(0, 0).Add(time.Duration(h * float64(time.Hour))) }
	for _, tt := range []struct {
		name   string
		starts []time.Time // newest first, as RecentRuns lists them
		want   time.Duration
	}{
		{"none", nil, 24 * time.Hour},
		{"one", []time.Time{at(0)}, 24 * time.Hour},
		{"daily, a day missed", []time.Time{at(96), at(48), at(24), at(0)}, 24 * time.Hour},
		{"hourly", []time.Time{at(3), at(2), at(1), at(0)}, time.Hour},
		{"twice at once", []time.Time{at(0), at(0)}, 24 * time.Hour},
		{"seconds apart", []time.Time{at(0.0001), at(0)}, time.Minute},
	} {
		if got := runLength(tt.starts); got != tt.want {
			t.Errorf("%s: runLength = %v, want %v", tt.name, got, tt.want)
		}
	}
}
