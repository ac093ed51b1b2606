package crawler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// pipeStore serves pages' histories to recalc and takes its intervals, failing where told. Its
// reads run in recalc's goroutine and its writes in recalc's writer goroutine, so each counter has
// one writer, and the test reads them after Recalc returned.
type pipeStore struct {
	pages     int
	readFail  int   // RunHistories fails before this page (1-based); 0: never
	writeFail error // what SetFrMax returns; nil: it stores
	read      int   // pages handed to recalc
	written   int   // intervals stored
}

var (
	errRead  = errors.New("disk gone while reading")
	errWrite = errors.New("disk gone while writing")
)

func (s *pipeStore) RunHistories(_ context.Context, _ int64, _ int, fn func(store.PageHistory) error) error {
	for id := 1; id <= s.pages; id++ {
		if id == s.readFail {
			return errRead
		}
		h := store.PageHistory{URLID: int64(id), FrMax: 2, ChildRatio: -1,
			Records: []store.Record{{Run: 1, Changed: id%2 == 0}, {Run: 2, Changed: id%3 == 0}}}
		if err := fn(h); err != nil {
			return err
		}
		s.read++
	}
	return nil
}

func (s *pipeStore) SetFrMax(_ context.Context, updates []store.FrMaxUpdate) error {
	if s.writeFail != nil {
		return s.writeFail
	}
	s.written += len(updates)
	return nil
}

// TestRecalcPipelineFailures checks recalc's reader and writer goroutines against each other's
// failures: recalc returns the failure that came first, whichever side it came from, does not hang,
// and stops reading soon after its writer failed instead of computing the rest of the run.
func TestRecalcPipelineFailures(t *testing.T) {
	policy, err := frequency.New("")
	if err != nil {
		t.Fatal(err)
	}
	const pages = 100_000 // many batches
	for _, tc := range []struct {
		name    string
		st      *pipeStore
		wantErr error
		check   func(t *testing.T, st *pipeStore, stats *crawler.RecalcStats)
	}{
		{
			name: "all written",
			st:   &pipeStore{pages: pages},
			check: func(t *testing.T, st *pipeStore, stats *crawler.RecalcStats) {
				if st.written != pages || stats.Pages != pages {
					t.Errorf("%d intervals written, %d pages recalculated; want %d of each", st.written, stats.Pages, pages)
				}
			},
		},
		{
			name:    "writer fails",
			st:      &pipeStore{pages: pages, writeFail: errWrite},
			wantErr: errWrite,
			check: func(t *testing.T, st *pipeStore, _ *crawler.RecalcStats) {
				if st.read >= pages/2 {
					t.Errorf("recalc read %d of %d pages after its first write failed; want it to stop soon", st.read, pages)
				}
			},
		},
		{
			name:    "reader fails",
			st:      &pipeStore{pages: pages, readFail: pages / 3},
			wantErr: errRead,
			check: func(t *testing.T, st *pipeStore, _ *crawler.RecalcStats) {
				if st.written >= pages/3 {
					t.Errorf("%d intervals written, want fewer than the %d pages read before the failure", st.written, pages/3)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crawler.New(nil, nil, nil, nil, crawler.Config{})
			stats, err := c.Recalc(t.Context(), tc.st, crawler.Run{ID: 2}, policy, 10, nil)
			if !errors.Is(err, tc.wantErr) { // errors.Is(err, nil) is err == nil
				t.Fatalf("Recalc: %v, want %v", err, tc.wantErr)
			}
			tc.check(t, tc.st, stats)
		})
	}
}
