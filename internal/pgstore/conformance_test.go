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

// TestConformance runs the store roles' whole conformance suite against PostgreSQL.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Roles { return open(t) })
}

// TestReadConformance runs the read side's conformance suite against PostgreSQL.
func TestReadConformance(t *testing.T) {
	storetest.RunReads(t, func(t *testing.T) storetest.ReadRoles { return open(t) })
}

// TestIndexConformance runs the index step's conformance suite against PostgreSQL.
func TestIndexConformance(t *testing.T) {
	storetest.RunIndex(t, func(t *testing.T) storetest.IndexRoles { return open(t) })
}
