package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// crawledHistory crawls a small loopback web twice into SQLite and returns the directory and its
// configuration.
func crawledHistory(t *testing.T) (dir, cfg string) {
	t.Helper()
	web := testweb.New(t)
	dir, cfg = lossDir(t, changingSite(t, web, 5), "")
	for range 2 {
		if _, errs, code := strata(t, dir, "--config", cfg, "run"); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, errs)
		}
	}
	return dir, cfg
}

// copiedTables are the tables migrate-db copies, with a column list that spells each row out for
// comparing both sides (the order of rows is by key).
var copiedTables = map[string]string{
	"runs":       "SELECT id, started_at, status, fetched, new, changed, bytes, sealed_at FROM runs ORDER BY id",
	"urls":       "SELECT id, url, host, due_tick, fr_max, content_hash, digest, recent, change_rate, root_id FROM urls ORDER BY id",
	"fetches":    "SELECT id, url_id, run_id, fetched_at, status, changed, archive_path, magnitude, text_mode FROM fetches ORDER BY id",
	"captures":   "SELECT fetch_id, request, response, ip, payload_digest FROM captures ORDER BY fetch_id",
	"hosts":      "SELECT origin, domain, robots_status, robots_body, robots_fetched_at FROM hosts ORDER BY origin",
	"politeness": "SELECT host, last_end_at, next_at, crawl_delay_ms FROM politeness ORDER BY host",
	"countdown":  "SELECT one, tick, filled FROM countdown",
	"due":        "SELECT host, prio, level, id FROM due ORDER BY host, prio DESC, level DESC, id",
}

// TestMigrateDBCopiesACrawledHistory crawls a loopback web into SQLite, moves it with strata
// migrate-db and compares both databases row by row in the columns a researcher reads; a second
// migrate-db into the same database is refused and changes nothing; new rows get ids after the
// copied ones.
func TestMigrateDBCopiesACrawledHistory(t *testing.T) {
	target := pgtest.URL(t)
	dir, cfg := crawledHistory(t)
	out, errs, code := strata(t, dir, "--config", cfg, "migrate-db", "--to", target)
	if code != 0 {
		t.Fatalf("migrate-db: exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 21 || !strings.Contains(lines[20], "verified and committed") {
		t.Fatalf("migrate-db printed %d lines, want one per table (20) and a summary:\n%s", len(lines), out)
	}
	for _, l := range lines[:20] {
		if !strings.Contains(l, " verified ") {
			t.Errorf("table line %q does not say verified", l)
		}
	}

	lite := openSQLite(t, dir)
	pg := connectPG(t, target)
	for table, q := range copiedTables {
		want, got := liteRows(t, lite, q), pgRows(t, pg, q)
		if len(want) == 0 && table != "due" {
			t.Errorf("%s: the crawl left no rows to compare", table)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s in PostgreSQL:\n%s\nwant (SQLite):\n%s", table, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(out, table+" ") || !strings.Contains(out, " "+strconv.Itoa(len(want))+" rows") {
			t.Errorf("no report line for %s with %d rows:\n%s", table, len(want), out)
		}
	}
	var fetches, versions int
	pg.QueryRow(t.Context(), "SELECT count(*), count(archive_path) FROM fetches").Scan(&fetches, &versions)
	if fetches != 10 || versions != 10 {
		t.Errorf("PostgreSQL has %d fetches, %d with a version; two runs over 5 changing pages make 10 of each", fetches, versions)
	}
	var fetchUpto int64
	pg.QueryRow(t.Context(), "SELECT fetch_upto FROM text_index").Scan(&fetchUpto)
	if fetchUpto != 0 {
		t.Errorf("text_index.fetch_upto = %d in PostgreSQL, whose text index is empty; want 0", fetchUpto)
	}

	_, errs, code = strata(t, dir, "--config", cfg, "migrate-db", "--to", target)
	if code != 2 || !strings.Contains(errs, "not empty") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("a second migrate-db: exit %d, stderr %q; want exit 2 and one line saying the target is not empty", code, errs)
	}
	if got := pgRows(t, pg, copiedTables["urls"]); strings.Join(got, "\n") != strings.Join(liteRows(t, lite, copiedTables["urls"]), "\n") {
		t.Error("the refused migrate-db changed the target's urls")
	}
	var maxID, newID int64
	pg.QueryRow(t.Context(), "SELECT max(id) FROM urls").Scan(&maxID)
	if err := pg.QueryRow(t.Context(), "INSERT INTO urls (url, host, added_at) VALUES ('http://127.0.0.1/new', '127.0.0.1', 'now') RETURNING id").Scan(&newID); err != nil {
		t.Fatal(err)
	}
	if newID != maxID+1 {
		t.Errorf("a new URL got id %d after copied ids up to %d; the identity sequence was not reset", newID, maxID)
	}
}

