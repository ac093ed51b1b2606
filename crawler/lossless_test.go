package crawler_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/testweb"
)

// fullDisk is an archive on a disk that fills up and is freed again: while full is set, every
// version fails, at staging (the first write) or at the commit (the syncs), with ENOSPC and nothing
// left behind, as the real archive fails.
type fullDisk struct {
	*archive.Dir
	full    atomic.Bool
	atStage bool
}

func (d *fullDisk) Stage(runStart time.Time, v archive.Version) (*archive.Pending, error) {
	if d.full.Load() && d.atStage {
		return nil, fmt.Errorf("archive: write %s: %w", v.URL, syscall.ENOSPC)
	}
	return d.Dir.Stage(runStart, v)
}

func (d *fullDisk) Commit(batch []*archive.Pending) []error {
	if !d.full.Load() || d.atStage {
		return d.Dir.Commit(batch)
	}
	errs := make([]error, len(batch))
	for i, p := range batch {
		p.Discard()
		errs[i] = fmt.Errorf("archive: sync %s: %w", p.Path(), syscall.ENOSPC)
	}
	return errs
}

// validated serves body with the validators of version v: an ETag, a Last-Modified, or both, and
// answers a conditional request that matches them with 304, as a well-behaved server does.
func validated(etag, lastModified bool, v int, body string) http.Handler {
	mod := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(v) * time.Hour)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if etag {
			w.Header().Set("ETag", fmt.Sprintf(`"v%d"`, v))
		}
		if !lastModified {
			mod = time.Time{} // ServeContent sends no Last-Modified for a zero time
		}
		w.Header().Set("Content-Type", "text/html")
		http.ServeContent(w, r, "", mod, strings.NewReader(body))
	})
}

// TestCrawlFullDiskLosesNoChange is issue 18's item 8: after an archive write failed on a full disk,
// the page's validators stayed stored, every later fetch was a 304, and the change was never
// archived. A version that could not be stored must leave no validators behind, so that the run
// after space is freed fetches the page in full and archives it — whether the failure came at
// staging or at the commit, for a first version or a change, with an ETag, a Last-Modified or both.
func TestCrawlFullDiskLosesNoChange(t *testing.T) {
	for _, tt := range []struct {
		name                string
		atStage, firstFails bool
		etag, lastModified  bool
	}{
		{"change, commit, etag", false, false, true, false},
		{"change, commit, last-modified", false, false, false, true},
		{"change, stage, both", true, false, true, true},
		{"first version, commit, both", false, true, true, true},
		{"first version, stage, etag", true, true, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each run waits for a second of its own (run directories are named to the second)
			h := newHarness(t, harnessOptions{archive: true, delay: 10 * time.Millisecond})
			disk := &fullDisk{Dir: h.arch, atStage: tt.atStage}
			h.cfg.Archive = disk
			rewire(h, h.fopts.AllowPrivate)
			s := h.web.AddSite(t)
			page := s.URL("/report")
			h.seed(0, 1, page)
			serve := func(v int) {
				s.Handle("/report", validated(tt.etag, tt.lastModified, v, fmt.Sprintf("<p>report, edition %d</p>", v)))
			}
			serve(1)
			want := 1 // versions archived in the end
			if !tt.firstFails {
				h.mustCrawl() // edition 1 archived
				serve(2)      // then the page changes
				want = 2
			}
			disk.full.Store(true)
			if st := h.mustCrawl(); st.Errors != 1 {
				t.Fatalf("run on the full disk: %+v; want one archive error", st)
			}
			disk.full.Store(false)
			st := h.mustCrawl()
			if v := h.archivedVersions(page); len(v) != want {
				t.Errorf("after space was freed: %d versions archived, want %d (run %+v)", len(v), want, st)
			}
			// And from then on the validators work again: the next run is a 304.
			if st := h.mustCrawl(); st.NotModified != 1 {
				t.Errorf("the run after: %+v; want a 304", st)
			}
		})
	}
}

// TestCrawlDeletedPageIsGoneInThreeRuns is issue 18's item 6: a deleted page below a hub whose
// subtree the selective rule skips stayed active until run 13, because it was fetched only when its
// interval and the rule let it be. Once a page has answered 404 it is fetched in every run (the
// countdown makes it due, the selective rule does not skip it), so the third 404 in a row, which
// marks it gone, comes two runs after the first; a gone page is never fetched again, even when its
// hub's changing children make the subtree due; and the runs count the 404s and the page marked
// gone.
func TestCrawlDeletedPageIsGoneInThreeRuns(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 5 * time.Millisecond})
	s := h.web.AddSite(t)
	run := 0
	words := []string{"harbour", "library", "tram", "tomato", "council", "bridge", "museum"}
	page := func(f func() string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, f())
		})
	}
	for _, hub := range []string{"quiet", "busy"} {
		s.Handle("/"+hub+"/", page(func() string {
			var b strings.Builder
			for i := 1; i <= 5; i++ {
				fmt.Fprintf(&b, `<a href="/%s/%d">%d</a> `, hub, i, i)
			}
			return "<h1>" + hub + "</h1>" + b.String()
		}))
		for i := 1; i <= 5; i++ {
			s.Handle(fmt.Sprintf("/%s/%d", hub, i), page(func() string {
				if hub == "quiet" {
					return "<p>an old page</p>"
				}
				return fmt.Sprintf("<p>item %d, latest comment about the %s</p>", i, words[(run+i)%len(words)])
			}))
		}
	}
	h.seed(1, 1, s.URL("/quiet/"), s.URL("/busy/"))
	policy, err := frequency.New("bouras")
	if err != nil {
		t.Fatal(err)
	}
	deleted := []string{"/quiet/3", "/busy/3"}
	first404, goneAt := map[string]int{}, map[string]int{}
	notFound, gone := 0, 0
	const runs = 14
	for run = 1; run <= runs; run++ {
		if run == 3 {
			for _, p := range deleted {
				s.Handle(p, testweb.Status(http.StatusNotFound))
			}
		}
		st := h.mustCrawl()
		if _, err := h.c.Recalc(t.Context(), h.db, crawler.Run{ID: h.run}, policy, 10, nil); err != nil {
			t.Fatal(err)
		}
		notFound, gone = notFound+st.NotFound, gone+st.Gone
		for _, p := range deleted {
			state, statuses := h.urlState(s.URL(p))
			if len(statuses) > 0 && statuses[0] == http.StatusNotFound && first404[p] == 0 {
				first404[p] = run
			}
			if state == "gone" && goneAt[p] == 0 {
				goneAt[p] = run
			}
		}
	}
	for _, p := range deleted {
		if first404[p] == 0 || goneAt[p] != first404[p]+2 {
			t.Errorf("%s: first 404 in run %d, gone in run %d; want gone two runs after the first 404", p, first404[p], goneAt[p])
		}
		// Not fetched again once gone: its last fetch is the one that marked it gone.
		hist, err := h.db.History(t.Context(), s.URL(p))
		if err != nil {
			t.Fatal(err)
		}
		if last := hist[len(hist)-1]; int(last.RunID) != goneAt[p] || len(hist) != h.web.Count(s, p) {
			t.Errorf("%s: last fetched in run %d, %d fetches recorded and %d requests seen; want nothing after run %d",
				p, last.RunID, len(hist), h.web.Count(s, p), goneAt[p])
		}
	}
	if notFound != 6 || gone != 2 {
		t.Errorf("the runs counted %d not found and %d gone, want 6 and 2", notFound, gone)
	}
}
