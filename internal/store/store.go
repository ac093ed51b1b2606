// Package store keeps strata's state in one SQLite database: the URL table, the fetch records, the
// link graph, the runs and the per-host robots.txt and politeness state.
//
// The database is opened in WAL mode with a busy timeout and foreign keys on, through the CGO-free
// modernc.org/sqlite driver. The schema is a sequence of numbered migrations embedded in the binary
// and applied on open, each in its own transaction; a database whose schema is newer than the binary
// is refused before anything is written. docs/schema.md describes the tables for people who query
// them with sqlite3.
package store

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/strata-crawler/strata/frequency"
)

var (
	// ErrNotDatabase means the file exists but is not an SQLite database.
	ErrNotDatabase = errors.New("not an SQLite database")
	// ErrNewerSchema means the database was written by a newer strata.
	ErrNewerSchema = errors.New("database schema is newer than this strata")
	// ErrNotFound means the requested row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrReadOnly means the database must be written and cannot be: a read-only file, directory or
	// file system.
	ErrReadOnly = errors.New("read-only")
)

func init() {
	// strata_phase(run, url, fr_max) is frequency.Phase of the URL's frequency.PageKey: the optimal
	// plan's phases are computed in SQL by the same rule the Go side documents and tests.
	sqlite.MustRegisterDeterministicScalarFunction("strata_phase", 3, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		run, ok1 := args[0].(int64)
		u, ok2 := args[1].(string)
		f, ok3 := args[2].(int64)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("strata_phase(%v, %v, %v): want an integer, a text and an integer", args[0], args[1], args[2])
		}
		return int64(frequency.Phase(run, frequency.PageKey(u), int(f))), nil
	})
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migration is one numbered schema step: a file NNNN_what.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// ReadMigrations reads the migrations in dir of fsys, in order of their numbers, which must run 1,
// 2, 3… without a gap: the SQLite store's own, and the PostgreSQL store's (internal/pgstore), which
// keep their versions the same way.
func ReadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %s: name must start with a number and '_'", e.Name())
		}
		body, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations are not numbered 1, 2, 3…: %s", m.Name)
		}
	}
	return ms, nil
}

func loadMigrations() ([]Migration, error) { return ReadMigrations(migrationFS, "migrations") }

// SchemaVersion is the schema version this binary writes.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// DB is strata's database. It is safe for concurrent use; SQLite serialises writers, and each
// multi-statement change runs in one transaction started with BEGIN IMMEDIATE so that two writers
// wait for each other instead of deadlocking.
type DB struct {
	sql  *sql.DB
	path string
	now  func() time.Time

	stmts sync.Map   // query text → *sql.Stmt, for the statements run once or more per page
	known *knownURLs // URLs seen in the table, for Discover
}

// Options tune Open.
type Options struct {
	// MaxVersion stops migrations at this version (0 = all). Tests use it to build older databases.
	MaxVersion int
	// Now replaces the clock for timestamps (tests).
	Now func() time.Time
}

var sqliteHeader = []byte("SQLite format 3\x00")

// Open opens or creates the database at path and brings its schema up to date.
//
// A new database is built under a temporary name beside path and linked into place only when its
// whole schema is in, so a reader (strata status, sqlite3, Datasette) that opens path while a first
// run is starting finds either no file or a complete schema, never a half-created one.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := create(ctx, path, opts); err != nil {
			return nil, err
		}
	}
	return open(ctx, path, path, opts)
}

// open opens the database file at path (named name in errors) and migrates it.
func open(ctx context.Context, path, name string, opts Options) (*DB, error) {
	sdb, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	keepConns(sdb)
	db := &DB{sql: sdb, path: name, now: opts.Now, known: newKnownURLs()}
	if db.now == nil {
		db.now = time.Now
	}
	if err := db.init(ctx, opts.MaxVersion); err != nil {
		sdb.Close()
		return nil, writeError(name, err)
	}
	return db, nil
}

