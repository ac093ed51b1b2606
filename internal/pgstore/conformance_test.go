package pgstore_test

import (
	"testing"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store/storetest"
)

// open returns a new pgstore on a fresh database, closed when t ends.
func open(t *testing.T) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Open(t.Context(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// TestConformance runs the store roles' conformance suite against PostgreSQL, role by role as
// pgstore implements them.
func TestConformance(t *testing.T) {
	storetest.RunFrontier(t, func(t *testing.T) storetest.FrontierRoles { return open(t) })
	storetest.RunRecorder(t, func(t *testing.T) storetest.RecorderRoles { return open(t) })
	storetest.RunRobots(t, func(t *testing.T) storetest.RobotsRoles { return open(t) })
	storetest.RunPoliteness(t, func(t *testing.T) storetest.PoliteRoles { return open(t) })
	storetest.RunSelective(t, func(t *testing.T) storetest.SelectiveRoles { return open(t) })
	storetest.RunTraps(t, func(t *testing.T) storetest.TrapRoles { return open(t) })
	storetest.RunHints(t, func(t *testing.T) storetest.HintRoles { return open(t) })
	storetest.RunBudget(t, func(t *testing.T) storetest.BudgetRoles { return open(t) })
}
