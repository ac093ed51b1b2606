package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
)

// ReadRoles is what the read side's suite needs: the write roles that load a history, as a crawl
// does, and the reads strata serve, status, history and explain make of it.
type ReadRoles interface {
	Roles
	serve.Reader
	Records(ctx context.Context, urlID int64, limit int) ([]store.Record, error)
	SeedReports(ctx context.Context, limit int) ([]store.SeedReport, error)
	Status(ctx context.Context, recent int) (*store.Status, error)
	History(ctx context.Context, url string) ([]store.HistoryEntry, error)
	EachVersion(ctx context.Context, f store.VersionFilter, fn func(store.Version) error) error
	Seeds(ctx context.Context) ([]store.SeedInfo, error)
	// What export warc and wacz read.
	RunsSince(ctx context.Context, since time.Time) ([]store.Run, error)
	EachStoredVersion(ctx context.Context, run int64, fn func(store.StoredVersion) error) error
	// What prune reads and writes.
	Prunable(ctx context.Context, cutoff time.Time) ([]store.Version, error)
	MarkPruned(ctx context.Context, vs []store.Version, at time.Time) error
	PendingPrunes(ctx context.Context) ([]string, error)
	Pruned(ctx context.Context, paths []string) error
}

// RunReads runs the read side's subtests. open must return a new, empty store each call, closed
// by the test's cleanup. Each loads the same two runs (see loadHistory) through the write roles
// and checks what one group of read methods returns against what was written.
func RunReads(t *testing.T, open func(t *testing.T) ReadRoles) {
	suite[ReadRoles]{
		{"Reads/Runs", testReadRuns},
		{"Reads/Sites", testReadSites},
		{"Reads/Tree", testReadTree},
		{"Reads/Fetches", testReadFetches},
		{"Reads/Links", testReadLinks},
		{"Reads/Changes", testReadChanges},
		{"Reads/URLSearch", testReadURLSearch},
		{"Reads/Summaries", testReadSummaries},
		{"Reads/Pages", testReadPages},
		{"Reads/StatusAndHistory", testReadStatusHistory},
		{"Reads/Versions", testReadVersions},
		{"Reads/SeedList", testReadSeedList},
		{"Reads/RunExport", testReadRunExport},
		{"Reads/Prune", testReadPrune},
	}.run(t, open)
}

// history is what loadHistory wrote: the runs, the pages' ids by URL and the fetch ids by name.
type history struct {
	run1, run2 int64
	id         map[string]int64     // URL id by URL
	fetch      map[string]int64     // fetch id by "run/URL"
	at         map[string]time.Time // fetch time by "run/URL"
	size       map[string]int64     // fetch size by "run/URL"
}

const (
	pageA = "http://a.test/"
	pageD = "http://a.test/docs/"
	pageX = "http://a.test/docs/x"
	pageY = "http://a.test/docs/y"
	pageZ = "http://a.test/z"
	pageB = "http://b.test/"
)

