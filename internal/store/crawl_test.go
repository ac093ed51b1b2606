package store_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func seedDB(t *testing.T, now *time.Time, seeds ...store.NewSeed) *store.DB {
	t.Helper()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{Now: func() time.Time { return *now }})
	if _, err := db.AddSeeds(t.Context(), seeds); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestCountdownAndNextDue(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now,
		store.NewSeed{URL: "https://a.example/low", Host: "a.example", Level: 0, FrMax: 3},
		store.NewSeed{URL: "https://a.example/high", Host: "a.example", Level: 2, FrMax: 2},
		store.NewSeed{URL: "https://b.example/", Host: "b.example", Level: 1, FrMax: 1},
	)
	due, waiting, err := db.Countdown(ctx)
	if err != nil || due != 3 || waiting != 0 {
		t.Fatalf("Countdown = %d, %d, %v; want 3 new seeds due, none waiting", due, waiting, err)
	}
	hosts, err := db.DueHosts(ctx)
	if err != nil || hosts["a.example"] != 2 || hosts["b.example"] != 1 {
		t.Fatalf("DueHosts = %v, %v", hosts, err)
	}
	// Level by level: the higher level first.
	d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if err != nil || d.URL != "https://a.example/high" {
		t.Fatalf("NextDue = %+v, %v; want the level-2 page", d, err)
	}
	crawl := func(d *store.DueURL) {
		t.Helper()
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Status: 200, Size: 10,
			ContentHash: "h1", NextFr: d.FrMax, ETag: `"e1"`}); err != nil {
			t.Fatal(err)
		}
	}
	crawl(d)
	d, _ = db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	crawl(d)
	if _, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("NextDue after both were crawled: %v, want ErrNotFound", err)
	}
	// The paper's countdown: fr_max 2 is due every other run, fr_max 3 every third.
	var dueRuns [2][]int
	for run := 1; run <= 6; run++ {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		for {
			d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if d.URL == "https://a.example/high" {
				dueRuns[0] = append(dueRuns[0], run)
			} else {
				dueRuns[1] = append(dueRuns[1], run)
			}
			if d.ETag != `"e1"` || d.ContentHash != "h1" {
				t.Errorf("validators not kept: %+v", d)
			}
			crawl(d)
		}
	}
	if want := []int{2, 4, 6}; !equal(dueRuns[0], want) {
		t.Errorf("fr_max 2 page due in runs %v, want %v", dueRuns[0], want)
	}
	if want := []int{3, 6}; !equal(dueRuns[1], want) {
		t.Errorf("fr_max 3 page due in runs %v, want %v", dueRuns[1], want)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEnqueue(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 4})
	runStart := now
	seed, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})

	id, what, err := db.Enqueue(ctx, store.NewURL{URL: "https://a.example/new", Host: "a.example", Level: 2, FrMax: 1,
		ParentID: seed.ID, RootID: seed.ID}, runStart)
	if err != nil || what != store.EnqueuedNew || id == 0 {
		t.Fatalf("Enqueue new = %d, %v, %v", id, what, err)
	}
	if _, what, _ := db.Enqueue(ctx, store.NewURL{URL: "https://a.example/new", Host: "a.example", Level: 1, FrMax: 1}, runStart); what != store.EnqueuedDue {
		t.Errorf("enqueueing a due URL again: %v, want EnqueuedDue", what)
	}
	// Crawl the seed in this run; enqueueing it again must not make it due a second time.
	now = now.Add(time.Minute)
	db.RecordFetch(ctx, store.FetchRecord{URLID: seed.ID, FetchedAt: now, Status: 200, NextFr: 4})
	if _, what, err := db.Enqueue(ctx, store.NewURL{URL: seed.URL, Host: "a.example", Level: 2, FrMax: 1}, runStart); err != nil || what != store.EnqueuedKnown {
		t.Fatalf("re-enqueue crawled seed: %v, %v; want EnqueuedKnown", what, err)
	}
	hosts, _ := db.DueHosts(ctx)
	if hosts["a.example"] != 1 {
		t.Errorf("due URLs of a.example = %d, want only /new", hosts["a.example"])
	}
	// In the next run, a known URL that is not due is made due by Enqueue (a redirect points at it).
	if _, what, err := db.Enqueue(ctx, store.NewURL{URL: seed.URL, Host: "a.example", Level: 2, FrMax: 1}, now.Add(time.Hour)); err != nil || what != store.EnqueuedDue {
		t.Fatalf("Enqueue in a later run: %v, %v; want EnqueuedDue", what, err)
	}
	if hosts, _ := db.DueHosts(ctx); hosts["a.example"] != 2 {
		t.Errorf("Enqueue in a later run did not make the seed due: %v", hosts)
	}
}

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

