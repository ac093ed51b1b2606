package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// TestObserveHintKeepsRecentWindows: an origin's hint record follows its recent hints. After a long
// honest past, a sitemap that stops announcing changes has its misses outweigh its announcements
// within a few checks, where cumulative counts would have taken as many misses as it had
// announcements in all.
func TestObserveHintKeepsRecentWindows(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	const o = "https://a.example"
	observe := func(n int, agreed, changed bool) {
		t.Helper()
		for range n {
			if err := db.ObserveHint(ctx, o, "a.example", agreed, changed); err != nil {
				t.Fatal(err)
			}
		}
	}
	observe(300, true, true)  // a year of announced changes
	observe(300, true, false) // and of pages it rightly called unchanged
	h, err := db.HostHints(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if h.Agreed+h.Disagreed >= store.HintObservations || h.Announced+h.Missed+h.FalseAlarms >= store.HintChecks {
		t.Fatalf("after 600 observations: %+v; want the counts within their windows (%d, %d)", h, store.HintObservations, store.HintChecks)
	}
	if h.Announced == 0 || h.Missed != 0 || h.FalseAlarms != 0 || h.Disagreed != 0 {
		t.Fatalf("an honest past: %+v", h)
	}
	observe(3, false, true) // the sitemap froze: three changes it did not announce
	if h, err = db.HostHints(ctx, o); err != nil {
		t.Fatal(err)
	}
	if h.Missed*5 <= h.Announced {
		t.Errorf("after 3 misses: announced %d, missed %d; the misses should outweigh a fifth of the announcements", h.Announced, h.Missed)
	}
	observe(1, false, false) // and a false alarm: counted as one, not as a miss
	if h2, err := db.HostHints(ctx, o); err != nil {
		t.Fatal(err)
	} else if h2.FalseAlarms < 1 || h2.Missed > h.Missed {
		t.Errorf("a false alarm after %+v gave %+v", h, h2)
	}
}

// TestOriginDatesKeepRecentWindow: an origin's date record follows its recent fetches, so a
// server whose dates were right for months and then start contradicting what strata sees (a CMS
// that now stamps every page with the time of the request) loses the belief after a few dozen
// fetches, where cumulative counts would take a tenth of all its past agreements.
func TestOriginDatesKeepRecentWindow(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/", Host: "a.example", FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 1})
	if err != nil {
		t.Fatal(err)
	}
	record := func(n, check int) store.Dates {
		t.Helper()
		for range n {
			if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, Status: 200, NextFr: 1, DateCheck: check,
				Origin: "https://a.example", Domain: "a.example", FetchedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		ds, err := db.OriginDates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ds["https://a.example"]
	}
	got := record(500, +1)
	if got.Agreed+got.Contradicted >= store.DateObservations || got.Agreed < store.DateObservations/2 || got.Contradicted != 0 {
		t.Fatalf("after 500 agreeing dates: %+v, want the counts within %d", got, store.DateObservations)
	}
	got = record(8, -1)
	if got.Contradicted*10 <= got.Agreed {
		t.Errorf("after 8 contradictions: %+v; a tenth of the recent agreements should be outweighed", got)
	}
}

// TestResumeDeferred: the pages an origin's hints deferred go back on their own interval when the
// origin loses the trust; a page the hints did not defer keeps its place.
func TestResumeDeferred(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 2}}); err != nil {
		t.Fatal(err)
	}
	var found []store.NewURL
	for _, p := range []string{"/hinted", "/plain", "/other"} {
		found = append(found, store.NewURL{URL: "https://a.example" + p, Host: "a.example", FrMax: 2, ParentID: 1, RootID: 1})
	}
	if _, err := db.Discover(ctx, found); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.ApplyHints(ctx, "sitemap", []store.Hint{{URL: "https://a.example/hinted", LastMod: "2026-11-01"},
		{URL: "https://a.example/other", LastMod: "2026-11-01"}}); err != nil {
		t.Fatal(err)
	}
	info := func(p string) *store.URLInfo {
		t.Helper()
		in, err := db.URLInfo(ctx, "https://a.example"+p)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	// /hinted deferred by 30 runs, /other by 3; /plain left due.
	if err := db.DeferByHint(ctx, []int64{info("/hinted").ID}, 30); err != nil {
		t.Fatal(err)
	}
	if err := db.DeferByHint(ctx, []int64{info("/other").ID}, 3); err != nil {
		t.Fatal(err)
	}
	n, err := db.ResumeDeferred(ctx, "https://a.example", "a.example")
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("resumed %d pages, want 2", n)
	}
	for p, want := range map[string]int{"/hinted": 2, "/plain": 0, "/other": 2} {
		if got := info(p).Fr; got != want {
			t.Errorf("%s: fr %d after the resume, want %d", p, got, want)
		}
	}
	if n, err := db.ResumeDeferred(ctx, "https://a.example", "a.example"); err != nil || n != 0 {
		t.Errorf("a second resume moved %d pages (%v), want none", n, err)
	}
}

