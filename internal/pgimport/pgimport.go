// Package pgimport copies a strata history from SQLite into an empty PostgreSQL database and
// proves the copy: strata migrate-db.
//
// The whole copy is one PostgreSQL transaction. A copy that is killed, loses its connection or
// finds a difference leaves the target as it found it (its schema, no rows), so running it again
// starts over; a copy that commits is whole. Each table goes over with COPY, ids included, and is
// then read back inside the transaction: its row count and an order-independent checksum of its
// rows' canonical text must equal what was read from SQLite, or nothing is committed. The identity
// sequences are then moved past the copied ids.
//
// The SQLite side is read in one read transaction, a consistent snapshot even if a reader or a
// crawl touches the file meanwhile (the command also holds the run lock, so no crawl writes).
package pgimport

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "modernc.org/sqlite" // the SQLite driver, registered as "sqlite"

	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/pgstore"
)

// ErrNotEmpty means the target database already holds rows: migrate-db copies into an empty
// database only, and changed nothing.
var ErrNotEmpty = errors.New("target database is not empty")

// ErrBusy means another copy into the same database holds its lock (or one that was killed is
// still being rolled back by the server).
var ErrBusy = errors.New("another migrate-db is copying into this database")

// order is the order the tables are copied in: a table after those its foreign keys name.
var order = []string{
	"runs", "urls", "fetches", "captures", "links", "hosts", "trap_events", "run_domains", "models",
	"countdown", "due", "page_titles", "text_index", "page_events", "run_pages", "run_domain_pages",
	"prune_pending", "politeness", "trap_rules", "trap_holds",
}

// seeded are the tables whose migration inserts their one row: replaced by the source's.
var seeded = []string{"countdown", "text_index"}

// rebuilt are PostgreSQL's tables that the copy leaves empty: version_text, the full-text cache
// that the index step fills from the archive (text_index.fetch_upto is rewritten to 0 for it).
var rebuilt = []string{"version_text"}

// triggered are the tables with triggers of their own (the due table's): off during the copy,
// which copies due as it is.
var triggered = []string{"urls", "trap_holds"}

// rewrite changes a source row before it is copied (and checksummed). text_index.fetch_upto says
// how far SQLite's full-text table goes; that table is not copied, so PostgreSQL's index starts
// from the first version.
var rewrite = map[string]func(cols []string, vals []any){
	"text_index": func(cols []string, vals []any) {
		if i := slices.Index(cols, "fetch_upto"); i >= 0 {
			vals[i] = int64(0)
		}
	},
}

// lockWait is how long a copy waits for another's lock on the database before it gives up.
var lockWait = 10 * time.Second

// importLock is the advisory lock key of a copy. ('strata-i' in ASCII.)
const importLock = 0x7374726174612d69

// Table is what was copied of one table.
type Table struct {
	Name     string
	Rows     int64
	Checksum uint64 // sum of the rows' hashes, mod 2^64; equal on both sides
	Elapsed  time.Duration
}

// Summary is what was copied in all.
type Summary struct {
	Tables  []Table
	Rows    int64
	Elapsed time.Duration
}

// OpenSQLite opens the SQLite database at path read-only, for Copy: it never creates or writes it.
func OpenSQLite(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return db, nil
}

