package serve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// Hostile content in the fixture: a title and a page body that try to run script in strata's
// pages, and URLs that try to break out of attributes or smuggle a javascript: link.
const (
	hostileTitle = `<script>alert("title")</script>`
	hostileBody  = `<html><head><title>` + hostileTitle + `</title></head><body>
<script>document.title = "pwned"; try { parent.document.body.setAttribute("data-pwned", "yes") } catch (e) {}</script>
<img src="/raw/1" onerror="document.title='pwned'"><p>evil page</p></body></html>`
	hostileURL = `https://news.example/"><script>alert(1)</script>`
	jsURL      = `javascript:alert(1)//`
)

// fixture is a database and an archive written through the store and archive APIs as a crawl
// writes them, opened read-only for a server.
type fixture struct {
	dir     string
	db      *store.DB
	arch    *archive.Dir
	srv     *serve.Server
	ids     map[string]int64 // URL → row id
	fetches map[string][]int64
	runs    []int64
}

const (
	front = "https://news.example/"
	story = "https://news.example/story"
	evil  = "https://news.example/evil"
	docs  = "https://news.example/docs/"
	other = "https://blog.example/"
	// release notes whose natural order differs from their byte order
	rel7  = "https://news.example/docs/release.0.7"
	rel10 = "https://news.example/docs/release.0.10"
	rel9  = "https://news.example/docs/release.0.9"
	long  = "https://news.example/docs/long"
	old   = "https://news.example/old"     // answers 410 in run 3: gone
	moved = "https://news.example/missing" // answers 404 in run 3: not found, still active
)

// longTexts are two versions of a long page that differ in one word of one line, in the middle:
// its diff folds the unchanged stretches around the change.
var longTexts = func() [2]string {
	var a, b strings.Builder
	for i := range 80 {
		line := fmt.Sprintf("Paragraph %d of the handbook says nothing new.\n", i)
		a.WriteString(line)
		if i == 40 {
			line = fmt.Sprintf("Paragraph %d of the handbook says something new.\n", i)
		}
		b.WriteString(line)
	}
	return [2]string{a.String(), b.String()}
}()

// texts of the front page in runs 1, 2 and 3.
var frontTexts = []string{
	"News\n\nHeadline: the tram line opens.\nWeather: sunny.\n",
	"News\n\nHeadline: the tram line opens.\nWeather: sunny.\n",
	"News\n\nHeadline: the harbour bridge closes.\nWeather: sunny.\nA new line at the end.\n",
}

