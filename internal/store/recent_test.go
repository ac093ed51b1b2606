package store_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// fetchesHistories is RunHistories as it was before schema 12, read with the bare driver: the last
// limit records of every page that got a response in run, ranked from the fetches table. It is the
// reference the rows' recent records must reproduce.
func fetchesHistories(tb testing.TB, raw *sql.DB, run int64, limit int) []store.PageHistory {
	tb.Helper()
	rows, err := raw.Query(`WITH pages AS (
			SELECT DISTINCT url_id FROM fetches WHERE run_id = ?1 AND status > 0),
		ranked AS (
			SELECT f.url_id, coalesce(f.run_id, 0) AS run_id, f.changed, NOT (f.status = 200 OR f.not_modified) AS failed, f.id,
				row_number() OVER (PARTITION BY f.url_id ORDER BY f.id DESC) AS rn
			FROM fetches f JOIN pages p ON p.url_id = f.url_id)
		SELECT r.url_id, u.url, u.fr_max, u.level, u.threshold, coalesce(u.child_ratio, -1), r.run_id, r.changed, r.failed
		FROM ranked r JOIN urls u ON u.id = r.url_id
		WHERE r.rn <= ?2 ORDER BY r.url_id, r.id`, run, limit)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []store.PageHistory
	for rows.Next() {
		var h store.PageHistory
		var r store.Record
		if err := rows.Scan(&h.URLID, &h.URL, &h.FrMax, &h.Level, &h.Threshold, &h.ChildRatio, &r.Run, &r.Changed, &r.Failed); err != nil {
			tb.Fatal(err)
		}
		if n := len(out); n > 0 && out[n-1].URLID == h.URLID {
			out[n-1].Records = append(out[n-1].Records, r)
			continue
		}
		h.Records = []store.Record{r}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func collectHistories(tb testing.TB, db *store.DB, run int64, limit int) []store.PageHistory {
	tb.Helper()
	var out []store.PageHistory
	err := db.RunHistories(tb.Context(), run, limit, func(h store.PageHistory) error {
		out = append(out, h)
		return nil
	})
	if err != nil {
		tb.Fatalf("RunHistories(run %d, limit %d): %v", run, limit, err)
	}
	return out
}

// historyLimits are below, at and above store.RecentCap, and the configuration's maximum.
var historyLimits = []int{1, 10, store.RecentCap, store.RecentCap + 1, 1000}

// compareHistories checks RunHistories against the fetches table for every run and limit.
func compareHistories(t *testing.T, db *store.DB, raw *sql.DB, runs []int64) {
	t.Helper()
	pages := 0
	for _, limit := range historyLimits {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			for _, run := range runs {
				want := fetchesHistories(t, raw, run, limit)
				got := collectHistories(t, db, run, limit)
				pages += len(want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("run %d: RunHistories differs from the fetches table:\n got %+v\nwant %+v", run, got, want)
				}
			}
		})
	}
	if pages == 0 {
		t.Fatal("no run crawled any page: the comparison compared nothing")
	}
}

// randomRecord is a fetch of page id in run (0: outside a run) with a random outcome: answered,
// not modified, redirected, refused, no response or a server error, changed or not.
func randomRecord(rng *rand.Rand, id, run int64, at time.Time) store.FetchRecord {
	statuses := []int{200, 200, 200, 304, 301, 404, 500, 0}
	r := store.FetchRecord{URLID: id, RunID: run, FetchedAt: at, Status: statuses[rng.IntN(len(statuses))],
		Changed: rng.IntN(3) == 0, NextFr: 1 + rng.IntN(5)}
	r.NotModified = r.Status == 304 || rng.IntN(10) == 0
	return r
}

