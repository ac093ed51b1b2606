package pgstore_test

import (
	"io/fs"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// texts is one archive root's versions by path: title and text.
type texts map[string][2]string

func (a texts) ReadMeta(rel string) (*archive.Meta, error) {
	if v, ok := a[rel]; ok {
		return &archive.Meta{Title: v[0]}, nil
	}
	return nil, fs.ErrNotExist
}

func (a texts) ReadText(rel string) (string, error) {
	if v, ok := a[rel]; ok {
		return v[1], nil
	}
	return "", fs.ErrNotExist
}

// TestFleetIndex: each worker indexes the versions archived to its own root, and only those, with
// its root's mark; a worker that replaces a killed one on the same root indexes what the killed
// one left; a single process indexes none of the fleet's versions; search finds them all.
func TestFleetIndex(t *testing.T) {
	ctx := t.Context()
	u := pgtest.URL(t)
	conn := func() *pgstore.DB {
		db, err := pgstore.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	single := conn()
	if _, err := single.AddSeeds(ctx, []store.NewSeed{{URL: "http://a.test/", Host: "a.test", FrMax: 1},
		{URL: "http://b.test/", Host: "b.test", FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	join := func(db *pgstore.DB, name, root string) int64 {
		w, err := db.Worker(name, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		j, unlock, err := w.JoinRun(ctx, t0, 0, root)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		return j.Run
	}
	dbA, dbB := conn(), conn()
	run := join(dbA, "a", "/ra")
	if r := join(dbB, "b", "/rb"); r != run {
		t.Fatalf("b joined run %d, a is in %d", r, run)
	}
	ids := map[string]int64{}
	record := func(db *pgstore.DB, host, path string) {
		if ids[host] == 0 {
			d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{host}, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			ids[host] = d.ID
		}
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: ids[host], RunID: run, FetchedAt: t0, Status: 200, Size: 10,
			Changed: true, Magnitude: -1, ArchivePath: path, NextFr: 1, Origin: "http://" + host, Domain: host,
			ContentType: "text/html", ContentHash: path}); err != nil {
			t.Fatal(err)
		}
	}
	record(dbA, "a.test", "ra/1")
	record(dbB, "b.test", "rb/1")
	rootA := texts{"ra/1": {"A", "the tram stops here"}, "ra/2": {"A", "left by a killed worker: funicular"}}
	rootB := texts{"rb/1": {"B", "the ferry leaves there"}}
	for _, c := range []struct {
		name string
		db   *pgstore.DB
		arch texts
	}{{"a", dbA, rootA}, {"b", dbB, rootB}} {
		st, err := textindex.Index(ctx, c.db, c.arch)
		if err != nil || st.Versions != 1 || st.Missing != 0 {
			t.Errorf("worker %s: Index = %+v, %v; want its one version, none missing (another root's are not its)", c.name, st, err)
		}
	}
	if pending, _, err := single.PendingVersions(ctx, 0, 10); err != nil || len(pending) != 0 {
		t.Errorf("single process: PendingVersions = %+v, %v; want none of the fleet's", pending, err)
	}
	for _, word := range []string{"tram", "ferry"} {
		if hits, err := single.SearchText(ctx, store.TextQuery{Match: store.TextMatch{All: [][]store.SearchTerm{{{Text: word}}}}, Limit: 10}); err != nil || len(hits) != 1 {
			t.Errorf("SearchText(%s) = %+v, %v; want one hit", word, hits, err)
		}
	}
	if upto, newest, err := single.IndexCoverage(ctx); err != nil || upto < newest {
		t.Errorf("IndexCoverage = %d, %d, %v; want the index to reach the newest version", upto, newest, err)
	}

	// a records another version and is killed before it indexes; its successor on /ra, another
	// process with another name, indexes it.
	record(dbA, "a.test", "ra/2")
	if upto, newest, err := single.IndexCoverage(ctx); err != nil || upto >= newest {
		t.Errorf("IndexCoverage with ra/2 unread = %d, %d, %v; want behind", upto, newest, err)
	}
	dbA2 := conn()
	join(dbA2, "a-again", "/ra")
	if st, err := textindex.Index(ctx, dbA2, rootA); err != nil || st.Versions != 1 {
		t.Errorf("a's successor: Index = %+v, %v; want the version a left", st, err)
	}
	if hits, err := single.SearchText(ctx, store.TextQuery{Match: store.TextMatch{All: [][]store.SearchTerm{{{Text: "funicular"}}}}, Limit: 10}); err != nil || len(hits) != 1 {
		t.Errorf("SearchText(funicular) = %+v, %v; want one hit", hits, err)
	}
}