// The fixture is only read, so the tests share one, built by the first that asks for it in a
// directory that TestMain removes.
var (
	sharedDir  string
	sharedOnce sync.Once
	shared     *fixture
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-serve-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	if shared != nil {
		shared.db.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	sharedOnce.Do(func() { shared = buildFixture(t, sharedDir) })
	if shared == nil {
		t.Fatal("the shared fixture could not be built (see the first test's failure)")
	}
	return shared
}

func buildFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(dir, "strata.db")
	clock := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	w, err := store.Open(ctx, dbPath, store.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	arch, err := archive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, arch: arch, ids: map[string]int64{}, fetches: map[string][]int64{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = w.AddSeeds(ctx, []store.NewSeed{
		{URL: front, Host: "news.example", Level: 2, FrMax: 1},
		{URL: other, Host: "blog.example", Level: 1, FrMax: 1},
	})
	must(err)
	for _, u := range []string{front, other} {
		info, err := w.URLInfo(ctx, u)
		must(err)
		f.ids[u] = info.ID
	}
	kids := []store.NewURL{
		{URL: story, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: evil, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: docs, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: hostileURL, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: jsURL, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: rel10, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: rel7, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: rel9, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: long, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: old, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
		{URL: moved, Host: "news.example", FrMax: 1, ParentID: f.ids[front], RootID: f.ids[front]},
	}
	for i := range 120 {
		kids = append(kids, store.NewURL{URL: fmt.Sprintf("https://news.example/many/p%03d", i), Host: "news.example", FrMax: 1})
	}
	_, err = w.AddURLs(ctx, kids, "active")
	must(err)
	for _, k := range kids {
		info, err := w.URLInfo(ctx, k.URL)
		must(err)
		f.ids[k.URL] = info.ID
	}
	must(w.SaveRobots(ctx, store.Robots{Origin: "https://news.example", Domain: "news.example", Status: 200,
		Body: []byte("User-agent: *\nCrawl-delay: 30\n"), FetchedAt: clock, CrawlDelay: 30 * time.Second}))
	must(w.SaveRobots(ctx, store.Robots{Origin: "https://blog.example", Domain: "blog.example", Status: 404, FetchedAt: clock}))

	for run := 1; run <= 3; run++ {
		clock = clock.Add(24 * time.Hour)
		start := clock
		id, err := w.BeginRun(ctx, start, time.Duration(run)*7*time.Minute)
		must(err)
		f.runs = append(f.runs, id)
		r := store.Run{ID: id, Status: "completed"}
		status := 200
		record := func(u, text, body, title string, changed bool, magnitude float64) {
			t.Helper()
			clock = clock.Add(time.Second)
			rec := store.FetchRecord{URLID: f.ids[u], RunID: id, FetchedAt: clock, Status: status, Size: int64(len(body)),
				ContentType: "text/html", Changed: changed, Magnitude: magnitude, NextFr: 1,
				Origin: "https://news.example", Domain: "news.example"}
			if strings.HasPrefix(u, other) {
				rec.Origin, rec.Domain = "https://blog.example", "blog.example"
			}
			if status == 404 {
				rec.Error, rec.State = "HTTP 404", "gone"
			}
			if text != "" || changed {
				rec.ContentHash = fmt.Sprintf("%x-%d", len(text), run)
			}
			if text != "" {
				rec.ArchivePath, err = arch.Write(start, archive.Version{Meta: archive.Meta{URL: u, FetchedAt: clock, Status: 200,
					ContentType: "text/html", Charset: "utf-8", Size: int64(len(body)), RunID: id, Title: title}, Body: []byte(body), Text: text})
				must(err)
			}
			must(w.RecordFetch(ctx, rec))
			fid := lastFetch(t, w, f.ids[u])
			f.fetches[u] = append(f.fetches[u], fid)
			r.Fetched++
			status = 200
			if changed {
				r.Changed++
			} else {
				r.Unchanged++
			}
		}
		switch run {
		case 1:
			record(front, frontTexts[0], "<p>front 1</p>", "News", false, -1)
			must(w.SaveLinks(ctx, f.ids[front], id, []store.Link{{ToURL: story, Internal: true}, {ToURL: jsURL, Internal: false},
				{ToURL: "https://elsewhere.example/x", Internal: false}}))
			record(story, "Story one.\n", "<p>story</p>", "Story", false, -1)
			record(evil, "evil page\n", hostileBody, hostileTitle, false, -1)
			record(other, "Blog\n", "<p>blog</p>", "Blog", false, -1)
			record(long, longTexts[0], "<p>long</p>", "Handbook", false, -1)
		case 2:
			record(front, "", "", "", false, 0) // unchanged: no files
			record(story, "Story one, updated.\n", "<p>story 2</p>", "Story", true, 0.3)
			record(long, longTexts[1], "<p>long 2</p>", "Handbook", true, 0.02)
		case 3:
			record(front, frontTexts[2], "<p>front 3</p>", "News", true, 0.4)
			for _, u := range []string{rel10, rel7, rel9} {
				record(u, "Release notes of "+u+"\n", "<p>release</p>", "Release "+u[len(docs):], false, -1)
			}
			status = 404
			record(story, "", "", "", false, -1) // the story is gone
			must(w.SaveLinks(ctx, f.ids[front], id, []store.Link{{ToURL: jsURL, Internal: false}, {ToURL: "https://elsewhere.example/x", Internal: false}}))
			for i := range 60 {
				u := fmt.Sprintf("https://news.example/many/p%03d", i)
				// magnitudes repeat so that the keyset must break ties by fetch id
				record(u, "", "", "", true, float64(i%7)/10)
			}
			for _, nf := range []struct {
				u      string
				status int
				state  string
			}{{old, 410, "gone"}, {moved, 404, ""}} {
				clock = clock.Add(time.Second)
				must(w.RecordFetch(ctx, store.FetchRecord{URLID: f.ids[nf.u], RunID: id, FetchedAt: clock, Status: nf.status,
					Error: fmt.Sprintf("HTTP %d", nf.status), NextFr: 1, State: nf.state}))
				r.Fetched++
				r.NotFound++
			}
			r.Gone = 2 // story and old; moved answered its first 404
		}
		r.EndedAt = clock
		// The run's outcome counts, as a crawl records them.
		c, err := w.RunOutcomes(ctx, id)
		must(err)
		r.SetOutcomes(c)
		must(w.FinishRun(ctx, r))
		must(w.SaveRunDomains(ctx, id, []store.RunDomain{{Domain: "news.example", Fetched: r.Fetched, Changed: r.Changed}}))
	}
	must(w.RecordTrap(ctx, store.TrapEvent{RunID: f.runs[2], At: clock, Domain: "news.example", Kind: "pattern",
		Pattern: `/calendar/<script>`, Detail: "30 URLs"}))
	// the index step that follows every run
	if _, err := textindex.Update(ctx, w, arch); err != nil {
		t.Fatal(err)
	}
	must(w.Close())

	f.db, err = store.OpenReadOnly(ctx, dbPath)
	must(err)
	f.srv, err = serve.New(serve.Options{DB: f.db, Archive: arch, Delay: 10 * time.Second, LoopbackDelay: 20 * time.Millisecond,
		Explain: func(ctx context.Context, u string) (*serve.Explanation, error) {
			return &serve.Explanation{Facts: []serve.Fact{{Name: "url", Value: u}}, NextRun: []string{"due: fr 1 counts down to 0"}}, nil
		}})
	must(err)
	return f
}

// lastFetch returns the id of the newest fetch of a URL, through the read API under test's sibling.
func lastFetch(t testing.TB, db *store.DB, urlID int64) int64 {
	t.Helper()
	fs, err := db.Fetches(context.Background(), urlID, 0, 1)
	if err != nil || len(fs) != 1 {
		t.Fatalf("fetches of URL %d: %v, %v", urlID, fs, err)
	}
	return fs[0].ID
}

// get serves one request in-process.
func (f *fixture) get(t testing.TB, path string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1:8377"
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec
}
