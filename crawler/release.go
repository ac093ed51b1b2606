package crawler

import (
	"context"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// releaseLooks is how many of a page's last fetches are searched for release days: six weeks of
// daily runs.
const releaseLooks = 42

// ReleaseStore is what finding quasi-deterministic pages needs from the database.
type ReleaseStore interface {
	Timelines(ctx context.Context, run int64, n int, fn func(store.Timeline) error) error
	SetReleaseDays(ctx context.Context, masks map[int64]uint8) error
}

var _ ReleaseStore = (*store.DB)(nil)

// ReleaseDayStore is what the crawl stage needs to put the pages with release days on them; it
// makes them due or not through the Frontier's SetDue.
type ReleaseDayStore interface {
	// ReleasePages lists the active pages with release days, with their last fetch.
	ReleasePages(ctx context.Context) ([]store.ReleasePage, error)
}

var _ ReleaseDayStore = (*store.DB)(nil)

// Releases looks for the weekdays on which the changes of the pages fetched in run come
// (frequency.ReleaseDays) and stores them; a page with release days is then crawled on them rather
// than by its fr countdown. It returns how many of the pages looked at have release days.
func (c *Crawler) Releases(ctx context.Context, st ReleaseStore, run Run) (int, error) {
	masks := map[int64]uint8{}
	found := 0
	err := st.Timelines(ctx, run.ID, releaseLooks, func(t store.Timeline) error {
		m := frequency.ReleaseDays(frequency.Observations(t.At, t.Changed), t.ReleaseDays)
		if m != t.ReleaseDays {
			masks[t.URLID] = m
		}
		if m != 0 {
			found++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return found, st.SetReleaseDays(ctx, masks)
}

// releaseCountdown puts the pages with release days on them: due when a release day has begun since
// their last fetch, waiting otherwise, whatever their fr says.
func (c *Crawler) releaseCountdown(ctx context.Context) (due, waiting int, err error) {
	pages, err := c.store.ReleasePages(ctx)
	if err != nil || len(pages) == 0 {
		return 0, 0, err
	}
	now := c.cfg.Now()
	var dueIDs, waitIDs []int64
	for _, p := range pages {
		if p.LastFetch.IsZero() || frequency.ReleaseDue(p.ReleaseDays, p.LastFetch, now) {
			dueIDs = append(dueIDs, p.ID)
		} else {
			waitIDs = append(waitIDs, p.ID)
		}
	}
	return len(dueIDs), len(waitIDs), c.store.SetDue(ctx, dueIDs, waitIDs)
}