func TestCloseStaleRuns(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	run, _ := db.BeginRun(ctx, now, 0)
	d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, RunID: run, FetchedAt: now.Add(time.Minute), Status: 200,
		ContentHash: "h", ArchivePath: "2026-11-22T030000Z/a.example/_index", NextFr: 1})
	closed, err := db.CloseStaleRuns(ctx)
	if err != nil || len(closed) != 1 || closed[0].ID != run || !closed[0].StartedAt.Equal(now) {
		t.Fatalf("CloseStaleRuns = %+v, %v", closed, err)
	}
	runs, _ := db.RecentRuns(ctx, 1)
	if r := runs[0]; r.Status != "interrupted" || r.Fetched != 1 || r.New != 1 || r.Unchanged != 0 || r.EndedAt != now.Add(time.Minute) {
		t.Errorf("stale run closed as %+v", r)
	}
}

func TestRobotsCache(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now)
	if _, err := db.RobotsCache(ctx, "https://a.example"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	if err := db.TouchHost(ctx, "https://a.example", "a.example", now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RobotsCache(ctx, "https://a.example"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a touched host without robots.txt: %v, want ErrNotFound", err)
	}
	want := store.Robots{Origin: "https://a.example", Domain: "a.example", Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"),
		FetchedAt: now, ExpiresAt: now.Add(24 * time.Hour), CrawlDelay: 15 * time.Second}
	if err := db.SaveRobots(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := db.RobotsCache(ctx, "https://a.example")
	if err != nil || got.Status != 200 || string(got.Body) != string(want.Body) || !got.ExpiresAt.Equal(want.ExpiresAt) ||
		got.CrawlDelay != want.CrawlDelay {
		t.Errorf("RobotsCache = %+v, %v", got, err)
	}
}

func TestLastAccess(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Duration: 2 * time.Second, Status: 200,
		NextFr: 1, Origin: "https://a.example", Domain: "a.example"}); err != nil {
		t.Fatal(err)
	}
	db.SaveRobots(ctx, store.Robots{Origin: "http://b.example:8080", Domain: "b.example", Status: 404, FetchedAt: now.Add(time.Minute)})
	got, err := db.LastAccess(ctx, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !got["a.example"].Equal(now.Add(2*time.Second)) || !got["b.example:8080"].Equal(now.Add(time.Minute)) || len(got) != 2 {
		t.Errorf("LastAccess = %v", got)
	}
	if got, _ := db.LastAccess(ctx, now.Add(time.Hour)); len(got) != 0 {
		t.Errorf("LastAccess after the last access = %v, want none", got)
	}
}

func TestRunManifest(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now,
		store.NewSeed{URL: "https://a.example/1", Host: "a.example", Level: 0, FrMax: 1},
		store.NewSeed{URL: "https://a.example/2", Host: "a.example", Level: 0, FrMax: 1},
		store.NewSeed{URL: "https://a.example/3", Host: "a.example", Level: 0, FrMax: 1})
	run1, _ := db.BeginRun(ctx, now, 0)
	for i := 0; i < 3; i++ {
		d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
		rec := store.FetchRecord{URLID: d.ID, RunID: run1, FetchedAt: now, Status: 200, ContentHash: "h", NextFr: 1,
			ArchivePath: "r1/a.example/" + d.URL[len(d.URL)-1:]}
		if i == 2 {
			rec = store.FetchRecord{URLID: d.ID, RunID: run1, FetchedAt: now, Status: 503, Error: "HTTP 503", NextFr: 1}
		}
		db.RecordFetch(ctx, rec)
	}
	db.Countdown(ctx) // the next run
	run2, _ := db.BeginRun(ctx, now.Add(time.Hour), 0)
	outcomes := []store.FetchRecord{
		{Status: 200, ContentHash: "h2", Changed: true, ArchivePath: "r2/a.example/1"},
		{Status: 304, NotModified: true},
		{Status: 301},
	}
	for _, rec := range outcomes {
		d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
		rec.URLID, rec.RunID, rec.FetchedAt, rec.NextFr = d.ID, run2, now, 1
		db.RecordFetch(ctx, rec)
	}
	m, err := db.RunManifest(ctx, run2)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ManifestEntry{
		{URL: "https://a.example/1", Outcome: "changed", Current: "r2/a.example/1"},
		{URL: "https://a.example/2", Outcome: "not_modified", Current: "r1/a.example/2"},
		{URL: "https://a.example/3", Outcome: "redirect"},
	}
	if len(m) != len(want) {
		t.Fatalf("manifest %+v", m)
	}
	for i := range want {
		if m[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, m[i], want[i])
		}
	}
	if ok, _ := db.HasArchivePath(ctx, "r1/a.example/2"); !ok {
		t.Error("HasArchivePath missed a recorded version")
	}
	if ok, _ := db.HasArchivePath(ctx, "r9/x"); ok {
		t.Error("HasArchivePath found an unrecorded version")
	}
}

