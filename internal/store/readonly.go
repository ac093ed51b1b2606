package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// ErrOldSchema means the database was written by an older strata and needs a migration that a
// read-only opener may not run.
var ErrOldSchema = errors.New("database schema is older than this strata")

// ErrUnreadable means SQLite could not open an existing database for reading: see the error's text.
var ErrUnreadable = errors.New("cannot read the database")

// OpenReadOnly opens an existing database for reading only, for the commands that only read. It
// never creates the file, never migrates and never writes to the database: the connection is opened
// with mode=ro and query_only, so it runs beside a crawl that holds the run lock and writes in WAL
// mode (WAL readers see the last committed state and never block the writer), and it opens a
// database that the user may not write to.
//
// A WAL reader needs the -shm index beside the database, which SQLite creates on first use. Where
// that is impossible — a read-only file system, or a directory the user may not write to — and no
// -wal file holds changes not yet in the database, the database is opened as immutable instead: no
// process can be writing it there. A database whose schema differs from this binary's is refused
// with ErrNewerSchema or ErrOldSchema.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if st.Size() == 0 && !st.IsDir() {
		return nil, fmt.Errorf("database %s: %w (the file is empty)", path, ErrNotDatabase)
	}
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	sdb, current, err := openRO(ctx, path, false)
	if err != nil && cannotShare(err) && !hasPendingWAL(path) {
		sdb, current, err = openRO(ctx, path, true)
	}
	if err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return nil, fmt.Errorf("database %s: %w", path, ErrNotDatabase)
		}
		return nil, readError(path, err)
	}
	want := SchemaVersion()
	switch {
	case current > want:
		sdb.Close()
		return nil, fmt.Errorf("database %s: %w (schema version %d, this strata knows up to %d): upgrade strata",
			path, ErrNewerSchema, current, want)
	case current < want:
		sdb.Close()
		return nil, fmt.Errorf("database %s: %w (schema version %d, this strata writes %d): upgrade it once with any other "+
			"strata command, such as strata status, where it can be written", path, ErrOldSchema, current, want)
	}
	keepConns(sdb)
	return &DB{sql: sdb, path: path, now: time.Now, known: newKnownURLs()}, nil
}

// openRO opens path read-only (immutable: without the -shm index or any lock) and reads its schema
// version, which makes SQLite open the file for real.
func openRO(ctx context.Context, path string, immutable bool) (*sql.DB, int, error) {
	sdb, err := sql.Open("sqlite", readOnlyDSN(path, immutable))
	if err != nil {
		return nil, 0, err
	}
	var v int
	if err := sdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		sdb.Close()
		return nil, 0, err
	}
	return sdb, v, nil
}

// SQLite's primary result codes that say a file could not be opened or written.
const (
	sqliteReadOnly = 8
	sqliteCantOpen = 14
)

// sqliteCode returns the primary SQLite result code in err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// cannotShare reports whether err is SQLite failing to set up the shared -shm index of a read-only
// WAL connection.
func cannotShare(err error) bool {
	c := sqliteCode(err)
	return c == sqliteReadOnly || c == sqliteCantOpen
}

// hasPendingWAL reports whether path's write-ahead log exists with content: changes that only a
// connection with the -shm index (or write access, to fold them in) can read.
func hasPendingWAL(path string) bool {
	st, err := os.Stat(path + "-wal")
	return err == nil && st.Size() > 0
}

// readError turns SQLite's codes for a database it cannot open into one line that says why.
func readError(path string, err error) error {
	if !cannotShare(err) {
		return fmt.Errorf("database %s: %w: %v", path, ErrUnreadable, err)
	}
	why := "SQLite could not open it or the -shm file beside it"
	if hasPendingWAL(path) {
		why = fmt.Sprintf("%s-wal holds changes not yet in the database, and reading them needs a %s-shm file that cannot be created here; "+
			"run any strata command once with write access to the directory to fold them in", path, path)
	} else if f, oerr := os.Open(path); oerr != nil {
		why = oerr.Error()
	} else {
		f.Close()
	}
	return fmt.Errorf("database %s: %w: %s", path, ErrUnreadable, why)
}

func readOnlyDSN(path string, immutable bool) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true}
	q := url.Values{}
	q.Set("mode", "ro") // SQLite's own: the file is opened read-only and never created
	if immutable {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)") // belt and braces: any write statement fails
	u.RawQuery = q.Encode()
	return u.String()
}
