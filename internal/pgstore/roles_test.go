package pgstore_test

import (
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/pgstore"
)

// *pgstore.DB plays every store role the crawler defines. The assertions live in a test file:
// only the command line and the simulator may import the crawler (layout_test.go), and pgstore is
// a store, which the crawler's packages import rather than the other way round.
var (
	_ crawler.Frontier        = (*pgstore.DB)(nil)
	_ crawler.FetchRecorder   = (*pgstore.DB)(nil)
	_ crawler.Recorder        = (*pgstore.DB)(nil)
	_ crawler.RobotsStore     = (*pgstore.DB)(nil)
	_ crawler.PoliteStore     = (*pgstore.DB)(nil)
	_ crawler.SelectiveStore  = (*pgstore.DB)(nil)
	_ crawler.TrapStore       = (*pgstore.DB)(nil)
	_ crawler.HintStore       = (*pgstore.DB)(nil)
	_ crawler.BudgetStore     = (*pgstore.DB)(nil)
	_ crawler.ReleaseDayStore = (*pgstore.DB)(nil)
	_ crawler.RecalcStore     = (*pgstore.DB)(nil)
	_ crawler.LinkStore       = (*pgstore.DB)(nil)
	_ crawler.ReleaseStore    = (*pgstore.DB)(nil)
	_ crawler.OptimizeStore   = (*pgstore.DB)(nil)
	_ crawler.ModelStore      = (*pgstore.DB)(nil)
	_ crawler.RunStore        = (*pgstore.DB)(nil)
	_ crawler.Store           = (*pgstore.DB)(nil)
	_ crawler.CycleStore      = (*pgstore.DB)(nil)
)
