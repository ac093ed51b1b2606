package runcycle

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/notify"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/textindex"
)

// afterRun follows a finished run: the index step brings strata serve's search and page events up
// to date, then the configured hooks hear what the run did. Neither changes the run's outcome: their
// failures are logged, and runErr, the run's own error, is returned unchanged, so that the run path
// calls it in one line. After a signal it does nothing; the next run's step catches up.
//
// idx is the database's index and sums what the hooks' summary reads (SQLite's or PostgreSQL's);
// nil sums sends nothing.
func afterRun(ctx context.Context, idx textindex.Store, sums summaryStore, arch *archive.Dir, log *slog.Logger, hooks notify.Hooks, run int64, runErr error) error {
	if ctx.Err() != nil {
		return runErr
	}
	if idx != nil && !indexStep(ctx, log, func(ctx context.Context) (textindex.Stats, error) { return textindex.Update(ctx, idx, arch) }) {
		return runErr
	}
	if sums == nil || runErr != nil {
		return runErr
	}
	notifyRun(ctx, sums, log, hooks, run)
	return nil
}

// notifyRun tells the hooks what run did. A failure is logged: it never changes the run's outcome.
func notifyRun(ctx context.Context, sums summaryStore, log *slog.Logger, hooks notify.Hooks, run int64) {
	if hooks.Webhook == "" && hooks.Command == "" {
		return
	}
	sum, err := runSummary(ctx, sums, run)
	if err != nil {
		log.Warn("notify: could not summarise the run", "run", run, "err", err)
		return
	}
	if err := notify.Send(ctx, hooks, sum); err != nil {
		log.Warn("notify: a hook failed; the run is not affected", "run", run, "err", err)
	}
}

// summaryStore is what the hooks' summary of a run reads: its row, its page counts, its biggest
// changes and its page events, as strata serve shows them.
type summaryStore interface {
	RunByID(ctx context.Context, id int64) (store.Run, error)
	RunPageCounts(ctx context.Context, runs []int64) (map[int64]store.PageCounts, error)
	Changes(ctx context.Context, q store.ChangeQuery) ([]store.Change, error)
	PageEvents(ctx context.Context, q store.EventQuery) ([]store.PageEvent, error)
}

// indexStep runs step (textindex.Update, Index or Summarize) within indexBudget and logs what came
// of it; false when it failed for another reason than the budget.
func indexStep(ctx context.Context, log *slog.Logger, step func(context.Context) (textindex.Stats, error)) bool {
	ictx, cancel := context.WithTimeout(ctx, indexBudget)
	st, err := step(ictx)
	cancel()
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		log.Info("text index: part of the archive is not indexed yet; the next run goes on, or run strata index",
			"versions", st.Versions, "budget", indexBudget)
	case err != nil:
		log.Warn("text index: not brought up to date; the next run goes on from where it stopped", "err", err)
		return false
	default:
		log.Debug("text index brought up to date", "versions", st.Versions, "runs", st.Runs, "missing", st.Missing,
			"bytes", st.Bytes, "elapsed", st.Elapsed.Round(time.Millisecond))
	}
	return true
}

var (
	_ textindex.Store = (*store.DB)(nil)
	_ textindex.Store = (*pgstore.DB)(nil)
	_ summaryStore    = (*store.DB)(nil)
	_ summaryStore    = (*pgstore.DB)(nil)
)

// indexBudget bounds the index step after a run. A run's own new versions take milliseconds to
// seconds (docs/performance.md, section 8), but the first run on a database crawled before the
// index existed would index the whole archive: it does this much and leaves the rest to the next
// run or to strata index, so a cron run does not grow by an hour once.
const indexBudget = 5 * time.Minute

// summaryPages bounds the pages of each kind a hook's summary lists.
const summaryPages = 100

// runSummary is what the hooks receive about run: its counts, its biggest changes and its new, gone
// and unlinked pages, as strata serve shows them.
func runSummary(ctx context.Context, db summaryStore, run int64) (notify.Summary, error) {
	r, err := db.RunByID(ctx, run)
	if err != nil {
		return notify.Summary{}, err
	}
	sum := notify.Summary{Run: r.ID, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Status: r.Status, Fetched: r.Fetched,
		Changed: r.Changed, Pages: []notify.Page{}}
	counts, err := db.RunPageCounts(ctx, []int64{run})
	if err != nil {
		return sum, err
	}
	c := counts[run]
	sum.New, sum.Gone, sum.Unlinked, sum.NotFound = c.New, c.Gone, c.Unlinked, c.NotFound
	changes, err := db.Changes(ctx, store.ChangeQuery{Run: run, Limit: summaryPages})
	if err != nil {
		return sum, err
	}
	for _, ch := range changes {
		p := notify.Page{Kind: "changed", URL: ch.URL, Title: ch.Title, FetchID: ch.FetchID}
		if ch.Magnitude >= 0 {
			m := ch.Magnitude
			p.Magnitude = &m
		}
		sum.Pages = append(sum.Pages, p)
	}
	sum.More = max(0, r.Changed-len(changes))
	for _, kind := range []struct {
		name  string
		total int
	}{{"new", c.New}, {"gone", c.Gone}, {"unlinked", c.Unlinked}} {
		evs, err := db.PageEvents(ctx, store.EventQuery{Run: run, Kind: kind.name, Limit: summaryPages})
		if err != nil {
			return sum, err
		}
		for _, e := range evs {
			sum.Pages = append(sum.Pages, notify.Page{Kind: e.Kind, URL: e.URL, Title: e.Title, FetchID: e.FetchID})
		}
		sum.More += max(0, kind.total-len(evs))
	}
	return sum, nil
}