// loadHistory seeds six pages on a.test and b.test and crawls them twice:
//
//	run 1 (completed): every page; a, docs/, docs/x and b stored (a and x changed, x by 0.5),
//	                   docs/y answered 404, z did not answer; a links to x, b and c.test;
//	                   a.test's run summary says 5 fetched, 3 changed; a trap event in run 1 and
//	                   one with no run.
//	run 2 (running):   a changed by 0.2 and x by 0.9, both stored; docs/ and b unchanged; y and z
//	                   as in run 1; a trap event.
func loadHistory(t *testing.T, st ReadRoles) *history {
	t.Helper()
	ctx := t.Context()
	h := &history{id: map[string]int64{}, fetch: map[string]int64{}, at: map[string]time.Time{}, size: map[string]int64{}}
	seed(t, st, pageA, pageD, pageX, pageY, pageZ, pageB)
	type answer struct {
		status    int
		changed   bool
		magnitude float64
		path, err string
	}
	crawl := func(n int, answers map[string]answer) int64 {
		if _, _, err := st.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		run, start := begin(t, st, n)
		for i, host := range []string{"a.test", "b.test"} {
			for j := 0; ; j++ {
				u, err := st.NextDue(ctx, store.DueQuery{Hosts: []string{host}, Run: run})
				if errors.Is(err, store.ErrNotFound) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				h.id[u.URL] = u.ID
				a, ok := answers[u.URL]
				if !ok {
					a = answer{status: 200, magnitude: -1}
				}
				at := start.Add(time.Duration(10*i+j+1) * time.Minute)
				rec := store.FetchRecord{URLID: u.ID, RunID: run, FetchedAt: at, Status: a.status, Size: int64(100 + j),
					Changed: a.changed, Magnitude: a.magnitude, ArchivePath: a.path, Error: a.err, NextFr: 1,
					Origin: "http://" + u.Host, Domain: u.Host}
				if a.status == 200 {
					rec.ContentType, rec.ContentHash = "text/html", fmt.Sprintf("h%d-%s", n, u.URL)
				}
				if err := st.RecordFetch(ctx, rec); err != nil {
					t.Fatal(err)
				}
				h.at[fmt.Sprintf("%d/%s", n, u.URL)], h.size[fmt.Sprintf("%d/%s", n, u.URL)] = at, rec.Size
			}
		}
		return run
	}
	h.run1 = crawl(1, map[string]answer{
		pageA: {200, true, -1, "r1/a", ""},
		pageD: {200, true, -1, "r1/docs", ""},
		pageX: {200, true, 0.5, "r1/x", ""},
		pageY: {404, false, -1, "", ""},
		pageZ: {0, false, -1, "", "connection refused"},
		pageB: {200, true, -1, "r1/b", ""},
	})
	if err := st.SaveLinks(ctx, h.id[pageA], h.run1, []store.Link{{ToURL: pageX, Internal: true}, {ToURL: pageB},
		{ToURL: "http://c.test/"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveRunDomains(ctx, h.run1, []store.RunDomain{{Domain: "a.test", Fetched: 5, Changed: 3}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.TrapEvent{{RunID: 0, At: day0, Domain: "a.test", Kind: "cleared"},
		{RunID: h.run1, At: day0.Add(time.Hour), Domain: "a.test", Kind: "pattern", Pattern: "/cal/", Detail: "calendar"}} {
		if err := st.RecordTrap(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRun(ctx, store.Run{ID: h.run1, StartedAt: day0, EndedAt: day0.Add(time.Hour), Status: "completed", Fetched: 6}); err != nil {
		t.Fatal(err)
	}
	h.run2 = crawl(2, map[string]answer{
		pageA: {200, true, 0.2, "r2/a", ""},
		pageX: {200, true, 0.9, "r2/x", ""},
		pageY: {404, false, -1, "", ""},
		pageZ: {0, false, -1, "", "connection refused"},
	})
	if err := st.RecordTrap(ctx, store.TrapEvent{RunID: h.run2, At: day0.AddDate(0, 0, 1), Domain: "a.test", Kind: "duplicates"}); err != nil {
		t.Fatal(err)
	}
	// Fetch ids by run and URL, from the fetches the stores say they have.
	for u, id := range h.id {
		fs, err := st.Fetches(ctx, id, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			n := 1
			if f.RunID == h.run2 {
				n = 2
			}
			h.fetch[fmt.Sprintf("%d/%s", n, u)] = f.ID
		}
	}
	return h
}

func testReadRuns(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	runs, err := st.Runs(ctx, 0, 10)
	if err != nil || len(runs) != 2 || runs[0].ID != h.run2 || runs[1].ID != h.run1 || runs[1].Status != "completed" ||
		runs[1].Fetched != 6 || !runs[1].EndedAt.Equal(day0.Add(time.Hour)) || !runs[0].EndedAt.IsZero() {
		t.Errorf("Runs(0, 10) = %+v, %v; want run %d running, then run %d completed with 6 fetched", runs, err, h.run2, h.run1)
	}
	if runs, err := st.Runs(ctx, h.run2, 10); err != nil || len(runs) != 1 || runs[0].ID != h.run1 {
		t.Errorf("Runs(before %d) = %+v, %v; want run %d alone", h.run2, runs, err, h.run1)
	}
	if runs, err := st.Runs(ctx, 0, 1); err != nil || len(runs) != 1 || runs[0].ID != h.run2 {
		t.Errorf("Runs(0, 1) = %+v, %v; want run %d alone", runs, err, h.run2)
	}
	if r, err := st.RunByID(ctx, h.run1); err != nil || r.ID != h.run1 || r.Status != "completed" || !r.StartedAt.Equal(day0) {
		t.Errorf("RunByID(%d) = %+v, %v", h.run1, r, err)
	}
	if _, err := st.RunByID(ctx, h.run2+100); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunByID(no such run) = %v; want ErrNotFound", err)
	}
	v1, err := st.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := st.DataVersion(ctx); err != nil || again != v1 {
		t.Errorf("DataVersion twice = %q, %q, %v; want the same while nothing is written", v1, again, err)
	}
	if err := st.FinishRun(ctx, store.Run{ID: h.run2, StartedAt: day0.AddDate(0, 0, 1), EndedAt: day0.AddDate(0, 0, 1).Add(time.Hour),
		Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	if v2, err := st.DataVersion(ctx); err != nil || v2 == v1 {
		t.Errorf("DataVersion after a run ended = %q, %v; want it to change from %q", v2, err, v1)
	}
}

func testReadSites(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	if ds, err := st.Domains(ctx, "", 10); err != nil || !slices.Equal(ds, []string{"a.test", "b.test"}) {
		t.Errorf("Domains = %q, %v; want a.test, b.test", ds, err)
	}
	if ds, err := st.Domains(ctx, "a.test", 10); err != nil || !slices.Equal(ds, []string{"b.test"}) {
		t.Errorf("Domains(after a.test) = %q, %v; want b.test", ds, err)
	}
	os, err := st.DomainOrigins(ctx, "a.test")
	if err != nil || len(os) != 1 || os[0].Origin != "http://a.test" || os[0].Host != "a.test" || os[0].Domain != "a.test" ||
		os[0].RobotsStatus != -1 || !os[0].LastAccess.After(day0.AddDate(0, 0, 1)) {
		t.Errorf("DomainOrigins(a.test) = %+v, %v; want http://a.test, robots never fetched, last access in run 2", os, err)
	}
	if os, err := st.DomainOrigins(ctx, "nowhere.test"); err != nil || len(os) != 0 {
		t.Errorf("DomainOrigins(unknown) = %+v, %v; want none", os, err)
	}
	if d, err := st.OriginDomain(ctx, "http://b.test"); err != nil || d != "b.test" {
		t.Errorf("OriginDomain(http://b.test) = %q, %v", d, err)
	}
	if d, err := st.OriginDomain(ctx, "http://nowhere.test"); err != nil || d != "" {
		t.Errorf("OriginDomain(unknown) = %q, %v; want empty", d, err)
	}
	if n, err := st.HostURLs(ctx, "a.test"); err != nil || n != 5 {
		t.Errorf("HostURLs(a.test) = %d, %v; want 5", n, err)
	}
	drs, err := st.DomainRuns(ctx, "a.test", []int64{h.run2, h.run1})
	if err != nil || len(drs) != 2 || drs[0] != (store.DomainRun{RunID: h.run2}) || drs[1] != (store.DomainRun{RunID: h.run1, Fetched: 5, Changed: 3}) {
		t.Errorf("DomainRuns = %+v, %v; want run %d empty, run %d 5 fetched 3 changed", drs, err, h.run2, h.run1)
	}
	evs, n, err := st.DomainTraps(ctx, "a.test", 10)
	if err != nil || n != 3 || len(evs) != 3 || evs[0].RunID != h.run2 || evs[0].Kind != "duplicates" ||
		evs[1].RunID != h.run1 || evs[1].Pattern != "/cal/" || evs[1].Detail != "calendar" || !evs[1].At.Equal(day0.Add(time.Hour)) ||
		evs[2].RunID != 0 || evs[2].Kind != "cleared" {
		t.Errorf("DomainTraps(a.test) = %+v, %d, %v; want run %d's, run %d's, then the one with no run", evs, n, err, h.run2, h.run1)
	}
	if evs, n, err := st.DomainTraps(ctx, "a.test", 1); err != nil || n != 3 || len(evs) != 1 {
		t.Errorf("DomainTraps(limit 1) = %d events, total %d, %v; want 1 of 3", len(evs), n, err)
	}
}

func testReadTree(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	got, err := st.Tree(ctx, pageA, "", 10)
	want := []store.TreeEntry{{Name: "docs/", URL: pageD, Dir: true, URLID: h.id[pageD]}, {Name: "z", URL: pageZ, URLID: h.id[pageZ]}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Tree(%s) = %+v, %v; want %+v", pageA, got, err, want)
	}
	if got, err := st.Tree(ctx, pageA, "docs/", 10); err != nil || len(got) != 1 || got[0].Name != "z" {
		t.Errorf("Tree(after docs/) = %+v, %v; want z", got, err)
	}
	got, err = st.Tree(ctx, pageD, "", 10)
	want = []store.TreeEntry{{Name: "x", URL: pageX, URLID: h.id[pageX]}, {Name: "y", URL: pageY, URLID: h.id[pageY]}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Tree(%s) = %+v, %v; want %+v", pageD, got, err, want)
	}
	if got, err := st.Tree(ctx, pageD, "", 1); err != nil || len(got) != 1 {
		t.Errorf("Tree(limit 1) = %+v, %v; want one entry", got, err)
	}
	if id, err := st.URLID(ctx, pageX); err != nil || id != h.id[pageX] {
		t.Errorf("URLID(%s) = %d, %v; want %d", pageX, id, err, h.id[pageX])
	}
	if _, err := st.URLID(ctx, "http://a.test/none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("URLID(unknown) = %v; want ErrNotFound", err)
	}
	if u, err := st.URLByID(ctx, h.id[pageY]); err != nil || u != pageY {
		t.Errorf("URLByID(%d) = %q, %v; want %s", h.id[pageY], u, err, pageY)
	}
	if _, err := st.URLByID(ctx, 1<<40); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("URLByID(unknown) = %v; want ErrNotFound", err)
	}
}

func testReadFetches(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	a := h.id[pageA]
	fs, err := st.Fetches(ctx, a, 0, 10)
	if err != nil || len(fs) != 2 {
		t.Fatalf("Fetches(a) = %+v, %v; want 2", fs, err)
	}
	second, first := fs[0], fs[1]
	if second.ID != h.fetch["2/"+pageA] || second.RunID != h.run2 || second.Path != "r2/a" || !second.Changed || second.Magnitude != 0.2 ||
		second.First || second.Pruned || second.Status != 200 || second.NotModified || !second.FetchedAt.Equal(h.at["2/"+pageA]) {
		t.Errorf("Fetches(a)[0] = %+v; want run %d's, stored as r2/a, changed by 0.2, not the first version", second, h.run2)
	}
	if first.RunID != h.run1 || first.Path != "r1/a" || !first.First || first.Magnitude != -1 || first.Size != h.size["1/"+pageA] {
		t.Errorf("Fetches(a)[1] = %+v; want run %d's, the first version, magnitude unknown", first, h.run1)
	}
	if fs, err := st.Fetches(ctx, a, second.ID, 10); err != nil || len(fs) != 1 || fs[0].ID != first.ID {
		t.Errorf("Fetches(a, before %d) = %+v, %v; want run 1's alone", second.ID, fs, err)
	}
	if f, err := st.FetchByID(ctx, h.fetch["1/"+pageZ]); err != nil || f.Status != 0 || f.Error != "connection refused" || f.Path != "" || f.First {
		t.Errorf("FetchByID(z's) = %+v, %v; want no answer, its error, nothing stored", f, err)
	}
	if f, err := st.FetchByID(ctx, h.fetch["1/"+pageY]); err != nil || f.Status != 404 || f.Changed {
		t.Errorf("FetchByID(y's) = %+v, %v; want a 404", f, err)
	}
	if _, err := st.FetchByID(ctx, 1<<40); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FetchByID(unknown) = %v; want ErrNotFound", err)
	}
	if vs, err := st.StoredVersions(ctx, h.id[pageB], 10); err != nil || len(vs) != 1 || vs[0].Path != "r1/b" {
		t.Errorf("StoredVersions(b) = %+v, %v; want run 1's alone (run 2's was unchanged)", vs, err)
	}
	if vs, err := st.StoredVersions(ctx, a, 1); err != nil || len(vs) != 1 || vs[0].Path != "r2/a" {
		t.Errorf("StoredVersions(a, 1) = %+v, %v; want r2/a", vs, err)
	}
	if v, err := st.LatestVersion(ctx, h.id[pageB]); err != nil || v.Path != "r1/b" || !v.First {
		t.Errorf("LatestVersion(b) = %+v, %v; want r1/b", v, err)
	}
	if _, err := st.LatestVersion(ctx, h.id[pageY]); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LatestVersion(y) = %v; want ErrNotFound, y stored nothing", err)
	}
	if v, err := st.VersionBefore(ctx, a, second.ID); err != nil || v.ID != first.ID {
		t.Errorf("VersionBefore(a, %d) = %+v, %v; want %d", second.ID, v, err, first.ID)
	}
	if _, err := st.VersionBefore(ctx, a, first.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("VersionBefore(a, first) = %v; want ErrNotFound", err)
	}
}

func testReadLinks(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	out, err := st.LinksOut(ctx, h.id[pageA], "", 10)
	want := []store.LinkOut{
		{ToURL: pageX, ToID: h.id[pageX], Internal: true, FirstRun: h.run1, LastRun: h.run1},
		{ToURL: pageB, ToID: h.id[pageB], FirstRun: h.run1, LastRun: h.run1},
		{ToURL: "http://c.test/", FirstRun: h.run1, LastRun: h.run1},
	}
	if err != nil || !slices.Equal(out, want) {
		t.Errorf("LinksOut(a) = %+v, %v; want %+v", out, err, want)
	}
	if out, err := st.LinksOut(ctx, h.id[pageA], pageX, 1); err != nil || len(out) != 1 || out[0].ToURL != pageB {
		t.Errorf("LinksOut(a, after x, 1) = %+v, %v; want b", out, err)
	}
	in, err := st.LinksIn(ctx, h.id[pageX], 0, 10)
	if err != nil || len(in) != 1 || in[0] != (store.LinkIn{FromID: h.id[pageA], FromURL: pageA, FirstRun: h.run1, LastRun: h.run1}) {
		t.Errorf("LinksIn(x) = %+v, %v; want a", in, err)
	}
	if in, err := st.LinksIn(ctx, h.id[pageX], h.id[pageA], 10); err != nil || len(in) != 0 {
		t.Errorf("LinksIn(x, after a) = %+v, %v; want none", in, err)
	}
}

func testReadChanges(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	urls := func(cs []store.Change) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.URL)
		}
		return out
	}
	cs, err := st.Changes(ctx, store.ChangeQuery{Run: h.run2, Limit: 10})
	if err != nil || !slices.Equal(urls(cs), []string{pageX, pageA}) {
		t.Fatalf("Changes(run 2) = %q, %v; want x (0.9), then a (0.2)", urls(cs), err)
	}
	if c := cs[0]; c.FetchID != h.fetch["2/"+pageX] || c.URLID != h.id[pageX] || c.Magnitude != 0.9 || c.Path != "r2/x" ||
		!c.FetchedAt.Equal(h.at["2/"+pageX]) || c.Size != h.size["2/"+pageX] {
		t.Errorf("Changes(run 2)[0] = %+v; want x's fetch, 0.9, r2/x", c)
	}
	if cs, err := st.Changes(ctx, store.ChangeQuery{Run: h.run2, MinMagnitude: 0.5, Limit: 10}); err != nil || !slices.Equal(urls(cs), []string{pageX}) {
		t.Errorf("Changes(run 2, at least 0.5) = %q, %v; want x", urls(cs), err)
	}
	if cs, err := st.Changes(ctx, store.ChangeQuery{Run: h.run2, After: &cs[0], Limit: 10}); err != nil || !slices.Equal(urls(cs), []string{pageA}) {
		t.Errorf("Changes(run 2, after x) = %q, %v; want a", urls(cs), err)
	}
	if cs, err := st.Changes(ctx, store.ChangeQuery{Run: h.run2, Hosts: []string{"b.test"}, Limit: 10}); err != nil || len(cs) != 0 {
		t.Errorf("Changes(run 2 on b.test) = %q, %v; want none", urls(cs), err)
	}
	// Run 1: x's known magnitude first, then the unknown ones by fetch id.
	unknown := []string{pageA, pageD, pageB}
	slices.SortFunc(unknown, func(a, b string) int { return int(h.fetch["1/"+a] - h.fetch["1/"+b]) })
	cs, err = st.Changes(ctx, store.ChangeQuery{Run: h.run1, Limit: 10})
	if want := append([]string{pageX}, unknown...); err != nil || !slices.Equal(urls(cs), want) {
		t.Errorf("Changes(run 1) = %q, %v; want %q: x, then the unknown magnitudes in fetch order", urls(cs), err, want)
	}
	if cs, err := st.Changes(ctx, store.ChangeQuery{Run: h.run1, Hosts: []string{"b.test"}, Limit: 10}); err != nil || !slices.Equal(urls(cs), []string{pageB}) {
		t.Errorf("Changes(run 1 on b.test) = %q, %v; want b", urls(cs), err)
	}
}

func testReadURLSearch(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	urls := func(hs []store.URLHit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.URL)
		}
		return out
	}
	hs, err := st.URLsWithPrefix(ctx, pageD, "", 10)
	if err != nil || !slices.Equal(urls(hs), []string{pageD, pageX, pageY}) || hs[1].ID != h.id[pageX] || hs[1].State != "active" {
		t.Errorf("URLsWithPrefix(%s) = %+v, %v; want docs/, x, y", pageD, hs, err)
	}
	if hs, err := st.URLsWithPrefix(ctx, pageD, pageX, 10); err != nil || !slices.Equal(urls(hs), []string{pageY}) {
		t.Errorf("URLsWithPrefix(after x) = %q, %v; want y", urls(hs), err)
	}
	if hs, err := st.URLsWithPrefix(ctx, "http://a.test/docs/x", "", 10); err != nil || !slices.Equal(urls(hs), []string{pageX}) {
		t.Errorf("URLsWithPrefix(x) = %q, %v; want x alone", urls(hs), err)
	}
	hs, next, err := st.URLsContaining(ctx, "DOCS/", 0, 1<<20, 10)
	if err != nil || !slices.Equal(urls(hs), []string{pageD, pageX, pageY}) || next != 0 {
		t.Errorf("URLsContaining(DOCS/) = %q, next %d, %v; want docs/, x, y (ASCII case folded), no more", urls(hs), next, err)
	}
	if hs, next, err := st.URLsContaining(ctx, "docs/", 0, 1<<20, 2); err != nil || len(hs) != 2 || next != hs[1].ID {
		t.Errorf("URLsContaining(limit 2) = %q, next %d, %v; want 2 hits and the last one's id", urls(hs), next, err)
	}
	if hs, next, err := st.URLsContaining(ctx, "%", 0, 1<<20, 10); err != nil || len(hs) != 0 || next != 0 {
		t.Errorf("URLsContaining(%%) = %q, %d, %v; want none: %% is a character, not a wildcard", urls(hs), next, err)
	}
	first := slices.Min(slices.Collect(maps.Values(h.id)))
	if _, next, err := st.URLsContaining(ctx, "zzz", first-1, 1, 10); err != nil || next != first {
		t.Errorf("URLsContaining(window 1) next = %d, %v; want %d, the window's end", next, err, first)
	}
}

