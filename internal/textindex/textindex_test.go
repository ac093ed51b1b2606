package textindex_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// web is a small history written as a crawl writes it: runs, fetches and archived versions.
type web struct {
	t     *testing.T
	db    *store.DB
	arch  *archive.Dir
	clock time.Time
	ids   map[string]int64
}

func newWeb(t *testing.T) *web {
	t.Helper()
	dir := t.TempDir()
	w := &web{t: t, clock: time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC), ids: map[string]int64{}}
	var err error
	if w.db, err = store.Open(t.Context(), filepath.Join(dir, "strata.db"), store.Options{Now: func() time.Time { return w.clock }}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.db.Close() })
	if w.arch, err = archive.Open(filepath.Join(dir, "archive")); err != nil {
		t.Fatal(err)
	}
	if err := w.db.SaveRobots(t.Context(), store.Robots{Origin: "https://a.test", Domain: "a.test", Status: 404, FetchedAt: w.clock}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *web) url(u string) int64 {
	w.t.Helper()
	if id, ok := w.ids[u]; ok {
		return id
	}
	if _, err := w.db.AddURLs(w.t.Context(), []store.NewURL{{URL: u, Host: "a.test", FrMax: 1}}, "active"); err != nil {
		w.t.Fatal(err)
	}
	info, err := w.db.URLInfo(w.t.Context(), u)
	if err != nil {
		w.t.Fatal(err)
	}
	w.ids[u] = info.ID
	return info.ID
}

// page is one fetch in a run: a status, and a text to store ("" stores nothing); state is the URL's
// state after it, as the crawl decides it ("" keeps it).
type page struct {
	url, title, text, state string
	status                  int
	links                   []string
}

// run records one finished run of pages.
func (w *web) run(pages ...page) int64 {
	w.t.Helper()
	ctx := w.t.Context()
	w.clock = w.clock.Add(24 * time.Hour)
	start := w.clock
	id, err := w.db.BeginRun(ctx, start, 0)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, p := range pages {
		w.clock = w.clock.Add(time.Second)
		rec := store.FetchRecord{URLID: w.url(p.url), RunID: id, FetchedAt: w.clock, Status: p.status, ContentType: "text/html",
			NextFr: 1, Origin: "https://a.test", Domain: "a.test", Magnitude: -1, State: p.state}
		if p.text != "" {
			rec.Changed, rec.ContentHash = true, fmt.Sprintf("%x", len(p.text))
			if rec.ArchivePath, err = w.arch.Write(start, archive.Version{Meta: archive.Meta{URL: p.url, FetchedAt: w.clock, Status: p.status,
				ContentType: "text/html", RunID: id, Title: p.title}, Body: []byte("<p>x</p>"), Text: p.text}); err != nil {
				w.t.Fatal(err)
			}
		}
		if err := w.db.RecordFetch(ctx, rec); err != nil {
			w.t.Fatal(err)
		}
		if p.links != nil {
			var ls []store.Link
			for _, l := range p.links {
				w.url(l)
				ls = append(ls, store.Link{ToURL: l, Internal: true})
			}
			if err := w.db.SaveLinks(ctx, w.ids[p.url], id, ls); err != nil {
				w.t.Fatal(err)
			}
		}
	}
	if err := w.db.FinishRun(ctx, store.Run{ID: id, Status: "completed", EndedAt: w.clock}); err != nil {
		w.t.Fatal(err)
	}
	return id
}

func (w *web) search(query string) []string {
	w.t.Helper()
	match, err := store.ParseTextMatch(query)
	if err != nil {
		w.t.Fatal(err)
	}
	hits, err := w.db.SearchText(w.t.Context(), store.TextQuery{Match: match, Limit: 50})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s@%d", h.URL, h.RunID))
	}
	return out
}

const (
	home  = "https://a.test/"
	news  = "https://a.test/news"
	old   = "https://a.test/old"
	moved = "https://a.test/moved"
	about = "https://a.test/about"
)