// TestApplyPlanKeepsHintDeferrals: the optimal policy's plan puts a page whose countdown is longer
// than its new interval back on its phase, but not a page a trusted origin's hints deferred: that
// one waits for its sitemap. Before schema 24 the plan undid every deferral of the run.
func TestApplyPlanKeepsHintDeferrals(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	pages := []string{"https://a.example/long", "https://a.example/deferred"}
	var seeds []store.NewSeed
	for _, u := range pages {
		seeds = append(seeds, store.NewSeed{URL: u, Host: "a.example", FrMax: 1})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	run := func() int64 {
		t.Helper()
		id, err := db.BeginRun(ctx, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := run()
	for id, next := range map[int64]int{1: 30, 2: 1} {
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: id, RunID: first, FetchedAt: time.Now(), Status: 200, NextFr: next}); err != nil {
			t.Fatal(err)
		}
	}
	second := run()
	if err := db.DeferByHint(ctx, []int64{2}, 30); err != nil {
		t.Fatal(err)
	}
	if err := db.ApplyPlan(ctx, second, false, []store.PlanEntry{{Bucket: -1, FrMax: 3}}); err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]int{pages[0]: frequency.Phase(second, frequency.PageKey(pages[0]), 3), pages[1]: 30} {
		info, err := db.URLInfo(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if info.Fr != want {
			t.Errorf("%s: fr %d after the plan, want %d", u, info.Fr, want)
		}
	}
}

// TestHintFalseAlarmsMigration: an origin's false alarms, derived before schema 23 as disagreed −
// missed, are carried into their own column.
func TestHintFalseAlarmsMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	mustOpen(t, path, store.Options{MaxVersion: 22}).Close()
	raw := rawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO hosts (origin, domain, hints_agreed, hints_disagreed, hints_announced, hints_missed)
		VALUES ('https://a.example', 'a.example', 9, 5, 4, 2)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db := mustOpen(t, path, store.Options{})
	h, err := db.HostHints(ctx, "https://a.example")
	if err != nil {
		t.Fatal(err)
	}
	if h.Agreed != 9 || h.Disagreed != 5 || h.Announced != 4 || h.Missed != 2 || h.FalseAlarms != 3 {
		t.Errorf("after the migration: %+v, want 9 agreed, 5 disagreed, 4 announced, 2 missed, 3 false alarms", h)
	}
}

// TestHintDeferredMigration: schema 24 marks the pages deferred before it by the sign
// ResumeDeferred looked for, a countdown of more than twice the interval on a hinted page, so that
// an origin that loses its trust after the upgrade still gets them back.
func TestHintDeferredMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	old := mustOpen(t, path, store.Options{MaxVersion: 23})
	if _, err := old.AddSeeds(ctx, []store.NewSeed{
		{URL: "https://a.example/deferred", Host: "a.example", FrMax: 2},
		{URL: "https://a.example/phase", Host: "a.example", FrMax: 2},
	}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	raw := rawDB(t, path)
	for u, runs := range map[string]int{"https://a.example/deferred": 30, "https://a.example/phase": 3} {
		if _, err := raw.Exec(`UPDATE urls SET hint_lastmod = '2026-11-01', due_tick = (SELECT tick FROM countdown) + ? WHERE url = ?`, runs, u); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db := mustOpen(t, path, store.Options{})
	n, err := db.ResumeDeferred(ctx, "https://a.example", "a.example")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("resumed %d pages after the migration, want 1", n)
	}
	for u, want := range map[string]int{"https://a.example/deferred": 2, "https://a.example/phase": 3} {
		info, err := db.URLInfo(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if info.Fr != want {
			t.Errorf("%s: fr %d, want %d", u, info.Fr, want)
		}
	}
}