// Copy copies every table of the SQLite database src (opened read-only, at this strata's schema)
// into dst, which must hold no rows, and verifies each. done is called with each table once it is
// verified, before the commit. On any error nothing is committed.
func Copy(ctx context.Context, src *sql.DB, dst *pgstore.DB, done func(Table)) (Summary, error) {
	began := time.Now()
	var sum Summary
	name := dst.Name()
	tables, err := dst.Tables(ctx)
	if err != nil {
		return sum, err
	}
	for _, t := range tables {
		if !strataTable(t) {
			return sum, fmt.Errorf("migrate-db: table %s has no place in the copy order (internal/pgimport)", t)
		}
	}

	lite, err := src.BeginTx(ctx, nil)
	if err != nil {
		return sum, fmt.Errorf("migrate-db: read SQLite: %w", err)
	}
	defer lite.Rollback()

	tx, err := dst.Pool().Begin(ctx)
	if err != nil {
		return sum, fmt.Errorf("migrate-db: database %s: %w", name, err)
	}
	// Rollback after a commit does nothing; after a failure it must still run when ctx is done.
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The lock is waited for, a while: a copy killed a moment ago holds it until the server notices
	// its connection is gone and rolls it back, which a loaded server can take seconds to do.
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+lockWait.String()+"'"); err != nil {
		return sum, fmt.Errorf("migrate-db: database %s: %w", name, err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(importLock)); err != nil {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available
			return sum, fmt.Errorf("migrate-db: database %s: %w (or one just stopped is still being rolled back) after %s; nothing was changed, try again when it ends", name, ErrBusy, lockWait)
		}
		return sum, fmt.Errorf("migrate-db: database %s: %w", name, err)
	}
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = 0"); err != nil {
		return sum, fmt.Errorf("migrate-db: database %s: %w", name, err)
	}
	if err := checkEmpty(ctx, tx, name, tables); err != nil {
		return sum, err
	}
	for _, t := range triggered {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+pgx.Identifier{t}.Sanitize()+" DISABLE TRIGGER USER"); err != nil {
			return sum, fmt.Errorf("migrate-db: database %s: table %s: %w", name, t, err)
		}
	}
	for _, t := range seeded {
		if _, err := tx.Exec(ctx, "DELETE FROM "+pgx.Identifier{t}.Sanitize()); err != nil {
			return sum, fmt.Errorf("migrate-db: database %s: table %s: %w", name, t, err)
		}
	}
	for _, t := range order {
		if !slices.Contains(tables, t) {
			continue
		}
		tb, err := copyTable(ctx, lite, tx, name, t)
		if err != nil {
			return sum, err
		}
		sum.Tables = append(sum.Tables, tb)
		sum.Rows += tb.Rows
		if done != nil {
			done(tb)
		}
	}
	if err := resetIdentities(ctx, tx, name); err != nil {
		return sum, err
	}
	for _, t := range triggered {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+pgx.Identifier{t}.Sanitize()+" ENABLE TRIGGER USER"); err != nil {
			return sum, fmt.Errorf("migrate-db: database %s: table %s: %w", name, t, err)
		}
	}
	crashpoint.Hit("migrate-db-verified") // every table copied and verified, nothing committed
	if err := tx.Commit(ctx); err != nil {
		return sum, fmt.Errorf("migrate-db: database %s: commit: %w", name, err)
	}
	sum.Elapsed = time.Since(began)
	return sum, nil
}

// strataTable reports whether a PostgreSQL table is strata's: one the copy fills, its schema
// version, or one of the fleet's (leases, workers), which exist in PostgreSQL only and which SQLite
// has nothing to copy into.
func strataTable(t string) bool {
	return t == "schema_version" || strings.HasPrefix(t, "fleet_") || slices.Contains(order, t) || slices.Contains(rebuilt, t)
}

// CheckTarget refuses, before its schema is created or migrated, a target that holds anything
// but an empty strata schema: tables of another application, or strata rows. It changes nothing.
func CheckTarget(ctx context.Context, dst *pgstore.DB) error {
	tables, err := dst.Tables(ctx)
	if err != nil {
		return err
	}
	var foreign []string
	for _, t := range tables {
		if !strataTable(t) {
			foreign = append(foreign, t)
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("migrate-db: database %s: it has tables that are not strata's (%s): %w; migrate-db copies into an empty database only, and changed nothing",
			dst.Name(), strings.Join(foreign, ", "), ErrNotEmpty)
	}
	tx, err := dst.Pool().Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate-db: database %s: %w", dst.Name(), err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return checkEmpty(ctx, tx, dst.Name(), tables)
}

// checkEmpty refuses a target with rows in any table but the schema's own one-row tables.
func checkEmpty(ctx context.Context, tx pgx.Tx, name string, tables []string) error {
	for _, t := range order {
		if slices.Contains(seeded, t) || !slices.Contains(tables, t) {
			continue
		}
		var any bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{t}.Sanitize()+")").Scan(&any); err != nil {
			return fmt.Errorf("migrate-db: database %s: table %s: %w", name, t, err)
		}
		if any {
			return fmt.Errorf("migrate-db: database %s: table %s has rows: %w; migrate-db copies into an empty database only, and changed nothing", name, t, ErrNotEmpty)
		}
	}
	return nil
}

// pgColumn is a column of the target table.
type pgColumn struct {
	name string
	typ  string // information_schema data_type: bigint, double precision, text, bytea
}