func TestUpdateIndexesEveryVersionOnce(t *testing.T) {
	w := newWeb(t)
	ctx := t.Context()
	w.run(page{url: home, title: "Home", text: "Welcome to the Café.\n", status: 200, links: []string{news, old}},
		page{url: news, title: "News", text: "The tram line opens.\n", status: 200},
		page{url: old, title: "Old", text: "An old page.\n", status: 200},
		page{url: moved, title: "Moved", text: "A page that moves.\n", status: 200})
	st, err := textindex.Update(ctx, w.db, w.arch)
	if err != nil {
		t.Fatal(err)
	}
	if st.Versions != 4 || st.Runs != 1 {
		t.Fatalf("first step: %+v, want 4 versions and 1 run", st)
	}
	w.run(page{url: news, title: "News", text: "The harbour bridge closes.\n", status: 200},
		page{url: home, title: "Home page", text: "Welcome to the Café, again.\n", status: 200, links: []string{news, about}},
		page{url: about, title: "About", text: "About us.\n", status: 200},
		// old answers 410 and is marked gone; moved answers its first 404, which one passing mistake
		// of a site can cause: it stays active, so it is not a gone page, only a 404 of the run.
		page{url: old, status: 410, state: "gone"},
		page{url: moved, status: 404})
	st, err = textindex.Update(ctx, w.db, w.arch)
	if err != nil {
		t.Fatal(err)
	}
	if st.Versions != 3 || st.Runs != 1 {
		t.Fatalf("second step: %+v, want the 3 new versions and 1 run", st)
	}
	if st, err = textindex.Update(ctx, w.db, w.arch); err != nil || st.Versions != 0 || st.Runs != 0 {
		t.Fatalf("a step with nothing new: %+v, %v; want nothing done", st, err)
	}

	for _, tt := range []struct {
		match string
		want  []string
	}{
		{`tram`, []string{news + "@1"}},
		{`harbour bridge`, []string{news + "@2"}},
		{`cafe`, []string{home + "@1", home + "@2"}}, // diacritics folded; both versions
		{`home page`, []string{home + "@2"}},         // the title is searched too
	} {
		got := w.search(tt.match)
		if !sameSet(got, tt.want) {
			t.Errorf("search %s = %v, want %v", tt.match, got, tt.want)
		}
	}
	marks, err := w.db.PageMarks(ctx, []int64{w.ids[home]})
	if err != nil || marks[w.ids[home]].Title != "Home page" {
		t.Errorf("title of the home page = %+v, %v; want its newest, Home page", marks, err)
	}

	counts, err := w.db.RunPageCounts(ctx, []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if c := counts[1]; c.New != 4 || c.Gone != 0 || c.Unlinked != 0 {
		t.Errorf("run 1 counts %+v, want 4 new", c)
	}
	if c := counts[2]; c.New != 1 || c.Gone != 1 || c.Unlinked != 1 || c.NotFound != 2 {
		t.Errorf("run 2 counts %+v, want 1 new (about), 1 gone and unlinked (old), 2 not found (old, moved)", c)
	}
	for kind, want := range map[string]string{"new": about, "gone": old, "unlinked": old} {
		evs, err := w.db.PageEvents(ctx, store.EventQuery{Run: 2, Kind: kind, Limit: 10})
		if err != nil || len(evs) != 1 || evs[0].URL != want {
			t.Errorf("%s pages of run 2: %+v, %v; want %s", kind, evs, err, want)
		}
	}

	// Runs 3 and 4: the about page loses the link from home, but news, which was not read in run 4, still
	// links to it from its current version: it is not unlinked.
	w.run(page{url: news, title: "News", text: "The harbour bridge closes. About us.\n", status: 200, links: []string{about}})
	w.run(page{url: home, title: "Home page", text: "Welcome, third time.\n", status: 200, links: []string{news}})
	if _, err := textindex.Update(ctx, w.db, w.arch); err != nil {
		t.Fatal(err)
	}
	if evs, err := w.db.PageEvents(ctx, store.EventQuery{Run: 4, Kind: "unlinked", Limit: 10}); err != nil || len(evs) != 0 {
		t.Errorf("unlinked pages of run 4: %+v, %v; want none (news still links to about)", evs, err)
	}
}

// failing fails IndexTexts after a number of successful calls, as a full disk or a kill would.
type failing struct {
	*store.DB
	left int
}

var errDisk = errors.New("disk full")

func (f *failing) IndexTexts(ctx context.Context, docs []store.IndexedText, upto int64) error {
	if f.left == 0 {
		return errDisk
	}
	f.left--
	return f.DB.IndexTexts(ctx, docs, upto)
}

func TestUpdateResumesAfterAFailure(t *testing.T) {
	w := newWeb(t)
	n := textindex.Batch*2 + 10
	pages := make([]page, n)
	for i := range pages {
		pages[i] = page{url: fmt.Sprintf("https://a.test/p%d", i), title: "P", text: fmt.Sprintf("page number%d text\n", i), status: 200}
	}
	w.run(pages...)
	st, err := textindex.Update(t.Context(), &failing{DB: w.db, left: 1}, w.arch)
	if !errors.Is(err, errDisk) || st.Versions != textindex.Batch {
		t.Fatalf("interrupted step: %+v, %v; want one batch and the disk error", st, err)
	}
	if st, err = textindex.Update(t.Context(), w.db, w.arch); err != nil || st.Versions != n-textindex.Batch {
		t.Fatalf("resumed step: %+v, %v; want the %d versions left", st, err, n-textindex.Batch)
	}
	for _, i := range []int{0, textindex.Batch, n - 1} {
		if got := w.search(fmt.Sprintf("number%d", i)); len(got) != 1 {
			t.Errorf("page %d found %d times, want once: %v", i, len(got), got)
		}
	}
	// The keyset walks every match once, whatever the ties in score.
	seen := map[int64]bool{}
	q := store.TextQuery{Match: store.TextMatch{All: [][]store.SearchTerm{{{Text: "text"}}}}, Limit: 100}
	for pages := 0; ; pages++ {
		hits, err := w.db.SearchText(t.Context(), q)
		if err != nil || pages > n {
			t.Fatalf("page %d of the search: %v", pages, err)
		}
		for _, h := range hits {
			if seen[h.FetchID] {
				t.Fatalf("version %d listed twice", h.FetchID)
			}
			seen[h.FetchID] = true
		}
		if len(hits) < q.Limit {
			break
		}
		q.After = &hits[len(hits)-1]
	}
	if len(seen) != n {
		t.Errorf("the search walked %d versions, want %d", len(seen), n)
	}
}

func TestUpdateSkipsMissingFiles(t *testing.T) {
	w := newWeb(t)
	w.run(page{url: home, title: "Home", text: "hello\n", status: 200}, page{url: news, title: "News", text: "world\n", status: 200})
	vs, _, err := w.db.PendingVersions(t.Context(), 0, 10)
	if err != nil || len(vs) != 2 {
		t.Fatal(vs, err)
	}
	dir, _ := w.arch.Abs(vs[0].Path)
	if err := os.Remove(filepath.Join(dir, archive.TextFile)); err != nil {
		t.Fatal(err)
	}
	st, err := textindex.Update(t.Context(), w.db, w.arch)
	if err != nil || st.Versions != 1 || st.Missing != 1 {
		t.Fatalf("Update = %+v, %v; want 1 indexed and 1 missing", st, err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// cancelling stops the step after it summarised the runs, as a deadline in the run path does.
type cancelling struct {
	*store.DB
	cancel context.CancelFunc
}

func (c *cancelling) SummarizeRun(ctx context.Context, run int64) error {
	err := c.DB.SummarizeRun(ctx, run)
	c.cancel()
	return err
}

func TestUpdateRecordsEventsBeforeText(t *testing.T) {
	w := newWeb(t)
	w.run(page{url: home, title: "Home", text: "hello\n", status: 200})
	ctx, cancel := context.WithCancel(t.Context())
	st, err := textindex.Update(ctx, &cancelling{DB: w.db, cancel: cancel}, w.arch)
	if !errors.Is(err, context.Canceled) || st.Runs != 1 || st.Versions != 0 {
		t.Fatalf("a step stopped after the events: %+v, %v; want 1 run, no version, context.Canceled", st, err)
	}
	if c, err := w.db.RunPageCounts(t.Context(), []int64{1}); err != nil || c[1].New != 1 {
		t.Errorf("run 1 counts %+v, %v; want its new page", c, err)
	}
	if st, err := textindex.Update(t.Context(), w.db, w.arch); err != nil || st.Versions != 1 || st.Runs != 0 {
		t.Errorf("the next step: %+v, %v; want the version and no run again", st, err)
	}
}
