package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

// fileLimit is the file size past which the full-disk run's writes fail: above anything the
// database and its WAL reach in these runs (under 200 KiB), below a large page's files.
const fileLimit = 512 << 10

// TestFullDiskLosesNothing is issue 18's items 8 and 9 on a real process: a run whose archive writes
// fail, as on a full disk (a file-size limit on the process makes every write past 512 KiB fail,
// as ENOSPC would), then a run with space again. Half the pages are too large to store in the first
// run, and they answer conditional requests with 304. The first run must leave no partial version,
// temporary file or empty version directory behind and still get its manifest; the second must
// fetch the pages it could not store in full (no validators were kept for them) and archive them.
func TestFullDiskLosesNothing(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Robots("User-agent: *\nAllow: /\n")
	var urls, large []string
	for i := range 8 {
		path := fmt.Sprintf("/report%d", i)
		body := fmt.Sprintf("<html><body><p>report %d</p></body></html>", i)
		if i%2 == 1 {
			body = fmt.Sprintf("<html><body><p>report %d</p><pre>%s</pre></body></html>", i, strings.Repeat("data row\n", 70_000))
			large = append(large, s.URL(path))
		}
		mod := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		s.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", fmt.Sprintf(`"r%d"`, i))
			w.Header().Set("Content-Type", "text/html")
			http.ServeContent(w, r, "", mod, strings.NewReader(body))
		}))
		urls = append(urls, s.URL(path))
	}
	dir, cfg := lossDir(t, urls, "")

	full := []string{"STRATA_TEST_FSIZE=" + strconv.Itoa(fileLimit)}
	out, errs, code := strataEnv(t, dir, full, "--config", cfg, "run")
	if code != 0 {
		t.Fatalf("the run on the full disk: exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "4 errors") || !strings.Contains(errs, "could not archive a page") {
		t.Errorf("the run on the full disk did not report the 4 pages it could not archive:\n%s\n%s", out, errs)
	}
	checkArchive(t, dir)
	for _, name := range []string{"strata.db", "strata.db-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Logf("%s: %d bytes (the limit: %d)", name, fi.Size(), fileLimit)
		}
	}

	if _, errs, code := strata(t, dir, "--config", cfg, "run"); code != 0 {
		t.Fatalf("the run with space again: exit %d\n%s", code, errs)
	}
	checkArchive(t, dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, u := range urls {
		var versions, notModified int
		db.QueryRow(`SELECT count(f.archive_path), coalesce(sum(f.not_modified), 0) FROM fetches f JOIN urls u ON u.id = f.url_id
			WHERE u.url = ?`, u).Scan(&versions, &notModified)
		if versions != 1 {
			t.Errorf("%s: %d versions archived after space was freed, want 1 (%d answered 304)", u, versions, notModified)
		}
	}
}
