package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// TestURLGivesFreshDatabases checks that each call gets its own empty database, that it is dropped
// when its test ends, and that a cluster of our own listens on loopback only.
func TestURLGivesFreshDatabases(t *testing.T) {
	var first string
	t.Run("first", func(t *testing.T) {
		first = pgtest.URL(t)
		conn := connect(t, first)
		if _, err := conn.Exec(t.Context(), "CREATE TABLE marker (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	second := pgtest.URL(t)
	if second == first {
		t.Fatalf("two tests got the same database %s", first)
	}
	conn := connect(t, second)
	var tables int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("a fresh database has %d tables in public, want 0", tables)
	}
	var dropped bool
	name := dbName(t, first)
	if err := conn.QueryRow(t.Context(), "SELECT NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&dropped); err != nil {
		t.Fatal(err)
	}
	if !dropped {
		t.Errorf("database %s outlived its test", name)
	}
	if d := pgtest.StartTime(); d > 0 {
		t.Logf("cluster of our own started in %v", d)
		var listen string
		if err := conn.QueryRow(t.Context(), "SHOW listen_addresses").Scan(&listen); err != nil {
			t.Fatal(err)
		}
		if listen != "127.0.0.1" {
			t.Errorf("the test cluster listens on %q, want 127.0.0.1 only", listen)
		}
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func dbName(t *testing.T, url string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Database
}
