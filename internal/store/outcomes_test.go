package store_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/store"
)

// TestOutcomesMigration: runs recorded before runs.new counted a page's first version as
// unchanged; the migration rebuilds every run's counts from its fetches with the one definition,
// which RunOutcomes gives too.
func TestOutcomesMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "strata.db")
	v := store.MigrationVersion("_outcomes_snapshot.sql")
	if v == 0 {
		t.Fatal("no _outcomes_snapshot.sql migration")
	}
	mustOpen(t, path, store.Options{MaxVersion: v - 1}).Close()
	raw := rawDB(t, path)
	for _, q := range []string{
		`INSERT INTO urls (id, url, host, level, fr_max, added_at) VALUES
			(1, 'https://a.example/1', 'a.example', 0, 1, '2026-01-01T00:00:00.000Z'),
			(2, 'https://a.example/2', 'a.example', 0, 1, '2026-01-01T00:00:00.000Z'),
			(3, 'https://a.example/3', 'a.example', 0, 1, '2026-01-01T00:00:00.000Z')`,
		// As the crawl counted them before: first versions among the unchanged.
		`INSERT INTO runs (id, started_at, status, fetched, changed, unchanged, errors) VALUES
			(1, '2026-01-01T00:00:00.000Z', 'completed', 3, 0, 3, 0),
			(2, '2026-01-02T00:00:00.000Z', 'completed', 4, 1, 2, 0)`,
		`INSERT INTO fetches (id, url_id, run_id, fetched_at, status, changed, not_modified, archive_path, error) VALUES
			(1, 1, 1, '2026-01-01T00:00:01.000Z', 200, 0, 0, 'r1/1', NULL),
			(2, 2, 1, '2026-01-01T00:00:02.000Z', 200, 0, 0, 'r1/2', NULL),
			(3, 3, 1, '2026-01-01T00:00:03.000Z', 200, 0, 0, 'r1/3', NULL),
			(4, 1, 2, '2026-01-02T00:00:01.000Z', 200, 0, 0, NULL, NULL),
			(5, 2, 2, '2026-01-02T00:00:02.000Z', 200, 0, 0, 'r2/2', NULL),
			(6, 3, 2, '2026-01-02T00:00:03.000Z', 200, 1, 0, 'r2/3', NULL),
			(7, 1, 2, '2026-01-02T00:00:04.000Z', 503, 0, 0, NULL, 'HTTP 503')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db := mustOpen(t, path, store.Options{})
	runs, err := db.RecentRuns(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][5]int{ // fetched, new, changed, unchanged, errors
		1: {3, 3, 0, 0, 0},
		2: {4, 0, 1, 2, 1},
	}
	for _, r := range runs {
		if got := [5]int{r.Fetched, r.New, r.Changed, r.Unchanged, r.Errors}; got != want[r.ID] {
			t.Errorf("run %d after the migration: fetched, new, changed, unchanged, errors = %v, want %v", r.ID, got, want[r.ID])
		}
		c, err := db.RunOutcomes(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := [5]int{c.Fetched, c.New, c.Changed, c.Unchanged, c.Errors}; got != want[r.ID] {
			t.Errorf("RunOutcomes(%d) = %+v, disagrees with the migration", r.ID, c)
		}
	}
	c, _ := db.RunOutcomes(ctx, 2)
	if c.Trivial != 1 {
		t.Errorf("run 2: %d trivial, want 1 (new bytes, same words)", c.Trivial)
	}
	vs := map[string]outcome.Kind{}
	db.EachVersion(ctx, store.VersionFilter{RunID: 2}, func(v store.Version) error {
		vs[v.URL] = v.Kind()
		return nil
	})
	if vs["https://a.example/2"] != outcome.Unchanged || vs["https://a.example/3"] != outcome.Changed {
		t.Errorf("versions of run 2: %v", vs)
	}
}
