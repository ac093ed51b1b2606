package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/testweb"
	"github.com/strata-crawler/strata/internal/warc"
)

// changingSite serves pages whose bytes differ on every visit, so every visit stores a version.
func changingSite(t *testing.T, web *testweb.Web, pages int) []string {
	t.Helper()
	s := web.AddSite(t)
	s.Robots("User-agent: *\nAllow: /\n")
	var visits atomic.Int64
	var urls []string
	for p := range pages {
		path := fmt.Sprintf("/p%d", p)
		s.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<html><body><p>page %d, visit %d</p></body></html>", p, visits.Add(1))
		}))
		urls = append(urls, s.URL(path))
	}
	return urls
}

// lossDir writes a configuration (with extra TOML lines under [archive]) into a new directory and
// seeds urls there.
func lossDir(t *testing.T, urls []string, archiveLines string) (dir, cfg string) {
	t.Helper()
	dir = t.TempDir()
	cfg = filepath.Join(dir, "strata.toml")
	writeConfig(t, cfg, archiveLines)
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(strings.Join(urls, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := strata(t, dir, "--config", cfg, "seed", "add", "--level", "0", "--file", seeds); code != 0 {
		t.Fatalf("seed add: %s", errs)
	}
	return dir, cfg
}

func writeConfig(t *testing.T, cfg, archiveLines string) {
	t.Helper()
	body := "[politeness]\nloopback_delay = \"10ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n" +
		"[archive]\n" + archiveLines
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// killedAt runs strata with the crash point armed and checks that it died there.
func killedAt(t *testing.T, dir, point string, args ...string) {
	t.Helper()
	out, errs, code := strataEnv(t, dir, []string{"STRATA_TEST_CRASH=" + point}, args...)
	if code == 0 || strings.HasPrefix(errs, "strata: ") {
		t.Fatalf("strata %v with crash point %q: exit %d, want killed there\nstdout: %s\nstderr: %s", args, point, code, out, errs)
	}
}

// checkArchive checks what a researcher relies on after any kill or full disk, once a later run
// has ended: the database is intact; no run is left running, every run is sealed and every run
// that fetched anything has its manifest.jsonl, one line per fetch; every version a fetch records
// is complete on disk unless pruned, and a pruned one has no file left; the prune journal is empty;
// and the archive holds no temporary file, no file of a version no fetch records, and no empty
// directory.
func checkArchive(t *testing.T, dir string) {
	t.Helper()
	root := filepath.Join(dir, "archive")
	db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	db.QueryRow("PRAGMA integrity_check").Scan(&integrity)
	if integrity != "ok" {
		t.Errorf("integrity_check: %q", integrity)
	}
	rows, err := db.Query(`SELECT id, started_at, status, sealed_at IS NOT NULL,
		(SELECT count(*) FROM fetches f WHERE f.run_id = runs.id) FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var started, status string
		var sealed bool
		var fetches int
		if err := rows.Scan(&id, &started, &status, &sealed, &fetches); err != nil {
			t.Fatal(err)
		}
		if status == "running" || !sealed {
			t.Errorf("run %d: status %s, sealed %v; want ended and sealed", id, status, sealed)
		}
		at, err := time.Parse(time.RFC3339, started)
		if err != nil {
			t.Fatal(err)
		}
		if fetches == 0 {
			continue
		}
		manifest := filepath.Join(root, archive.RunDir(at), archive.ManifestFile)
		if lines, err := countLines(manifest); err != nil || lines != fetches {
			t.Errorf("run %d (%s): manifest has %d lines (%v), want one per fetch, %d", id, status, lines, err, fetches)
		}
	}
	rows.Close()

	recorded := map[string]bool{} // version directory → stored (not pruned)
	rows, err = db.Query("SELECT archive_path, pruned_at IS NULL FROM fetches WHERE archive_path IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		var stored bool
		rows.Scan(&p, &stored)
		recorded[p] = stored
		for _, f := range []string{"page.html", "page.txt", "page.json"} {
			_, err := os.Stat(filepath.Join(root, p, f))
			switch {
			case stored && err != nil:
				t.Errorf("recorded version %s lacks %s", p, f)
			case !stored && err == nil:
				t.Errorf("pruned version %s still has %s", p, f)
			}
		}
	}
	rows.Close()
	var pending int
	db.QueryRow("SELECT count(*) FROM prune_pending").Scan(&pending)
	if pending != 0 {
		t.Errorf("%d versions left in the prune journal", pending)
	}
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		switch {
		case strings.HasPrefix(e.Name(), ".strata-tmp-"):
			t.Errorf("temporary file survived: %s", p)
		case strings.HasPrefix(e.Name(), "page.") && !recorded[filepath.ToSlash(rel)]:
			t.Errorf("file of a version no fetch records survived: %s", p)
		case e.IsDir() && p != root:
			if entries, _ := os.ReadDir(p); len(entries) == 0 {
				t.Errorf("empty directory survived: %s", p)
			}
		}
		return nil
	})
}

// checkWARC checks what a kill may leave of the WARC files: none left under its open name, every
// record of every file whole and valid (digests included), every run index the index of its files,
// and every WARC record a fetch row names present.
func checkWARC(t *testing.T, root string, db *sql.DB) {
	t.Helper()
	if open, _ := filepath.Glob(filepath.Join(root, "*", archive.WARCDir, "*"+warc.OpenSuffix)); len(open) > 0 {
		t.Errorf("WARC files left open: %v", open)
	}
	if lines, _ := filepath.Glob(filepath.Join(root, "*", archive.WARCDir, "*"+warc.LinesSuffix+"*")); len(lines) > 0 {
		t.Errorf("index lines left after the seal: %v", lines)
	}
	ids := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(root, "*", archive.WARCDir, "*"+warc.Ext))
	for _, f := range files {
		r, err := warc.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range r.Records() {
			if err != nil {
				t.Errorf("%s: record at %d: %v", f, rec.Offset, err)
				break
			}
			if _, err := rec.WarcRecord.ValidateDigest(); err != nil {
				t.Errorf("%s: record at %d: %v", f, rec.Offset, err)
			}
			ids["<"+rec.WarcRecord.RecordId()+">"] = true
			rec.Close()
		}
		r.Close()
		lines := 0
		err = warc.IndexFile(f, filepath.Base(f), func(warc.Line) error { lines++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if idx, err := os.ReadFile(filepath.Join(filepath.Dir(f), archive.IndexFile)); err != nil {
			t.Errorf("%s has no index: %v", filepath.Dir(f), err)
		} else if n := strings.Count(string(idx), filepath.Base(f)); n != lines {
			t.Errorf("%s: index has %d lines of %s, want %d", filepath.Dir(f), n, filepath.Base(f), lines)
		}
	}
	if len(files) == 0 {
		t.Error("no WARC file written")
	}
	rows, err := db.Query("SELECT warc_id FROM captures WHERE warc_id IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		rows.Scan(&id)
		if !ids[id] {
			t.Errorf("a fetch names WARC record %s, which no file holds", id)
		}
	}
}

func countLines(name string) (int, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n, nil
}

// runStatuses returns the statuses of the runs, oldest first, comma-separated.
func runStatuses(t *testing.T, dir string) string {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var s string
	db.QueryRow("SELECT group_concat(status, ',') FROM (SELECT status FROM runs ORDER BY id)").Scan(&s)
	return s
}

// TestCrashPointsAreRepaired kills `strata run` with SIGKILL at each point where it leaves
// something half done — temporary files of staged versions, versions in place that no fetch
// records, a crawl whose run is not yet sealed, a manifest written but the seal not recorded, a run
// marked completed before the prune — and checks that the next run leaves everything whole:
// killed runs get their manifest (issue 18, item 9: 26 of 26 killed runs had none; 9 of 9 killed
// just after being marked complete had none), and no temporary file or unrecorded version survives.
func TestCrashPointsAreRepaired(t *testing.T) {
	for _, tt := range []struct {
		point    string
		statuses string // of the killed run and the next
	}{
		{"staged", "interrupted,completed"},
		{"archived", "interrupted,completed"},
		{"crawled", "interrupted,completed"},
		{"manifest-written", "interrupted,completed"},
		{"finished", "completed,completed"},
		{"warc-synced", "interrupted,completed"},
		{"warc-sealed", "interrupted,completed"},
	} {
		t.Run(tt.point, func(t *testing.T) {
			t.Parallel()
			web := testweb.New(t)
			dir, cfg := lossDir(t, changingSite(t, web, 6), "")
			killedAt(t, dir, tt.point, "--config", cfg, "run")
			if tt.point == "warc-sealed" { // the writer's lines of its closed file, which the repair's seal reads
				if lines, _ := filepath.Glob(filepath.Join(dir, "archive", "*", archive.WARCDir, "*"+warc.LinesSuffix)); len(lines) == 0 {
					t.Error("the crawl's WARC writer left no index lines beside the file it closed")
				}
			}
			if _, errs, code := strata(t, dir, "--config", cfg, "run"); code != 0 {
				t.Fatalf("the run after the kill: exit %d\n%s", code, errs)
			}
			if got := runStatuses(t, dir); got != tt.statuses {
				t.Errorf("run statuses %q, want %q", got, tt.statuses)
			}
			checkArchive(t, dir)
			db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			checkWARC(t, filepath.Join(dir, "archive"), db)
		})
	}
}

// TestKilledPruneIsRepaired is issue 18's item 11: a prune killed between removing a version's files
// and recording it left a fetch that said the version was stored while its files were gone, until
// the next prune. Now prune marks a batch pruned (and journals it) before removing any file, so no
// such record exists even right after the kill, and the next run — here with archive.keep unset, so
// it prunes nothing itself — removes the files the killed prune had marked.
func TestKilledPruneIsRepaired(t *testing.T) {
	web := testweb.New(t)
	dir, cfg := lossDir(t, changingSite(t, web, 6), "keep = \"1ms\"\n")
	if _, errs, code := strata(t, dir, "--config", cfg, "run"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, errs)
	}
	// The second run stores a second version of every page, then prunes the first ones.
	killedAt(t, dir, "pruning", "--config", cfg, "run")

	db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT archive_path FROM fetches WHERE archive_path IS NOT NULL AND pruned_at IS NULL")
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for rows.Next() {
		var p string
		rows.Scan(&p)
		stored++
		if _, err := os.Stat(filepath.Join(dir, "archive", p, "page.json")); err != nil {
			t.Errorf("right after the kill, a fetch says %s is stored but its files are gone", p)
		}
	}
	rows.Close()
	db.Close()
	if stored < 6 {
		t.Errorf("%d versions stored, want at least the 6 current ones", stored)
	}

	writeConfig(t, cfg, "")
	if _, errs, code := strata(t, dir, "--config", cfg, "run"); code != 0 {
		t.Fatalf("the run after the kill: exit %d\n%s", code, errs)
	} else if !strings.Contains(errs, "an earlier prune was cut off") {
		t.Errorf("the run after the kill did not say it finished the prune:\n%s", errs)
	}
	checkArchive(t, dir)
}
