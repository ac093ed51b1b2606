// Package storetest is the conformance suite of strata's store roles: one set of named subtests
// that every backend runs from its own tests, given a constructor (restic's backend tests are the
// model). It exercises each role through the interface the crawler defines for it — frontier,
// recorder, robots cache, selective rule, hints, traps, politeness, budget, runs — and nothing
// else: no SQL, no file paths, so a second backend passes or fails it on the same terms.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// Roles is a store under test: every role the crawler defines, the two the command line drives
// around a run, seeding and the run's lifecycle, and strata traps' report.
type Roles interface {
	crawler.CycleStore
	Seeds
	Runs
	TrapReport
}

// TrapReport is what strata traps reads, and what its --clear writes.
type TrapReport interface {
	TrapEvents(ctx context.Context, runs int) ([]store.TrapEvent, error)
	EachURL(ctx context.Context, fn func(store.URLRow) error) error
	ForgetTrapRules(ctx context.Context, domainOrUnit string) (rules, released int, err error)
}

// Seeds plants seeds, as strata seed add does.
type Seeds interface {
	AddSeeds(ctx context.Context, seeds []store.NewSeed) ([]store.SeedOutcome, error)
}

// Runs begins and ends runs, and lists a run's fetches for the manifest its seal writes;
// RecentRuns (crawler.RunStore) lists the runs.
type Runs interface {
	BeginRun(ctx context.Context, started time.Time, offset time.Duration) (int64, error)
	FinishRun(ctx context.Context, r store.Run) error
	RunManifest(ctx context.Context, runID int64, fn func(store.ManifestEntry) error) error
}

// The per-role suites below let a backend prove one role at a time. Each takes the role under test
// and what its tests need to set the scene: seeds, runs, and the fetch records that move a URL out
// of the due set (no frontier test can do without them). A method a test needs from a role not its
// own is named on its own, so a backend implements it early without the whole of that role.

// FrontierRoles is what the frontier's tests need.
type FrontierRoles interface {
	crawler.Frontier
	crawler.FetchRecorder
	Seeds
	Runs
	URLsPerHost(ctx context.Context) (map[string]int, error)
}

// RecorderRoles is what the recorder's tests need.
type RecorderRoles interface {
	FrontierRoles
	crawler.Recorder
	BlockedURLs(ctx context.Context, host string) ([]store.BlockedURL, error)
}

// RobotsRoles is what the robots cache's tests need.
type RobotsRoles interface {
	crawler.RobotsStore
}

// PoliteRoles is what the politeness tests need.
type PoliteRoles interface {
	FrontierRoles
	crawler.PoliteStore
}

// SelectiveRoles is what the selective rule's tests need.
type SelectiveRoles interface {
	FrontierRoles
	crawler.SelectiveStore
}

// TrapRoles is what the trap defences' tests need.
type TrapRoles interface {
	RecorderRoles
	crawler.TrapStore
	TrapReport
}

// HintRoles is what the hints' tests need.
type HintRoles interface {
	FrontierRoles
	crawler.HintStore
	SaveRobots(ctx context.Context, r store.Robots) error
}

// BudgetRoles is what the budget's tests need.
type BudgetRoles interface {
	RecorderRoles
	crawler.BudgetStore
	crawler.ReleaseDayStore
}

// RunRoles is what the runs' tests need.
type RunRoles interface {
	Runs
	crawler.RunStore
}

// suite is one role's named subtests over the store type S that role needs.
type suite[S any] []struct {
	name string
	test func(*testing.T, S)
}

func (s suite[S]) run(t *testing.T, open func(t *testing.T) S) {
	for _, tt := range s {
		t.Run(tt.name, func(t *testing.T) { tt.test(t, open(t)) })
	}
}

// Run runs the whole suite. open must return a new, empty store each call, closed by the test's
// cleanup.
func Run(t *testing.T, open func(t *testing.T) Roles) {
	RunFrontier(t, func(t *testing.T) FrontierRoles { return open(t) })
	RunRecorder(t, func(t *testing.T) RecorderRoles { return open(t) })
	RunRobots(t, func(t *testing.T) RobotsRoles { return open(t) })
	RunSelective(t, func(t *testing.T) SelectiveRoles { return open(t) })
	RunHints(t, func(t *testing.T) HintRoles { return open(t) })
	RunTraps(t, func(t *testing.T) TrapRoles { return open(t) })
	RunPoliteness(t, func(t *testing.T) PoliteRoles { return open(t) })
	RunBudget(t, func(t *testing.T) BudgetRoles { return open(t) })
	RunRuns(t, func(t *testing.T) RunRoles { return open(t) })
	RunCycle(t, open)
}

// RunFrontier runs the frontier's subtests (crawler.Frontier).
func RunFrontier(t *testing.T, open func(t *testing.T) FrontierRoles) {
	suite[FrontierRoles]{
		{"Frontier/SeedsAreDue", testSeedsAreDue},
		{"Frontier/NextDueMovesOn", testNextDueMovesOn},
		{"Frontier/Discover", testDiscover},
		{"Frontier/Enqueue", testEnqueue},
		{"Frontier/SetDue", testSetDue},
		{"Frontier/Candidates", testCandidates},
	}.run(t, open)
}

// RunRecorder runs the recorder's subtests (crawler.Recorder).
func RunRecorder(t *testing.T, open func(t *testing.T) RecorderRoles) {
	suite[RecorderRoles]{
		{"Recorder/RecordFetches", testRecordFetches},
		{"Recorder/SetState", testSetState},
		{"Recorder/RunManifest", testRunManifest},
	}.run(t, open)
}

// RunRobots runs the robots cache's subtests (crawler.RobotsStore).
func RunRobots(t *testing.T, open func(t *testing.T) RobotsRoles) {
	suite[RobotsRoles]{{"Robots", testRobots}}.run(t, open)
}

// RunSelective runs the selective rule's subtests (crawler.SelectiveStore).
func RunSelective(t *testing.T, open func(t *testing.T) SelectiveRoles) {
	suite[SelectiveRoles]{{"Selective", testSelective}, {"HubState", testHubState}}.run(t, open)
}

// RunHints runs the hints' subtests (crawler.HintStore).
func RunHints(t *testing.T, open func(t *testing.T) HintRoles) {
	suite[HintRoles]{
		{"Hints", testHints},
		{"Hints/Windows", testHintWindows},
	}.run(t, open)
}

// RunTraps runs the trap defences' subtests (crawler.TrapStore).
func RunTraps(t *testing.T, open func(t *testing.T) TrapRoles) {
	suite[TrapRoles]{
		{"Traps", testTraps},
		{"Traps/Probes", testTrapProbes},
		{"Traps/Report", testTrapReport},
		{"Recorder/Found", testRecordFound},
	}.run(t, open)
}

// RunPoliteness runs the politeness subtests (crawler.PoliteStore).
func RunPoliteness(t *testing.T, open func(t *testing.T) PoliteRoles) {
	suite[PoliteRoles]{{"Politeness", testPoliteness}}.run(t, open)
}

// RunBudget runs the budget's subtests (crawler.BudgetStore, crawler.ReleaseDayStore).
func RunBudget(t *testing.T, open func(t *testing.T) BudgetRoles) {
	suite[BudgetRoles]{
		{"Budget", testBudget},
		{"Budget/Order", testBudgetOrder},
	}.run(t, open)
}

// RunCycle runs the subtests of the roles around the crawl stage: recalc (crawler.RecalcStore), the
// optimal plan (crawler.OptimizeStore), links (crawler.LinkStore), release days
// (crawler.ReleaseStore), models (crawler.ModelStore) and the origins' dates.
func RunCycle(t *testing.T, open func(t *testing.T) Roles) {
	suite[Roles]{
		{"Recalc", testRecalc},
		{"Plan", testPlan},
		{"PlanKeepsDeferrals", testPlanKeepsDeferrals},
		{"Links", testLinks},
		{"ReleaseDays", testReleaseDays},
		{"Models", testModels},
		{"OriginDates", testOriginDates},
	}.run(t, open)
}

// RunRuns runs the runs' subtests (crawler.RunStore).
func RunRuns(t *testing.T, open func(t *testing.T) RunRoles) {
	suite[RunRoles]{{"Runs", testRuns}}.run(t, open)
}

// day0 is the suite's clock: runs start at day0 and a day apart.
var day0 = time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)

// seed adds the URLs as seeds, each on its own host, waiting one run between crawls.
func seed(t *testing.T, st Seeds, urls ...string) {
	t.Helper()
	seeds := make([]store.NewSeed, len(urls))
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		seeds[i] = store.NewSeed{URL: raw, Host: u.Host, FrMax: 1}
	}
	if _, err := st.AddSeeds(t.Context(), seeds); err != nil {
		t.Fatal(err)
	}
}

