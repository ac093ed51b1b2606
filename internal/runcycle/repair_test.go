package runcycle

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/store"
)

// A run whose seal was refused — its manifest could not be written, as on a full disk — stays
// unsealed, and the next session seals it: orphans and scratch files removed, recorded versions
// and snapshot links kept, manifest written.
func TestRepairSealsARunWhoseSealFailed(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	arch, err := archive.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	start := first.Add(24 * time.Hour)
	page := func(u string) archive.Version {
		return archive.Version{Meta: archive.Meta{URL: u, ContentType: "text/html"}, Body: []byte("<p>" + u + "</p>"), Text: u}
	}
	ids, err := db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/new", Host: "a.example"}, {URL: "https://a.example/same", Host: "a.example"}})
	if err != nil {
		t.Fatal(err)
	}
	// The first run stored /same; the second stores /new and links /same, unchanged, as a snapshot.
	run1, _ := db.BeginRun(ctx, first, 0)
	old, err := arch.Write(first, page("https://a.example/same"))
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.RecordFetch(ctx, store.FetchRecord{URLID: ids[1], RunID: run1, FetchedAt: first, Status: 200, ContentHash: "s", ArchivePath: old, NextFr: 1}))
	must(db.FinishRun(ctx, store.Run{ID: run1, EndedAt: first, Status: "completed"}))
	must(db.SealRun(ctx, run1, first))

	run2, _ := db.BeginRun(ctx, start, 0)
	stored, err := arch.Write(start, page("https://a.example/new"))
	must(err)
	must(db.RecordFetch(ctx, store.FetchRecord{URLID: ids[0], RunID: run2, FetchedAt: start, Status: 200, ContentHash: "n", ArchivePath: stored, NextFr: 1}))
	snap, err := arch.Snapshot(start, "https://a.example/same", old)
	must(err)
	must(db.RecordFetch(ctx, store.FetchRecord{URLID: ids[1], RunID: run2, FetchedAt: start, Status: 200, ContentHash: "s", NextFr: 1}))
	must(db.FinishRun(ctx, store.Run{ID: run2, EndedAt: start, Status: "failed"}))

	manifest := filepath.Join(arch.Root(), archive.RunDir(start), archive.ManifestFile)
	must(os.Mkdir(manifest, 0o755)) // the manifest's place is taken: it cannot be written
	must(os.WriteFile(filepath.Join(manifest, "x"), nil, 0o644))
	if _, err := Seal(ctx, db, arch, run2, start); err == nil {
		t.Fatal("seal wrote a manifest over a directory")
	}
	if runs, err := db.UnsealedRuns(ctx); err != nil || len(runs) != 1 || runs[0].ID != run2 {
		t.Fatalf("unsealed runs after the failed seal: %+v, %v; want run %d", runs, err, run2)
	}

	orphan, err := arch.Write(start, page("https://a.example/orphan")) // say, written before a kill
	must(err)
	// A seal killed while sorting the run's WARC index leaves its scratch files.
	warcDir := arch.WARCPath(start)
	must(os.MkdirAll(warcDir, 0o755))
	scratch, err := archive.CreateTemp(warcDir)
	must(err)
	must(scratch.Close())
	must(os.RemoveAll(manifest))
	must(repair(ctx, db, arch, slog.New(slog.DiscardHandler)))
	if runs, err := db.UnsealedRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("unsealed runs after repair: %+v, %v", runs, err)
	}
	if n, err := countLines(manifest); err != nil || n != 2 {
		t.Errorf("manifest: %d lines, %v; want 2", n, err)
	}
	if arch.Check(orphan) == nil {
		t.Error("the orphan version survived the repair")
	}
	if _, err := os.Stat(scratch.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the index's scratch file survived the repair: %v", err)
	}
	for _, v := range []string{stored, snap, old} {
		if err := arch.Check(v); err != nil {
			t.Errorf("repair removed %s: %v", v, err)
		}
	}
}

func countLines(name string) (int, error) {
	b, err := os.ReadFile(name)
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n, err
}
