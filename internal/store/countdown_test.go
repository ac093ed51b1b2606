package store_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// dueTickSchema is migrations/0013_due_tick.sql: fr stored as the tick it counts down to.
const dueTickSchema = 13

// TestDueTickMigration writes countdowns the way schema 12 kept them (fr, decremented every run),
// migrates, and checks that every page reports the same fr and comes due in the same run as the
// paper's countdown would have made it, including pages crawled in between.
func TestDueTickMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	mustOpen(t, path, store.Options{MaxVersion: dueTickSchema - 1}).Close()
	raw := rawDB(t, path)
	frs := []int{0, 1, 2, 3, 5}
	for i, fr := range frs {
		if _, err := raw.Exec(`INSERT INTO urls (id, url, host, level, fr, fr_max, added_at)
			VALUES (?, ?, 'a.example', 0, ?, 2, '2025-01-01T00:00:00.000Z')`, i+1, fmt.Sprintf("https://a.example/%d", fr), fr); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db := mustOpen(t, path, store.Options{})
	for _, fr := range frs {
		info, err := db.URLInfo(ctx, fmt.Sprintf("https://a.example/%d", fr))
		if err != nil || info.Fr != fr {
			t.Fatalf("after the migration, fr %d reads as %+v, %v", fr, info, err)
		}
	}
	// The paper's countdown, page by page: fr k comes due in run max(k, 1), and a crawl sets
	// fr = fr_max = 2, so each is due again every other run.
	want := map[int][]int{0: {1, 3, 5}, 1: {1, 3, 5}, 2: {2, 4, 6}, 3: {3, 5}, 5: {5}}
	got := map[int][]int{}
	for run := 1; run <= 6; run++ {
		due, waiting, err := db.Countdown(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if due+waiting != len(frs) {
			t.Fatalf("run %d: %d due + %d waiting, want %d pages", run, due, waiting, len(frs))
		}
		for {
			d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: int64(run)})
			if err != nil {
				break
			}
			var fr int
			fmt.Sscanf(d.URL, "https://a.example/%d", &fr)
			got[fr] = append(got[fr], run)
			if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, Status: 200, NextFr: 2}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for fr, runs := range want {
		if !equal(got[fr], runs) {
			t.Errorf("page with fr %d before the migration: due in runs %v, want %v", fr, got[fr], runs)
		}
	}
}

// TestCountdownReports checks what the store says about fr between runs: URLInfo's fr counts down
// run by run, a page kept out of the crawl (not active) while its tick passes is due as soon as it is
// active again, and the status's "due next run" counts the pages with fr <= 1.
func TestCountdownReports(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{
		{URL: "https://a.example/", Host: "a.example", FrMax: 3},
		{URL: "https://b.example/", Host: "b.example", FrMax: 4},
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, host := range []string{"a.example", "b.example"} {
		d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{host}, Run: 1})
		if err != nil {
			t.Fatal(err)
		}
		ids[host] = d.ID
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, Status: 200, NextFr: d.FrMax}); err != nil {
			t.Fatal(err)
		}
	}
	fr := func(url string) int {
		t.Helper()
		info, err := db.URLInfo(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		return info.Fr
	}
	if a, b := fr("https://a.example/"), fr("https://b.example/"); a != 3 || b != 4 {
		t.Fatalf("after the crawl: fr %d and %d, want fr_max 3 and 4", a, b)
	}
	// b is set aside for its whole interval and more.
	if err := db.SetState(ctx, ids["b.example"], "blocked"); err != nil {
		t.Fatal(err)
	}
	for run, wantA := range []int{2, 1} {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		if got := fr("https://a.example/"); got != wantA {
			t.Errorf("after %d countdowns: fr %d, want %d", run+1, got, wantA)
		}
	}
	st, err := db.Status(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.DueNextRun != 1 {
		t.Errorf("due next run: %d, want 1 (a, fr 1)", st.DueNextRun)
	}
	for range 4 {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetState(ctx, ids["b.example"], "active"); err != nil {
		t.Fatal(err)
	}
	hosts, err := db.DueHosts(ctx)
	if err != nil || hosts["b.example"] != 1 {
		t.Fatalf("once active again: due hosts %v, %v; want b due", hosts, err)
	}
	d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"b.example"}, Run: 8})
	if err != nil || d.ID != ids["b.example"] {
		t.Fatalf("NextDue = %+v, %v; want b", d, err)
	}
}

