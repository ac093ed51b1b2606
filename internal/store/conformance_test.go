package store_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/store/storetest"
)

// TestConformance runs the store roles' conformance suite against SQLite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Roles {
		return mustOpen(t, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	})
}

// TestReadConformance runs the read side's conformance suite (serve, status, history, explain)
// against SQLite.
func TestReadConformance(t *testing.T) {
	storetest.RunReads(t, func(t *testing.T) storetest.ReadRoles {
		return mustOpen(t, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	})
}

// TestIndexConformance runs the index step's conformance suite (textindex, serve's search) against
// SQLite.
func TestIndexConformance(t *testing.T) {
	storetest.RunIndex(t, func(t *testing.T) storetest.IndexRoles {
		return mustOpen(t, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	})
}