// TestRunHistoriesFromRows records a random history through RecordFetch — pages fetched several
// times a run or not at all, fetches outside any run (NULL run id), failures of every kind, and
// more records than a row keeps — and checks that RunHistories, which reads the rows' recent
// records up to store.RecentCap and the fetches table above it, returns what the fetches table
// holds.
func TestRunHistoriesFromRows(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	db := mustOpen(t, path, store.Options{})
	raw := rawDB(t, path)
	rng := rand.New(rand.NewPCG(8, 12))

	var urls []store.NewURL
	for i := range 20 {
		urls = append(urls, store.NewURL{URL: fmt.Sprintf("https://h%d.example/p%d", i%3, i), Host: fmt.Sprintf("h%d.example", i%3), FrMax: 1})
	}
	ids, err := db.Immediate(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE urls SET level = id % 3, threshold = id / 40.0, child_ratio = CASE WHEN id % 2 = 0 THEN id / 40.0 END`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var runs []int64
	// What was recorded, to check the reference query itself: each page's records, and per run
	// the pages that got a response in it.
	recorded := map[int64][]store.Record{}
	answered := map[int64]map[int64]bool{}
	for range 12 {
		run, err := db.BeginRun(ctx, at, 0)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
		for i, id := range ids {
			fetches := rng.IntN(3) // 0, 1 or 2 fetches in this run
			if i < 2 {
				fetches = 6 // these pages outgrow the rows' store.RecentCap records
			}
			for range fetches {
				rec := randomRecord(rng, id, run, at)
				if rng.IntN(8) == 0 {
					rec.RunID = 0 // strata fetch, outside any run
				}
				if err := db.RecordFetch(ctx, rec); err != nil {
					t.Fatal(err)
				}
				recorded[id] = append(recorded[id], store.Record{Run: rec.RunID, Changed: rec.Changed, Failed: !(rec.Status == 200 || rec.NotModified)})
				if rec.RunID != 0 && rec.Status > 0 {
					if answered[rec.RunID] == nil {
						answered[rec.RunID] = map[int64]bool{}
					}
					answered[rec.RunID][id] = true
				}
				at = at.Add(time.Second)
			}
		}
		at = at.Add(time.Hour)
	}
	var most int
	if err := raw.QueryRow(`SELECT max(n) FROM (SELECT count(*) AS n FROM fetches GROUP BY url_id)`).Scan(&most); err != nil || most <= store.RecentCap {
		t.Fatalf("the busiest page has %d fetches (%v); want more than %d", most, err, store.RecentCap)
	}
	for _, run := range runs {
		for _, limit := range []int{10, 1000} {
			var want []int64
			for _, id := range ids {
				if answered[run][id] {
					want = append(want, id)
				}
			}
			got := fetchesHistories(t, raw, run, limit)
			if len(got) != len(want) {
				t.Fatalf("reference query, run %d: %d pages, recorded %d", run, len(got), len(want))
			}
			for i, h := range got {
				recs := recorded[h.URLID]
				if h.URLID != want[i] || !reflect.DeepEqual(h.Records, recs[max(0, len(recs)-limit):]) {
					t.Fatalf("reference query, run %d, limit %d: page %d %+v; recorded page %d %+v",
						run, limit, h.URLID, h.Records, want[i], recs[max(0, len(recs)-limit):])
				}
			}
		}
	}
	compareHistories(t, db, raw, append(runs, runs[len(runs)-1]+1)) // and a run that crawled nothing
}

// TestRecentMigration writes a fetch history into a database of the schema before urls.recent with the bare driver —
// with NULL run ids, failures, pages with more records than a row keeps, a page never fetched, and
// run ids large enough to need every byte of the encoding — migrates it, and checks that
// RunHistories then agrees with the fetches table, before and after further fetches are recorded.
func TestRecentMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	mustOpen(t, path, store.Options{MaxVersion: recentSchema - 1}).Close()
	raw := rawDB(t, path)
	rng := rand.New(rand.NewPCG(12, 8))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	const pages = 20
	for i := 1; i <= pages; i++ {
		var childRatio any // NULL: not a judged hub
		if i%2 == 0 {
			childRatio = float64(i) / 30
		}
		exec(`INSERT INTO urls (id, url, host, level, fr, fr_max, added_at, threshold, child_ratio)
			VALUES (?, ?, 'a.example', ?, 0, ?, '2025-01-01T00:00:00.000Z', ?, ?)`,
			i, fmt.Sprintf("https://a.example/%d", i), i%3, 1+i%5, float64(i)/20, childRatio)
	}
	// Run ids grow by 1, by thousands and by 2^40, up to just below the encoding's bound (2^59),
	// so that zigzagged deltas take 1 to 9 varint bytes.
	runs := []int64{1, 2, 3, 5000, 5001, 1 << 40, 1<<40 + 1, 1 << 58, 1<<58 + 7}
	for _, run := range runs {
		exec(`INSERT INTO runs (id, started_at, status) VALUES (?, '2025-01-02T00:00:00.000Z', 'completed')`, run)
	}
	for _, run := range runs {
		for id := 1; id < pages; id++ { // page `pages` is never fetched
			n := rng.IntN(3)
			if id <= 2 {
				n = 9 // 81 records: more than a row keeps
			}
			for range n {
				rec := randomRecord(rng, int64(id), run, time.Time{})
				var runID any = run
				if rng.IntN(6) == 0 {
					runID = nil
				}
				exec(`INSERT INTO fetches (url_id, run_id, fetched_at, status, changed, not_modified) VALUES (?, ?, '2025-01-02T00:00:00.000Z', ?, ?, ?)`,
					id, runID, rec.Status, rec.Changed, rec.NotModified)
			}
		}
	}

	db := mustOpen(t, path, store.Options{})
	var unfetched int
	if err := raw.QueryRow(`SELECT count(*) FROM urls WHERE recent IS NULL`).Scan(&unfetched); err != nil || unfetched != 1 {
		t.Errorf("%d rows without recent records (%v); want 1, the page never fetched", unfetched, err)
	}
	t.Run("migrated", func(t *testing.T) { compareHistories(t, db, raw, runs) })

	// The migration's blobs must take appends from RecordFetch.
	run, err := db.BeginRun(ctx, time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), 0)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= pages; id++ {
		rec := randomRecord(rng, id, run, time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC))
		rec.Status = 200
		if err := db.RecordFetch(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("appended", func(t *testing.T) { compareHistories(t, db, raw, append(runs, run)) })
}

// TestRecentDamaged: a row whose recent records do not decode makes RunHistories and RecordFetch
// fail, naming the URL, rather than feed the policy a wrong history; nothing is recorded.
func TestRecentDamaged(t *testing.T) {
	tests := []struct {
		name string
		blob []byte
	}{
		{"unknown format", []byte{2, 8}},
		{"truncated varint", []byte{1, 8, 0x80}},
		{"run below zero", []byte{1, 4}}, // first record: zigzag 1 = delta -1
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "strata.db")
			db := mustOpen(t, path, store.Options{})
			raw := rawDB(t, path)
			ids, err := db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/", Host: "a.example", FrMax: 1}})
			if err != nil {
				t.Fatal(err)
			}
			run, err := db.BeginRun(ctx, time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), 0)
			if err != nil {
				t.Fatal(err)
			}
			rec := store.FetchRecord{URLID: ids[0], RunID: run, FetchedAt: time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), Status: 200, NextFr: 1}
			if err := db.RecordFetch(ctx, rec); err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`UPDATE urls SET recent = ? WHERE id = ?`, tt.blob, ids[0]); err != nil {
				t.Fatal(err)
			}
			err = db.RunHistories(ctx, run, 10, func(store.PageHistory) error { return nil })
			if err == nil {
				t.Error("RunHistories read a damaged row without an error")
			}
			if err := db.RecordFetch(ctx, rec); err == nil {
				t.Error("RecordFetch appended to a damaged row without an error")
			}
			var n int
			if err := raw.QueryRow(`SELECT count(*) FROM fetches`).Scan(&n); err != nil || n != 1 {
				t.Errorf("%d fetches (%v); want 1: the failed RecordFetch must record nothing", n, err)
			}
		})
	}
}

// TestRunHistoriesWritesBetween reads a run of more pages than RunHistories reads at once while
// writing each page's new interval from fn, as recalc does: every page comes exactly once, in id
// order, with the interval it had before the recalculation, and with the records the fetches table
// holds.
func TestRunHistoriesWritesBetween(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	mustOpen(t, path, store.Options{MaxVersion: recentSchema - 1}).Close()
	raw := rawDB(t, path)
	const pages = 2345 // two full reads of 1,000 and a partial one
	for _, q := range []string{
		`INSERT INTO runs (id, started_at, status) VALUES (1, '2025-01-01T00:00:00.000Z', 'completed'),
			(2, '2025-01-02T00:00:00.000Z', 'completed')`,
		// Every third page is left out of run 2; fr_max is 1 + id % 7.
		`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2345)
		INSERT INTO urls (id, url, host, level, fr, fr_max, added_at)
		SELECT i, 'https://a.example/' || i, 'a.example', 0, 0, 1 + i % 7, '2025-01-01T00:00:00.000Z' FROM s`,
		`INSERT INTO fetches (url_id, run_id, fetched_at, status, changed)
		SELECT id, 1, '2025-01-01T00:00:00.000Z', 200, id % 2 FROM urls`,
		`INSERT INTO fetches (url_id, run_id, fetched_at, status, changed)
		SELECT id, 2, '2025-01-02T00:00:00.000Z', CASE WHEN id % 5 = 0 THEN 500 ELSE 200 END, id % 3 = 0 FROM urls WHERE id % 3 <> 0`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	db := mustOpen(t, path, store.Options{})
	want := fetchesHistories(t, raw, 2, 10)
	if len(want) != pages-pages/3 {
		t.Fatalf("reference: %d pages in run 2, want %d", len(want), pages-pages/3)
	}
	var got []store.PageHistory
	var batch []store.FrMaxUpdate
	err := db.RunHistories(ctx, 2, 10, func(h store.PageHistory) error {
		got = append(got, h)
		if batch = append(batch, store.FrMaxUpdate{URLID: h.URLID, FrMax: 99, Rate: -1}); len(batch) < 100 {
			return nil
		}
		err := db.SetFrMax(ctx, batch)
		batch = batch[:0]
		return err
	})
	if err == nil {
		err = db.SetFrMax(ctx, batch)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("RunHistories gave %d pages, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("page %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	var written int
	if err := raw.QueryRow(`SELECT count(*) FROM urls WHERE fr_max = 99`).Scan(&written); err != nil || written != len(want) {
		t.Errorf("%d intervals written from fn (%v), want %d", written, err, len(want))
	}
}

// TestSetFrMaxRejectsBadInterval checks that an interval below one run is an error that names its
// URL and writes nothing of the batch: SetFrMax's statements ignore constraint failures (so that
// SQLite keeps no statement journal for them), so it must check the values itself.
func TestSetFrMaxRejectsBadInterval(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	db := mustOpen(t, path, store.Options{})
	raw := rawDB(t, path)
	if _, err := raw.Exec(`INSERT INTO urls (id, url, host, level, due_tick, fr_max, added_at) VALUES
		(1, 'https://a.example/1', 'a.example', 0, 3, 2, '2025-01-01T00:00:00.000Z'),
		(2, 'https://a.example/2', 'a.example', 0, 3, 2, '2025-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		frMax int
	}{{"zero", 0}, {"negative", -3}} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.SetFrMax(ctx, []store.FrMaxUpdate{
				{URLID: 1, FrMax: 5, Was: 2, Rate: 0.5, Bucket: 9},
				{URLID: 2, FrMax: tc.frMax, Was: 2, Rate: 0.5, Bucket: 9},
			})
			if err == nil || !strings.Contains(err.Error(), "URL 2") {
				t.Fatalf("SetFrMax with fr_max %d: error %v, want one naming URL 2", tc.frMax, err)
			}
			var changed int
			if err := raw.QueryRow(`SELECT count(*) FROM urls WHERE fr_max <> 2 OR due_tick <> 3 OR change_rate IS NOT NULL`).Scan(&changed); err != nil || changed != 0 {
				t.Errorf("%d rows changed (%v), want none", changed, err)
			}
		})
	}
	// The same batch with valid intervals is written whole, the trigger-backed restart included.
	if err := db.SetFrMax(ctx, []store.FrMaxUpdate{
		{URLID: 1, FrMax: 5, Was: 2, Rate: 0.5, Bucket: 9},
		{URLID: 2, FrMax: 2, Was: 2, Rate: 0.25, Bucket: 4},
	}); err != nil {
		t.Fatal(err)
	}
	var written int
	if err := raw.QueryRow(`SELECT count(*) FROM urls WHERE (id = 1 AND fr_max = 5 AND rate_bucket = 9) OR (id = 2 AND fr_max = 2 AND rate_bucket = 4)`).Scan(&written); err != nil || written != 2 {
		t.Errorf("%d of 2 intervals written (%v)", written, err)
	}
}