// TestMigrateDBKilledLeavesTargetRetryable kills migrate-db in the middle of a table's COPY and
// after every table is verified but before the commit: the target must have no rows either way, and
// the next migrate-db must copy it whole. A kill after the commit leaves it whole, and the next
// migrate-db says so and changes nothing (TestMigrateDBCopiesACrawledHistory).
func TestMigrateDBKilledLeavesTargetRetryable(t *testing.T) {
	dir, cfg := crawledHistory(t)
	for _, point := range []string{"migrate-db-copying", "migrate-db-verified"} {
		t.Run(point, func(t *testing.T) {
			target := pgtest.URL(t)
			killedAt(t, dir, point, "--config", cfg, "migrate-db", "--to", target)
			pg := connectPG(t, target)
			// The server rolls the killed session back when it sees its connection close; until then
			// the copy's lock on urls holds this count back, so it sees the outcome.
			for _, table := range []string{"runs", "urls", "fetches", "due"} {
				var n int
				if err := pg.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("after a kill at %s, %s has %d rows; want none", point, table, n)
				}
			}
			out, errs, code := strata(t, dir, "--config", cfg, "migrate-db", "--to", target)
			if code != 0 || !strings.Contains(out, "verified and committed") {
				t.Fatalf("migrate-db after the kill: exit %d\n%s%s", code, out, errs)
			}
			lite := openSQLite(t, dir)
			for _, table := range []string{"urls", "fetches", "captures"} {
				q := copiedTables[table]
				if got, want := pgRows(t, pg, q), liteRows(t, lite, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s after the retry differs from SQLite", table)
				}
			}
		})
	}
}

// TestMigrateDBRefusesBadTargets checks the one-line errors that change nothing.
func TestMigrateDBRefusesBadTargets(t *testing.T) {
	dir, cfg := crawledHistory(t)
	tests := []struct {
		name string
		to   string
		code int
		want string
	}{
		{"no target", "", 2, "--to is required"},
		{"not postgres", "mysql://u@127.0.0.1/db", 2, "not a PostgreSQL URL"},
		{"bad setting", "postgres://u@127.0.0.1/db?sslmode=sometimes", 2, "--to: database postgres://u@127.0.0.1/db?sslmode=sometimes"},
		{"unreachable", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=5", 1, "database postgres://u:xxxxx@127.0.0.1:1/db?connect_timeout=5: cannot connect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--config", cfg, "migrate-db"}
			if tt.to != "" {
				args = append(args, "--to", tt.to)
			}
			_, errs, code := strata(t, dir, args...)
			if code != tt.code || !strings.Contains(errs, tt.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, errs, tt.code, tt.want)
			}
			if strings.Contains(errs, "secret") {
				t.Errorf("the error shows the password: %q", errs)
			}
		})
	}
	t.Run("another application's tables", func(t *testing.T) {
		target := pgtest.URL(t)
		pg := connectPG(t, target)
		if _, err := pg.Exec(t.Context(), "CREATE TABLE invoices (id int)"); err != nil {
			t.Fatal(err)
		}
		_, errs, code := strata(t, dir, "--config", cfg, "migrate-db", "--to", target)
		if code != 2 || !strings.Contains(errs, "not strata's (invoices)") {
			t.Errorf("exit %d, stderr %q; want exit 2 naming the table", code, errs)
		}
		var tables int
		pg.QueryRow(t.Context(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").Scan(&tables)
		if tables != 1 {
			t.Errorf("the refused target has %d tables, want its 1: migrate-db created its schema anyway", tables)
		}
	})
}

func openSQLite(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "strata.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func connectPG(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// liteRows and pgRows render each row as text, the same way for both drivers' values.
func liteRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, render(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func pgRows(t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, render(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func render(vals []any) string {
	var b bytes.Buffer
	for i, v := range vals {
		if i > 0 {
			b.WriteString(" | ")
		}
		switch x := v.(type) {
		case nil:
			b.WriteString("NULL")
		case []byte:
			b.WriteString("x'" + strconv.Quote(string(x)) + "'")
		case string:
			b.WriteString(strconv.Quote(x))
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		case float64:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		default:
			b.WriteString("?")
		}
	}
	return b.String()
}
