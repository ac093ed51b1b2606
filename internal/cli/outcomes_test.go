package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestOutcomesAgree is issue 21's item 10: every surface counts a run's outcomes with one
// definition. A second run that finds every outcome — a new page, a change, the same page, new
// bytes with the same words, a 304, a 404 and a 503 — is read back from its summary, status,
// history, export, its manifest and serve, and they must all say the same; the first run's new
// pages are new everywhere, never unchanged.
func TestOutcomesAgree(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	var visits, fails atomic.Int64
	s.Page("/same", "<p>the same page every time</p>")
	s.Handle("/changing", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<p>edition %s of the changing page</p>", strings.Repeat("more ", int(visits.Add(1))))
	}))
	s.Handle("/counter", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<p>a page with a visit counter</p><p>visits: %d</p>", 1000+visits.Add(1))
	}))
	s.Handle("/etag", testweb.Conditional(`"v1"`, "<p>a page with an ETag</p>"))
	s.Page("/gone", "<p>a page that will go</p>")
	s.Handle("/flaky", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fails.Add(1) > 1 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>a page that will fail</p>")
	}))
	s.Page("/added", "<p>a page seeded before the second run</p>")
	e := newEnv(t, loopbackConfig)
	var seeds []string
	for _, p := range []string{"/same", "/changing", "/counter", "/etag", "/gone", "/flaky"} {
		seeds = append(seeds, s.URL(p))
	}
	e.mustRun(append([]string{"seed", "add", "--level", "0"}, seeds...)...)
	first := e.mustRun("run")
	s.Remove("/gone")
	e.mustRun("seed", "add", "--level", "0", s.URL("/added"))
	second := e.mustRun("run")

	type counts struct{ Fetched, New, Changed, Unchanged, NotModified, NotFound, Errors int }
	want := map[int]counts{
		1: {Fetched: 6, New: 6},
		2: {Fetched: 7, New: 1, Changed: 1, Unchanged: 2, NotModified: 1, NotFound: 1, Errors: 1},
	}
	summary := regexp.MustCompile(`(\d+) fetched \((\d+) changed, (\d+) unchanged, (\d+) not modified, (\d+) new\), \d+ blocked by robots.txt, (\d+) errors(?:, (\d+) not found)?`)
	for run, out := range map[int]string{1: first, 2: second} {
		m := summary.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("run %d: no summary in %q", run, out)
		}
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		if got := (counts{n(1), n(5), n(2), n(3), n(4), n(7), n(6)}); got != want[run] {
			t.Errorf("run %d summary says %+v, want %+v\n%s", run, got, want[run], out)
		}
	}

	var st struct {
		Runs []struct {
			ID                               int
			Fetched, New, Changed, Unchanged int
			NotModified                      int `json:"not_modified"`
			NotFound                         int `json:"not_found"`
			Errors                           int
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Runs {
		if got := (counts{r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified, r.NotFound, r.Errors}); got != want[r.ID] {
			t.Errorf("status says run %d had %+v, want %+v", r.ID, got, want[r.ID])
		}
	}

	// history: each page's outcome in run 2, and the labels.
	byKind := map[string]int{}
	trivial := 0
	for _, u := range append(seeds, s.URL("/added")) {
		var rows []struct {
			Run     int    `json:"run"`
			Outcome string `json:"outcome"`
			Stored  bool   `json:"stored"`
		}
		if err := json.Unmarshal([]byte(e.mustRun("history", "--json", u)), &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Run == 2 {
				byKind[r.Outcome]++
				if r.Outcome == "unchanged" && r.Stored {
					trivial++
				}
			}
		}
	}
	if got := (counts{0, byKind["new"], byKind["changed"], byKind["unchanged"], byKind["not_modified"], byKind["not_found"], byKind["error"]}); got != (counts{New: 1, Changed: 1, Unchanged: 2, NotModified: 1, NotFound: 1, Errors: 1}) {
		t.Errorf("history's outcomes of run 2: %v", byKind)
	}
	if trivial != 1 {
		t.Errorf("history: %d fetches of run 2 with new bytes and the same words, want 1 (/counter)", trivial)
	}
	if h := e.mustRun("history", s.URL("/counter")); !strings.Contains(h, "new bytes, same words") || !strings.Contains(h, "  new  ") {
		t.Errorf("history of /counter:\n%s", h)
	}

	// export: the versions run 2 stored, by outcome.
	exported := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(e.mustRun("export", "jsonl", "--run", "2")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v struct{ Outcome string }
		json.Unmarshal(sc.Bytes(), &v)
		exported[v.Outcome]++
	}
	if exported["new"] != 1 || exported["changed"] != 1 || exported["unchanged"] != 1 || len(exported) != 3 {
		t.Errorf("export --run 2 outcomes %v, want 1 new, 1 changed, 1 unchanged (new bytes)", exported)
	}

	// The run's manifest.
	manifests, _ := filepath.Glob(filepath.Join(e.dir, "archive", "*", "manifest.jsonl"))
	if len(manifests) != 2 {
		t.Fatalf("manifests: %v", manifests)
	}
	b, _ := os.ReadFile(manifests[1])
	inManifest := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m struct{ Outcome string }
		json.Unmarshal([]byte(line), &m)
		inManifest[m.Outcome]++
	}
	if fmt.Sprint(inManifest) != fmt.Sprint(byKind) {
		t.Errorf("run 2's manifest says %v, history %v", inManifest, byKind)
	}

	// serve: the runs page's summary of the last run.
	db, err := store.OpenReadOnly(t.Context(), e.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := serve.New(serve.Options{DB: db, Archive: archive.ReadOnly(filepath.Join(e.dir, "archive"))})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/runs", nil))
	page := regexp.MustCompile(`\s+`).ReplaceAllString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(rec.Body.String(), ""), " ")
	w := want[2]
	if s := fmt.Sprintf("%d pages fetched, %d new, %d changed, %d unchanged, %d not modified", w.Fetched, w.New, w.Changed, w.Unchanged, w.NotModified); !strings.Contains(page, s) {
		t.Errorf("serve's runs page lacks %q:\n%.600s", s, page[strings.Index(page, "The last run"):])
	}
	if s := fmt.Sprintf("%d not found (404 or 410)", w.NotFound); !strings.Contains(page, s) {
		t.Errorf("serve's runs page lacks %q", s)
	}
}