func TestDiscover(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 1})
	hub, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	db.RecordFetch(ctx, store.FetchRecord{URLID: hub.ID, FetchedAt: now, Status: 200, NextFr: 1})
	found := []store.NewURL{
		{URL: "https://a.example/x", Host: "a.example", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "https://a.example/y", Host: "a.example", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
	}
	added, err := db.Discover(ctx, found)
	if err != nil || len(added) != 2 {
		t.Fatalf("Discover = %v, %v; want the two new URLs", added, err)
	}
	if again, _ := db.Discover(ctx, found); len(again) != 0 {
		t.Errorf("known URLs were added again: %v", again)
	}
	// Reached from a higher page, a known URL gets the higher level but is not made due.
	db.RecordFetch(ctx, store.FetchRecord{URLID: mustID(t, db, "https://a.example/x"), FetchedAt: now, Status: 200, NextFr: 3})
	db.Discover(ctx, []store.NewURL{{URL: "https://a.example/x", Host: "a.example", Level: 5, FrMax: 1}})
	info, _ := db.URLInfo(ctx, "https://a.example/x")
	if info.Level != 5 || info.Fr != 3 {
		t.Errorf("after rediscovery from a higher page: level %d fr %d; want level 5, fr unchanged 3", info.Level, info.Fr)
	}
}

// TestDiscoverKnownWritesNothing: links to URLs the table has at their level or higher change
// nothing, so Discover does not take the write lock for them: it succeeds while another connection
// holds it (a group commit in a crawl).
func TestDiscoverKnownWritesNothing(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	db := mustOpen(t, path, store.Options{})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	known := []store.NewURL{
		{URL: "https://a.example/x", Host: "a.example", Level: 1, FrMax: 1},
		{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 1},
	}
	if added, err := db.Discover(ctx, known); err != nil || len(added) != 1 {
		t.Fatalf("Discover = %v, %v; want /x added", added, err)
	}
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	lower := append([]store.NewURL(nil), known...)
	lower[0].Level = 0
	for _, found := range [][]store.NewURL{known, lower} {
		if added, err := db.Discover(ctx, found); err != nil || len(added) != 0 {
			t.Errorf("Discover of known URLs beside a writer = %v, %v; want nothing added, no error", added, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	// A level to raise is still written.
	if _, err := db.Discover(ctx, []store.NewURL{{URL: "https://a.example/x", Host: "a.example", Level: 3, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	if info, _ := db.URLInfo(ctx, "https://a.example/x"); info.Level != 3 {
		t.Errorf("level %d after rediscovery from a higher page, want 3", info.Level)
	}
}

func mustID(t *testing.T, db *store.DB, u string) int64 {
	t.Helper()
	info, err := db.URLInfo(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	return info.ID
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
