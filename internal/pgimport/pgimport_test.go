package pgimport_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/strata-crawler/strata/internal/pgimport"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// history is a SQLite database at head with rows written by hand, for values a crawl rarely
// makes: NULLs, empty and binary blobs, extreme floats, large ids, text beyond ASCII.
func history(t *testing.T, extra ...string) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "strata.db")
	db, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := append([]string{
		`INSERT INTO runs (id, started_at, status, expected_changes) VALUES (7, '2026-11-22T03:15:00.000Z', 'completed', 0.1)`,
		`INSERT INTO urls (id, url, host, added_at, digest, recent, change_rate, threshold, root_id)
			VALUES (9007199254740993, 'http://127.0.0.1/café?q=ü', '127.0.0.1', 'x', x'00ff00', x'', 1e-300, 0.4, NULL)`,
		`INSERT INTO urls (id, url, host, added_at, root_id) VALUES (3, 'http://127.0.0.1/', '127.0.0.1', 'x', 9007199254740993)`,
		`INSERT INTO fetches (id, url_id, run_id, fetched_at, magnitude, error) VALUES (1, 3, 7, 'x', NULL, '日本語 ✓')`,
		`INSERT INTO captures (fetch_id, request, response) VALUES (1, x'474554202f', NULL)`,
		`INSERT INTO hosts (origin, domain, robots_body) VALUES ('http://127.0.0.1', '127.0.0.1', 'User-agent: *')`,
		`INSERT INTO models (name, body, updated_at) VALUES ('prior', '{"a":1}', 'x')`,
		`UPDATE countdown SET tick = 5, filled = 5`,
	}, extra...)
	for _, s := range stmts {
		if _, err := w.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	w.Close()
	src, err := pgimport.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func target(t *testing.T) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Open(t.Context(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func TestCopyKeepsEveryValue(t *testing.T) {
	src, dst := history(t), target(t)
	var reported []string
	sum, err := pgimport.Copy(t.Context(), src, dst, func(tb pgimport.Table) { reported = append(reported, tb.Name) })
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != 20 || sum.Rows != 11 {
		t.Errorf("reported %d tables and %d rows, want 20 and 11 (the two URLs' due rows, the countdown and text_index included)", len(reported), sum.Rows)
	}
	ctx := t.Context()
	var url string
	var digest, recent []byte
	var rate float64
	if err := dst.Pool().QueryRow(ctx, "SELECT url, digest, recent, change_rate FROM urls WHERE id = 9007199254740993").Scan(&url, &digest, &recent, &rate); err != nil {
		t.Fatal(err)
	}
	if url != "http://127.0.0.1/café?q=ü" || string(digest) != "\x00\xff\x00" || recent == nil || len(recent) != 0 || rate != 1e-300 {
		t.Errorf("url %q, digest %x, recent %v (nil %v), rate %g", url, digest, recent, recent == nil, rate)
	}
	var body []byte
	dst.Pool().QueryRow(ctx, "SELECT robots_body FROM hosts").Scan(&body)
	if string(body) != "User-agent: *" {
		t.Errorf("robots_body, text in a BLOB column in SQLite: %q", body)
	}
	var tick int64
	dst.Pool().QueryRow(ctx, "SELECT tick FROM countdown").Scan(&tick)
	if tick != 5 {
		t.Errorf("countdown.tick %d, want the source's 5 in place of the schema's own row", tick)
	}
}

func TestCopyRefusesRowsAndChangesNothing(t *testing.T) {
	dst := target(t)
	if _, err := pgimport.Copy(t.Context(), history(t), dst, nil); err != nil {
		t.Fatal(err)
	}
	_, err := pgimport.Copy(t.Context(), history(t, `INSERT INTO models (name, body, updated_at) VALUES ('other', '', 'x')`), dst, nil)
	if !errors.Is(err, pgimport.ErrNotEmpty) {
		t.Fatalf("second copy: %v, want ErrNotEmpty", err)
	}
	var models int
	dst.Pool().QueryRow(t.Context(), "SELECT count(*) FROM models").Scan(&models)
	if models != 1 {
		t.Errorf("models has %d rows after the refused copy, want the first copy's 1", models)
	}
	if err := pgimport.CheckTarget(t.Context(), dst); !errors.Is(err, pgimport.ErrNotEmpty) {
		t.Errorf("CheckTarget: %v, want ErrNotEmpty", err)
	}
}

// TestCopyVerifies corrupts the copy on its way in (a trigger that rewrites a value, as a faulty
// driver or a conversion bug would): the checksum must catch it and nothing be committed.
func TestCopyVerifies(t *testing.T) {
	src, dst := history(t), target(t)
	if _, err := dst.Pool().Exec(t.Context(), `
		CREATE FUNCTION corrupt() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN NEW.body := NEW.body || ' '; RETURN NEW; END $$;
		CREATE TRIGGER corrupt BEFORE INSERT ON models FOR EACH ROW EXECUTE FUNCTION corrupt()`); err != nil {
		t.Fatal(err)
	}
	_, err := pgimport.Copy(t.Context(), src, dst, nil)
	if err == nil || !strings.Contains(err.Error(), "table models: verify") {
		t.Fatalf("copy through a corrupting trigger: %v, want a verify error on models", err)
	}
	var runs int
	dst.Pool().QueryRow(t.Context(), "SELECT count(*) FROM runs").Scan(&runs)
	if runs != 0 {
		t.Errorf("runs has %d rows after a failed copy, want 0: nothing may be committed", runs)
	}
	if err := pgimport.CheckTarget(t.Context(), dst); err != nil {
		t.Errorf("the target after a failed copy is not empty for a retry: %v", err)
	}
}

func TestCopyRefusesWhatPostgreSQLCannotHold(t *testing.T) {
	tests := []struct {
		name, insert, want string
	}{
		{"NUL in text", `INSERT INTO fetches (id, url_id, fetched_at, error) VALUES (2, 3, 'x', 'a' || char(0) || 'b')`, "table fetches: row 2, column error: text with a NUL byte"},
		{"not UTF-8", `INSERT INTO fetches (id, url_id, fetched_at, error) VALUES (2, 3, 'x', CAST(x'ff' AS TEXT))`, "table fetches: row 2, column error: text that is not UTF-8"},
		{"text in an integer column", `INSERT INTO fetches (id, url_id, fetched_at, size) VALUES (2, 3, 'x', 'big')`, "table fetches: row 2, column size: string big does not fit PostgreSQL type bigint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := target(t)
			_, err := pgimport.Copy(t.Context(), history(t, tt.insert), dst, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("copy: %v, want %q", err, tt.want)
			}
			if err := pgimport.CheckTarget(t.Context(), dst); err != nil {
				t.Errorf("after a refused row: %v", err)
			}
		})
	}
}

// TestCopyWaitsForTheLock: a copy killed a moment ago keeps its lock until the server notices, which
// a loaded server can take a while to do; the next copy waits for it rather than failing at once,
// and gives up with ErrBusy, changing nothing, when it is not let go.
func TestCopyWaitsForTheLock(t *testing.T) {
	for _, tt := range []struct {
		name    string
		release bool
	}{{"released while waiting", true}, {"held", false}} {
		t.Run(tt.name, func(t *testing.T) {
			defer pgimport.SetLockWait(2 * time.Second)()
			dst := target(t)
			holder, err := dst.Pool().Acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Release()
			if _, err := holder.Exec(t.Context(), "SELECT pg_advisory_lock($1)", int64(pgimport.ImportLock)); err != nil {
				t.Fatal(err)
			}
			if tt.release {
				time.AfterFunc(300*time.Millisecond, func() {
					holder.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", int64(pgimport.ImportLock))
				})
			}
			_, err = pgimport.Copy(t.Context(), history(t), dst, nil)
			switch {
			case tt.release && err != nil:
				t.Fatalf("copy after the lock was let go: %v", err)
			case !tt.release && !errors.Is(err, pgimport.ErrBusy):
				t.Fatalf("copy while the lock is held: %v, want ErrBusy", err)
			}
			var models int
			if err := dst.Pool().QueryRow(t.Context(), "SELECT count(*) FROM models").Scan(&models); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[tt.release]; models != want {
				t.Errorf("models has %d rows, want %d", models, want)
			}
		})
	}
}
