package crawler

import (
	"context"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// RecalcStore is what the recalculation stage needs from the database.
type RecalcStore interface {
	RunHistories(ctx context.Context, run int64, limit int, fn func(store.PageHistory) error) error
	SetFrMax(ctx context.Context, updates []store.FrMaxUpdate) error
}

var _ RecalcStore = (*store.DB)(nil)

// RecalcStats counts what a recalculation did.
type RecalcStats struct {
	Pages    int // pages recalculated
	Faster   int // fr_max went down: visited more often
	Slower   int // fr_max went up
	Adjusted int // hubs whose fr_max the hub adjustment lowered
	Elapsed  time.Duration
}

// recalcBatch is how many new intervals are written per transaction.
const recalcBatch = 5000

// Rates makes recalc estimate change rates against a population prior instead of with Cho's
// estimator alone: each page gets the rate whose staleness at Interval runs (the budget's mean
// revisit interval, active pages / budget) equals its expected staleness under the posterior of Mix
// (frequency.RateMix.Equivalent), and Mix is refitted on up to 20,000 of the run's pages afterwards,
// for the next run. This is what lets the optimal policy beat uniform crawling with estimated rates
// (docs/experiments.md).
type Rates struct {
	Mix      *frequency.RateMix
	Interval float64
	// Known, when set, gives pages' rates from outside instead of estimating them: the simulator's
	// reference, the optimal policy with the web's true rates, which no crawler can have.
	Known func(pageURL string) (rate float64, ok bool)
	// Dates says whose Last-Modified dates to believe. Rates with a nil Mix estimate by Cho's
	// estimator, with the dates.
	Dates Dates
}

// rateSample is how many pages' histories refit the prior after a run: enough for the 25 weights,
// bounded in memory whatever the run's size.
const rateSample = 20000

// Recalc is the paper's Frequency Manager: for every page crawled in run, the policy turns its last
// limit records into a new fr_max, and the page's countdown restarts from it. The page's change rate
// is estimated too and kept with its bucket, for the budgeted policies and for strata explain: with
// rates, against its population prior; with nil rates, by Cho's estimator alone. A nil policy only
// estimates rates (the optimal policy then plans every page at once). A hub whose children change
// much more often than the hub itself — at least half of them changed lately, and at least twice the
// hub's own change share — gets the hub adjustment on top, so that it comes due, and its subtree gets
// judged, more often (Bouras et al. 3.3 and table 2).
func (c *Crawler) Recalc(ctx context.Context, st RecalcStore, run Run, policy frequency.Policy, limit int, rates *Rates) (*RecalcStats, error) {
	start := time.Now()
	var sample [][]frequency.Interval
	rng := rand.New(rand.NewPCG(uint64(run.ID), 0x5eed))
	seen := 0
	stats := &RecalcStats{}
	// The intervals are written by a goroutine of their own while the next pages are read and
	// computed: reading and the policy took 4-4.5 s of a 17.5 s recalc over 1 M pages, all of it
	// in turn with the writes before. SQLite's WAL lets the reads go on beside the writer.
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan []store.FrMaxUpdate, 1)
	g.Go(func() error {
		for b := range batches {
			if err := st.SetFrMax(gctx, b); err != nil {
				return err // cancels gctx, which stops the reader's next send
			}
		}
		return nil
	})
	batch := make([]store.FrMaxUpdate, 0, recalcBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		select {
		case batches <- batch:
		case <-gctx.Done():
			return context.Cause(gctx)
		}
		batch = make([]store.FrMaxUpdate, 0, recalcBatch)
		return nil
	}
	err := st.RunHistories(gctx, run.ID, limit, func(h store.PageHistory) error {
		var records []frequency.Record
		if rates != nil {
			records = rates.Dates.records(h.Records, !h.DatesWrong && rates.Dates.Believed(h.URL))
		} else {
			records = FrequencyRecords(h.Records)
		}
		next := h.FrMax // a nil policy only estimates rates: the optimal policy sets fr_max for all pages at once
		if policy != nil {
			next = policy.NextFrMax(frequency.Page{FrMax: h.FrMax, History: records})
		}
		// The children's change share was measured by the selective rule when the hub came due in
		// this run's crawl stage; reading it back saves a query per hub.
		if childRatio := h.ChildRatio; policy != nil && h.Level > 0 && childRatio >= 0 {
			if own := frequency.ChangeRatio(records, limit); childRatio >= 0.5 && childRatio >= 2*own {
				if adj := frequency.HubAdjust(next, childRatio); adj < next {
					next = adj
					stats.Adjusted++
				}
			}
		}
		update := store.FrMaxUpdate{URLID: h.URLID, FrMax: next, Was: h.FrMax, Rate: -1}
		intervals := frequency.Intervals(records)
		if rates != nil && rates.Known != nil {
			if rate, ok := rates.Known(h.URL); ok {
				update.Rate, update.Bucket = rate, c.buckets.Of(rate)
			}
		} else if rates != nil && rates.Mix != nil {
			if rate, ok := rates.Mix.Equivalent(intervals, rates.Interval); ok {
				update.Rate, update.Bucket = rate, c.buckets.Of(rate)
			}
			// A reservoir sample of the run's pages, for refitting the prior.
			if seen++; len(sample) < rateSample {
				sample = append(sample, intervals)
			} else if k := rng.IntN(seen); k < rateSample {
				sample[k] = intervals
			}
		} else if rate, ok := frequency.EstimateRate(intervals); ok {
			update.Rate, update.Bucket = rate, c.buckets.Of(rate)
		}
		stats.Pages++
		switch {
		case next < h.FrMax:
			stats.Faster++
		case next > h.FrMax:
			stats.Slower++
		}
		batch = append(batch, update)
		if len(batch) == recalcBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	close(batches)
	if werr := g.Wait(); werr != nil {
		err = werr // the writer's failure is the cause; the reader's error, if any, only follows it
	}
	if err == nil && rates != nil && rates.Mix != nil {
		rates.Mix.Fit(sample, 2)
	}
	stats.Elapsed = time.Since(start)
	return stats, err
}
