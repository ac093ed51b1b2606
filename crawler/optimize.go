package crawler

import (
	"context"

	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

// OptimizeStore is what the optimal policy needs from the database.
type OptimizeStore interface {
	BucketLoads(ctx context.Context) ([]store.BucketLoad, error)
	ApplyPlan(ctx context.Context, run int64, frMax map[int]int) error
}

var _ OptimizeStore = (*store.DB)(nil)

// Optimize makes a plan from the current estimates and applies it: every active page gets its
// bucket's fr_max and a fixed phase, so each run crawls about Budget pages.
func (c *Crawler) Optimize(ctx context.Context, st OptimizeStore, run Run, cfg frequency.PlanConfig) (*frequency.Plan, error) {
	loads, err := st.BucketLoads(ctx)
	if err != nil {
		return nil, err
	}
	plan := frequency.MakePlan(Groups(loads), cfg)
	frMax := make(map[int]int, len(plan.Buckets))
	for _, b := range plan.Buckets {
		frMax[b.Bucket] = b.FrMax
	}
	return plan, st.ApplyPlan(ctx, run.ID, frMax)
}

// Groups turns the store's bucket counts into the planner's groups.
func Groups(loads []store.BucketLoad) []frequency.Group {
	g := make([]frequency.Group, len(loads))
	for i, l := range loads {
		g[i] = frequency.Group{Bucket: l.Bucket, Pages: l.Pages, Rate: l.Rate}
	}
	return g
}