// create builds a new database at path: in a temporary file in the same directory, with every
// migration applied and the write-ahead log folded in, then hard-linked to path, which fails if
// another process created path meanwhile (its database is then used). Where the file system has no
// hard links, the database is created in place, as SQLite would.
func create(ctx context.Context, path string, opts Options) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		return writeError(path, fmt.Errorf("create: %w", err))
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + suffix)
		}
	}()
	db, err := open(ctx, tmp, path, opts)
	if err != nil {
		return err
	}
	if _, err := db.sql.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		db.Close()
		return fmt.Errorf("database %s: create: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("database %s: create: %w", path, err)
	}
	if hasPendingWAL(tmp) {
		// Closing the last connection folds the log into the file; if it did not, linking the file
		// alone would lose the schema's last pages.
		return fmt.Errorf("database %s: create: the new database's write-ahead log was not folded in", path)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("database %s: create: %w", path, err)
	}
	switch err := os.Link(tmp, path); {
	case err == nil:
		syncDir(dir)
	case errors.Is(err, fs.ErrExist):
		// Another process created it first: use theirs.
	default:
		// No hard links here (some network and FAT file systems): create it in place, as before.
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a new directory entry durable; where directories cannot be synced (Windows), the
// entry is durable once the file system says so, and there is nothing more to do.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// writeError turns SQLite's codes for a database it may not write into one line that says why.
func writeError(path string, err error) error {
	if errors.Is(err, ErrNotDatabase) || errors.Is(err, ErrNewerSchema) {
		return err
	}
	if sqliteCode(err) == sqliteReadOnly || errors.Is(err, fs.ErrPermission) || isReadOnlyFS(err) {
		return fmt.Errorf("database %s: %w here (the file, its directory or the disk may not be written), and this command writes to it; "+
			"status, history, show and serve only read it and work", path, ErrReadOnly)
	}
	if !strings.Contains(err.Error(), path) {
		return fmt.Errorf("database %s: %w", path, err)
	}
	return err
}

// idleConns is how many connections the pool keeps open between uses. database/sql keeps two by
// default, so a crawl stage's workers, querying at once, closed and reopened connections all the
// time, and every new SQLite connection runs the DSN's pragmas and parses the whole schema again:
// 7 % of a loopback crawl's CPU went to that. A connection costs at most its page cache (2 MB).
// On two cores, 32 CPU-bound workers are often preempted inside a query, each holding a connection:
// with 16 kept, a crawl of 50 KB pages still opened connections all along, and each new one
// prepared the per-page statements again (9 % of its CPU, issue 19). The pool keeps as many as the
// default workers and the committer can hold at once.
const idleConns = 64

func keepConns(sdb *sql.DB) { sdb.SetMaxIdleConns(idleConns) }

func dsn(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), OmitHost: true}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)") // safe with WAL: a crash loses at most the last commits, never integrity
	// Every write to urls runs the due table's triggers, and a statement with triggers keeps a
	// statement journal; in a file, its writes made inserting new URLs 40 % slower (Discover at
	// 100 k URLs: 10.3 s against 7.0-7.8 s before the triggers, 7.6 s with this). It also keeps
	// the temporary B-trees of sorts in memory: the largest on this connection is recalc's with a
	// frequency.limit above 64, which sorts the run's fetch records.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	u.RawQuery = q.Encode()
	return u.String()
}

// checkHeader refuses an existing non-empty file that is not SQLite before the driver touches it:
// SQLite would otherwise report the problem only after setting up journal files beside it.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return fmt.Errorf("database %s: %w (it is a directory)", path, ErrNotDatabase)
	}
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	if n == 0 && (err == io.EOF || err == nil) {
		return nil // empty file: SQLite treats it as a new database
	}
	if !bytes.Equal(head[:n], sqliteHeader) {
		return fmt.Errorf("database %s: %w", path, ErrNotDatabase)
	}
	return nil
}

func (db *DB) init(ctx context.Context, maxVersion int) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("database %s: %w", db.path, err)
	}
	var current int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return fmt.Errorf("database %s: %w", db.path, ErrNotDatabase)
		}
		return fmt.Errorf("database %s: read schema version: %w", db.path, err)
	}
	if current > len(ms) {
		return fmt.Errorf("database %s: %w (schema version %d, this strata knows up to %d): upgrade strata",
			db.path, ErrNewerSchema, current, len(ms))
	}
	var mode string
	if err := db.sql.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return fmt.Errorf("database %s: enable WAL: %w", db.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("database %s: journal mode is %q, want wal (is the file on a network file system?)", db.path, mode)
	}
	target := len(ms)
	if maxVersion > 0 && maxVersion < target {
		target = maxVersion
	}
	for _, m := range ms[current:target] {
		if err := db.apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) apply(ctx context.Context, m Migration) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database %s: migration %s: %w", db.path, m.Name, err)
	}
	defer tx.Rollback()
	// Another process may have applied it since init read the version: two strata commands started
	// at once on an older database both migrate it. The transaction is immediate, so this read and
	// the migration are one step.
	var current int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("database %s: migration %s: %w", db.path, m.Name, err)
	}
	if current >= m.Version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("database %s: migration %s: %w", db.path, m.Name, err)
	}
	// user_version lives in the database header and is written inside this transaction, so a crash
	// leaves either the old schema and version or the new ones.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
		return fmt.Errorf("database %s: migration %s: %w", db.path, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("database %s: migration %s: %w", db.path, m.Name, err)
	}
	return nil
}

