package crawler_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
)

// TestHybridSamplesSitesByTheirChanges runs Ghodsi et al.'s hybrid policy over two sites whose pages
// have little history: one whose pages change at every visit and one whose pages never change. Each
// run, every site gets a first batch; the changing site's batches go on (P(ρ = 1) ≈ 1), the still
// site's stop after one (P(ρ = 0) ≈ 0.0025).
func TestHybridSamplesSitesByTheirChanges(t *testing.T) {
	h := newHarness(t, harnessOptions{delay: 2 * time.Millisecond})
	busy, still := h.web.AddSite(t), h.web.AddSite(t)
	const pages = 30
	var version atomic.Int64
	var urls []string
	for i := range pages {
		p := fmt.Sprintf("/p%d", i)
		still.Page(p, "<p>always the same words on "+p+"</p>")
		busy.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "<p>%s edition %s</p>", p, string(rune('a'+version.Add(1)%26)))
		}))
		urls = append(urls, busy.URL(p), still.URL(p))
	}
	h.seed(0, 1, urls...)
	hy := &frequency.Hybrid{SampleSize: 5, MinHistory: 4, Normal: 3, Slow: 10, Step: -1}
	h.cfg.Hybrid = hy
	h = rewire(h, func(string) bool { return true })
	for run := 1; run <= 2; run++ {
		before := map[bool]int{true: len(h.web.RequestsTo(busy)), false: len(h.web.RequestsTo(still))}
		st := h.mustCrawl()
		if _, err := h.c.Recalc(t.Context(), h.db, crawler.Run{ID: h.run}, hy.Policy(), 10, nil); err != nil {
			t.Fatal(err)
		}
		gotBusy := len(h.web.RequestsTo(busy)) - before[true]
		gotStill := len(h.web.RequestsTo(still)) - before[false]
		if run == 1 {
			// New pages are fetched once whatever the policy: there is nothing to sample yet.
			if st.Sampled != 0 || gotBusy < pages || gotStill < pages {
				t.Fatalf("run 1: %d sampled, %d and %d requests; want every new page fetched, none sampled", st.Sampled, gotBusy, gotStill)
			}
			continue
		}
		if gotBusy != pages || gotStill != 5 {
			t.Errorf("run 2: the changing site got %d fetches, the still one %d; want all %d and one batch of 5", gotBusy, gotStill, pages)
		}
		if st.Sampled != pages+5 || st.SampledChanged != pages {
			t.Errorf("run 2: %d sampled, %d of them changed; want %d and %d", st.Sampled, st.SampledChanged, pages+5, pages)
		}
	}
}