// testReadSummaries: the index step's tables (page events, page counts, titles) are SQLite's
// alone to fill so far; both stores read them as empty, the same way, with every page's state.
func testReadSummaries(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	if m, err := st.RunPageCounts(ctx, []int64{h.run1, h.run2}); err != nil || len(m) != 0 {
		t.Errorf("RunPageCounts = %+v, %v; want none summarised", m, err)
	}
	if m, err := st.DomainPageCounts(ctx, "a.test", []int64{h.run1}); err != nil || len(m) != 0 {
		t.Errorf("DomainPageCounts = %+v, %v; want none", m, err)
	}
	if n, err := st.LastSummarizedRun(ctx); err != nil || n != 0 {
		t.Errorf("LastSummarizedRun = %d, %v; want 0", n, err)
	}
	if es, err := st.PageEvents(ctx, store.EventQuery{Run: h.run1, Kind: "new", Hosts: []string{"a.test"}, Limit: 10}); err != nil || len(es) != 0 {
		t.Errorf("PageEvents = %+v, %v; want none", es, err)
	}
	if es, err := st.URLEvents(ctx, h.id[pageA], 10); err != nil || len(es) != 0 {
		t.Errorf("URLEvents = %+v, %v; want none", es, err)
	}
	if m, err := st.EventsAmong(ctx, h.run1, []int64{h.id[pageA]}); err != nil || len(m) != 0 {
		t.Errorf("EventsAmong = %+v, %v; want none", m, err)
	}
	marks, err := st.PageMarks(ctx, []int64{h.id[pageA], h.id[pageZ], 1 << 40})
	if err != nil || len(marks) != 2 || marks[h.id[pageA]] != (store.PageMark{State: "active"}) || marks[h.id[pageZ]].State != "active" {
		t.Errorf("PageMarks = %+v, %v; want a and z active, untitled, and nothing for an unknown id", marks, err)
	}
	if m, err := st.PageMarks(ctx, nil); err != nil || len(m) != 0 {
		t.Errorf("PageMarks(none) = %+v, %v", m, err)
	}
}

