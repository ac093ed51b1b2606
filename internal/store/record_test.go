package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestRecordFetchKeepsContentOnNotModified(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Status: 200, Size: 500, ContentType: "text/html",
		ContentHash: "abc", NextFr: 1, ETag: `"v1"`, LastModified: "Sun, 22 Nov 2026 03:00:00 GMT"})
	db.Countdown(ctx) // the next run
	d, _ = db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Status: 304, NotModified: true,
		NextFr: 1, ETag: `"v1"`, LastModified: "Sun, 22 Nov 2026 03:00:00 GMT"}); err != nil {
		t.Fatal(err)
	}
	db.Countdown(ctx) // the next run
	d, _ = db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if d.ContentHash != "abc" || d.ETag != `"v1"` {
		t.Errorf("a 304 lost the stored content hash or validators: %+v", d)
	}
	if st, _ := db.RecentStatuses(ctx, d.ID, 5); !equal(st, []int{304, 200}) {
		t.Errorf("RecentStatuses = %v", st)
	}
	if err := db.RecordFetch(ctx, store.FetchRecord{URLID: 999, FetchedAt: now, NextFr: 1}); !errors.Is(err, store.ErrNotFound) {
		// The fetch row insert fails first on the foreign key; either way nothing is recorded.
		if err == nil {
			t.Error("recording a fetch of an unknown URL succeeded")
		}
	}
}

// TestRecordFetchTextMode: the extraction mode goes into the fetch row and the URL row; a fetch
// without content (a 304) keeps the URL's, whose digest it still is.
func TestRecordFetchTextMode(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	for i, f := range []store.FetchRecord{
		{Status: 200, ContentHash: "a", TextMode: "fallback"},
		{Status: 304, NotModified: true},
		{Status: 200, ContentHash: "b", TextMode: "main"},
		{Status: 200, ContentHash: "c"}, // a body that is not HTML
	} {
		d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"", "fallback", "fallback", "main"}[i]
		if d.TextMode != want {
			t.Errorf("before fetch %d: DueURL.TextMode = %q, want %q", i, d.TextMode, want)
		}
		f.URLID, f.FetchedAt, f.NextFr = d.ID, now, 1
		if err := db.RecordFetch(ctx, f); err != nil {
			t.Fatal(err)
		}
		db.Countdown(ctx)
	}
	hist, err := db.History(ctx, "https://a.example/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist {
		got = append(got, h.TextMode)
	}
	if want := []string{"fallback", "", "main", ""}; !slices.Equal(got, want) {
		t.Errorf("fetches.text_mode = %q, want %q", got, want)
	}
}

// RecordFetches stores a batch as RecordFetch stores each of its records, or none of it.
func TestRecordFetches(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now,
		store.NewSeed{URL: "https://a.example/", Host: "a.example", FrMax: 3},
		store.NewSeed{URL: "https://b.example/", Host: "b.example", FrMax: 3})
	a, _ := db.URLInfo(ctx, "https://a.example/")
	b, _ := db.URLInfo(ctx, "https://b.example/")

	// One record of a URL the table does not hold: nothing of the batch is stored.
	bad := []store.FetchRecord{
		{URLID: a.ID, RunID: 0, FetchedAt: now, Status: 200, ContentHash: "x", NextFr: 3},
		{URLID: 999, FetchedAt: now, Status: 200, NextFr: 3},
	}
	if err := db.RecordFetches(ctx, bad); err == nil {
		t.Fatal("a batch with an unknown URL was stored")
	}
	if st, _ := db.RecentStatuses(ctx, a.ID, 5); len(st) != 0 {
		t.Errorf("a failed batch stored %v for a.example", st)
	}

	good := []store.FetchRecord{
		{URLID: a.ID, FetchedAt: now, Status: 200, ContentHash: "x", NextFr: 3, Origin: "https://a.example", Domain: "a.example"},
		{URLID: b.ID, FetchedAt: now, Status: 404, Error: "HTTP 404", NextFr: 3},
		{URLID: a.ID, FetchedAt: now.Add(time.Minute), Status: 304, NotModified: true, NextFr: 3},
	}
	if err := db.RecordFetches(ctx, good); err != nil {
		t.Fatal(err)
	}
	if st, _ := db.RecentStatuses(ctx, a.ID, 5); !equal(st, []int{304, 200}) {
		t.Errorf("a.example statuses %v, want [304 200]", st)
	}
	info, _ := db.URLInfo(ctx, "https://b.example/")
	if info.Fr != 3 || info.LastError != "HTTP 404" {
		t.Errorf("b.example row: fr %d, last error %q", info.Fr, info.LastError)
	}
	if acc, _ := db.LastAccess(ctx, now.Add(-time.Hour)); !acc["a.example"].Equal(now) {
		t.Errorf("last access of a.example %v, want %v", acc["a.example"], now)
	}
}
