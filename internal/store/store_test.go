package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func mustOpen(tb testing.TB, path string, opts store.Options) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// rawDB opens the file with the bare driver, to inspect or damage it behind the store's back.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func schemaOf(tb testing.TB, path string) string {
	tb.Helper()
	rows, err := rawDB(tb, path).Query(`SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, s string
		if err := rows.Scan(&typ, &name, &s); err != nil {
			tb.Fatal(err)
		}
		b.WriteString(typ + " " + name + ": " + s + "\n")
	}
	return b.String()
}

func fileHash(tb testing.TB, path string) [32]byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestOpenNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "strata.db")
	db := mustOpen(t, path, store.Options{})
	v, err := db.Version(t.Context())
	if err != nil || v != store.SchemaVersion() || v < 1 {
		t.Fatalf("Version = %d, %v; want %d", v, err, store.SchemaVersion())
	}
	var mode string
	if err := rawDB(t, path).QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestMigrationsFromEveryVersion builds a database at each earlier schema version, then opens it with
// the full binary and checks it ends with exactly the schema of a fresh database.
func TestMigrationsFromEveryVersion(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	mustOpen(t, fresh, store.Options{}).Close()
	want := schemaOf(t, fresh)
	for v := 0; v < store.SchemaVersion(); v++ {
		t.Run(fmt.Sprintf("from v%d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			if v == 0 {
				if err := os.WriteFile(path, nil, 0o644); err != nil { // an empty file is a version-0 database
					t.Fatal(err)
				}
			} else {
				mustOpen(t, path, store.Options{MaxVersion: v}).Close()
			}
			db := mustOpen(t, path, store.Options{})
			if got, _ := db.Version(t.Context()); got != store.SchemaVersion() {
				t.Errorf("version after migration = %d, want %d", got, store.SchemaVersion())
			}
			db.Close()
			if got := schemaOf(t, path); got != want {
				t.Errorf("schema after migrating from v%d differs from a fresh one:\n%s\nwant:\n%s", v, got, want)
			}
		})
	}
}

func TestOpenRefusesAndChangesNothing(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    error
	}{
		{"text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("url,level\nhttps://example.com/,2\n"), 0o644)
		}, store.ErrNotDatabase},
		{"short garbage", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("SQLite"), 0o644)
		}, store.ErrNotDatabase},
		{"newer schema", func(t *testing.T, path string) {
			mustOpen(t, path, store.Options{}).Close()
			raw := rawDB(t, path)
			if _, err := raw.Exec("PRAGMA user_version = 999"); err != nil {
				t.Fatal(err)
			}
			raw.Close()
		}, store.ErrNewerSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "strata.db")
			tt.prepare(t, path)
			before := fileHash(t, path)
			entries, _ := os.ReadDir(dir)
			db, err := store.Open(t.Context(), path, store.Options{})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded, want error")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error should be one line naming %s: %q", path, err)
			}
			if fileHash(t, path) != before {
				t.Error("the database file changed")
			}
			after, _ := os.ReadDir(dir)
			if len(after) != len(entries) {
				t.Errorf("files beside the database changed: %d entries before, %d after", len(entries), len(after))
			}
		})
	}
}

func TestSeeds(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	a := store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 1}
	b := store.NewSeed{URL: "https://b.example/x", Host: "b.example", Level: 0, FrMax: 3}

	got, err := db.AddSeeds(ctx, []store.NewSeed{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != store.SeedAdded || got[1] != store.SeedAdded {
		t.Errorf("first add: %v", got)
	}
	got, err = db.AddSeeds(ctx, []store.NewSeed{a})
	if err != nil || got[0] != store.SeedExists {
		t.Errorf("duplicate add: %v, %v; want SeedExists", got, err)
	}

	seeds, err := db.Seeds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(seeds) != 2 || seeds[0].URL != a.URL || seeds[1].FrMax != 3 || seeds[0].Fr != 0 || seeds[0].Pages != 1 {
		t.Fatalf("Seeds = %+v", seeds)
	}

	n, err := db.RemoveSeed(ctx, a.URL)
	if err != nil || n != 1 {
		t.Fatalf("RemoveSeed = %d, %v", n, err)
	}
	if _, err := db.RemoveSeed(ctx, a.URL); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second RemoveSeed: %v, want ErrNotFound", err)
	}
	st, err := db.Status(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.URLs["removed"] != 1 || st.URLs["active"] != 1 || st.Seeds != 1 {
		t.Errorf("after remove: %+v", st)
	}
	got, err = db.AddSeeds(ctx, []store.NewSeed{a})
	if err != nil || got[0] != store.SeedReactivated {
		t.Errorf("re-add: %v, %v; want SeedReactivated", got, err)
	}
}

func TestAddSeedsIsAtomic(t *testing.T) {
	ctx := t.Context()
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	ok := store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 1}
	bad := store.NewSeed{URL: "https://b.example/", Host: "b.example", Level: 1, FrMax: 0} // violates CHECK (fr_max >= 1)
	if _, err := db.AddSeeds(ctx, []store.NewSeed{ok, bad}); err == nil {
		t.Fatal("AddSeeds accepted fr_max 0")
	}
	seeds, err := db.Seeds(ctx)
	if err != nil || len(seeds) != 0 {
		t.Errorf("a failed AddSeeds left %d seeds (%v)", len(seeds), err)
	}
}

func TestStatusAndRuns(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 15, 0, 0, time.UTC)
	db := mustOpen(t, filepath.Join(t.TempDir(), "s.db"), store.Options{Now: func() time.Time { return now }})
	if _, err := db.AddSeeds(ctx, []store.NewSeed{
		{URL: "https://a.example/", Host: "a.example", Level: 1, FrMax: 1},
		{URL: "https://a.example/b", Host: "a.example", Level: 1, FrMax: 1},
		{URL: "http://c.example:8080/", Host: "c.example:8080", Level: 1, FrMax: 1},
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 7; i++ {
		start := now.Add(time.Duration(i) * 24 * time.Hour)
		id, err := db.BeginRun(ctx, start, time.Duration(i)*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, store.Run{ID: id, EndedAt: start.Add(90 * time.Second), Status: "completed",
			Fetched: i, Changed: 1, Bytes: 1000, CrawlTime: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.Status(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.URLs["active"] != 3 || st.DueNextRun != 3 || st.Hosts != 2 || st.Seeds != 3 {
		t.Errorf("Status = %+v", st)
	}
	if len(st.Runs) != 5 || st.Runs[0].ID != 7 || st.Runs[0].Fetched != 6 || st.Runs[0].StartOffset != 6*time.Minute ||
		st.Runs[0].Duration(now) != 90*time.Second || st.Runs[0].Status != "completed" {
		t.Errorf("Runs = %+v", st.Runs)
	}
	if err := db.FinishRun(ctx, store.Run{ID: 99, Status: "completed"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FinishRun of a missing run: %v, want ErrNotFound", err)
	}
}

// TestOpenConcurrently opens one database from several connections pools at once, as two strata
// commands started together do: new, then at an older schema. Every open must succeed with the whole
// schema, each migration applied once, and no temporary file left behind.
func TestOpenConcurrently(t *testing.T) {
	for _, older := range []int{0, 3} {
		t.Run(fmt.Sprintf("from version %d", older), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "strata.db")
			if older > 0 {
				mustOpen(t, path, store.Options{MaxVersion: older}).Close()
			}
			const n = 4
			errs := make(chan error, n)
			var start sync.WaitGroup
			start.Add(1)
			for range n {
				go func() {
					start.Wait()
					db, err := store.Open(t.Context(), path, store.Options{})
					if err == nil {
						var v int
						if v, err = db.Version(t.Context()); err == nil && v != store.SchemaVersion() {
							err = fmt.Errorf("schema version %d, want %d", v, store.SchemaVersion())
						}
						db.Close()
					}
					errs <- err
				}()
			}
			start.Done()
			for range n {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".new-") {
					t.Errorf("temporary file left behind: %s", e.Name())
				}
			}
		})
	}
}
