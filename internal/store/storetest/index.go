package storetest

import (
	"io/fs"
	"testing"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// IndexRoles is what the index step's suite needs: the read side, the step's writes and the
// full-text search serve makes of them.
type IndexRoles interface {
	ReadRoles
	textindex.Store
	serve.TextSearcher
}

// RunIndex runs the index step's subtests (textindex.Store, serve.TextSearcher). open must return a
// new, empty store each call, closed by the test's cleanup.
func RunIndex(t *testing.T, open func(t *testing.T) IndexRoles) {
	suite[IndexRoles]{
		{"Index/Pending", testIndexPending},
		{"Index/Step", testIndexStep},
	}.run(t, open)
}

// texts is an archive of the versions loadHistory stores, by archive path: r1/docs's files are
// gone, as if removed by hand.
type texts map[string][2]string // title, text

func (a texts) ReadMeta(rel string) (*archive.Meta, error) {
	v, ok := a[rel]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return &archive.Meta{Title: v[0]}, nil
}

func (a texts) ReadText(rel string) (string, error) {
	v, ok := a[rel]
	if !ok {
		return "", fs.ErrNotExist
	}
	return v[1], nil
}

var historyTexts = texts{
	"r1/a": {"Alpha one", "the tram stops at the station"},
	"r1/x": {"Ex", "timetables for the ferry"},
	"r1/b": {"Bee", "honey and wax"},
	"r2/a": {"Alpha two", "the bus depot replaced the station"},
	"r2/x": {"Ex", "timetables for the ferry and the tramway"},
}

// testIndexPending: the stored versions come in fetch id order from after the mark, in batches,
// each with the fetch id its stretch reaches; fetches that stored nothing are passed over.
func testIndexPending(t *testing.T, st IndexRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	if s, err := st.TextIndexState(ctx); err != nil || s != (store.IndexState{}) {
		t.Fatalf("TextIndexState = %+v, %v; want nothing indexed", s, err)
	}
	stored := []string{"1/" + pageA, "1/" + pageD, "1/" + pageX, "1/" + pageB, "2/" + pageA, "2/" + pageX}
	var want []int64
	for _, k := range stored {
		want = append(want, h.fetch[k])
	}
	var newest int64
	for _, id := range h.fetch {
		newest = max(newest, id)
	}
	all, upto, err := st.PendingVersions(ctx, 0, 100)
	if err != nil || upto != newest || len(all) != len(want) {
		t.Fatalf("PendingVersions(0, 100) = %+v, %d, %v; want %d versions up to %d", all, upto, err, len(want), newest)
	}
	for i, v := range all {
		if v.FetchID != want[i] {
			t.Errorf("pending version %d: fetch %d, want %d (in fetch id order)", i, v.FetchID, want[i])
		}
	}
	if all[0].Path != "r1/a" || all[0].URLID != h.id[pageA] {
		t.Errorf("first pending version %+v, want r1/a of page a (%d)", all[0], h.id[pageA])
	}
	two, upto, err := st.PendingVersions(ctx, want[0], 2)
	if err != nil || len(two) != 2 || two[0].FetchID != want[1] || upto != want[2] {
		t.Errorf("PendingVersions(%d, 2) = %+v, %d, %v; want %v up to %d", want[0], two, upto, err, want[1:3], want[2])
	}
	if none, upto, err := st.PendingVersions(ctx, newest, 10); err != nil || len(none) != 0 || upto != newest {
		t.Errorf("PendingVersions(newest) = %+v, %d, %v; want none, mark stays", none, upto, err)
	}
}

// testIndexStep: the step indexes every version it can read and summarises the finished run, a
// second step does nothing, and search finds a word in the one version that has it.
func testIndexStep(t *testing.T, st IndexRoles) {
	ctx := t.Context()
	h := loadHistory(t, st)
	stats, err := textindex.Update(ctx, st, historyTexts)
	if err != nil || stats.Versions != 5 || stats.Missing != 1 || stats.Runs != 1 {
		t.Fatalf("Update = %+v, %v; want 5 versions, 1 missing, run 1 summarised", stats, err)
	}
	s, err := st.TextIndexState(ctx)
	if err != nil || s.RunUpto != h.run1 || s.FetchUpto < h.fetch["2/"+pageX] {
		t.Errorf("TextIndexState = %+v, %v; want runs up to %d, fetches past %d", s, err, h.run1, h.fetch["2/"+pageX])
	}
	if again, err := textindex.Update(ctx, st, historyTexts); err != nil || again.Versions+again.Missing+again.Runs != 0 {
		t.Errorf("second Update = %+v, %v; want nothing done", again, err)
	}
	if upto, newest, err := st.IndexCoverage(ctx); err != nil || upto < newest {
		t.Errorf("IndexCoverage = %d, %d, %v; want the index to reach the newest version", upto, newest, err)
	}

	counts, err := st.RunPageCounts(ctx, []int64{h.run1, h.run2})
	if err != nil || counts[h.run1] != (store.PageCounts{Known: true, New: 4, NotFound: 1}) || counts[h.run2].Known {
		t.Errorf("RunPageCounts = %+v, %v; want run 1: 4 new, 1 not found; run 2 not summarised", counts, err)
	}
	evs, err := st.PageEvents(ctx, store.EventQuery{Run: h.run1, Kind: "new", Limit: 10})
	if err != nil || len(evs) != 4 {
		t.Fatalf("PageEvents(run 1, new) = %+v, %v; want a, docs/, x and b", evs, err)
	}
	for _, e := range evs {
		if e.URLID == h.id[pageA] && (e.Title != "Alpha two" || e.FetchID != h.fetch["1/"+pageA]) {
			t.Errorf("new page a: %+v; want its first fetch %d, titled by its newest version, Alpha two", e, h.fetch["1/"+pageA])
		}
	}
	if n, err := st.LastSummarizedRun(ctx); err != nil || n != h.run1 {
		t.Errorf("LastSummarizedRun = %d, %v; want %d", n, err, h.run1)
	}

	for _, c := range []struct {
		match string
		want  []int64 // in rank order where it matters
	}{
		{`tram`, []int64{h.fetch["1/"+pageA]}},
		{`depot`, []int64{h.fetch["2/"+pageA]}},
		{`station -bus`, []int64{h.fetch["1/"+pageA]}},
		{`honey OR depot`, []int64{h.fetch["1/"+pageB], h.fetch["2/"+pageA]}},
		{`honey OR depot station`, []int64{h.fetch["2/"+pageA]}},
		{`tram*`, []int64{h.fetch["1/"+pageA], h.fetch["2/"+pageX]}},
		{`"the ferry"`, []int64{h.fetch["1/"+pageX], h.fetch["2/"+pageX]}},
		{`"ferry the"`, nil},
		{`bee`, []int64{h.fetch["1/"+pageB]}}, // a title
		{`submarine`, nil},
		{`"AND" OR "NOT" OR station* tram`, []int64{h.fetch["1/"+pageA]}}, // operators are words
		{`AND wax`, []int64{h.fetch["1/"+pageB]}},
	} {
		hits, err := st.SearchText(ctx, store.TextQuery{Match: parseMatch(t, c.match), Limit: 10})
		if err != nil {
			t.Errorf("SearchText(%s): %v", c.match, err)
			continue
		}
		var got []int64
		for _, hit := range hits {
			got = append(got, hit.FetchID)
		}
		if !sameSet(got, c.want) {
			t.Errorf("SearchText(%s) = fetches %v, want %v", c.match, got, c.want)
		}
	}
	hits, err := st.SearchText(ctx, store.TextQuery{Match: parseMatch(t, "station"), Limit: 10})
	if err != nil || len(hits) != 2 {
		t.Fatalf("SearchText(station) = %+v, %v; want both versions of a", hits, err)
	}
	for _, hit := range hits {
		current := hit.FetchID == h.fetch["2/"+pageA]
		if hit.URL != pageA || hit.Current != current || hit.RunID == 0 || hit.FetchedAt.IsZero() {
			t.Errorf("hit %+v: want page a, current %v, with its run and time", hit, current)
		}
		if !containsMark(hit.Snippet, "station") {
			t.Errorf("hit %d snippet %q does not mark station", hit.FetchID, hit.Snippet)
		}
	}
	// The cursor: the page after the first hit holds the second, and nothing else.
	rest, err := st.SearchText(ctx, store.TextQuery{Match: parseMatch(t, "station"), After: &hits[0], Limit: 10})
	if err != nil || len(rest) != 1 || rest[0].FetchID != hits[1].FetchID {
		t.Errorf("SearchText(station) after %d = %+v, %v; want only %d", hits[0].FetchID, rest, err, hits[1].FetchID)
	}
	if only, err := st.SearchText(ctx, store.TextQuery{Match: parseMatch(t, "honey OR depot"), Hosts: []string{"b.test"}, Limit: 10}); err != nil ||
		len(only) != 1 || only[0].FetchID != h.fetch["1/"+pageB] {
		t.Errorf("SearchText on b.test = %+v, %v; want b's version only", only, err)
	}

	// Run 2 ends: the next step summarises it and indexes nothing new.
	if err := st.FinishRun(ctx, store.Run{ID: h.run2, StartedAt: day0.AddDate(0, 0, 1), Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	if next, err := textindex.Update(ctx, st, historyTexts); err != nil || next.Runs != 1 || next.Versions != 0 {
		t.Errorf("Update after run 2 = %+v, %v; want run 2 summarised, no version", next, err)
	}
	counts, err = st.RunPageCounts(ctx, []int64{h.run2})
	if err != nil || counts[h.run2] != (store.PageCounts{Known: true, NotFound: 1}) {
		t.Errorf("RunPageCounts(run 2) = %+v, %v; want no new page, 1 not found", counts, err)
	}
}

// parseMatch is the match of what a person typed into serve's search box.
func parseMatch(t *testing.T, query string) store.TextMatch {
	t.Helper()
	m, err := store.ParseTextMatch(query)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameSet(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[int64]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func containsMark(snippet, word string) bool {
	for i := 0; i+len(store.SnippetOpen)+len(word) <= len(snippet); i++ {
		if snippet[i:i+len(store.SnippetOpen)+len(word)] == store.SnippetOpen+word {
			return true
		}
	}
	return false
}
