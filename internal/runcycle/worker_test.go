package runcycle_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/runcycle"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// fakeFleet is a fleet of one worker over the SQLite store: every domain is its own, and the
// election's outcome is the test's.
type fakeFleet struct {
	db        *store.DB
	wins      bool // After elects this worker
	done      int  // Done calls
	elections int  // After calls
}

var _ runcycle.Fleet = (*fakeFleet)(nil)

func (f *fakeFleet) Take(context.Context, string, string, store.HostGap, time.Duration) (store.Lease, error) {
	return store.Lease{Held: true}, nil
}
func (f *fakeFleet) Release(context.Context, string, store.HostGap) error { return nil }
func (f *fakeFleet) Name() string                                         { return "w1" }

// The fake fleet's budget account has no cap: these tests are about the run's sequencing.
func (f *fakeFleet) OpenBudget(context.Context, int64, int, int) (store.Account, error) {
	return store.Account{}, nil
}
func (f *fakeFleet) Spend(_ context.Context, _ int64, _ bool, n int) (int, store.Account, error) {
	return n, store.Account{}, nil
}
func (f *fakeFleet) GiveBack(context.Context, int64, int, int) error        { return nil }
func (f *fakeFleet) Abandoned(context.Context, string) ([]store.Run, error) { return nil, nil }
func (f *fakeFleet) Settle(context.Context, int64, string) error            { return nil }
func (f *fakeFleet) Keep(context.Context, func(error)) func()               { return func() {} }
func (f *fakeFleet) Working(context.Context, int64) (int, error)            { return 0, nil }
func (f *fakeFleet) Done(context.Context, int64) error                      { f.done++; return nil }
func (f *fakeFleet) JoinRun(ctx context.Context, start time.Time, offset time.Duration, _ string) (pgstore.Joined, func(), error) {
	run, err := f.db.BeginRun(ctx, start, offset)
	return pgstore.Joined{Run: run, Start: start}, func() {}, err
}

func (f *fakeFleet) After(context.Context, int64) (func(), bool, error) {
	f.elections++
	if !f.wins {
		return nil, false, nil
	}
	return func() {}, true, nil
}

// TestWorkerFollowsTheCrawlOnlyWhenItEndedNormally: a fleet worker says it is done with the crawl
// stage however the stage ended, but stands for the election that runs recalc and links only
// after a stage that ended normally or by its time limit, and only the winner runs them, records
// the run's end and calls the hooks.
func TestWorkerFollowsTheCrawlOnlyWhenItEndedNormally(t *testing.T) {
	for _, tc := range []struct {
		name             string
		delay, stageTime string
		wins             bool
		prepare          func(e *runEnv, site *testweb.Site, cancel context.CancelFunc)
		wantErr          error
		anyErr           bool
		elected          bool   // stood for the election
		wantAfter        bool   // recalc and links ran
		status           string // the run's status afterwards
	}{
		{name: "won the election", delay: "20ms", stageTime: "0s", wins: true,
			elected: true, wantAfter: true, status: "completed"},
		{name: "lost the election", delay: "20ms", stageTime: "0s",
			elected: true, status: "running"}, // the winner ends it
		{name: "stopped by its time limit", delay: "30s", stageTime: "300ms", wins: true,
			elected: true, wantAfter: true, status: "interrupted"},
		{name: "failed: a record refused", delay: "20ms", stageTime: "0s", wins: true,
			prepare: func(e *runEnv, _ *testweb.Site, _ context.CancelFunc) { e.db.refuse = true },
			wantErr: errFull, status: "running"},
		{name: "stopped by a signal", delay: "20ms", stageTime: "0s", wins: true,
			prepare: func(_ *runEnv, site *testweb.Site, cancel context.CancelFunc) {
				site.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					cancel()
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte(`<p>home</p>`))
				}))
			},
			anyErr: true, status: "running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			web := testweb.New(t)
			site := web.AddSite(t)
			site.Page("/", `<p>home</p> <a href="/a">a</a>`)
			site.Page("/a", "<p>a</p>")
			site.Page("/b", "<p>b</p>")
			e := newRunEnv(t, tc.delay, tc.stageTime)
			e.seed(t, site.URL("/"), site.URL("/b"))
			finished := 0
			e.r.Report.Finished = func(int64, string, int) { finished++ }
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.prepare != nil {
				tc.prepare(e, site, cancel)
			}
			f := &fakeFleet{db: e.db.DB, wins: tc.wins}
			err := e.r.Worker(ctx, f)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("Worker: %v; want %v", err, tc.wantErr)
			case tc.anyErr && err == nil:
				t.Error("Worker succeeded; want its error")
			case tc.wantErr == nil && !tc.anyErr && err != nil:
				t.Errorf("Worker: %v", err)
			}
			if f.done != 1 {
				t.Errorf("Done called %d times; want once", f.done)
			}
			if got := f.elections > 0; got != tc.elected || f.elections > 1 {
				t.Errorf("stood for the election %d times; want %v", f.elections, tc.elected)
			}
			ran := e.db.recalcs.Load() > 0 || e.db.links.Load() > 0 || e.after > 0
			if ran != tc.wantAfter || (tc.wantAfter && (e.db.recalcs.Load() != 1 || e.db.links.Load() != 1 || e.after != 1)) {
				t.Errorf("recalc read the run %d times, links %d, After reported %d times; want once each: %v",
					e.db.recalcs.Load(), e.db.links.Load(), e.after, tc.wantAfter)
			}
			if want := map[bool]int{true: 1}[tc.wantAfter]; finished != want {
				t.Errorf("Finished reported %d times; want %d", finished, want)
			}
			if run := e.lastRun(t); run.Status != tc.status {
				t.Errorf("run %d: status %q; want %q", run.ID, run.Status, tc.status)
			}
			if want := map[bool]int32{true: 1}[tc.wantAfter]; e.hooks.Load() != want {
				t.Errorf("the webhook was called %d times; want %d (once, by the worker that ends the run)", e.hooks.Load(), want)
			}
		})
	}
}
