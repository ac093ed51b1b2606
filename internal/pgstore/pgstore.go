// Package pgstore keeps strata's history in PostgreSQL: the same tables, columns, keys and indexes
// as the SQLite store (internal/store), as a numbered migration set of its own, applied when a
// database is opened.
//
// PostgreSQL's schema version 1 is SQLite's version 23; each later SQLite migration gets its
// PostgreSQL counterpart, and a test that reads both schemas fails until it does. The version lives
// in the one-row table schema_version, written in the transaction of the migration it counts, as
// SQLite's PRAGMA user_version is.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/strata-crawler/strata/internal/store"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

func loadMigrations() ([]store.Migration, error) {
	return store.ReadMigrations(migrationFS, "migrations")
}

// SchemaVersion is the PostgreSQL schema version this binary writes.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// ErrNewerSchema means the database was migrated by a newer strata: this one does not know its
// tables and leaves it alone.
var ErrNewerSchema = errors.New("database schema is newer than this strata")

// URLError is a database URL that does not parse or names an impossible setting: the user's to fix.
type URLError struct{ Err error }

func (e *URLError) Error() string { return e.Err.Error() }
func (e *URLError) Unwrap() error { return e.Err }

// migrateLock is the advisory lock key that serialises migrations: two strata processes opening one
// database at once must not both apply a step. ('strata' in ASCII.)
const migrateLock = 0x737472617461

// poolConns is the pool's size unless the URL sets pool_max_conns. pgx's default, the number of
// CPUs but at least 4, would leave a crawl's workers (crawl.workers, 32 by default) queueing for
// the three connections the session's run lock leaves. Each connection is a server process: 16 a
// worker keeps a fleet of six within PostgreSQL's default max_connections of 100.
const poolConns = 16

// DB is strata's PostgreSQL database. It is safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	name string           // the URL without its password, for messages
	now  func() time.Time // the clock of added_at and updated_at
	// worker is the fleet worker this process is, once Worker has made it one: the versions it
	// records are noted as this worker's (fleet_versions), whose archive root holds them.
	worker string
	// root is the fleet worker's archive root, once it has joined a run: the index step indexes
	// the versions archived there (textindex.go).
	root string
	// retries counts the transactions rows ran again after a deadlock or serialization failure.
	retries atomic.Int64
}

// Open connects to the database rawURL names (postgres://…), brings its schema up to date, and
// returns it. Errors name the URL without its password.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	db, err := Connect(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Connect connects to the database rawURL names and checks that it answers, without touching its
// schema: for a caller that must look at the database before Migrate changes it.
func Connect(ctx context.Context, rawURL string) (*DB, error) {
	name := Redact(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, &URLError{err})
	}
	if !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, poolConns)
	}
	// A session's run lock holds one connection for its whole length (LockRuns): with one
	// connection in all, nothing else could ever run.
	cfg.MaxConns = max(cfg.MaxConns, 2)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: cannot connect: %w", name, cause(err))
	}
	return &DB{pool: pool, name: name, now: time.Now}, nil
}

// cause picks out of a connection error what the user can act on: the network error (refused,
// no route, timeout) or the server's refusal (authentication, no such database). pgx wraps it in
// a line per address and TLS mode tried, which repeats it.
func cause(err error) error {
	var netErr *net.OpError
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		return pgErr
	case errors.As(err, &netErr):
		return netErr
	}
	return err
}

// Redact returns rawURL with its password replaced, for messages and logs; a URL that does not
// parse is named by its scheme only, since its text may hold the password.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return "(unparsable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Name is the database's URL without its password.
func (db *DB) Name() string { return db.name }

// Pool is the connection pool, for the packages that copy into the database (migrate-db).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes every connection.
func (db *DB) Close() { db.pool.Close() }

// Version returns the schema version of the database.
func (db *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&v)
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return 0, nil // a database strata has not written yet
	}
	if err != nil {
		return 0, fmt.Errorf("database %s: schema version: %w", db.name, err)
	}
	return v, nil
}

// Migrate applies the migrations the database does not have yet, each in its own transaction.
func (db *DB) Migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("database %s: %w", db.name, err)
	}
	for _, m := range ms {
		if err := db.apply(ctx, m, len(ms)); err != nil {
			return err
		}
	}
	return nil
}

// apply runs m in its own transaction unless the database has it already. The transaction first
// takes the migration lock, then reads the version, so a step another process applied meanwhile
// is seen and skipped; the version is written in the same transaction, so a crash leaves either
// the old schema and version or the new ones.
func (db *DB) apply(ctx context.Context, m store.Migration, latest int) error {
	fail := func(err error) error {
		return fmt.Errorf("database %s: migration %s: %w", db.name, m.Name, err)
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("database %s: %w", db.name, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		one     bigint PRIMARY KEY CHECK (one = 1),
		version bigint NOT NULL
	)`); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO schema_version (one, version) VALUES (1, 0) ON CONFLICT DO NOTHING"); err != nil {
		return fail(err)
	}
	var current int
	if err := tx.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&current); err != nil {
		return fail(err)
	}
	if current > latest {
		return fmt.Errorf("database %s: schema version %d, this strata knows up to %d: %w", db.name, current, latest, ErrNewerSchema)
	}
	if current >= m.Version {
		return nil
	}
	// Without arguments Exec uses the simple protocol, which runs a file of many statements.
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE schema_version SET version = $1", m.Version); err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	return nil
}

// Tables returns the names of the database's tables in the current schema, sorted, schema_version
// included.
func (db *DB) Tables(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("database %s: tables: %w", db.name, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("database %s: tables: %w", db.name, err)
	}
	return names, nil
}
