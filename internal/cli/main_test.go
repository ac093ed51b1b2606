package cli_test

import (
	"os"
	"testing"

	"github.com/strata-crawler/strata/internal/pgtest"
)

// TestMain stops the PostgreSQL cluster pgtest may start for the tests that crawl into PostgreSQL.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