func copyTable(ctx context.Context, lite *sql.Tx, tx pgx.Tx, name, table string) (Table, error) {
	began := time.Now()
	tb := Table{Name: table}
	fail := func(err error) (Table, error) {
		return tb, fmt.Errorf("migrate-db: table %s: %w", table, err)
	}
	cols, err := targetColumns(ctx, tx, table)
	if err != nil {
		return fail(err)
	}
	if err := sameColumns(ctx, lite, table, cols); err != nil {
		return fail(err)
	}
	names := make([]string, len(cols))
	quoted := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
		quoted[i] = pgx.Identifier{c.name}.Sanitize() // SQLite quotes names as PostgreSQL does
	}
	rows, err := lite.QueryContext(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+pgx.Identifier{table}.Sanitize())
	if err != nil {
		return fail(fmt.Errorf("read SQLite: %w", err))
	}
	defer rows.Close()
	src := &source{rows: rows, cols: cols, names: names, table: table, fix: rewrite[table]}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, names, src)
	if src.err != nil {
		return fail(src.err)
	}
	if err != nil {
		return fail(fmt.Errorf("copy into %s: %w", name, err))
	}
	if n != src.n {
		return fail(fmt.Errorf("copied %d rows of %d read", n, src.n))
	}
	// Read back what PostgreSQL now holds, through its own types, and compare.
	back, err := tx.Query(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+pgx.Identifier{table}.Sanitize())
	if err != nil {
		return fail(fmt.Errorf("verify: %w", err))
	}
	var h rowHasher
	var got int64
	var gotSum uint64
	for back.Next() {
		vals, err := back.Values()
		if err != nil {
			back.Close()
			return fail(fmt.Errorf("verify: %w", err))
		}
		k, err := h.hash(cols, vals)
		if err != nil {
			back.Close()
			return fail(fmt.Errorf("verify: PostgreSQL row %d: %w", got+1, err))
		}
		got++
		gotSum += k
	}
	back.Close()
	if err := back.Err(); err != nil {
		return fail(fmt.Errorf("verify: %w", err))
	}
	if got != src.n || gotSum != src.sum {
		return fail(fmt.Errorf("verify: SQLite has %d rows with checksum %016x, PostgreSQL %d with %016x; nothing was committed",
			src.n, src.sum, got, gotSum))
	}
	tb.Rows, tb.Checksum, tb.Elapsed = got, gotSum, time.Since(began)
	return tb, nil
}

func targetColumns(ctx context.Context, tx pgx.Tx, table string) ([]pgColumn, error) {
	rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgColumn, error) {
		var c pgColumn
		err := r.Scan(&c.name, &c.typ)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("columns: %w", err)
	}
	for _, c := range cols {
		switch c.typ {
		case "bigint", "double precision", "text", "bytea":
		default:
			return nil, fmt.Errorf("column %s has PostgreSQL type %s, which migrate-db does not copy", c.name, c.typ)
		}
	}
	return cols, nil
}

// sameColumns demands that the SQLite table has exactly the target's columns: a schema that moved
// on one side only must stop the copy, not lose a column.
func sameColumns(ctx context.Context, lite *sql.Tx, table string, cols []pgColumn) error {
	rows, err := lite.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return fmt.Errorf("read SQLite: %w", err)
	}
	defer rows.Close()
	var have []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("read SQLite: %w", err)
		}
		have = append(have, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read SQLite: %w", err)
	}
	if len(have) == 0 {
		return errors.New("not in the SQLite database")
	}
	for _, n := range have {
		if !slices.ContainsFunc(cols, func(c pgColumn) bool { return c.name == n }) {
			return fmt.Errorf("SQLite column %s has no PostgreSQL counterpart (PostgreSQL schema %d)", n, pgstore.SchemaVersion())
		}
	}
	for _, c := range cols {
		if !slices.Contains(have, c.name) {
			return fmt.Errorf("PostgreSQL column %s is not in the SQLite database", c.name)
		}
	}
	return nil
}

// source feeds CopyFrom from SQLite rows, converting each value to its PostgreSQL column's type and
// adding the row to the checksum.
type source struct {
	rows  *sql.Rows
	cols  []pgColumn
	names []string
	table string
	fix   func([]string, []any)
	vals  []any
	ptrs  []any
	h     rowHasher
	n     int64
	sum   uint64
	err   error // a conversion error, which CopyFrom would otherwise report as its own
}

