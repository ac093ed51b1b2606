package crawler_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// TestOptimalPlanSpreadsTheLoad gives 300 pages change rates from 0.001 to 3 per run, makes the
// optimal plan for a budget of 30 pages per run over a period of 10 runs, then plays 30 runs of
// countdown, crawl and re-phasing on the real store: after the first period every run's load must stay
// within the binomial spread of hashed phases around the plan's, and the plan's within 10 % of the
// budget. (Kept small: it runs the transpiled SQLite under the race detector in CI.)
func TestOptimalPlanSpreadsTheLoad(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const pages, budget, period, hosts = 300, 30, 10, 5
	var seeds []store.NewSeed
	for i := 0; i < pages; i++ {
		seeds = append(seeds, store.NewSeed{URL: fmt.Sprintf("https://s%d.example/p%d", i%hosts, i), Host: fmt.Sprintf("s%d.example", i%hosts), FrMax: 1})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	buckets := frequency.Buckets{}
	var rates []store.FrMaxUpdate
	for i := 0; i < pages; i++ {
		r := 0.001 * math.Pow(3000, float64(i%97)/96) // 0.001 .. 3 per run
		rates = append(rates, store.FrMaxUpdate{URLID: int64(i + 1), FrMax: 1, Rate: r, Bucket: buckets.Of(r)})
	}
	if err := db.SetFrMax(ctx, rates); err != nil {
		t.Fatal(err)
	}
	cfg := frequency.PlanConfig{Budget: budget, Period: period, MinCrawls: 1, Buckets: buckets}
	c := crawler.New(db, nil, nil, nil, crawler.Config{})

	var loads []int
	for run := 1; run <= 3*period; run++ {
		id, _ := db.BeginRun(ctx, time.Now(), 0)
		due, _, err := db.Countdown(ctx)
		if err != nil {
			t.Fatal(err)
		}
		loads = append(loads, due)
		// Crawl every due URL (no network: a record is all the plan needs), then re-plan.
		for {
			u, err := db.NextDue(ctx, store.DueQuery{Hosts: hostsOf(hosts), Run: id})
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			db.RecordFetch(ctx, store.FetchRecord{URLID: u.ID, RunID: id, FetchedAt: time.Now(), Status: 200, NextFr: u.FrMax})
		}
		plan, err := c.Optimize(ctx, db, crawler.Run{ID: id}, cfg, false)
		if err != nil {
			t.Fatal(err)
		}
		if run == 1 {
			t.Logf("plan: %.1f crawls per run expected for a budget of %d, expected freshness %.3f, %d buckets",
				plan.ExpectedPerRun, budget, plan.ExpectedFreshness, len(plan.Buckets))
			if math.Abs(plan.ExpectedPerRun-budget) > 0.1*budget {
				t.Errorf("the plan implies %.1f crawls per run, want within 10%% of the budget %d", plan.ExpectedPerRun, budget)
			}
		}
	}
	t.Logf("load per run: %v", loads)
	lo, hi, sum := math.MaxInt, 0, 0
	for _, n := range loads[period:] {
		lo, hi, sum = min(lo, n), max(hi, n), sum+n
	}
	mean := float64(sum) / float64(len(loads)-period)
	// The phases are a hash of each URL, so the load per run is binomial around the mean: with 30
	// pages per run its standard deviation is about 5.5. Pages of one bucket sharing a phase (a
	// thundering herd) would put whole buckets on single runs and leave others nearly empty.
	if spread := 4 * math.Sqrt(mean); float64(hi) > mean+spread || float64(lo) < mean-spread {
		t.Errorf("after the first period the load ranges %d..%d around a mean of %.1f: want within %.0f", lo, hi, mean, spread)
	}
	if math.Abs(mean-budget) > 0.1*budget {
		t.Errorf("mean load %.1f per run, want within 10%% of the budget %d", mean, budget)
	}
}

func hostsOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("s%d.example", i)
	}
	return out
}

// TestWeightedObjectiveFavoursImportantPages plans two seeds' pages of equal change rates, one seed
// with priority 8: under the weighted objective its pages get more crawls per period than the
// others, and under plain staleness the same as them.
func TestWeightedObjectiveFavoursImportantPages(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const pages = 40
	var seeds []store.NewSeed
	for i := range pages {
		prio := 1.0
		if i%2 == 0 {
			prio = 8
		}
		seeds = append(seeds, store.NewSeed{URL: fmt.Sprintf("https://s.example/p%d", i), Host: "s.example", FrMax: 1, Priority: prio})
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	buckets := frequency.Buckets{}
	id, _ := db.BeginRun(ctx, time.Now(), 0)
	var rates []store.FrMaxUpdate
	for i := range pages {
		// Crawled once, as the plan counts only pages it can revisit.
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: int64(i + 1), RunID: id, FetchedAt: time.Now(), Status: 200, NextFr: 1}); err != nil {
			t.Fatal(err)
		}
		rates = append(rates, store.FrMaxUpdate{URLID: int64(i + 1), FrMax: 1, Rate: 0.2, Bucket: buckets.Of(0.2)})
	}
	if err := db.SetFrMax(ctx, rates); err != nil {
		t.Fatal(err)
	}
	c := crawler.New(db, nil, nil, nil, crawler.Config{})
	cfg := frequency.PlanConfig{Budget: 10, Period: 10, MinCrawls: 1, Buckets: buckets}
	for _, tc := range []struct {
		weighted bool
		groups   int
	}{{false, 1}, {true, 2}} {
		plan, err := c.Optimize(ctx, db, crawler.Run{ID: id}, cfg, tc.weighted)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Buckets) != tc.groups {
			t.Fatalf("weighted %v: %d groups in the plan, want %d: %+v", tc.weighted, len(plan.Buckets), tc.groups, plan.Buckets)
		}
		if !tc.weighted {
			continue
		}
		light, heavy := plan.Buckets[0], plan.Buckets[1]
		if heavy.Weight <= light.Weight || heavy.Crawls <= light.Crawls || heavy.FrMax >= light.FrMax {
			t.Errorf("weighted plan: light %+v, heavy %+v; want the heavy pages crawled more often", light, heavy)
		}
		for i, want := range map[int]int{0: heavy.FrMax, 1: light.FrMax} {
			info, err := db.URLInfo(ctx, fmt.Sprintf("https://s.example/p%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if info.FrMax != want {
				t.Errorf("p%d has fr_max %d, want %d", i, info.FrMax, want)
			}
		}
	}
}