// begin begins run n (1-based) of the suite's clock and returns its id and start.
func begin(t *testing.T, st Runs, n int) (int64, time.Time) {
	t.Helper()
	start := day0.AddDate(0, 0, n-1)
	id, err := st.BeginRun(t.Context(), start, 0)
	if err != nil {
		t.Fatal(err)
	}
	return id, start
}

// next returns the next due URL of host in run, failing the test if there is none.
func next(t *testing.T, st crawler.Frontier, run int64, host string) *store.DueURL {
	t.Helper()
	u, err := st.NextDue(t.Context(), store.DueQuery{Hosts: []string{host}, Run: run})
	if err != nil {
		t.Fatalf("NextDue(%s): %v", host, err)
	}
	return u
}

// noneDue fails the test unless host has no due URL in run.
func noneDue(t *testing.T, st crawler.Frontier, run int64, host string) {
	t.Helper()
	u, err := st.NextDue(t.Context(), store.DueQuery{Hosts: []string{host}, Run: run})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("NextDue(%s) = %+v, %v; want an error wrapping ErrNotFound", host, u, err)
	}
}

// fetched records a 200 answer for u in run at, with a new content hash, waiting frMax runs.
func fetched(t *testing.T, st crawler.FetchRecorder, u *store.DueURL, run int64, at time.Time, changed bool) {
	t.Helper()
	rec := store.FetchRecord{URLID: u.ID, RunID: run, FetchedAt: at, Status: 200, Size: 10, ContentType: "text/html",
		ContentHash: "h-" + at.Format(time.RFC3339), Changed: changed, Magnitude: -1, NextFr: max(u.FrMax, 1),
		Origin: "http://" + u.Host, Domain: u.Host}
	if err := st.RecordFetch(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

func testSeedsAreDue(t *testing.T, st FrontierRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/", "http://a.test/x", "http://b.test/")
	hosts, err := st.SeedHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(hosts)
	if !slices.Equal(hosts, []string{"a.test", "b.test"}) {
		t.Errorf("SeedHosts = %v, want [a.test b.test]", hosts)
	}
	due, waiting, err := st.Countdown(ctx)
	if err != nil || due != 3 || waiting != 0 {
		t.Errorf("Countdown = %d due, %d waiting, %v; want 3, 0", due, waiting, err)
	}
	dh, err := st.DueHosts(ctx)
	if err != nil || dh["a.test"] != 2 || dh["b.test"] != 1 || len(dh) != 2 {
		t.Errorf("DueHosts = %v, %v; want a.test:2 b.test:1", dh, err)
	}
	newDue, known, err := st.DueSplit(ctx)
	if err != nil || newDue != 3 || known != 0 {
		t.Errorf("DueSplit = %d new, %d known, %v; want 3, 0", newDue, known, err)
	}
	run, _ := begin(t, st, 1)
	u := next(t, st, run, "b.test")
	if u.URL != "http://b.test/" || !u.IsSeed || !u.New || u.Host != "b.test" {
		t.Errorf("NextDue(b.test) = %+v; want the seed http://b.test/, new", u)
	}
	among, err := st.DueAmong(ctx, []int64{u.ID})
	if err != nil || among["b.test"] != 1 || len(among) != 1 {
		t.Errorf("DueAmong(b.test's seed) = %v, %v; want b.test:1", among, err)
	}
}

func testNextDueMovesOn(t *testing.T, st FrontierRoles) {
	seed(t, st, "http://a.test/", "http://a.test/x")
	if _, _, err := st.Countdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	seen := map[string]bool{}
	for range 2 {
		u := next(t, st, run, "a.test")
		if seen[u.URL] {
			t.Fatalf("NextDue handed out %s twice", u.URL)
		}
		seen[u.URL] = true
		fetched(t, st, u, run, start.Add(time.Minute), false)
	}
	noneDue(t, st, run, "a.test")
	due, waiting, err := st.Countdown(t.Context())
	if err != nil || due != 2 || waiting != 0 {
		t.Errorf("Countdown after a run with fr_max 1 = %d due, %d waiting, %v; want 2, 0", due, waiting, err)
	}
	newDue, known, err := st.DueSplit(t.Context())
	if err != nil || newDue != 0 || known != 2 {
		t.Errorf("DueSplit = %d new, %d known, %v; want 0, 2", newDue, known, err)
	}
}

func testDiscover(t *testing.T, st FrontierRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	hub := next(t, st, run, "a.test")
	fetched(t, st, hub, run, start.Add(time.Minute), false)
	found := []store.NewURL{
		{URL: "http://a.test/", Host: "a.test", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "http://a.test/p1", Host: "a.test", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "http://c.test/p2", Host: "c.test", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
	}
	added, err := st.Discover(ctx, found)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, u := range added {
		urls = append(urls, u.URL)
	}
	slices.Sort(urls)
	if !slices.Equal(urls, []string{"http://a.test/p1", "http://c.test/p2"}) {
		t.Errorf("Discover added %v; want the two new URLs", urls)
	}
	if again, err := st.Discover(ctx, found); err != nil || len(again) != 0 {
		t.Errorf("Discover again = %v, %v; want nothing new", again, err)
	}
	if u := next(t, st, run, "c.test"); u.URL != "http://c.test/p2" || u.Level != 1 {
		t.Errorf("NextDue(c.test) = %+v; want the discovered page, level 1", u)
	}
	if u := next(t, st, run, "a.test"); u.URL != "http://a.test/p1" {
		t.Errorf("NextDue(a.test) = %s; want the discovered http://a.test/p1, the seed being crawled", u.URL)
	}
	per, err := st.URLsPerHost(ctx)
	if err != nil || per["a.test"] != 2 || per["c.test"] != 1 {
		t.Errorf("URLsPerHost = %v, %v; want a.test:2 c.test:1", per, err)
	}
}

func testEnqueue(t *testing.T, st FrontierRoles) {
	ctx := t.Context()
	run, start := begin(t, st, 1)
	nu := store.NewURL{URL: "http://a.test/r", Host: "a.test", FrMax: 3}
	id, what, err := st.Enqueue(ctx, nu, start)
	if err != nil || what != store.EnqueuedNew {
		t.Fatalf("Enqueue(new) = %d, %v, %v; want EnqueuedNew", id, what, err)
	}
	u := next(t, st, run, "a.test")
	if u.ID != id {
		t.Fatalf("NextDue = %+v; want the enqueued URL %d", u, id)
	}
	fetched(t, st, u, run, start.Add(time.Minute), false)
	noneDue(t, st, run, "a.test")
	if id2, what, err := st.Enqueue(ctx, nu, start); err != nil || what != store.EnqueuedKnown || id2 != id {
		t.Errorf("Enqueue(crawled in this run) = %d, %v, %v; want %d, EnqueuedKnown", id2, what, err, id)
	}
	noneDue(t, st, run, "a.test")
	run2, start2 := begin(t, st, 2)
	if id2, what, err := st.Enqueue(ctx, nu, start2); err != nil || what != store.EnqueuedDue || id2 != id {
		t.Errorf("Enqueue(crawled in an earlier run) = %d, %v, %v; want %d, EnqueuedDue", id2, what, err, id)
	}
	if u := next(t, st, run2, "a.test"); u.ID != id {
		t.Errorf("NextDue after Enqueue = %+v; want URL %d", u, id)
	}
}

func testSetDue(t *testing.T, st FrontierRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/", "http://b.test/")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, _ := begin(t, st, 1)
	a, b := next(t, st, run, "a.test"), next(t, st, run, "b.test")
	if err := st.SetDue(ctx, nil, []int64{a.ID}); err != nil {
		t.Fatal(err)
	}
	noneDue(t, st, run, "a.test")
	if dh, err := st.DueHosts(ctx); err != nil || dh["a.test"] != 0 || dh["b.test"] != 1 {
		t.Errorf("DueHosts after SetDue(notDue a) = %v, %v; want b.test:1 alone", dh, err)
	}
	if among, err := st.DueAmong(ctx, []int64{a.ID, b.ID}); err != nil || among["a.test"] != 0 || among["b.test"] != 1 {
		t.Errorf("DueAmong = %v, %v; want b.test:1 alone", among, err)
	}
	if err := st.SetDue(ctx, []int64{a.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if u := next(t, st, run, "a.test"); u.ID != a.ID {
		t.Errorf("NextDue after SetDue(due a) = %+v; want URL %d", u, a.ID)
	}
}

func testCandidates(t *testing.T, st FrontierRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/", "http://a.test/y")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	var ids []int64
	err := st.DueCandidates(ctx, run, func(c store.Candidate) error {
		if !c.New || c.Host != "a.test" {
			t.Errorf("DueCandidates gave %+v; want a new page of a.test", c)
		}
		ids = append(ids, c.ID)
		return nil
	})
	if err != nil || len(ids) != 2 {
		t.Fatalf("DueCandidates = %d candidates, %v; want 2", len(ids), err)
	}
	u, err := st.DueByID(ctx, ids[0], run)
	if err != nil || u.ID != ids[0] {
		t.Fatalf("DueByID(%d) = %+v, %v", ids[0], u, err)
	}
	u.FrMax = 5 // waits 5 runs: not due in the next, a candidate to bring forward
	fetched(t, st, u, run, start.Add(time.Minute), false)
	if u, err := st.DueByID(ctx, ids[0], run); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DueByID(fetched) = %+v, %v; want an error wrapping ErrNotFound", u, err)
	}
	_, start2 := begin(t, st, 2)
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	var forward []int64
	if err := st.NextCandidates(ctx, start2, 10, func(c store.Candidate) error {
		forward = append(forward, c.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(forward, ids[:1]) {
		t.Errorf("NextCandidates = %v; want the known page not due yet, %d", forward, ids[0])
	}
	if err := st.NextCandidates(ctx, start, 10, func(c store.Candidate) error {
		t.Errorf("NextCandidates(run 1's start) gave %d, fetched since; want none", c.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func testRecordFetches(t *testing.T, st RecorderRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/", "http://a.test/z")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	a := next(t, st, run, "a.test")
	rec := func(id int64, status int, at time.Duration) store.FetchRecord {
		return store.FetchRecord{URLID: id, RunID: run, FetchedAt: start.Add(at), Status: status, Magnitude: -1, NextFr: 1}
	}
	// A batch with a record of a URL that does not exist stores none of it.
	if err := st.RecordFetches(ctx, []store.FetchRecord{rec(a.ID, 503, time.Minute), rec(a.ID+1000, 200, time.Minute)}); err == nil {
		t.Error("RecordFetches with an unknown URL succeeded")
	}
	if got, err := st.RecentStatuses(ctx, a.ID, 5); err != nil || len(got) != 0 {
		t.Errorf("RecentStatuses after a failed batch = %v, %v; want none", got, err)
	}
	if err := st.RecordFetches(ctx, []store.FetchRecord{rec(a.ID, 503, time.Minute), rec(a.ID, 404, 2*time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordFetch(ctx, rec(a.ID, 200, 3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := st.RecentStatuses(ctx, a.ID, 2)
	if err != nil || !slices.Equal(got, []int{200, 404}) {
		t.Errorf("RecentStatuses(2) = %v, %v; want [200 404], the newest first", got, err)
	}
	if u := next(t, st, run, "a.test"); u.ID == a.ID {
		t.Errorf("NextDue handed out URL %d again after its fetch was recorded", a.ID)
	}
}

// testRunManifest: a run's manifest lists its fetches in the order they were recorded, each with
// its outcome and the page's current version then (the one a 304 kept from an earlier run); an
// error from the caller's function stops the listing and is returned.
func testRunManifest(t *testing.T, st RecorderRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/1", "http://a.test/2", "http://a.test/3")
	run1, start1 := begin(t, st, 1)
	for range 3 {
		u := next(t, st, run1, "a.test")
		rec := store.FetchRecord{URLID: u.ID, RunID: run1, FetchedAt: start1, Status: 200, ContentHash: "h1", Changed: true,
			Magnitude: -1, NextFr: 1, ArchivePath: "r1/" + u.URL[len("http://"):]}
		if err := st.RecordFetch(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run2, start2 := begin(t, st, 2)
	path := func(run string, u *store.DueURL) string { return run + "/" + u.URL[len("http://"):] }
	var first *store.DueURL
	var want []store.ManifestEntry
	for i, status := range []int{200, 304, 301, 418} {
		u := first // the last fetch is of the first URL again, within the run
		if i < 3 {
			u = next(t, st, run2, "a.test")
		}
		rec := store.FetchRecord{URLID: u.ID, RunID: run2, FetchedAt: start2.Add(time.Duration(i) * time.Minute), Status: status,
			Magnitude: -1, NextFr: 1}
		e := store.ManifestEntry{URL: u.URL, Current: path("r1", u)}
		switch status {
		case 200:
			first = u
			rec.ContentHash, rec.Changed, rec.ArchivePath = "h2", true, path("r2", u)
			e.Outcome, e.Current = "changed", rec.ArchivePath
		case 304:
			rec.NotModified = true
			e.Outcome = "not_modified"
		case 301:
			e.Outcome = "redirect"
		case 418:
			e.Outcome, e.Current = "http_418", path("r2", u)
		}
		if err := st.RecordFetch(ctx, rec); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	var got []store.ManifestEntry
	if err := st.RunManifest(ctx, run2, func(e store.ManifestEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("manifest of run 2:\n%+v\nwant\n%+v", got, want)
	}
	stop := errors.New("stop")
	calls := 0
	err := st.RunManifest(ctx, run2, func(store.ManifestEntry) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("RunManifest with a function that fails on its second call: %d calls, %v; want 2 and its error", calls, err)
	}
}

func testSetState(t *testing.T, st RecorderRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/", "http://a.test/private")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, _ := begin(t, st, 1)
	u := next(t, st, run, "a.test")
	if err := st.SetState(ctx, u.ID, "blocked"); err != nil {
		t.Fatal(err)
	}
	v := next(t, st, run, "a.test")
	if v.ID == u.ID {
		t.Fatalf("NextDue handed out blocked URL %s", u.URL)
	}
	if err := st.SetState(ctx, v.ID, "filtered"); err != nil {
		t.Fatal(err)
	}
	noneDue(t, st, run, "a.test")
	blocked, err := st.BlockedURLs(ctx, "a.test")
	if err != nil || len(blocked) != 1 || blocked[0].ID != u.ID || blocked[0].URL != u.URL {
		t.Errorf("BlockedURLs = %+v, %v; want %s alone, not the filtered %s", blocked, err, u.URL, v.URL)
	}
	if err := st.SetState(ctx, u.ID, "active"); err != nil {
		t.Fatal(err)
	}
	if blocked, err := st.BlockedURLs(ctx, "a.test"); err != nil || len(blocked) != 0 {
		t.Errorf("BlockedURLs after SetState(active) = %+v, %v; want none", blocked, err)
	}
}

func testRobots(t *testing.T, st RobotsRoles) {
	ctx := t.Context()
	if r, err := st.RobotsCache(ctx, "http://a.test"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RobotsCache(never fetched) = %+v, %v; want an error wrapping ErrNotFound", r, err)
	}
	want := store.Robots{Origin: "http://a.test", Domain: "a.test", Status: 200, Body: []byte("User-agent: *\nDisallow: /p\n"),
		FetchedAt: day0, ExpiresAt: day0.Add(24 * time.Hour), CrawlDelay: 3 * time.Second}
	if err := st.SaveRobots(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := st.RobotsCache(ctx, "http://a.test")
	if err != nil {
		t.Fatal(err)
	}
	if got.Origin != want.Origin || got.Domain != want.Domain || got.Status != 200 || string(got.Body) != string(want.Body) ||
		!got.FetchedAt.Equal(want.FetchedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) || got.CrawlDelay != want.CrawlDelay {
		t.Errorf("RobotsCache = %+v; want %+v", got, want)
	}
	want.Status, want.Body = 404, nil
	if err := st.SaveRobots(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got, err := st.RobotsCache(ctx, "http://a.test"); err != nil || got.Status != 404 || len(got.Body) != 0 {
		t.Errorf("RobotsCache after a second SaveRobots = %+v, %v; want the 404 that replaced it", got, err)
	}
	if _, err := st.RobotsCache(ctx, "http://b.test"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RobotsCache(another origin) = %v; want an error wrapping ErrNotFound", err)
	}
}

// testHubState: a due URL carries its hub state as SetHub stored it, and says so (HubStored), so
// that the selective rule can leave a state that did not change unwritten; a URL no rule has
// judged reports the defaults, threshold 0.40 and no child ratio (-1).
func testHubState(t *testing.T, st SelectiveRoles) {
	ctx := t.Context()
	judged, never := "http://a.test/judged", "http://a.test/never"
	seed(t, st, judged, never)
	run, _ := begin(t, st, 1)
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	if err := st.DueCandidates(ctx, run, func(c store.Candidate) error { ids[c.URL] = c.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHub(ctx, ids[judged], 0.3, 0.25); err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string][2]float64{judged: {0.3, 0.25}, never: {0.40, -1}} {
		d, err := st.DueByID(ctx, ids[u], run)
		if err != nil {
			t.Fatal(err)
		}
		if !d.HubStored || d.Threshold != want[0] || d.ChildRatio != want[1] {
			t.Errorf("%s: HubStored %v, threshold %v, child ratio %v; want true, %v, %v", u, d.HubStored, d.Threshold, d.ChildRatio, want[0], want[1])
		}
	}
}

func testSelective(t *testing.T, st SelectiveRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	hub := next(t, st, run, "a.test")
	if ok, err := st.HasChildren(ctx, hub.ID); err != nil || ok {
		t.Errorf("HasChildren(no children) = %v, %v; want false", ok, err)
	}
	fetched(t, st, hub, run, start.Add(time.Minute), false)
	if _, err := st.Discover(ctx, []store.NewURL{
		{URL: "http://a.test/c1", Host: "a.test", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
		{URL: "http://b.test/c2", Host: "b.test", Level: 1, FrMax: 1, ParentID: hub.ID, RootID: hub.ID},
	}); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.HasChildren(ctx, hub.ID); err != nil || !ok {
		t.Errorf("HasChildren = %v, %v; want true", ok, err)
	}
	if kids, err := st.ChildRecords(ctx, hub.ID, 10); err != nil || len(kids) != 0 {
		t.Errorf("ChildRecords(children never fetched) = %v, %v; want none", kids, err)
	}
	for _, h := range []string{"a.test", "b.test"} {
		fetched(t, st, next(t, st, run, h), run, start.Add(2*time.Minute), false)
	}
	kids, err := st.ChildRecords(ctx, hub.ID, 10)
	if err != nil || len(kids) != 2 || len(kids[0]) != 1 || len(kids[1]) != 1 || kids[0][0].Run != run {
		t.Errorf("ChildRecords = %+v, %v; want one record of run %d for each of 2 children", kids, err, run)
	}
	if err := st.SetHub(ctx, hub.ID, 0.4, 0.5); err != nil {
		t.Fatal(err)
	}
	run2, start2 := begin(t, st, 2)
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	// A store that reports the hub's state as stored (HubStored) lets the selective rule skip
	// writes that change nothing: what it reports must be what SetHub stored.
	if u, err := st.DueByID(ctx, hub.ID, run2); err != nil || u.Threshold != 0.4 || (u.HubStored && u.ChildRatio != 0.5) {
		t.Errorf("DueByID(hub) after SetHub(0.4, 0.5) = %+v, %v; want threshold 0.4 (and child ratio 0.5 if reported)", u, err)
	}
	// Children fetched once give quiet no evidence to approve: nothing may be skipped.
	n, err := st.SkipSubtree(ctx, hub.ID, run2, 3, func([]store.Record) bool { return false })
	if err != nil || n != 0 {
		t.Errorf("SkipSubtree(quiet never approves) = %d, %v; want 0", n, err)
	}
	n, err = st.SkipSubtree(ctx, hub.ID, run2, 3, func([]store.Record) bool { return true })
	if err != nil || n != 2 {
		t.Fatalf("SkipSubtree(quiet approves) = %d, %v; want 2", n, err)
	}
	noneDue(t, st, run2, "b.test")
	hosts, err := st.ForceChildren(ctx, hub.ID, start2)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(hosts)
	if hosts = slices.Compact(hosts); !slices.Equal(hosts, []string{"a.test", "b.test"}) {
		t.Errorf("ForceChildren = %v; want the children's hosts a.test, b.test", hosts)
	}
}

func testHints(t *testing.T, st HintRoles) {
	ctx := t.Context()
	const origin = "http://a.test"
	if h, err := st.HostHints(ctx, origin); err != nil || !h.ReadAt.IsZero() || len(h.Feeds) != 0 || h.Agreed != 0 {
		t.Errorf("HostHints(never contacted) = %+v, %v; want the zero value", h, err)
	}
	seed(t, st, "http://a.test/", "http://a.test/news")
	// Only an origin strata has contacted, its robots.txt read, has hints to read again.
	if stale, err := st.StaleHints(ctx, day0); err != nil || len(stale) != 0 {
		t.Errorf("StaleHints(never contacted) = %v, %v; want none", stale, err)
	}
	if err := st.SaveRobots(ctx, store.Robots{Origin: origin, Domain: "a.test", Status: 404, FetchedAt: day0}); err != nil {
		t.Fatal(err)
	}
	if err := st.HintsRead(ctx, origin, "a.test", day0); err != nil {
		t.Fatal(err)
	}
	if err := st.AddFeeds(ctx, origin, "a.test", []string{"http://a.test/feed.xml"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct{ agreed, changed bool }{{true, true}, {true, false}, {false, true}} {
		if err := st.ObserveHint(ctx, origin, "a.test", o.agreed, o.changed); err != nil {
			t.Fatal(err)
		}
	}
	h, err := st.HostHints(ctx, origin)
	if err != nil {
		t.Fatal(err)
	}
	if !h.ReadAt.Equal(day0) || !slices.Equal(h.Feeds, []string{"http://a.test/feed.xml"}) || h.Agreed != 2 || h.Disagreed != 1 {
		t.Errorf("HostHints = %+v; want read at %v, one feed, 2 agreed, 1 disagreed", h, day0)
	}
	stale, err := st.StaleHints(ctx, day0.Add(time.Hour))
	if err != nil || !slices.Equal(stale, []string{origin}) {
		t.Errorf("StaleHints(after the read) = %v, %v; want [%s]", stale, err, origin)
	}
	if stale, err := st.StaleHints(ctx, day0.Add(-time.Hour)); err != nil || len(stale) != 0 {
		t.Errorf("StaleHints(before the read) = %v, %v; want none", stale, err)
	}
	known, unknown, err := st.ApplyHints(ctx, "sitemap", []store.Hint{
		{URL: "http://a.test/news", LastMod: "2026-03-01"}, {URL: "http://a.test/unknown"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != 1 || known[0].URL != "http://a.test/news" || known[0].Host != "a.test" || known[0].State != "active" || known[0].Fetched {
		t.Errorf("ApplyHints known = %+v; want http://a.test/news, active, never fetched", known)
	}
	if !slices.Equal(unknown, []string{"http://a.test/unknown"}) {
		t.Errorf("ApplyHints unknown = %v; want [http://a.test/unknown]", unknown)
	}
	// Deferring a due page takes it out of the due set; resuming puts it back on its schedule.
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, _ := begin(t, st, 1)
	if err := st.DeferByHint(ctx, []int64{known[0].ID}, 10); err != nil {
		t.Fatal(err)
	}
	if u := next(t, st, run, "a.test"); u.ID == known[0].ID {
		t.Errorf("NextDue handed out %s, deferred by its hint", u.URL)
	}
	if n, err := st.ResumeDeferred(ctx, origin, "a.test"); err != nil || n != 1 {
		t.Errorf("ResumeDeferred = %d, %v; want 1", n, err)
	}
}

func testTraps(t *testing.T, st TrapRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/")
	if _, err := st.Discover(ctx, []store.NewURL{
		{URL: "http://a.test/cal/1", Host: "a.test", Level: 1, FrMax: 1},
		{URL: "http://a.test/cal/2", Host: "a.test", Level: 1, FrMax: 1},
		{URL: "http://a.test/page", Host: "a.test", Level: 1, FrMax: 1},
	}); err != nil {
		t.Fatal(err)
	}
	run, _ := begin(t, st, 1)
	if err := st.RecordTrap(ctx, store.TrapEvent{RunID: run, At: day0, Domain: "a.test", Kind: "pattern", Pattern: "/cal/*"}); err != nil {
		t.Fatal(err)
	}
	rule := store.TrapRule{Domain: "a.test", Unit: "a.test/cal/", Throttled: true, Reason: "pattern", Judged: 4, Dups: 3,
		Probes: 1, ProbeEvery: 2, FirstRun: run, LastRun: run, SinceRun: run}
	id, err := st.SaveTrapRule(ctx, rule)
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := st.SaveTrapRule(ctx, rule); err != nil || id2 != id {
		t.Errorf("SaveTrapRule(the same domain and unit) = %d, %v; want the same id %d", id2, err, id)
	}
	held, wasDue, err := st.HoldURLs(ctx, id, []string{"http://a.test/cal/"}, func(string) bool { return true })
	if err != nil || held != 2 || wasDue != 2 {
		t.Errorf("HoldURLs = %d held, %d due, %v; want 2, 2", held, wasDue, err)
	}
	rules, err := st.TrapRules(ctx)
	if err != nil || len(rules) != 1 || rules[0].ID != id || !rules[0].Throttled || rules[0].Unit != rule.Unit || rules[0].Held != 2 {
		t.Errorf("TrapRules = %+v, %v; want the rule, throttled, holding 2", rules, err)
	}
	for range 2 {
		if u := next(t, st, run, "a.test"); u.URL == "http://a.test/cal/1" || u.URL == "http://a.test/cal/2" {
			t.Fatalf("NextDue handed out held URL %s", u.URL)
		} else if err := st.SetState(ctx, u.ID, "filtered"); err != nil {
			t.Fatal(err)
		}
	}
	noneDue(t, st, run, "a.test")
	hosts, due, err := st.ReleaseTrapRule(ctx, id)
	if err != nil || due != 2 || !slices.Equal(slices.Compact(hosts), []string{"a.test"}) {
		t.Errorf("ReleaseTrapRule = %v, %d due, %v; want a.test, 2", hosts, due, err)
	}
	if u := next(t, st, run, "a.test"); u.URL != "http://a.test/cal/1" && u.URL != "http://a.test/cal/2" {
		t.Errorf("NextDue after ReleaseTrapRule = %s; want a released URL", u.URL)
	}
	rule.ID, rule.Throttled, rule.Reason = id, false, ""
	if err := st.SaveTrapRules(ctx, []store.TrapRule{rule}, []int64{id}, 0); err != nil {
		t.Fatal(err)
	}
	if rules, err := st.TrapRules(ctx); err != nil || len(rules) != 0 {
		t.Errorf("TrapRules after dropping the rule = %+v, %v; want none", rules, err)
	}
}

// testTrapReport: what strata traps reads (the recent events, every URL) and what --clear does
// (the rules forgotten, their held URLs due again).
func testTrapReport(t *testing.T, st TrapRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/")
	if _, err := st.Discover(ctx, []store.NewURL{
		{URL: "http://a.test/cal/1", Host: "a.test", Level: 1, FrMax: 1},
		{URL: "http://a.test/cal/2", Host: "a.test", Level: 1, FrMax: 1},
	}); err != nil {
		t.Fatal(err)
	}
	var urls []string
	if err := st.EachURL(ctx, func(r store.URLRow) error {
		if r.Host != "a.test" || r.Added.IsZero() {
			t.Errorf("EachURL row %+v; want host a.test and the time it was added", r)
		}
		urls = append(urls, r.URL)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(urls); !slices.Equal(urls, []string{"http://a.test/", "http://a.test/cal/1", "http://a.test/cal/2"}) {
		t.Errorf("EachURL gave %v; want the seed and the two found", urls)
	}
	stop := errors.New("enough")
	if err := st.EachURL(ctx, func(store.URLRow) error { return stop }); err != stop {
		t.Errorf("EachURL with fn failing = %v; want fn's error itself", err)
	}

	run1, _ := begin(t, st, 1)
	run2, _ := begin(t, st, 2)
	for _, e := range []store.TrapEvent{{At: day0, Domain: "a.test", Kind: "cleared"},
		{RunID: run1, At: day0.Add(time.Hour), Domain: "a.test", Kind: "duplicates"},
		{RunID: run2, At: day0.Add(2 * time.Hour), Domain: "a.test", Kind: "pattern", Pattern: "/cal/*", Detail: "calendar"}} {
		if err := st.RecordTrap(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	events, err := st.TrapEvents(ctx, 1)
	if err != nil || len(events) != 2 || events[0].RunID != run2 || events[0].Pattern != "/cal/*" || events[0].Detail != "calendar" ||
		!events[0].At.Equal(day0.Add(2*time.Hour)) || events[1].RunID != 0 || events[1].Kind != "cleared" {
		t.Errorf("TrapEvents(last run) = %+v, %v; want run 2's pattern, then the event of no run", events, err)
	}
	if events, err := st.TrapEvents(ctx, 2); err != nil || len(events) != 3 {
		t.Errorf("TrapEvents(last 2 runs) = %+v, %v; want all 3", events, err)
	}

	id, err := st.SaveTrapRule(ctx, store.TrapRule{Domain: "a.test", Unit: "a.test/cal/", Throttled: true, Reason: "pattern",
		FirstRun: run2, LastRun: run2, SinceRun: run2})
	if err != nil {
		t.Fatal(err)
	}
	if held, _, err := st.HoldURLs(ctx, id, []string{"http://a.test/cal/"}, func(string) bool { return true }); err != nil || held != 2 {
		t.Fatalf("HoldURLs = %d, %v; want 2", held, err)
	}
	if rules, released, err := st.ForgetTrapRules(ctx, "b.test"); err != nil || rules != 0 || released != 0 {
		t.Errorf("ForgetTrapRules(b.test) = %d, %d, %v; want nothing", rules, released, err)
	}
	if rules, released, err := st.ForgetTrapRules(ctx, "a.test/cal/"); err != nil || rules != 1 || released != 2 {
		t.Errorf("ForgetTrapRules(a.test/cal/) = %d rules, %d released, %v; want 1 and 2", rules, released, err)
	}
	if rules, err := st.TrapRules(ctx); err != nil || len(rules) != 0 {
		t.Errorf("TrapRules after forgetting = %+v, %v; want none", rules, err)
	}
	seen := map[string]bool{}
	for range 3 {
		u := next(t, st, run2, "a.test")
		seen[u.URL] = true
		if err := st.SetState(ctx, u.ID, "filtered"); err != nil { // moves on to the next
			t.Fatal(err)
		}
	}
	if !seen["http://a.test/cal/1"] || !seen["http://a.test/cal/2"] {
		t.Errorf("NextDue after forgetting the rule gave %v; want the released URLs among them", seen)
	}
}

// testRecordFound: the URLs a page found, recorded with its fetch (FetchRecord.Found), are written
// as Discover writes them — new ones due, or held by their rule, known ones raised to their level —
// and reported in Found.Added; not at all when the batch fails.
func testRecordFound(t *testing.T, st TrapRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/")
	if _, err := st.Discover(ctx, []store.NewURL{{URL: "http://a.test/low", Host: "a.test", FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	hub := next(t, st, run, "a.test")
	rule, err := st.SaveTrapRule(ctx, store.TrapRule{Domain: "a.test", Unit: "a.test/cal/", Throttled: true, Reason: "pattern",
		ProbeEvery: 2, FirstRun: run, LastRun: run, SinceRun: run})
	if err != nil {
		t.Fatal(err)
	}
	link := func(path string, level int, hold int64) store.NewURL {
		return store.NewURL{URL: "http://a.test" + path, Host: "a.test", Level: level, FrMax: 1, ParentID: hub.ID, RootID: hub.ID, Hold: hold}
	}
	page := []store.NewURL{link("/low", 2, 0), link("/new", 1, 0), link("/cal/1", 1, rule), link("/dup", 1, 0), link("/", 0, 0)}
	write, err := st.ToDiscover(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := urlsOf(write), urlsOf(page[:4]); !slices.Equal(got, want) {
		t.Errorf("ToDiscover = %v; want %v: the known seed at its level needs no write", got, want)
	}
	rec := func(id int64, at time.Duration, found ...store.NewURL) store.FetchRecord {
		return store.FetchRecord{URLID: id, RunID: run, FetchedAt: start.Add(at), Status: 200, Magnitude: -1, NextFr: 1,
			Found: &store.Found{URLs: found}}
	}
	// A batch that fails writes none of its URLs, and reports none added.
	bad := []store.FetchRecord{rec(hub.ID, time.Minute, write...), rec(hub.ID+1000, time.Minute)}
	if err := st.RecordFetches(ctx, bad); err == nil {
		t.Fatal("RecordFetches with an unknown URL succeeded")
	}
	if bad[0].Found.Added != nil {
		t.Errorf("Found.Added after a failed batch = %v; want nil", urlsOf(bad[0].Found.Added))
	}
	if again, err := st.ToDiscover(ctx, write); err != nil || len(again) != len(write) {
		t.Errorf("ToDiscover after a failed batch = %v, %v; want all %d still to write", urlsOf(again), err, len(write))
	}
	// Two pages of a batch that found the same new URL: it is added once, for the first.
	batch := []store.FetchRecord{rec(hub.ID, time.Minute, write...), rec(hub.ID, 2*time.Minute, link("/dup", 1, 0))}
	if err := st.RecordFetches(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if got, want := urlsOf(batch[0].Found.Added), urlsOf(page[1:4]); !slices.Equal(got, want) {
		t.Errorf("Found.Added = %v; want %v, the new URLs", got, want)
	}
	if batch[1].Found.Added != nil {
		t.Errorf("Found.Added of the second page = %v; want none, its URL added for the first", urlsOf(batch[1].Found.Added))
	}
	one := rec(hub.ID, 3*time.Minute, link("/one", 1, 0))
	if err := st.RecordFetch(ctx, one); err != nil {
		t.Fatal(err)
	}
	if got := urlsOf(one.Found.Added); !slices.Equal(got, []string{"http://a.test/one"}) {
		t.Errorf("RecordFetch's Found.Added = %v; want [http://a.test/one]", got)
	}
	if again, err := st.ToDiscover(ctx, page); err != nil || len(again) != 0 {
		t.Errorf("ToDiscover after the record = %v, %v; want nothing to write", urlsOf(again), err)
	}
	// The known URL was raised to level 2, so it comes first; the held one never comes.
	if u := next(t, st, run, "a.test"); u.URL != "http://a.test/low" || u.Level != 2 {
		t.Errorf("NextDue = %s at level %d; want http://a.test/low raised to level 2", u.URL, u.Level)
	}
	var due []string
	for {
		u, err := st.NextDue(ctx, store.DueQuery{Hosts: []string{"a.test"}, Run: run})
		if errors.Is(err, store.ErrNotFound) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		due = append(due, u.URL)
		if err := st.SetState(ctx, u.ID, "filtered"); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(due)
	if want := []string{"http://a.test/dup", "http://a.test/low", "http://a.test/new", "http://a.test/one"}; !slices.Equal(due, want) {
		t.Errorf("due URLs = %v; want %v, without the held one", due, want)
	}
	rules, err := st.TrapRules(ctx)
	if err != nil || len(rules) != 1 || rules[0].Held != 1 {
		t.Errorf("TrapRules = %+v, %v; want the rule holding 1 URL", rules, err)
	}
}

func urlsOf(us []store.NewURL) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.URL)
	}
	return out
}

func testPoliteness(t *testing.T, st PoliteRoles) {
	ctx := t.Context()
	last, nxt := day0.Add(time.Hour), day0.Add(time.Hour+10*time.Second)
	if err := st.SaveHostGaps(ctx, []store.HostGap{{Host: "a.test", LastEnd: last, Next: nxt, CrawlDelay: 5 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	// An older state from another process never moves a stored time back; its Crawl-delay is the
	// one last seen.
	if err := st.SaveHostGaps(ctx, []store.HostGap{{Host: "a.test", LastEnd: day0, Next: day0, CrawlDelay: time.Second}}); err != nil {
		t.Fatal(err)
	}
	gaps, err := st.HostGaps(ctx, day0)
	if err != nil {
		t.Fatal(err)
	}
	g := gapOf(gaps, "a.test")
	if g == nil || !g.LastEnd.Equal(last) || !g.Next.Equal(nxt) || g.CrawlDelay != time.Second {
		t.Errorf("HostGaps = %+v; want a.test last %v, next %v, delay 1s", gaps, last, nxt)
	}
	if gaps, err := st.HostGaps(ctx, nxt.Add(time.Second)); err != nil || gapOf(gaps, "a.test") != nil {
		t.Errorf("HostGaps(after its next) = %+v, %v; want a.test left out", gaps, err)
	}
	seed(t, st, "http://b.test/", "http://b.test/2")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	for n, want := range []int{1, 2, 4, 4} {
		runs, moved, err := st.Unreachable(ctx, "b.test", 4)
		if err != nil || runs != want {
			t.Errorf("Unreachable #%d = %d runs, %v; want %d", n+1, runs, err, want)
		}
		if n == 0 && moved != 2 {
			t.Errorf("Unreachable #1 moved %d URLs; want b.test's 2 due ones", moved)
		}
	}
	gaps, err = st.HostGaps(ctx, nxt.Add(time.Hour))
	if g := gapOf(gaps, "b.test"); err != nil || g == nil || g.Unreachable != 4 {
		t.Errorf("HostGaps after 4 unreachable runs = %+v, %v; want b.test unreachable 4", gaps, err)
	}
	if err := st.Reachable(ctx, "b.test"); err != nil {
		t.Fatal(err)
	}
	if runs, _, err := st.Unreachable(ctx, "b.test", 4); err != nil || runs != 1 {
		t.Errorf("Unreachable after Reachable = %d runs, %v; want 1, the count reset", runs, err)
	}
}

func gapOf(gs []store.HostGap, host string) *store.HostGap {
	for i := range gs {
		if gs[i].Host == host {
			return &gs[i]
		}
	}
	return nil
}

func testBudget(t *testing.T, st BudgetRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/", "http://a.test/b", "http://a.test/c")
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateWeights(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := st.Prioritize(ctx, day0, 0.1, nil)
	if err != nil || n != 3 {
		t.Errorf("Prioritize = %d, %v; want the 3 due pages", n, err)
	}
	run, _ := begin(t, st, 1)
	seen := map[int64]bool{}
	for range 3 {
		u := next(t, st, run, "a.test")
		if seen[u.ID] {
			t.Fatalf("NextDue handed out %s twice after Prioritize", u.URL)
		}
		seen[u.ID] = true
		if err := st.SetState(ctx, u.ID, "filtered"); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SaveRunDomains(ctx, run, []store.RunDomain{{Domain: "a.test", Fetched: 3, Changed: 1, Expected: 0.5}}); err != nil {
		t.Fatal(err)
	}
}

// testBudgetOrder: Prioritize ranks the due pages by the cost of leaving them stale, half the days
// since their last fetch times their weight plus c, and the weight is the seed's priority for a
// page nobody links to; NextDue hands them out most costly first.
func testBudgetOrder(t *testing.T, st BudgetRoles) {
	ctx := t.Context()
	var seeds []store.NewSeed
	for _, s := range []struct {
		path     string
		priority float64
	}{{"a", 1}, {"b", 1}, {"c", 8}} {
		seeds = append(seeds, store.NewSeed{URL: "http://x.test/" + s.path, Host: "x.test", FrMax: 1, Priority: s.priority})
	}
	if _, err := st.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, _ := begin(t, st, 1)
	// a was fetched 4 days before the ranking, b and c 2 days: prio a = ½·4·1.1 = 2.2,
	// b = ½·2·1.1 = 1.1, c = ½·2·8.1 = 8.1.
	fetchedAt := map[string]time.Time{"http://x.test/a": day0, "http://x.test/b": day0.AddDate(0, 0, 2), "http://x.test/c": day0.AddDate(0, 0, 2)}
	for range 3 {
		u := next(t, st, run, "x.test")
		fetched(t, st, u, run, fetchedAt[u.URL], false)
	}
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.UpdateWeights(ctx); err != nil || n != 1 {
		t.Errorf("UpdateWeights = %d, %v; want 1, the page of the seed of priority 8", n, err)
	}
	if n, err := st.Prioritize(ctx, day0.AddDate(0, 0, 4), 0.1, nil); err != nil || n != 3 {
		t.Fatalf("Prioritize = %d, %v; want 3", n, err)
	}
	run2, _ := begin(t, st, 2)
	var order []string
	for range 3 {
		u := next(t, st, run2, "x.test")
		order = append(order, u.URL)
		if err := st.SetState(ctx, u.ID, "filtered"); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"http://x.test/c", "http://x.test/a", "http://x.test/b"}; !slices.Equal(order, want) {
		t.Errorf("NextDue after Prioritize handed out %v; want %v", order, want)
	}
}

func testRuns(t *testing.T, st RunRoles) {
	ctx := t.Context()
	if runs, err := st.RecentRuns(ctx, 5); err != nil || len(runs) != 0 {
		t.Fatalf("RecentRuns(no run) = %+v, %v; want none", runs, err)
	}
	first, _ := begin(t, st, 1)
	if err := st.FinishRun(ctx, store.Run{ID: first, StartedAt: day0, EndedAt: day0.Add(time.Hour), Status: "completed", Fetched: 7}); err != nil {
		t.Fatal(err)
	}
	second, start2 := begin(t, st, 2)
	if first == second {
		t.Fatalf("BeginRun gave id %d twice", first)
	}
	runs, err := st.RecentRuns(ctx, 5)
	if err != nil || len(runs) != 2 {
		t.Fatalf("RecentRuns = %+v, %v; want 2 runs", runs, err)
	}
	if runs[0].ID != second || !runs[0].StartedAt.Equal(start2) || !runs[0].EndedAt.IsZero() {
		t.Errorf("RecentRuns[0] = %+v; want run %d, started %v, not ended", runs[0], second, start2)
	}
	if runs[1].ID != first || runs[1].Status != "completed" || runs[1].Fetched != 7 || !runs[1].EndedAt.Equal(day0.Add(time.Hour)) {
		t.Errorf("RecentRuns[1] = %+v; want run %d completed, 7 fetched, ended an hour in", runs[1], first)
	}
	if runs, err := st.RecentRuns(ctx, 1); err != nil || len(runs) != 1 || runs[0].ID != second {
		t.Errorf("RecentRuns(1) = %+v, %v; want run %d alone", runs, err, second)
	}
}

// testHintWindows: an origin's hint counts live in windows (store.HintObservations for agreed and
// disagreed, store.HintChecks for the rest): when a window's total with the new observation reaches
// it, the stored counts are halved, with integer division, before the new one is added.
func testHintWindows(t *testing.T, st HintRoles) {
	ctx := t.Context()
	const origin = "http://a.test"
	var want store.HostHints
	for i := range 90 {
		agreed, changed := i%4 != 1, i%3 != 0
		if err := st.ObserveHint(ctx, origin, "a.test", agreed, changed); err != nil {
			t.Fatal(err)
		}
		a, d := btoi(agreed), btoi(!agreed)
		an, mi, fa := btoi(changed && agreed), btoi(changed && !agreed), btoi(!changed && !agreed)
		if want.Agreed+want.Disagreed+1 >= store.HintObservations {
			want.Agreed, want.Disagreed = want.Agreed/2, want.Disagreed/2
		}
		if want.Announced+want.Missed+want.FalseAlarms+an+mi+fa >= store.HintChecks {
			want.Announced, want.Missed, want.FalseAlarms = want.Announced/2, want.Missed/2, want.FalseAlarms/2
		}
		want.Agreed, want.Disagreed = want.Agreed+a, want.Disagreed+d
		want.Announced, want.Missed, want.FalseAlarms = want.Announced+an, want.Missed+mi, want.FalseAlarms+fa
	}
	got, err := st.HostHints(ctx, origin)
	if err != nil {
		t.Fatal(err)
	}
	if got.Agreed != want.Agreed || got.Disagreed != want.Disagreed || got.Announced != want.Announced ||
		got.Missed != want.Missed || got.FalseAlarms != want.FalseAlarms {
		t.Errorf("HostHints after 90 observations = %+v; want %+v", got, want)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// crawled seeds a.test's pages and fetches each in run 1, the first one changed and stored; it
// returns run 1, its start and the pages by URL.
func crawled(t *testing.T, st Roles, urls ...string) (int64, time.Time, map[string]*store.DueURL) {
	t.Helper()
	seed(t, st, urls...)
	if _, _, err := st.Countdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	pages := map[string]*store.DueURL{}
	for range urls {
		u := next(t, st, run, "a.test")
		pages[u.URL] = u
		i := slices.Index(urls, u.URL)
		rec := store.FetchRecord{URLID: u.ID, RunID: run, FetchedAt: start.Add(time.Duration(i+1) * time.Minute), Status: 200,
			ContentHash: fmt.Sprintf("h%d", i), Changed: i == 0, Magnitude: -1, NextFr: 1}
		if i == 0 {
			rec.ArchivePath = "a.test/v1"
		}
		if err := st.RecordFetch(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	return run, start, pages
}

// testRecalc: RunHistories gives every page fetched in the run its records, the same from the
// pages' rows (a limit up to store.RecentCap) as from the fetch history; SetFrMax restarts a page's
// countdown from its new interval and stores its rate, which BucketLoads then counts.
func testRecalc(t *testing.T, st Roles) {
	ctx := t.Context()
	run, _, pages := crawled(t, st, "http://a.test/", "http://a.test/b")
	a, b := pages["http://a.test/"], pages["http://a.test/b"]
	histories := func(limit int) []store.PageHistory {
		var hs []store.PageHistory
		if err := st.RunHistories(ctx, run, limit, func(h store.PageHistory) error {
			hs = append(hs, h)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return hs
	}
	rows, fetches := histories(10), histories(store.RecentCap+1)
	for _, hs := range [][]store.PageHistory{rows, fetches} {
		if len(hs) != 2 || hs[0].URLID != a.ID || hs[1].URLID != b.ID || hs[0].URL != a.URL || hs[0].FrMax != 1 ||
			len(hs[0].Records) != 1 || hs[0].Records[0] != (store.Record{Run: run, Changed: true}) ||
			len(hs[1].Records) != 1 || hs[1].Records[0] != (store.Record{Run: run}) {
			t.Errorf("RunHistories = %+v; want %d with a changed record of run %d, then %d unchanged", hs, a.ID, run, b.ID)
		}
	}
	if err := st.SetFrMax(ctx, []store.FrMaxUpdate{{URLID: a.ID, FrMax: 3, Was: 1, Rate: 0.2, Bucket: 7}, {URLID: b.ID, FrMax: 1, Was: 1, Rate: -1}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetFrMax(ctx, []store.FrMaxUpdate{{URLID: a.ID, FrMax: 0}}); err == nil {
		t.Error("SetFrMax(fr_max 0) succeeded")
	}
	if due, waiting, err := st.Countdown(ctx); err != nil || due != 1 || waiting != 1 {
		t.Errorf("Countdown after SetFrMax(a: 3) = %d due, %d waiting, %v; want 1, 1", due, waiting, err)
	}
	loads, err := st.BucketLoads(ctx, false)
	want := []store.BucketLoad{{Bucket: -1, Pages: 1, Weight: 1, PerRun: 1}, {Bucket: 7, Pages: 1, Rate: 0.2, Weight: 1, PerRun: 1.0 / 3}}
	if err != nil || len(loads) != 2 || loads[0] != want[0] || loads[1].Bucket != 7 || loads[1].Pages != 1 ||
		math.Abs(loads[1].Rate-0.2) > 1e-12 || math.Abs(loads[1].PerRun-1.0/3) > 1e-12 {
		t.Errorf("BucketLoads = %+v, %v; want %+v", loads, err, want)
	}
}

// testPlan: ApplyPlan gives a bucket's pages the plan's interval and puts the pages crawled in the
// run on their phase, frequency.Phase of their URL's frequency.PageKey; weighted, it matches pages
// by weight class too.
func testPlan(t *testing.T, st Roles) {
	ctx := t.Context()
	run, _, pages := crawled(t, st, "http://a.test/", "http://a.test/b")
	b := pages["http://a.test/b"]
	if err := st.ApplyPlan(ctx, run, true, []store.PlanEntry{{Bucket: -1, Class: 1, FrMax: 9}}); err != nil {
		t.Fatal(err)
	}
	if loads, err := st.BucketLoads(ctx, true); err != nil || len(loads) != 1 || loads[0].PerRun != 2 {
		t.Errorf("BucketLoads after a plan for weight class 1 = %+v, %v; want the 2 pages of class 0 at fr_max 1", loads, err)
	}
	if err := st.ApplyPlan(ctx, run, false, []store.PlanEntry{{Bucket: -1, Class: 0, FrMax: 4}}); err != nil {
		t.Fatal(err)
	}
	if loads, err := st.BucketLoads(ctx, false); err != nil || len(loads) != 1 || loads[0].PerRun != 0.5 {
		t.Errorf("BucketLoads after the plan = %+v, %v; want the 2 pages at fr_max 4", loads, err)
	}
	want := frequency.Phase(run, frequency.PageKey(b.URL), 4)
	for n := 1; n <= 8; n++ {
		if _, _, err := st.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		among, err := st.DueAmong(ctx, []int64{b.ID})
		if err != nil {
			t.Fatal(err)
		}
		if due := among["a.test"] == 1; due != (n >= want) {
			t.Fatalf("after %d countdowns %s is due: %v; want due from countdown %d, frequency.Phase", n, b.URL, due, want)
		}
	}
}

// testPlanKeepsDeferrals: the plan puts a page whose countdown is longer than its new interval back
// on its phase, but leaves a page a trusted origin's hints deferred where they put it, until a
// resume (the origin lost its trust) puts it back on its own schedule.
func testPlanKeepsDeferrals(t *testing.T, st Roles) {
	ctx := t.Context()
	long, deferred := "http://a.test/long", "http://a.test/deferred"
	seed(t, st, long, deferred)
	first, at := begin(t, st, 1)
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for range 2 {
		u := next(t, st, first, "a.test")
		ids[u.URL] = u.ID
		rec := store.FetchRecord{URLID: u.ID, RunID: first, FetchedAt: at, Status: 200, Size: 10, ContentType: "text/html",
			ContentHash: "h", Magnitude: -1, NextFr: map[string]int{long: 30, deferred: 1}[u.URL], Origin: "http://a.test", Domain: "a.test"}
		if err := st.RecordFetch(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	second, _ := begin(t, st, 2)
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.DeferByHint(ctx, []int64{ids[deferred]}, 30); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyPlan(ctx, second, false, []store.PlanEntry{{Bucket: -1, FrMax: 3}}); err != nil {
		t.Fatal(err)
	}
	want := frequency.Phase(second, frequency.PageKey(long), 3)
	for n := 1; n <= 6; n++ {
		if _, _, err := st.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		for u, wantDue := range map[string]bool{long: n >= want, deferred: false} {
			among, err := st.DueAmong(ctx, []int64{ids[u]})
			if err != nil {
				t.Fatal(err)
			}
			if due := among["a.test"] == 1; due != wantDue {
				t.Fatalf("after the plan and %d countdowns %s is due: %v, want %v", n, u, due, wantDue)
			}
		}
	}
	if n, err := st.ResumeDeferred(ctx, "http://a.test", "a.test"); err != nil || n != 1 {
		t.Errorf("ResumeDeferred = %d, %v; want the deferred page", n, err)
	}
	if n, err := st.ResumeDeferred(ctx, "http://a.test", "a.test"); err != nil || n != 0 {
		t.Errorf("a second ResumeDeferred = %d, %v; want none", n, err)
	}
}

// testLinks: RunPages lists the pages of a run with the version it stored; SaveLinks records a
// page's links, resolving those to known URLs, which weigh in UpdateWeights; AddURLs inserts only
// the URLs not known.
func testLinks(t *testing.T, st Roles) {
	ctx := t.Context()
	run, _, pages := crawled(t, st, "http://a.test/", "http://a.test/b")
	a, b := pages["http://a.test/"], pages["http://a.test/b"]
	rp, err := st.RunPages(ctx, run)
	if err != nil || len(rp) != 2 || rp[0].URLID != a.ID || rp[0].Stored != "a.test/v1" || rp[0].RootID != a.ID ||
		rp[1].URLID != b.ID || rp[1].Stored != "" || rp[1].URL != b.URL {
		t.Errorf("RunPages = %+v, %v; want %d stored as a.test/v1, %d stored nothing", rp, err, a.ID, b.ID)
	}
	if err := st.SaveLinks(ctx, a.ID, run, []store.Link{{ToURL: b.URL, Internal: true}, {ToURL: "http://z.test/"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CarryLinks(ctx, a.ID, run); err != nil {
		t.Fatal(err)
	}
	// b has one page linking to it: weight 1 × (1 + log2 2) = 2; z.test was unknown when linked.
	if n, err := st.UpdateWeights(ctx); err != nil || n != 1 {
		t.Errorf("UpdateWeights = %d, %v; want 1, the page linked to", n, err)
	}
	nu := []store.NewURL{{URL: "http://z.test/", Host: "z.test", Level: 1, FrMax: 1, ParentID: a.ID, RootID: a.ID},
		{URL: b.URL, Host: "a.test", Level: 1, FrMax: 1}}
	if n, err := st.AddURLs(ctx, nu, "blocked"); err != nil || n != 1 {
		t.Errorf("AddURLs = %d, %v; want 1, b being known", n, err)
	}
	if n, err := st.AddURLs(ctx, nu, "blocked"); err != nil || n != 0 {
		t.Errorf("AddURLs again = %d, %v; want 0", n, err)
	}
	if blocked, err := st.BlockedURLs(ctx, "z.test"); err != nil || len(blocked) != 1 {
		t.Errorf("BlockedURLs(z.test) = %+v, %v; want the URL added as blocked", blocked, err)
	}
}

// testReleaseDays: Timelines gives the pages that changed in the run their successful fetches;
// SetReleaseDays stores masks that ReleasePages lists.
func testReleaseDays(t *testing.T, st Roles) {
	ctx := t.Context()
	run, start, pages := crawled(t, st, "http://a.test/", "http://a.test/b")
	a := pages["http://a.test/"]
	var tls []store.Timeline
	if err := st.Timelines(ctx, run, 5, func(tl store.Timeline) error {
		tls = append(tls, tl)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(tls) != 1 || tls[0].URLID != a.ID || len(tls[0].At) != 1 || !tls[0].At[0].Equal(start.Add(time.Minute)) ||
		!slices.Equal(tls[0].Changed, []bool{true}) {
		t.Errorf("Timelines = %+v; want page %d's one changed fetch", tls, a.ID)
	}
	if err := st.SetReleaseDays(ctx, map[int64]uint8{a.ID: 0b0010100}); err != nil {
		t.Fatal(err)
	}
	rel, err := st.ReleasePages(ctx)
	if err != nil || len(rel) != 1 || rel[0].ID != a.ID || rel[0].ReleaseDays != 0b0010100 || !rel[0].LastFetch.Equal(start.Add(time.Minute)) {
		t.Errorf("ReleasePages = %+v, %v; want page %d with mask 0b0010100", rel, err, a.ID)
	}
}

// testModels: a model is stored under its name and replaced by the next.
func testModels(t *testing.T, st Roles) {
	ctx := t.Context()
	if m, err := st.Model(ctx, "rates"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Model(never saved) = %q, %v; want an error wrapping ErrNotFound", m, err)
	}
	for _, body := range []string{`{"v":1}`, `{"v":2}`} {
		if err := st.SaveModel(ctx, "rates", []byte(body)); err != nil {
			t.Fatal(err)
		}
		if m, err := st.Model(ctx, "rates"); err != nil || string(m) != body {
			t.Errorf("Model = %q, %v; want %q", m, err, body)
		}
	}
}

// testOriginDates: each fetch's date check counts for its origin, in a window of
// store.DateObservations: the stored counts are halved (integer division) when the total with the
// new one reaches it.
func testOriginDates(t *testing.T, st Roles) {
	ctx := t.Context()
	run, start, pages := crawled(t, st, "http://a.test/")
	a := pages["http://a.test/"]
	var recs []store.FetchRecord
	var want store.Dates
	for i := range 80 {
		check := 1
		if i%3 == 0 {
			check = -1
		}
		recs = append(recs, store.FetchRecord{URLID: a.ID, RunID: run, FetchedAt: start.Add(time.Hour), Status: 200, Magnitude: -1,
			NextFr: 1, Origin: "http://a.test", Domain: "a.test", DateCheck: check})
		ag, co := btoi(check > 0), btoi(check < 0)
		if want.Agreed+want.Contradicted+ag+co >= store.DateObservations {
			want.Agreed, want.Contradicted = want.Agreed/2, want.Contradicted/2
		}
		want.Agreed, want.Contradicted = want.Agreed+ag, want.Contradicted+co
	}
	if err := st.RecordFetches(ctx, recs); err != nil {
		t.Fatal(err)
	}
	got, err := st.OriginDates(ctx)
	if err != nil || len(got) != 1 || got["http://a.test"] != want {
		t.Errorf("OriginDates = %v, %v; want http://a.test: %+v", got, err, want)
	}
}

// testTrapProbes: each countdown lets a throttled rule whose probe is due release its probe, a
// never-fetched URL it holds before any known one, the lowest id first among equals; the next
// countdown takes a fetched probe back under the rule and releases the next.
func testTrapProbes(t *testing.T, st TrapRoles) {
	ctx := t.Context()
	seed(t, st, "http://a.test/")
	if _, err := st.Discover(ctx, []store.NewURL{
		{URL: "http://a.test/cal/1", Host: "a.test", Level: 1, FrMax: 1},
		{URL: "http://a.test/cal/2", Host: "a.test", Level: 1, FrMax: 1},
		{URL: "http://a.test/cal/3", Host: "a.test", Level: 1, FrMax: 1},
	}); err != nil {
		t.Fatal(err)
	}
	run, start := begin(t, st, 1)
	ids := map[string]int64{}
	if err := st.DueCandidates(ctx, run, func(c store.Candidate) error {
		ids[c.URL] = c.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cal := []int64{ids["http://a.test/cal/1"], ids["http://a.test/cal/2"], ids["http://a.test/cal/3"]}
	id, err := st.SaveTrapRule(ctx, store.TrapRule{Domain: "a.test", Unit: "a.test/cal/", Throttled: true, Reason: "pattern",
		Probes: 1, ProbeEvery: 1, FirstRun: run, LastRun: run, SinceRun: run})
	if err != nil {
		t.Fatal(err)
	}
	if held, _, err := st.HoldURLs(ctx, id, []string{"http://a.test/cal/"}, func(string) bool { return true }); err != nil || held != 3 {
		t.Fatalf("HoldURLs = %d, %v; want 3", held, err)
	}
	dueOf := func() []bool {
		t.Helper()
		var due []bool
		for _, c := range cal {
			among, err := st.DueAmong(ctx, []int64{c})
			if err != nil {
				t.Fatal(err)
			}
			due = append(due, among["a.test"] == 1)
		}
		return due
	}
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	if due := dueOf(); !slices.Equal(due, []bool{true, false, false}) {
		t.Errorf("due after the first countdown = %v; want cal/1 alone, the probe", due)
	}
	if rules, err := st.TrapRules(ctx); err != nil || len(rules) != 1 || rules[0].Held != 3 || rules[0].Released != 1 {
		t.Errorf("TrapRules = %+v, %v; want 3 held, 1 of them released", rules, err)
	}
	run2, _ := begin(t, st, 2)
	u, err := st.DueByID(ctx, cal[0], run2)
	if err != nil {
		t.Fatal(err)
	}
	fetched(t, st, u, run2, start.AddDate(0, 0, 1), false)
	if _, _, err := st.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	if due := dueOf(); !slices.Equal(due, []bool{false, true, false}) {
		t.Errorf("due after the second countdown = %v; want cal/2 alone: cal/1 fetched and taken back", due)
	}
}