// TestRecentRecordFields: each field of a fetch that makes a record reaches the row's recent
// records as the fetches table has it: run, changed, failed (no usable answer), dated (only for a
// usable answer) and the dated age, in whole minutes.
func TestRecentRecordFields(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	ids, err := db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/", Host: "a.example", FrMax: 1}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	fetches := []store.FetchRecord{
		{Status: 200, Changed: true, Dated: true, DatedAge: 90*time.Minute + 30*time.Second},
		{Status: 500, Dated: true, DatedAge: time.Hour},
		{NotModified: true, Status: 304, Dated: true, DatedAge: 3 * time.Hour},
		{Status: 200},
	}
	want := []store.Record{
		{Changed: true, Dated: true, Age: 90 * time.Minute},
		{Failed: true},
		{Dated: true, Age: 3 * time.Hour},
		{},
	}
	var run int64
	for i, f := range fetches {
		if run, err = db.BeginRun(ctx, at.Add(time.Duration(i)*time.Hour), 0); err != nil {
			t.Fatal(err)
		}
		want[i].Run = run
		f.URLID, f.RunID, f.FetchedAt, f.NextFr = ids[0], run, at.Add(time.Duration(i)*time.Hour), 1
		if err := db.RecordFetch(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	var got []store.Record
	if err := db.RunHistories(ctx, run, store.RecentCap, func(h store.PageHistory) error {
		got = h.Records
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recent records\n got %+v\nwant %+v", got, want)
	}
}