func testReadPages(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	in, err := st.URLInfo(ctx, pageA)
	if err != nil {
		t.Fatal(err)
	}
	if in.ID != h.id[pageA] || !in.IsSeed || in.State != "active" || in.Origin != "http://a.test" || !slices.Equal(in.Statuses, []int{200, 200}) ||
		in.LastError != "" || in.ParentURL != "" || in.Snapshot || in.ChangeRate != -1 || in.FrMax != 1 {
		t.Errorf("URLInfo(a) = %+v; want the seed, active, two 200s", in)
	}
	if in, err := st.URLInfo(ctx, pageZ); err != nil || in.LastError != "connection refused" || !slices.Equal(in.Statuses, []int{0, 0}) {
		t.Errorf("URLInfo(z) = %+v, %v; want its error and status 0", in, err)
	}
	if in, err := st.URLInfo(ctx, pageY); err != nil || !slices.Equal(in.Statuses, []int{404, 404}) || in.State != "active" {
		t.Errorf("URLInfo(y) = %+v, %v; want two 404s, still active", in, err)
	}
	if _, err := st.URLInfo(ctx, "http://a.test/none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("URLInfo(unknown) = %v; want ErrNotFound", err)
	}
	recs, err := st.Records(ctx, h.id[pageA], 10)
	if err != nil || !slices.Equal(recs, []store.Record{{Run: h.run1, Changed: true}, {Run: h.run2, Changed: true}}) {
		t.Errorf("Records(a) = %+v, %v; want runs %d and %d, changed, oldest first", recs, err, h.run1, h.run2)
	}
	if recs, err := st.Records(ctx, h.id[pageA], 1); err != nil || len(recs) != 1 || recs[0].Run != h.run2 {
		t.Errorf("Records(a, 1) = %+v, %v; want run %d's", recs, err, h.run2)
	}
	if recs, err := st.Records(ctx, h.id[pageZ], 10); err != nil || len(recs) != 2 || !recs[0].Failed || !recs[1].Failed || recs[0].Changed {
		t.Errorf("Records(z) = %+v, %v; want two failed records", recs, err)
	}
	reps, err := st.SeedReports(ctx, 10)
	if err != nil || len(reps) != 6 || reps[0].URL != pageA || reps[5].URL != pageB {
		t.Fatalf("SeedReports = %+v, %v; want the 6 seeds by URL", reps, err)
	}
	// a: crawled twice, changed twice; its one internal link was seen in run 1 of its 2 crawls.
	if r := reps[0]; r.URLID != h.id[pageA] || r.Crawls != 2 || r.Changes != 2 || r.InternalLinks != 0.5 || r.FrMax != 1 {
		t.Errorf("SeedReports[a] = %+v; want 2 crawls, 2 changes, 0.5 internal links per crawl", r)
	}
	if r := reps[5]; r.Crawls != 2 || r.Changes != 1 || r.InternalLinks != 0 {
		t.Errorf("SeedReports[b] = %+v; want 2 crawls, 1 change, no links", r)
	}
}