// TestDueTable walks the store through everything that makes a URL due or not — the countdown,
// crawls with every kind of next fr, new and rediscovered URLs, priorities, states, immediate
// fetches, the selective rule, hints, release days, and a user's own SQL — and after each step
// checks that the due table holds exactly the active URLs whose tick has come, with their keys.
func TestDueTable(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	db := mustOpen(t, path, store.Options{})
	raw := rawDB(t, path)
	check := func(step string) {
		t.Helper()
		var missing, extra, due int
		const want = `SELECT host, prio, level, id FROM urls WHERE state = 'active' AND due_tick <= (SELECT tick FROM countdown)
			AND NOT EXISTS (SELECT 1 FROM trap_holds WHERE url_id = urls.id AND released = 0)`
		const have = `SELECT host, prio, level, id FROM due`
		if err := raw.QueryRow(`SELECT count(*) FROM (` + want + ` EXCEPT ` + have + `)`).Scan(&missing); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRow(`SELECT count(*) FROM (` + have + ` EXCEPT ` + want + `)`).Scan(&extra); err != nil {
			t.Fatal(err)
		}
		raw.QueryRow(`SELECT count(*) FROM due`).Scan(&due)
		if missing != 0 || extra != 0 {
			t.Fatalf("after %s: due table lacks %d due URLs and holds %d others (%d rows)", step, missing, extra, due)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check("opening")
	_, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 2},
		{URL: "https://b.example/", Host: "b.example", Level: 1, FrMax: 1}})
	must(err)
	check("adding seeds")
	var found []store.NewURL
	for i := range 12 {
		found = append(found, store.NewURL{URL: fmt.Sprintf("https://a.example/%d", i), Host: "a.example", Level: 1, FrMax: 1 + i%4, ParentID: 1, RootID: 1})
	}
	_, err = db.Discover(ctx, found)
	must(err)
	check("discovering URLs")
	runStart := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for run := 1; run <= 5; run++ {
		_, _, err := db.Countdown(ctx)
		must(err)
		check(fmt.Sprintf("countdown %d", run))
		if run == 2 {
			_, err := db.Prioritize(ctx, runStart, 1, nil)
			must(err)
			check("prioritizing")
		}
		for k := 0; ; k++ {
			d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example", "b.example"}, Run: int64(run)})
			if err != nil {
				break
			}
			next := d.FrMax
			if k%5 == 4 {
				next = 1 // a retry next run
			}
			rec := store.FetchRecord{URLID: d.ID, FetchedAt: runStart, Status: 200, NextFr: next}
			if k%7 == 6 {
				rec.State = "gone"
			}
			must(db.RecordFetch(ctx, rec))
		}
		check(fmt.Sprintf("crawl %d", run))
	}
	must(db.SetState(ctx, 3, "active"))
	must(db.SetState(ctx, 4, "blocked"))
	check("state changes")
	_, err = db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/5", Host: "a.example"}, {URL: "https://c.example/", Host: "c.example"}})
	must(err)
	check("an immediate fetch")
	_, err = db.ForceChildren(ctx, 1, runStart.Add(time.Hour))
	must(err)
	check("forcing a hub's children")
	_, err = db.SkipSubtree(ctx, 1, 6, 3, func([]store.Record) bool { return true })
	must(err)
	check("skipping a subtree")
	must(db.DeferByHint(ctx, []int64{5, 6}, 3))
	check("deferring on hints")
	must(db.SetDue(ctx, []int64{7, 8}, []int64{9, 10}))
	check("release days")
	for _, q := range []string{
		`UPDATE urls SET level = level + 1 WHERE id % 2 = 0`,
		`UPDATE urls SET due_tick = 0 WHERE id % 3 = 0`,
		`DELETE FROM urls WHERE id = 11 AND NOT EXISTS (SELECT 1 FROM fetches WHERE url_id = 11)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		check(q)
	}
	// A user moving the clock on by hand: the URLs whose tick it passed are due from the next countdown.
	if _, err := raw.Exec(`UPDATE countdown SET tick = tick + 3`); err != nil {
		t.Fatal(err)
	}
	_, _, err = db.Countdown(ctx)
	must(err)
	check("the countdown after the clock moved")
}

// TestRunHistoriesDenseAndSparse checks that RunHistories gives exactly the run's pages whether they
// are dense in the table (read as a range, skipping the others) or sparse (read by id).
func TestRunHistoriesDenseAndSparse(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	var found []store.NewURL
	for i := range 100 {
		found = append(found, store.NewURL{URL: fmt.Sprintf("https://a.example/%d", i), Host: "a.example", FrMax: 1})
	}
	if _, err := db.Discover(ctx, found); err != nil {
		t.Fatal(err)
	}
	for _, crawled := range [][]int64{{1, 2, 3}, {1, 2, 4, 5, 7}, {1, 50, 100}, {3}} {
		run, err := db.BeginRun(ctx, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range crawled {
			if err := db.RecordFetch(ctx, store.FetchRecord{URLID: id, RunID: run, Status: 200, NextFr: 1}); err != nil {
				t.Fatal(err)
			}
		}
		var got []int64
		if err := db.RunHistories(ctx, run, 10, func(h store.PageHistory) error {
			got = append(got, h.URLID)
			if n := len(h.Records); n == 0 || h.Records[n-1].Run != run {
				t.Errorf("run %d, URL %d: records %v end elsewhere", run, h.URLID, h.Records)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(crawled) {
			t.Errorf("run %d: histories of %v, want %v", run, got, crawled)
		}
	}
}

// TestApplyPlanPhases: the phases ApplyPlan writes in SQL are frequency.Phase of each URL's
// frequency.PageKey, the rule the planner documents and tests.
func TestApplyPlanPhases(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seeds []store.NewSeed
	for i := range 50 {
		seeds = append(seeds, store.NewSeed{URL: fmt.Sprintf("https://a.example/p%d", i), Host: "a.example", FrMax: 1})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	run, _ := db.BeginRun(ctx, time.Now(), 0)
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 50; id++ {
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: id, RunID: run, FetchedAt: time.Now(), Status: 200, NextFr: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.ApplyPlan(ctx, run, false, []store.PlanEntry{{Bucket: -1, FrMax: 9}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		info, err := db.URLInfo(ctx, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if want := frequency.Phase(run, frequency.PageKey(s.URL), 9); info.FrMax != 9 || info.Fr != want {
			t.Errorf("%s: fr %d, fr_max %d; want fr %d (frequency.Phase), fr_max 9", s.URL, info.Fr, info.FrMax, want)
		}
	}
}