func (s *source) Next() bool {
	if s.err != nil || !s.rows.Next() {
		return false
	}
	if s.vals == nil {
		s.vals = make([]any, len(s.cols))
		s.ptrs = make([]any, len(s.cols))
		for i := range s.vals {
			s.ptrs[i] = &s.vals[i]
		}
	}
	if err := s.rows.Scan(s.ptrs...); err != nil {
		s.err = fmt.Errorf("read SQLite: %w", err)
		return false
	}
	for i, c := range s.cols {
		v, err := convert(s.vals[i], c.typ)
		if err != nil {
			s.err = fmt.Errorf("row %d, column %s: %w", s.n+1, c.name, err)
			return false
		}
		s.vals[i] = v
	}
	if s.fix != nil {
		s.fix(s.names, s.vals)
	}
	k, err := s.h.hash(s.cols, s.vals)
	if err != nil {
		s.err = fmt.Errorf("row %d: %w", s.n+1, err)
		return false
	}
	s.n++
	s.sum += k
	if s.n == 2 {
		crashpoint.Hit("migrate-db-copying") // a table half copied
	}
	return true
}

func (s *source) Values() ([]any, error) { return s.vals, nil }

func (s *source) Err() error {
	if s.err != nil {
		return s.err
	}
	if err := s.rows.Err(); err != nil {
		return fmt.Errorf("read SQLite: %w", err)
	}
	return nil
}

// convert returns v, as the SQLite driver scanned it, as the Go value of PostgreSQL type typ,
// refusing any conversion that would change it.
func convert(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "bigint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		}
	case "double precision":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			if f := float64(x); int64(f) == x {
				return f, nil
			}
		}
	case "text":
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		default:
			return nil, fmt.Errorf("a %T in a text column", v)
		}
		if !utf8.ValidString(s) {
			return nil, errors.New("text that is not UTF-8, which PostgreSQL refuses")
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, errors.New("text with a NUL byte, which PostgreSQL refuses")
		}
		return s, nil
	case "bytea":
		switch x := v.(type) {
		case []byte: // database/sql gives a *any its own copy
			if x == nil {
				// The driver scans an empty blob as a nil slice, which pgx would write as NULL.
				return []byte{}, nil
			}
			return x, nil
		case string:
			return []byte(x), nil
		}
	}
	shown := fmt.Sprint(v)
	if len(shown) > 40 {
		shown = shown[:40] + "…" // a long text must not make the error a page
	}
	return nil, fmt.Errorf("%T %s does not fit PostgreSQL type %s unchanged", v, shown, typ)
}

// rowHasher hashes a row's canonical text: each value tagged with its type and length-prefixed,
// so that no two different rows have the same text. The first 8 bytes of its SHA-256, summed over
// the rows mod 2^64, give a checksum that does not depend on the order rows are read in (SQLite's
// and PostgreSQL's need not agree) yet changes with any row added, lost, doubled or altered.
type rowHasher struct{ buf []byte }

func (h *rowHasher) hash(cols []pgColumn, vals []any) (uint64, error) {
	b := h.buf[:0]
	for i, v := range vals {
		switch x := v.(type) {
		case nil:
			b = append(b, 'n')
		case int64:
			b = append(b, 'i')
			b = strconv.AppendInt(b, x, 10)
		case float64:
			b = append(b, 'f')
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		case string:
			b = append(b, 't')
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case []byte:
			b = append(b, 'b')
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		default:
			return 0, fmt.Errorf("column %s: unexpected %T", cols[i].name, v)
		}
		b = append(b, 0)
	}
	h.buf = b
	d := sha256.Sum256(b)
	return binary.LittleEndian.Uint64(d[:8]), nil
}

// resetIdentities moves each identity column's sequence past the largest copied id, so the rows
// PostgreSQL numbers next do not collide with copied ones.
func resetIdentities(ctx context.Context, tx pgx.Tx, name string) error {
	rows, err := tx.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return fmt.Errorf("migrate-db: database %s: identities: %w", name, err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var tc [2]string
		err := r.Scan(&tc[0], &tc[1])
		return tc, err
	})
	if err != nil {
		return fmt.Errorf("migrate-db: database %s: identities: %w", name, err)
	}
	for _, tc := range ids {
		table, col := pgx.Identifier{tc[0]}.Sanitize(), pgx.Identifier{tc[1]}.Sanitize()
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(%s), 0) + 1, false) FROM %s", col, table)
		if _, err := tx.Exec(ctx, q, tc[0], tc[1]); err != nil {
			return fmt.Errorf("migrate-db: database %s: table %s: reset its identity: %w", name, tc[0], err)
		}
	}
	return nil
}