// Version returns the schema version of the open database.
func (db *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Close checkpoints and closes the database.
func (db *DB) Close() error {
	db.stmts.Range(func(_, v any) bool {
		v.(*sql.Stmt).Close()
		return true
	})
	return db.sql.Close()
}

// prepared returns query prepared once for the life of db: the statements the crawl runs for every
// page would otherwise be parsed and planned by SQLite again at every call.
func (db *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.sql.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// txPrepared returns query prepared once for the life of db (see prepared), for use in tx. The
// statements a crawl runs for every page (Discover's, SaveLinks') cost more to parse than to run.
func (db *DB) txPrepared(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	st, err := db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st), nil
}

// timeFormat is how every time is stored: UTC, fixed width, so text order is time order.
const timeFormat = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s sql.NullString) time.Time {
	if !s.Valid {
		return time.Time{}
	}
	t, err := time.Parse(timeFormat, s.String)
	if err != nil {
		return time.Time{}
	}
	return t
}

// A connection writing rows all over a large table (the countdown, recalc) runs with settings of
// its own for the length of its transaction:
//   - bulkCacheKiB of page cache: with SQLite's default 2 MiB, the countdown over 1 M URLs (on
//     schema 12, whose urls_due_now index was host-major, so each entry in another leaf page)
//     inserted faster than the cache could keep them, spilling dirty pages into the WAL and reading
//     them back in one transaction.
//     The cache is allocated only as pages are read, and given back afterwards.
//   - a checkpoint only when the WAL reaches bulkCheckpointPages: at SQLite's default of 1,000
//     pages, recalc over 1 M pages checkpointed after about every tenth of its transactions, each
//     time syncing the WAL and the database (586 fsyncs, 5.7 s). At 64 MiB the writer still
//     waited about 1.2 s for those syncs in a 9.8 s recalc; 256 MiB took it to 9.0-9.1 s, 1 GiB
//     to 9.3 s. The WAL file keeps that size until the database is closed.
const (
	bulkCacheKiB        = 64 << 10
	bulkCheckpointPages = 65536 // 256 MiB of WAL at 4 KiB pages
)

// inBulkTx is inTx on a connection with the bulk settings above.
func (db *DB) inBulkTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var cache, checkpoint int64
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&checkpoint); err != nil {
		return err
	}
	set := func(ctx context.Context, cache, checkpoint int64) error {
		_, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d; PRAGMA wal_autocheckpoint = %d`, cache, checkpoint))
		return err
	}
	if err := set(ctx, -bulkCacheKiB, bulkCheckpointPages); err != nil {
		return err
	}
	defer func() {
		// Shrinking the cache frees the pages above the limit; a connection that cannot be
		// set back is not returned to the pool.
		if rerr := set(context.WithoutCancel(ctx), cache, checkpoint); rerr != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, rerr)
		}
	}()
	return runTx(ctx, conn, fn)
}

// rowCtx is the context for the statements of one row among the many a loop writes in a
// transaction. modernc's driver watches a cancellable context with a goroutine and a progress
// handler per statement: 2.3 s of the writer's 10 s of CPU in a recalc over 1 M pages. The loop
// checks ctx itself before each row, so a cancellation still ends it within a row.
func rowCtx(ctx context.Context) (context.Context, error) {
	return context.WithoutCancel(ctx), ctx.Err()
}

// inTx runs fn in one immediate transaction, committing if it returns nil.
func (db *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return runTx(ctx, db.sql, fn)
}

// txBeginner is what transactions start on: the pool (*sql.DB) or one connection of it (*sql.Conn).
type txBeginner interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}

// runTx runs fn in one transaction begun on b, committing if it returns nil.
func runTx(ctx context.Context, b txBeginner, fn func(*sql.Tx) error) error {
	tx, err := b.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func nullInt(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: n != 0} }
