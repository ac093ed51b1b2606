package crawler

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/store"
)

// recordingStore records fetches, and refuses those of one URL, as a store does a row it lost.
type recordingStore struct {
	bad int64

	mu       sync.Mutex
	recorded []int64
}

var _ FetchRecorder = (*recordingStore)(nil)

func (s *recordingStore) RecordFetches(_ context.Context, recs []store.FetchRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		if r.URLID == s.bad {
			return store.ErrNotFound
		}
	}
	for _, r := range recs {
		s.recorded = append(s.recorded, r.URLID)
	}
	return nil
}

func (s *recordingStore) RecordFetch(_ context.Context, r store.FetchRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URLID == s.bad {
		return store.ErrNotFound
	}
	s.recorded = append(s.recorded, r.URLID)
	return nil
}

// refusingArchive commits every staged version but those of the page it refuses.
type refusingArchive struct {
	*archive.Dir
	refuse string // a URL
}

func (a refusingArchive) Commit(batch []*archive.Pending) []error {
	errs := make([]error, len(batch))
	var rest []*archive.Pending
	var at []int
	for i, p := range batch {
		if p.Path() == a.refused() {
			p.Discard()
			errs[i] = errors.New("archive: sync: no space left on device")
			continue
		}
		rest, at = append(rest, p), append(at, i)
	}
	for k, err := range a.Dir.Commit(rest) {
		errs[at[k]] = err
	}
	return errs
}

func (a refusingArchive) refused() string {
	p, _ := a.Dir.Stage(commitRun, *testVersion(a.refuse))
	p.Discard()
	return p.Path()
}

var commitRun = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

func testVersion(u string) *archive.Version {
	return &archive.Version{Meta: archive.Meta{URL: u, ContentType: "text/html"}, Body: []byte("x"), Text: u}
}

func TestCommitterBatch(t *testing.T) {
	dir, err := archive.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &recordingStore{bad: 3}
	arch := refusingArchive{Dir: dir, refuse: "https://a.example/full"}
	c := &committer{arch: arch, runStart: commitRun, store: st, log: slog.New(slog.DiscardHandler)}

	jobs := []*commitJob{
		{rec: &store.FetchRecord{URLID: 1, ContentHash: "h1"}, version: testVersion("https://a.example/ok")},
		{rec: &store.FetchRecord{URLID: 2, ContentHash: "h2", Digest: []byte{1}, Changed: true, ETag: `"v2"`,
			LastModified: "Sun, 22 Nov 2026 03:00:00 GMT"}, version: testVersion("https://a.example/full")},
		{rec: &store.FetchRecord{URLID: 3}},
		{rec: &store.FetchRecord{URLID: 4}},
	}
	for _, j := range jobs {
		j.result = make(chan error, 1)
	}
	c.commit(t.Context(), jobs)

	errs := make([]error, len(jobs))
	for i, j := range jobs {
		errs[i] = <-j.result
	}
	if errs[0] != nil || errs[1] != nil || errs[3] != nil {
		t.Errorf("good records failed: %v", errs)
	}
	if !errors.Is(errs[2], store.ErrNotFound) {
		t.Errorf("the bad record: error %v, want ErrNotFound", errs[2])
	}
	if got := st.recorded; !slices.Equal(got, []int64{1, 2, 4}) {
		t.Errorf("recorded %v, want 1, 2 and 4 (the bad record does not take the others with it)", got)
	}
	if p := jobs[0].rec.ArchivePath; jobs[0].archErr != nil || dir.Check(p) != nil {
		t.Errorf("committed version: archErr %v, path %q, check %v", jobs[0].archErr, p, dir.Check(p))
	}
	r := jobs[1].rec
	if jobs[1].archErr == nil || r.ContentHash != "" || r.Digest != nil || r.Changed || r.ArchivePath != "" || r.Error == "" ||
		r.ETag != "" || r.LastModified != "" {
		t.Errorf("refused version: archErr %v, record %+v; want the error noted and no hash, digest, change, path or validators",
			jobs[1].archErr, *r)
	}
}

// Every page handed over by many workers at once is recorded before close returns.
func TestCommitterRecordsEveryPage(t *testing.T) {
	st := &recordingStore{bad: -1}
	c := newCommitter(t.Context(), nil, commitRun, st, slog.New(slog.DiscardHandler), 8)
	var wg sync.WaitGroup
	const pages = 200
	for i := range pages {
		wg.Go(func() {
			if _, err := c.submit(&store.FetchRecord{URLID: int64(i)}, nil, nil).wait(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	c.close()
	slices.Sort(st.recorded)
	if len(st.recorded) != pages || st.recorded[0] != 0 || st.recorded[pages-1] != pages-1 {
		t.Fatalf("%d pages recorded, want %d", len(st.recorded), pages)
	}
}

// A batch that fails for one bad record is recorded page by page, and each good page's URLs still go
// with its fetch.
func TestCommitterFallbackRecordsFound(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "http://a.test/x", Host: "a.test", Level: 1, FrMax: 1},
		{URL: "http://a.test/y", Host: "a.test", Level: 1, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	run, err := db.BeginRun(ctx, commitRun, 0)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []*commitJob
	for _, path := range []string{"/x/new", "", "/y/new"} {
		rec := &store.FetchRecord{URLID: -1, RunID: run, FetchedAt: commitRun, Status: 200, Magnitude: -1, NextFr: 1}
		if path != "" {
			u, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.test"}, Run: run})
			if err != nil {
				t.Fatal(err)
			}
			rec.URLID = u.ID
			rec.Found = &store.Found{URLs: []store.NewURL{{URL: "http://a.test" + path, Host: "a.test", FrMax: 1, ParentID: u.ID}}}
		}
		jobs = append(jobs, &commitJob{rec: rec, result: make(chan error, 1)})
	}
	c := &committer{store: db, log: slog.New(slog.DiscardHandler)}
	c.commit(ctx, jobs)
	for i, j := range jobs {
		err := <-j.result
		if i == 1 {
			if err == nil {
				t.Error("the record of a URL not in the table was stored")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if added := j.rec.Found.Added; len(added) != 1 || added[0].URL != j.rec.Found.URLs[0].URL {
			t.Errorf("page %d: Found.Added = %+v; want its URL", i, added)
		}
		if left, err := db.ToDiscover(ctx, j.rec.Found.URLs); err != nil || len(left) != 0 {
			t.Errorf("page %d: ToDiscover after the commit = %+v, %v; want its URL in the table", i, left, err)
		}
	}
}