func testReadStatusHistory(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	s, err := st.Status(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if s.URLs["active"] != 6 || s.URLs["gone"] != 0 || s.Seeds != 6 || s.Hosts != 2 || s.LastRunFetches != 6 || s.DueNextRun != 6 ||
		len(s.Runs) != 2 || s.Runs[0].ID != h.run2 {
		t.Errorf("Status = %+v; want 6 active seeds on 2 hosts, all due next run, 6 fetches in run %d", s, h.run2)
	}
	hist, err := st.History(ctx, pageA)
	if err != nil || len(hist) != 2 {
		t.Fatalf("History(a) = %+v, %v; want 2 fetches", hist, err)
	}
	if e := hist[0]; e.FetchID != h.fetch["1/"+pageA] || e.RunID != h.run1 || e.Stored != "r1/a" || !e.First || e.Current != "r1/a" ||
		!e.Changed || e.Magnitude != -1 || e.Status != 200 || !e.FetchedAt.Equal(h.at["1/"+pageA]) {
		t.Errorf("History(a)[0] = %+v; want run 1's, the first version r1/a", e)
	}
	if e := hist[1]; e.Stored != "r2/a" || e.First || e.Current != "r2/a" || e.Magnitude != 0.2 {
		t.Errorf("History(a)[1] = %+v; want r2/a, changed by 0.2", e)
	}
	hist, err = st.History(ctx, pageB)
	if err != nil || len(hist) != 2 || hist[1].Stored != "" || hist[1].Current != "r1/b" || hist[1].Changed {
		t.Errorf("History(b) = %+v, %v; want run 2 unchanged, r1/b still current", hist, err)
	}
	if hist, err := st.History(ctx, pageZ); err != nil || len(hist) != 2 || hist[0].Error != "connection refused" || hist[0].Current != "" {
		t.Errorf("History(z) = %+v, %v; want its errors, no version", hist, err)
	}
	if _, err := st.History(ctx, "http://a.test/none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("History(unknown) = %v; want ErrNotFound", err)
	}
}

// testReadVersions checks EachVersion, which show, diff and export jsonl read: the stored versions
// only, oldest first, each filter alone, and fn's error returned as it is.
func testReadVersions(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	each := func(f store.VersionFilter) []store.Version {
		t.Helper()
		var vs []store.Version
		if err := st.EachVersion(ctx, f, func(v store.Version) error { vs = append(vs, v); return nil }); err != nil {
			t.Fatalf("EachVersion(%+v): %v", f, err)
		}
		return vs
	}
	all := each(store.VersionFilter{})
	if got, want := versionPaths(all), []string{"r1/a", "r1/docs", "r1/x", "r1/b", "r2/a", "r2/x"}; !slices.Equal(got, want) {
		t.Fatalf("EachVersion(all) = %v; want %v, in fetch order", got, want)
	}
	if v := all[0]; v.FetchID != h.fetch["1/"+pageA] || v.URL != pageA || v.RunID != h.run1 || !v.FetchedAt.Equal(h.at["1/"+pageA]) ||
		v.ContentHash != "h1-"+pageA || !v.Changed || !v.First {
		t.Errorf("EachVersion(all)[0] = %+v; want run 1's first version of a", v)
	}
	if v := all[4]; v.First || v.RunID != h.run2 || !v.Changed || v.ContentHash != "h2-"+pageA {
		t.Errorf("EachVersion(all)[4] = %+v; want run 2's version of a, not its first", v)
	}
	for _, tt := range []struct {
		f    store.VersionFilter
		want []string
	}{
		{store.VersionFilter{URL: pageX}, []string{"r1/x", "r2/x"}},
		{store.VersionFilter{RunID: h.run2}, []string{"r2/a", "r2/x"}},
		{store.VersionFilter{Host: "b.test"}, []string{"r1/b"}},
		{store.VersionFilter{Since: h.at["2/"+pageX]}, []string{"r2/x"}},
		{store.VersionFilter{URL: pageA, RunID: h.run1}, []string{"r1/a"}},
		{store.VersionFilter{URL: "http://a.test/none"}, nil},
	} {
		if got := versionPaths(each(tt.f)); !slices.Equal(got, tt.want) {
			t.Errorf("EachVersion(%+v) = %v; want %v", tt.f, got, tt.want)
		}
	}
	stop := errors.New("enough")
	n := 0
	if err := st.EachVersion(ctx, store.VersionFilter{}, func(store.Version) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("EachVersion with fn failing: %v after %d calls; want fn's error itself after 1", err, n)
	}
}

// testReadSeedList checks Seeds, which seed list reads: every seed in URL order with its row's
// facts and the size of its tree.
func testReadSeedList(t *testing.T, st ReadRoles) {
	h := loadHistory(t, st)
	seeds, err := st.Seeds(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, s := range seeds {
		urls = append(urls, s.URL)
	}
	if want := []string{pageA, pageD, pageX, pageY, pageZ, pageB}; !slices.Equal(urls, want) {
		t.Fatalf("Seeds = %v; want %v, in URL order", urls, want)
	}
	for _, s := range seeds {
		if s.State != "active" || s.Pages != 1 || s.FrMax != 1 || s.Fr != 1 || s.Snapshot {
			t.Errorf("seed %+v; want active, its own tree of 1 page, fr 1 of fr_max 1", s)
		}
	}
	if i := slices.IndexFunc(seeds, func(s store.SeedInfo) bool { return s.URL == pageA }); !seeds[i].LastCrawled.Equal(h.at["2/"+pageA]) {
		t.Errorf("seed a last crawled %v; want run 2's fetch at %v", seeds[i].LastCrawled, h.at["2/"+pageA])
	}
}

// testReadRunExport checks what export warc and wacz read: the runs since a time, and a run's
// stored versions in fetch order, each with the exchange's heads when strata kept them.
func testReadRunExport(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	runs, err := st.RunsSince(ctx, time.Time{})
	if err != nil || len(runs) != 2 || runs[0].ID != h.run1 || runs[1].ID != h.run2 {
		t.Errorf("RunsSince(zero) = %+v, %v; want runs 1 and 2, oldest first", runs, err)
	}
	if runs, err := st.RunsSince(ctx, day0.Add(12*time.Hour)); err != nil || len(runs) != 1 || runs[0].ID != h.run2 {
		t.Errorf("RunsSince(between the runs) = %+v, %v; want run 2", runs, err)
	}

	// A third run whose first version kept its exchange's heads and whose second did not.
	seed(t, st, "http://c.test/one", "http://c.test/two")
	run3, start := begin(t, st, 3)
	capture := &store.Capture{Request: []byte("GET /one HTTP/1.1\r\nHost: c.test\r\n\r\n"),
		Response: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), IP: "127.0.0.1", PayloadDigest: "sha1:ABC",
		WARCID: "<urn:uuid:1>", WARCType: "response"}
	for i, path := range []string{"r3/one", "r3/two"} {
		u := next(t, st, run3, "c.test")
		rec := store.FetchRecord{URLID: u.ID, RunID: run3, FetchedAt: start.Add(time.Duration(i+1) * time.Minute), Status: 200,
			ContentType: "text/html", ContentHash: path, Changed: true, Magnitude: -1, ArchivePath: path, NextFr: 1,
			Origin: "http://c.test", Domain: "c.test"}
		if path == "r3/one" {
			rec.Capture = capture
		}
		if err := st.RecordFetch(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	var got []store.StoredVersion
	if err := st.EachStoredVersion(ctx, run3, func(v store.StoredVersion) error { got = append(got, v); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].URL != "http://c.test/one" || got[0].Path != "r3/one" || !got[0].FetchedAt.Equal(start.Add(time.Minute)) ||
		got[1].Path != "r3/two" || got[1].Capture != nil {
		t.Fatalf("EachStoredVersion(run 3) = %+v; want one then two, two without heads", got)
	}
	if c := got[0].Capture; c == nil || string(c.Request) != string(capture.Request) || string(c.Response) != string(capture.Response) ||
		c.IP != capture.IP || c.PayloadDigest != capture.PayloadDigest {
		t.Errorf("EachStoredVersion(run 3)[0].Capture = %+v; want the heads recorded", c)
	}
	var paths []string
	if err := st.EachStoredVersion(ctx, h.run1, func(v store.StoredVersion) error { paths = append(paths, v.Path); return nil }); err != nil ||
		!slices.Equal(paths, []string{"r1/a", "r1/docs", "r1/x", "r1/b"}) {
		t.Errorf("EachStoredVersion(run 1) = %v, %v; want its four stored versions in fetch order", paths, err)
	}
	stop := errors.New("enough")
	if err := st.EachStoredVersion(ctx, h.run1, func(store.StoredVersion) error { return stop }); err != stop {
		t.Errorf("EachStoredVersion with fn failing = %v; want fn's error itself", err)
	}
}

// testReadPrune checks what prune reads and writes: the versions older than a cutoff that are not
// their page's current one, marked pruned and journalled in one step, then out of the journal.
func testReadPrune(t *testing.T, st ReadRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	if vs, err := st.Prunable(ctx, day0); err != nil || len(vs) != 0 {
		t.Errorf("Prunable(before every fetch) = %v, %v; want none", versionPaths(vs), err)
	}
	later := day0.AddDate(1, 0, 0)
	vs, err := st.Prunable(ctx, later)
	if err != nil || !slices.Equal(versionPaths(vs), []string{"r1/a", "r1/x"}) {
		t.Fatalf("Prunable = %v, %v; want run 1's a and x, the versions that are not current", versionPaths(vs), err)
	}
	if v := vs[0]; v.FetchID != h.fetch["1/"+pageA] || v.URL != pageA || v.RunID != h.run1 || !v.FetchedAt.Equal(h.at["1/"+pageA]) {
		t.Errorf("Prunable()[0] = %+v; want run 1's fetch of a", v)
	}
	if err := st.MarkPruned(ctx, vs[:1], later); err != nil {
		t.Fatal(err)
	}
	if pending, err := st.PendingPrunes(ctx); err != nil || !slices.Equal(pending, []string{"r1/a"}) {
		t.Errorf("PendingPrunes = %v, %v; want r1/a", pending, err)
	}
	if vs, err := st.Prunable(ctx, later); err != nil || !slices.Equal(versionPaths(vs), []string{"r1/x"}) {
		t.Errorf("Prunable after marking r1/a = %v, %v; want r1/x", versionPaths(vs), err)
	}
	if hist, err := st.History(ctx, pageA); err != nil || len(hist) != 2 || !hist[0].Pruned || hist[1].Pruned {
		t.Errorf("History(a) = %+v, %v; want run 1's version pruned, run 2's not", hist, err)
	}
	var listed []string
	if err := st.EachVersion(ctx, store.VersionFilter{URL: pageA}, func(v store.Version) error { listed = append(listed, v.Path); return nil }); err != nil ||
		!slices.Equal(listed, []string{"r2/a"}) {
		t.Errorf("EachVersion(a) after pruning = %v, %v; want r2/a only", listed, err)
	}
	if err := st.Pruned(ctx, []string{"r1/a"}); err != nil {
		t.Fatal(err)
	}
	if pending, err := st.PendingPrunes(ctx); err != nil || len(pending) != 0 {
		t.Errorf("PendingPrunes after Pruned = %v, %v; want none", pending, err)
	}
}

// versionPaths is each version's archive path.
func versionPaths(vs []store.Version) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Path)
	}
	return out
}
