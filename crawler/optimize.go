package crawler

import (
	"context"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// OptimizeStore is what the optimal policy needs from the database.
type OptimizeStore interface {
	BucketLoads(ctx context.Context, weighted bool) ([]store.BucketLoad, error)
	ApplyPlan(ctx context.Context, run int64, weighted bool, plan []store.PlanEntry) error
	// UpdateWeights recomputes the pages' weights from their seeds' priorities and in-links.
	UpdateWeights(ctx context.Context) (int, error)
}

var _ OptimizeStore = (*store.DB)(nil)

// Optimize makes a plan from the current estimates and applies it: every active page gets its
// bucket's fr_max and a fixed phase, so each run crawls about Budget pages. weighted makes the
// objective Wolf et al.'s weighted staleness: the pages' weights are brought up to date first, and
// the pages of a bucket are planned by weight class.
func (c *Crawler) Optimize(ctx context.Context, st OptimizeStore, run Run, cfg frequency.PlanConfig, weighted bool) (*frequency.Plan, error) {
	if weighted {
		if _, err := st.UpdateWeights(ctx); err != nil {
			return nil, err
		}
	}
	loads, err := st.BucketLoads(ctx, weighted)
	if err != nil {
		return nil, err
	}
	plan := frequency.MakePlan(Groups(loads, weighted), cfg)
	entries := make([]store.PlanEntry, len(plan.Buckets))
	for i, b := range plan.Buckets {
		entries[i] = store.PlanEntry{Bucket: b.Bucket, Class: b.Class, FrMax: b.FrMax}
	}
	return plan, st.ApplyPlan(ctx, run.ID, weighted, entries)
}

// Groups turns the store's bucket counts into the planner's groups; unless weighted, every page
// weighs 1.
func Groups(loads []store.BucketLoad, weighted bool) []frequency.Group {
	g := make([]frequency.Group, len(loads))
	for i, l := range loads {
		g[i] = frequency.Group{Bucket: l.Bucket, Class: l.Class, Pages: l.Pages, Rate: l.Rate, Weight: 1, PerRun: l.PerRun}
		if weighted {
			g[i].Weight = l.Weight
		}
	}
	return g
}
