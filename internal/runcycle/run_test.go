package runcycle_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// watchedStore is the SQLite store with the stages' reads counted and the crawl stage's records
// refusable, as by a full disk.
type watchedStore struct {
	*store.DB
	refuse  bool
	recalcs atomic.Int32 // RunHistories: the Frequency Manager reads the run's pages
	links   atomic.Int32 // RunPages: the Link Extractor Manager reads them
}

var errFull = errors.New("no space left on device")

func (s *watchedStore) RecordFetches(ctx context.Context, recs []store.FetchRecord) error {
	if s.refuse {
		return errFull
	}
	return s.DB.RecordFetches(ctx, recs)
}

func (s *watchedStore) RecordFetch(ctx context.Context, r store.FetchRecord) error {
	if s.refuse {
		return errFull
	}
	return s.DB.RecordFetch(ctx, r)
}

func (s *watchedStore) RunHistories(ctx context.Context, run int64, limit int, fn func(store.PageHistory) error) error {
	s.recalcs.Add(1)
	return s.DB.RunHistories(ctx, run, limit, fn)
}

func (s *watchedStore) RunPages(ctx context.Context, run int64) ([]store.RunPage, error) {
	s.links.Add(1)
	return s.DB.RunPages(ctx, run)
}

// runEnv is one database and archive, with a runner over them whose reports are counted.
type runEnv struct {
	db      *watchedStore
	r       *runcycle.Runner
	after   int // Report.After calls
	crawled int // Report.Crawled calls
	hooks   atomic.Int32
}

// newRunEnv opens a SQLite database and an archive in a temporary directory, with loopback sites
// delay apart, a crawl stage of at most maxDuration ("0s": no limit) and a webhook on loopback
// counting its calls.
func newRunEnv(t *testing.T, delay, maxDuration string) *runEnv {
	t.Helper()
	e := &runEnv{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.hooks.Add(1) }))
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "strata.toml")
	conf := "[politeness]\nloopback_delay = \"" + delay + "\"\n" +
		"[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/contact)\"\nmax_duration = \"" + maxDuration + "\"\n" +
		"[notify]\nwhen = \"always\"\nwebhook = \"" + hook.URL + "/hook\"\n"
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Options{File: file, Getenv: func(string) string { return "" }, WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(t.Context(), filepath.Join(dir, "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	arch, err := archive.Open(filepath.Join(dir, "archive"))
	if err != nil {
		t.Fatal(err)
	}
	e.db = &watchedStore{DB: db}
	e.r = &runcycle.Runner{DB: e.db, SQLite: db, Arch: arch, Config: cfg, Log: slog.New(slog.DiscardHandler), Software: "strata-test",
		Report: runcycle.Report{
			Crawled: func(runcycle.Crawled) { e.crawled++ },
			After:   func(*crawler.RecalcStats, *crawler.LinkStats) { e.after++ },
		}}
	return e
}

func (e *runEnv) seed(t *testing.T, urls ...string) {
	t.Helper()
	var seeds []store.NewSeed
	for _, u := range urls {
		host := strings.TrimPrefix(u, "http://")
		host = host[:strings.Index(host, "/")]
		seeds = append(seeds, store.NewSeed{URL: u, Host: host, Level: 2, FrMax: 1})
	}
	if _, err := e.db.AddSeeds(t.Context(), seeds); err != nil {
		t.Fatal(err)
	}
}

func (e *runEnv) lastRun(t *testing.T) store.Run {
	t.Helper()
	runs, err := e.db.RecentRuns(t.Context(), 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	return runs[0]
}

// TestRunFollowsTheCrawlOnlyWhenItEndedNormally: recalc and links run on what the crawl stage
// did when it ended normally or its time window closed, and never after a failure or a signal;
// the hooks hear of every run that did not fail, once; strata crawl's run has neither.
func TestRunFollowsTheCrawlOnlyWhenItEndedNormally(t *testing.T) {
	for _, tc := range []struct {
		name             string
		delay, stageTime string
		// prepare sets the case up; cancel stops the run as a signal would.
		prepare   func(e *runEnv, site *testweb.Site, cancel context.CancelFunc)
		opts      runcycle.Options
		wantErr   error // nil: Run succeeds
		anyErr    bool  // Run fails, with whatever error
		wantAfter bool  // recalc and links ran
		status    string
		hooks     int32
	}{
		{name: "ended normally", delay: "20ms", stageTime: "0s",
			wantAfter: true, status: "completed", hooks: 1},
		// The site's gap is far longer than the stage may last, so the stage ends by its time
		// limit with pages still due, whatever the machine's speed.
		{name: "stopped by its time limit", delay: "30s", stageTime: "300ms",
			wantAfter: true, status: "interrupted", hooks: 1},
		{name: "failed: a record refused", delay: "20ms", stageTime: "0s",
			prepare: func(e *runEnv, _ *testweb.Site, _ context.CancelFunc) { e.db.refuse = true },
			wantErr: errFull, status: "failed"},
		{name: "stopped by a signal", delay: "20ms", stageTime: "0s",
			prepare: func(_ *runEnv, site *testweb.Site, cancel context.CancelFunc) {
				site.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					cancel()
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte(`<p>home</p> <a href="/a">a</a>`))
				}))
			},
			anyErr: true, status: "interrupted"},
		{name: "crawl stage alone", delay: "20ms", stageTime: "0s", opts: runcycle.Options{CrawlOnly: true},
			status: "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := testweb.New(t)
			site := web.AddSite(t)
			site.Page("/", `<p>home</p> <a href="/a">a</a>`)
			site.Page("/a", "<p>a</p>")
			site.Page("/b", "<p>b</p>")
			e := newRunEnv(t, tc.delay, tc.stageTime)
			e.seed(t, site.URL("/"), site.URL("/b"))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.prepare != nil {
				tc.prepare(e, site, cancel)
			}
			err := e.r.Run(ctx, tc.opts)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("Run: %v; want %v", err, tc.wantErr)
			case tc.anyErr && err == nil:
				t.Error("Run succeeded; want its error")
			case tc.wantErr == nil && !tc.anyErr && err != nil:
				t.Errorf("Run: %v", err)
			}
			ran := e.db.recalcs.Load() > 0 || e.db.links.Load() > 0 || e.after > 0
			if ran != tc.wantAfter {
				t.Errorf("recalc read the run %d times, links %d, After reported %d times; want them run: %v",
					e.db.recalcs.Load(), e.db.links.Load(), e.after, tc.wantAfter)
			}
			if tc.wantAfter && (e.db.recalcs.Load() != 1 || e.db.links.Load() != 1 || e.after != 1) {
				t.Errorf("recalc read the run %d times, links %d, After reported %d times; want once each",
					e.db.recalcs.Load(), e.db.links.Load(), e.after)
			}
			if e.crawled != 1 {
				t.Errorf("Crawled reported %d times; want once", e.crawled)
			}
			run := e.lastRun(t)
			if run.Status != tc.status || run.EndedAt.IsZero() {
				t.Errorf("run %d: status %q, ended %v; want %q and ended", run.ID, run.Status, run.EndedAt, tc.status)
			}
			if got := e.hooks.Load(); got != tc.hooks {
				t.Errorf("the webhook was called %d times; want %d", got, tc.hooks)
			}
		})
	}
}

