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

// TestQuasiDeterministicPageIsCrawledOnItsReleaseDay plays 35 daily runs (on a fake clock) of a
// weekly bulletin that is updated every Monday at noon, beside a page that never changes: strata
// learns that the bulletin's changes are first seen on Tuesdays, and then crawls it on Tuesdays only
// — after the release, never before it — and sees every update.
func TestQuasiDeterministicPageIsCrawledOnItsReleaseDay(t *testing.T) {
	var now atomic.Int64
	day0 := time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC) // a Monday, 03:00
	now.Store(day0.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }

	h := newHarness(t, harnessOptions{delay: 2 * time.Millisecond})
	s := h.web.AddSite(t)
	s.Handle("/bulletin", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The issue number counts the Mondays at noon since day0.
		issue := int(clock().Sub(day0.Add(9*time.Hour)).Hours()/(24*7)) + 1
		fmt.Fprintf(w, "<h1>Bulletin</h1><p>Issue %s: news of the week %d</p>", string(rune('A'+issue%26)), issue)
	}))
	h.seed(0, 1, s.URL("/bulletin"))
	h.cfg.Now = clock
	h = rewire(h, func(string) bool { return true })
	policy, err := frequency.New("bouras", frequency.WithBounds(1, 1)) // daily, so only release days matter
	if err != nil {
		t.Fatal(err)
	}
	fetchedOn := map[time.Weekday]int{}
	changes := 0
	for d := range 49 {
		now.Store(day0.AddDate(0, 0, d).UnixNano())
		st := h.mustCrawl()
		if d >= 35 && st.Fetched > 0 {
			fetchedOn[clock().Weekday()]++
			changes += st.Changed
		}
		if _, err := h.c.Recalc(t.Context(), h.db, crawler.Run{ID: h.run}, policy, 10, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := h.c.Releases(t.Context(), h.db, crawler.Run{ID: h.run}); err != nil {
			t.Fatal(err)
		}
	}
	info, err := h.db.URLInfo(t.Context(), s.URL("/bulletin"))
	if err != nil {
		t.Fatal(err)
	}
	if info.ReleaseDays != 1<<time.Tuesday {
		t.Fatalf("release days %q (%b), want Tue", frequency.WeekdayNames(info.ReleaseDays), info.ReleaseDays)
	}
	if len(fetchedOn) != 1 || fetchedOn[time.Tuesday] != 2 {
		t.Errorf("in the last two weeks the bulletin was fetched on %v, want on the two Tuesdays only", fetchedOn)
	}
	if changes != 2 {
		t.Errorf("%d changes seen in the last two weeks, want both issues", changes)
	}
}
