package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestOpenReadOnlyRefuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		setup func(path string)
		want  error
	}{
		{"missing", func(string) {}, fs.ErrNotExist},
		{"empty", func(p string) { os.WriteFile(p, nil, 0o644) }, store.ErrNotDatabase},
		{"not SQLite", func(p string) { os.WriteFile(p, []byte("hello, world, this is text"), 0o644) }, store.ErrNotDatabase},
		{"older schema", func(p string) { mustOpen(t, p, store.Options{MaxVersion: 3}).Close() }, store.ErrOldSchema},
		{"newer schema", func(p string) {
			mustOpen(t, p, store.Options{}).Close()
			if _, err := rawDB(t, p).Exec("PRAGMA user_version = 999"); err != nil {
				t.Fatal(err)
			}
		}, store.ErrNewerSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".db")
			tt.setup(path)
			before, _ := os.ReadFile(path)
			db, err := store.OpenReadOnly(t.Context(), path)
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("OpenReadOnly: %v, want %v", err, tt.want)
			}
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Error("OpenReadOnly changed the file")
			}
			if tt.name == "missing" {
				if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Error("OpenReadOnly created the file")
				}
			}
		})
	}
}

// TestOpenReadOnlyBesideAWriter reads while another connection holds a write transaction open in
// WAL mode, as strata serve does during a crawl: the reader sees the last commit, never blocks, and
// sees the writer's rows once they commit.
func TestOpenReadOnlyBesideAWriter(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	w := mustOpen(t, path, store.Options{})
	if _, err := w.BeginRun(ctx, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	ro, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()

	raw := rawDB(t, path)
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO runs (started_at) VALUES ('2026-11-22T03:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	runs, err := ro.Runs(rctx, 0, 10)
	cancel()
	if err != nil || len(runs) != 1 {
		t.Fatalf("read during a write transaction: %d runs, %v; want the 1 committed", len(runs), err)
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	if runs, err := ro.Runs(ctx, 0, 10); err != nil || len(runs) != 2 {
		t.Fatalf("read after the commit: %d runs, %v; want 2", len(runs), err)
	}
	if _, err := w.BeginRun(ctx, time.Now(), 0); err != nil {
		t.Fatalf("the writer is blocked by the reader: %v", err)
	}
}

func TestTree(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", FrMax: 1})
	var urls []store.NewURL
	for _, p := range []string{"about", "docs/", "docs/a", "docs/b/c", "docs/b/d", "docs0", "news?id=3", "x/y/z", "z"} {
		urls = append(urls, store.NewURL{URL: "https://a.example/" + p, Host: "a.example", FrMax: 1})
	}
	urls = append(urls, store.NewURL{URL: "https://b.example/other", Host: "b.example", FrMax: 1})
	if _, err := db.AddURLs(ctx, urls, "active"); err != nil {
		t.Fatal(err)
	}
	list := func(prefix, after string, limit int) string {
		t.Helper()
		es, err := db.Tree(ctx, prefix, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, e := range es {
			kind := "p"
			if e.Dir {
				kind = "d"
			}
			if e.Dir && e.URLID != 0 {
				kind = "dp"
			}
			if e.URL != prefix+e.Name {
				t.Errorf("entry %+v: URL is not prefix + name", e)
			}
			s += fmt.Sprintf("%s:%s ", kind, e.Name)
		}
		return s
	}
	tests := []struct {
		prefix, after string
		limit         int
		want          string
	}{
		{"https://a.example/", "", 100, "p:about dp:docs/ p:docs0 p:news?id=3 d:x/ p:z "},
		{"https://a.example/", "", 2, "p:about dp:docs/ "},
		{"https://a.example/", "docs/", 2, "p:docs0 p:news?id=3 "},
		{"https://a.example/", "news?id=3", 100, "d:x/ p:z "},
		{"https://a.example/docs/", "", 100, "p:a d:b/ "},
		{"https://a.example/docs/b/", "", 100, "p:c p:d "},
		{"https://a.example/nothing/", "", 100, ""},
	}
	for _, tt := range tests {
		if got := list(tt.prefix, tt.after, tt.limit); got != tt.want {
			t.Errorf("Tree(%s, after %q, %d) = %q, want %q", tt.prefix, tt.after, tt.limit, got, tt.want)
		}
	}
	if _, err := db.Tree(ctx, "https://a.example", "", 10); err == nil {
		t.Error("Tree accepted a prefix without a final '/'")
	}
}

func TestChangesAndSearch(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", FrMax: 1})
	var urls []store.NewURL
	for i := range 12 {
		host := "a.example"
		if i%3 == 0 {
			host = "b.example"
		}
		urls = append(urls, store.NewURL{URL: fmt.Sprintf("https://%s/p%02d", host, i), Host: host, FrMax: 1})
	}
	if _, err := db.AddURLs(ctx, urls, "active"); err != nil {
		t.Fatal(err)
	}
	run, err := db.BeginRun(ctx, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range urls {
		mag := float64(i%4) / 4 // 0, .25, .5, .75: ties the keyset must break
		if i == 10 {
			mag = -1 // unknown: listed last
		}
		rec := store.FetchRecord{URLID: mustID(t, db, u.URL), RunID: run, FetchedAt: now, Status: 200, ContentHash: "h",
			Changed: i%6 != 5, Magnitude: mag, NextFr: 1}
		if err := db.RecordFetch(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	walk := func(q store.ChangeQuery) []string {
		t.Helper()
		var out []string
		q.Limit = 3
		for {
			cs, err := db.Changes(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				out = append(out, fmt.Sprintf("%s=%.2f", c.URL[len(c.URL)-3:], c.Magnitude))
			}
			if len(cs) < q.Limit {
				return out
			}
			q.After = &cs[len(cs)-1]
		}
	}
	// p05 and p11 did not change (i%6 == 5).
	got := fmt.Sprint(walk(store.ChangeQuery{Run: run}))
	want := "[p03=0.75 p07=0.75 p02=0.50 p06=0.50 p01=0.25 p09=0.25 p00=0.00 p04=0.00 p08=0.00 p10=-1.00]"
	if got != want {
		t.Errorf("changes:\n got %s\nwant %s", got, want)
	}
	if got := fmt.Sprint(walk(store.ChangeQuery{Run: run, MinMagnitude: 0.5})); got != "[p03=0.75 p07=0.75 p02=0.50 p06=0.50]" {
		t.Errorf("changes of at least half: %s", got)
	}
	if got := fmt.Sprint(walk(store.ChangeQuery{Run: run, Hosts: []string{"b.example"}})); got != "[p03=0.75 p06=0.50 p09=0.25 p00=0.00]" {
		t.Errorf("changes on b.example: %s", got)
	}
	if got := walk(store.ChangeQuery{Run: run + 1}); len(got) != 0 {
		t.Errorf("changes of a run that does not exist: %v", got)
	}

	hits, next, err := db.URLsContaining(ctx, "P1", 0, 1000, 10)
	if err != nil || len(hits) != 2 || hits[0].URL != "https://a.example/p10" || next != 0 {
		t.Errorf("URLsContaining(P1) = %v, next %d, %v", hits, next, err)
	}
	// A window of 5 rows: the first call looks at ids 1-5 only, and says where to go on.
	hits, next, err = db.URLsContaining(ctx, "p1", 0, 5, 10)
	if err != nil || len(hits) != 0 || next != 5 {
		t.Errorf("URLsContaining in the first window = %v, next %d, %v", hits, next, err)
	}
	if hits, _, _ := db.URLsContaining(ctx, "%", 0, 1000, 10); len(hits) != 0 {
		t.Errorf("%% is a wildcard: %v", hits)
	}
	pre, err := db.URLsWithPrefix(ctx, "https://b.example/", "", 2)
	if err != nil || len(pre) != 2 || pre[0].URL != "https://b.example/p00" || pre[1].URL != "https://b.example/p03" {
		t.Errorf("URLsWithPrefix = %v, %v", pre, err)
	}
	pre, err = db.URLsWithPrefix(ctx, "https://b.example/", pre[1].URL, 5)
	if err != nil || len(pre) != 2 || pre[0].URL != "https://b.example/p06" {
		t.Errorf("URLsWithPrefix after p03 = %v, %v", pre, err)
	}
}

// TestOpenReadOnlyWithoutWriteAccess reads a database in a directory the user may not write to,
// as on a read-only disk: SQLite cannot create the -shm index a WAL reader needs, so the database
// is opened immutable, and nothing is created beside it. Root ignores file modes: as root, package
// main's TestReadOnlyDatabase runs the same case as the user nobody.
func TestOpenReadOnlyWithoutWriteAccess(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, whom file modes do not stop; TestReadOnlyDatabase in package main covers this as nobody")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.db")
	w := mustOpen(t, path, store.Options{})
	if _, err := w.BeginRun(t.Context(), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	w.Close()
	os.Chmod(path, 0o444)
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		f.Close()
		t.Skip("this file system ignores file modes")
	}
	ro, err := store.OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly in a read-only directory: %v", err)
	}
	runs, err := ro.Runs(t.Context(), 0, 10)
	ro.Close()
	if err != nil || len(runs) != 1 {
		t.Errorf("read: %d runs, %v; want 1", len(runs), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("reading created files: %v", entries)
	}
	if _, err := store.Open(t.Context(), path, store.Options{}); !errors.Is(err, store.ErrReadOnly) || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("Open for writing in a read-only directory: %v, want one line wrapping ErrReadOnly", err)
	}

	// A write-ahead log with changes not yet in the database, left by a writer that was killed,
	// in a directory that is read-only now: immutable would not see them, so it is an error that
	// says what to do.
	pending := filepath.Join(t.TempDir(), "pending")
	if err := os.Mkdir(pending, 0o755); err != nil {
		t.Fatal(err)
	}
	w = mustOpen(t, filepath.Join(pending, "s.db"), store.Options{})
	if _, err := w.BeginRun(t.Context(), time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	frozen := filepath.Join(t.TempDir(), "frozen")
	if err := os.Mkdir(frozen, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"s.db", "s.db-wal"} { // copied while the writer holds them: no checkpoint
		b, err := os.ReadFile(filepath.Join(pending, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(frozen, name), b, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	os.Chmod(frozen, 0o555)
	t.Cleanup(func() { os.Chmod(frozen, 0o755) })
	_, err = store.OpenReadOnly(t.Context(), filepath.Join(frozen, "s.db"))
	if !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), "s.db-wal holds changes not yet in the database") ||
		strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("OpenReadOnly with a pending WAL in a read-only directory: %v", err)
	}
}