// TestRecoverAndCron: a run a killed process left open is marked interrupted by Recover and seals
// its directory; a cron run stopped while it waits its start offset begins no run.
func TestRecoverAndCron(t *testing.T) {
	e := newRunEnv(t, "20ms", "0s")
	e.seed(t, "http://127.0.0.1:1/")
	ctx := t.Context()
	left, err := e.db.BeginRun(ctx, time.Now().Add(-time.Hour), 0) // a kill -9 before its end
	if err != nil {
		t.Fatal(err)
	}
	crashed, err := runcycle.Recover(ctx, e.db, e.r.Arch, e.r.Log)
	if err != nil || len(crashed) != 1 || crashed[0].ID != left {
		t.Fatalf("Recover: %+v, %v; want run %d", crashed, err, left)
	}
	if run := e.lastRun(t); run.Status != "interrupted" {
		t.Errorf("run %d after Recover: %q; want interrupted", run.ID, run.Status)
	}
	if runs, err := e.db.UnsealedRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("unsealed runs after Recover: %+v, %v", runs, err)
	}

	// In a window of 10,000 hours the day's offset is 0 only when it is under a second: one day
	// in 36 million. The run is stopped as it starts, before the wait.
	e.r.Config.Schedule.StartWindow = 10000 * time.Hour
	stopped, cancel := context.WithCancel(ctx)
	defer cancel()
	e.r.Report.Starting = cancel
	if err := e.r.Run(stopped, runcycle.Options{Cron: true}); err == nil || !strings.Contains(err.Error(), "start offset") {
		t.Errorf("Run --cron, stopped while waiting: %v; want the start offset named", err)
	}
	if run := e.lastRun(t); run.ID != left || e.crawled != 0 {
		t.Errorf("the last run is %d and Crawled was reported %d times; want run %d and none", run.ID, e.crawled, left)
	}
}
