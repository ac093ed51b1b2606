package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-crawler/strata/internal/store"
)

// This file is the read side that strata serve, status, history and explain use: each method is
// the SQLite store's of the same name (internal/store serve.go, pages.go, status.go, history.go),
// its query ported clause for clause. Where the two engines differ the port says so: 0/1 flag
// columns are compared with 1 to read as booleans, SQLite's NULLs sort first and PostgreSQL's
// last, so a nullable ORDER BY column says NULLS LAST where SQLite's DESC put them there, and
// IN (?, ?, …) lists are = ANY($n) arrays.

// ErrOldSchema is a database of an older schema, which a read-only open cannot upgrade. A database
// strata has not written at all is one too: the first command that writes creates its schema.
var ErrOldSchema = errors.New("database schema is older than this strata")

// noHistoryError is ErrOldSchema for a database with no strata schema at all, said as the user
// meets it: before the first seed.
type noHistoryError struct{ name string }

func (e noHistoryError) Error() string {
	return fmt.Sprintf("database %s holds no strata history yet; add seeds with strata seed add, then strata run", e.name)
}

func (e noHistoryError) Is(target error) bool { return target == ErrOldSchema }

// OpenReadOnly connects to the database rawURL names for a command that only reads it: every
// transaction of the session is read-only (default_transaction_read_only), so a mistake in a read
// path cannot change the history, and it never migrates. A database whose schema is not this
// strata's is refused with an error wrapping ErrNewerSchema, or, for an older one, saying how to
// upgrade it.
func OpenReadOnly(ctx context.Context, rawURL string) (*DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("database %s: %w", Redact(rawURL), &URLError{errors.New("want a postgres:// URL")})
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	db, err := Connect(ctx, u.String())
	if err != nil {
		return nil, err
	}
	db.name = Redact(rawURL)
	v, err := db.Version(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	switch want := SchemaVersion(); {
	case v > want:
		db.Close()
		return nil, fmt.Errorf("database %s: schema version %d, this strata knows up to %d: %w", db.name, v, want, ErrNewerSchema)
	case v == 0:
		db.Close()
		return nil, noHistoryError{db.name}
	case v < want:
		db.Close()
		return nil, fmt.Errorf("database %s: schema version %d, this strata's is %d: %w; run strata run (or seed add) once to upgrade it",
			db.name, v, want, ErrOldSchema)
	}
	return db, nil
}

// Runs returns up to limit runs with ids below before (0: from the newest), the newest first.
func (db *DB) Runs(ctx context.Context, before int64, limit int) ([]store.Run, error) {
	if before <= 0 {
		return db.RecentRuns(ctx, limit)
	}
	runs, err := db.runs(ctx, `WHERE id < $1 ORDER BY id DESC LIMIT $2`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs before %d: %w", before, err)
	}
	return runs, nil
}

// RunByID returns run id, or an error wrapping store.ErrNotFound.
func (db *DB) RunByID(ctx context.Context, id int64) (store.Run, error) {
	r, err := store.ScanRun(db.pool.QueryRow(ctx, `SELECT `+store.RunColumns+` FROM runs WHERE id = $1`, id))
	if notFound(err) {
		return r, fmt.Errorf("run %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("run %d: %w", id, err)
	}
	return r, nil
}

// Domains returns up to limit politeness domains after after, in order.
func (db *DB) Domains(ctx context.Context, after string, limit int) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT domain FROM hosts WHERE domain > $1 ORDER BY domain LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list domains after %q: %w", after, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list domains after %q: %w", after, err)
	}
	return out, nil
}

// DomainOrigins returns the origins of a politeness domain, in order; none when strata has never
// contacted it.
func (db *DB) DomainOrigins(ctx context.Context, domain string) ([]store.Origin, error) {
	rows, err := db.pool.Query(ctx, `SELECT origin, domain, coalesce(robots_status, -1), robots_fetched_at,
		coalesce(crawl_delay_ms, 0), last_access_at FROM hosts WHERE domain = $1 ORDER BY origin`, domain)
	if err != nil {
		return nil, fmt.Errorf("origins of %s: %w", domain, err)
	}
	var out []store.Origin
	var o store.Origin
	var fetched, access *string
	var delay int64
	if _, err := pgx.ForEachRow(rows, []any{&o.Origin, &o.Domain, &o.RobotsStatus, &fetched, &delay, &access}, func() error {
		o.RobotsFetchedAt, o.LastAccess = parseTime(fetched), parseTime(access)
		o.CrawlDelay = time.Duration(delay) * time.Millisecond
		_, o.Host, _ = strings.Cut(o.Origin, "://")
		out = append(out, o)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("origins of %s: %w", domain, err)
	}
	return out, nil
}

// HostURLs counts the URLs strata knows on host (host[:port]).
func (db *DB) HostURLs(ctx context.Context, host string) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM urls WHERE host = $1`, host).Scan(&n); err != nil {
		return 0, fmt.Errorf("count URLs of %s: %w", host, err)
	}
	return n, nil
}

// DomainRuns returns domain's fetches and changes in each of runs, in the order of runs; a run that
// did not touch the domain has zeros.
func (db *DB) DomainRuns(ctx context.Context, domain string, runs []int64) ([]store.DomainRun, error) {
	out := make([]store.DomainRun, len(runs))
	if len(runs) == 0 {
		return out, nil
	}
	at := map[int64]int{}
	for i, r := range runs {
		out[i].RunID = r
		at[r] = i
	}
	rows, err := db.pool.Query(ctx, `SELECT run_id, fetched, changed FROM run_domains
		WHERE domain = $1 AND run_id = ANY($2)`, domain, runs)
	if err != nil {
		return nil, fmt.Errorf("runs of domain %s: %w", domain, err)
	}
	var d store.DomainRun
	if _, err := pgx.ForEachRow(rows, []any{&d.RunID, &d.Fetched, &d.Changed}, func() error {
		out[at[d.RunID]] = d
		return nil
	}); err != nil {
		return nil, fmt.Errorf("runs of domain %s: %w", domain, err)
	}
	return out, nil
}

// DomainTraps returns up to limit trap events of domain, the newest first, and how many there are.
func (db *DB) DomainTraps(ctx context.Context, domain string, limit int) ([]store.TrapEvent, int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM trap_events WHERE domain = $1`, domain).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("trap events of %s: %w", domain, err)
	}
	// SQLite sorts a NULL run_id first, so DESC puts it last.
	out, err := db.trapEvents(ctx, `WHERE domain = $1 ORDER BY run_id DESC NULLS LAST, id DESC LIMIT $2`, domain, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("trap events of %s: %w", domain, err)
	}
	return out, n, nil
}

// Tree lists the children of the URL directory prefix (a URL ending in '/') whose names sort after
// after, up to limit, with one index seek per child: store.DB.Tree.
func (db *DB) Tree(ctx context.Context, prefix, after string, limit int) ([]store.TreeEntry, error) {
	return store.WalkTree(prefix, after, limit, store.TreeLookups{
		Next: func(lower, end string, inclusive bool) (id int64, url string, err error) {
			q := `SELECT id, url FROM urls WHERE url > $1 AND url < $2 ORDER BY url LIMIT 1`
			if inclusive {
				q = `SELECT id, url FROM urls WHERE url >= $1 AND url < $2 ORDER BY url LIMIT 1`
			}
			err = db.pool.QueryRow(ctx, q, lower, end).Scan(&id, &url)
			if notFound(err) {
				err = store.ErrNotFound
			}
			return id, url, err
		},
		ID: func(url string) (id int64, err error) {
			err = db.pool.QueryRow(ctx, `SELECT id FROM urls WHERE url = $1`, url).Scan(&id)
			if notFound(err) {
				err = store.ErrNotFound
			}
			return id, err
		},
	})
}

// URLID returns the id of url (normalised), or an error wrapping store.ErrNotFound.
func (db *DB) URLID(ctx context.Context, u string) (int64, error) {
	var id int64
	err := db.pool.QueryRow(ctx, `SELECT id FROM urls WHERE url = $1`, u).Scan(&id)
	if notFound(err) {
		return 0, fmt.Errorf("URL %s: %w", u, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("URL %s: %w", u, err)
	}
	return id, nil
}

// URLByID returns the URL with row id, or an error wrapping store.ErrNotFound.
func (db *DB) URLByID(ctx context.Context, id int64) (string, error) {
	var u string
	err := db.pool.QueryRow(ctx, `SELECT url FROM urls WHERE id = $1`, id).Scan(&u)
	if notFound(err) {
		return "", fmt.Errorf("URL %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("URL %d: %w", id, err)
	}
	return u, nil
}

var fetchColumns = `id, url_id, coalesce(run_id, 0), fetched_at, status, coalesce(size, 0), changed = 1, not_modified = 1,
	coalesce(magnitude, -1), coalesce(error, ''), coalesce(archive_path, ''), pruned_at IS NOT NULL, ` + firstOf("fetches")

func scanFetch(row pgx.Row) (store.Fetch, error) {
	var f store.Fetch
	var at *string
	err := row.Scan(&f.ID, &f.URLID, &f.RunID, &at, &f.Status, &f.Size, &f.Changed, &f.NotModified, &f.Magnitude,
		&f.Error, &f.Path, &f.Pruned, &f.First)
	f.FetchedAt = parseTime(at)
	return f, err
}

func (db *DB) fetchList(ctx context.Context, op, query string, args ...any) ([]store.Fetch, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Fetch, error) { return scanFetch(r) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// FetchByID returns fetch id, or an error wrapping store.ErrNotFound.
func (db *DB) FetchByID(ctx context.Context, id int64) (store.Fetch, error) {
	f, err := scanFetch(db.pool.QueryRow(ctx, `SELECT `+fetchColumns+` FROM fetches WHERE id = $1`, id))
	if notFound(err) {
		return f, fmt.Errorf("fetch %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return f, fmt.Errorf("fetch %d: %w", id, err)
	}
	return f, nil
}

// Fetches returns up to limit fetches of a URL with ids below before (0: from the newest), the
// newest first.
func (db *DB) Fetches(ctx context.Context, urlID, before int64, limit int) ([]store.Fetch, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	return db.fetchList(ctx, fmt.Sprintf("fetches of URL %d", urlID), `SELECT `+fetchColumns+` FROM fetches
		WHERE url_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`, urlID, before, limit)
}

// StoredVersions returns up to limit of a URL's stored versions, the newest first.
func (db *DB) StoredVersions(ctx context.Context, urlID int64, limit int) ([]store.Fetch, error) {
	return db.fetchList(ctx, fmt.Sprintf("versions of URL %d", urlID), `SELECT `+fetchColumns+` FROM fetches
		WHERE url_id = $1 AND archive_path IS NOT NULL ORDER BY id DESC LIMIT $2`, urlID, limit)
}

// LatestVersion returns the last version of a URL stored, or an error wrapping store.ErrNotFound.
func (db *DB) LatestVersion(ctx context.Context, urlID int64) (store.Fetch, error) {
	return db.VersionBefore(ctx, urlID, 1<<63-1)
}

// VersionBefore returns the version of a URL stored last before fetch, or an error wrapping
// store.ErrNotFound when none is.
func (db *DB) VersionBefore(ctx context.Context, urlID, fetch int64) (store.Fetch, error) {
	f, err := scanFetch(db.pool.QueryRow(ctx, `SELECT `+fetchColumns+` FROM fetches
		WHERE url_id = $1 AND id < $2 AND archive_path IS NOT NULL ORDER BY id DESC LIMIT 1`, urlID, fetch))
	if notFound(err) {
		return f, fmt.Errorf("version of URL %d before fetch %d: %w", urlID, fetch, store.ErrNotFound)
	}
	if err != nil {
		return f, fmt.Errorf("version of URL %d before fetch %d: %w", urlID, fetch, err)
	}
	return f, nil
}

// LinksOut returns up to limit links of page fromID whose targets sort after after, in order.
func (db *DB) LinksOut(ctx context.Context, fromID int64, after string, limit int) ([]store.LinkOut, error) {
	rows, err := db.pool.Query(ctx, `SELECT to_url, coalesce(to_id, 0), coalesce((SELECT title FROM page_titles WHERE url_id = to_id), ''),
		internal = 1, coalesce(first_run, 0), coalesce(last_run, 0) FROM links WHERE from_id = $1 AND to_url > $2 ORDER BY to_url LIMIT $3`,
		fromID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("links of URL %d: %w", fromID, err)
	}
	var out []store.LinkOut
	var l store.LinkOut
	if _, err := pgx.ForEachRow(rows, []any{&l.ToURL, &l.ToID, &l.Title, &l.Internal, &l.FirstRun, &l.LastRun}, func() error {
		out = append(out, l)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("links of URL %d: %w", fromID, err)
	}
	return out, nil
}

// LinksIn returns up to limit pages that link to page toID, with row ids above after, in id order.
func (db *DB) LinksIn(ctx context.Context, toID, after int64, limit int) ([]store.LinkIn, error) {
	rows, err := db.pool.Query(ctx, `SELECT l.from_id, u.url, coalesce((SELECT title FROM page_titles WHERE url_id = l.from_id), ''),
		coalesce(l.first_run, 0), coalesce(l.last_run, 0)
		FROM links l JOIN urls u ON u.id = l.from_id WHERE l.to_id = $1 AND l.from_id > $2 ORDER BY l.from_id LIMIT $3`,
		toID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("links to URL %d: %w", toID, err)
	}
	var out []store.LinkIn
	var l store.LinkIn
	if _, err := pgx.ForEachRow(rows, []any{&l.FromID, &l.FromURL, &l.Title, &l.FirstRun, &l.LastRun}, func() error {
		out = append(out, l)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("links to URL %d: %w", toID, err)
	}
	return out, nil
}

// Changes lists the changes q selects, by magnitude (biggest first, unknown last), then fetch id,
// from the partial index fetches_changes.
func (db *DB) Changes(ctx context.Context, q store.ChangeQuery) ([]store.Change, error) {
	where := `f.run_id = $1 AND f.changed = 1`
	args := []any{q.Run}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.MinMagnitude > 0 {
		where += ` AND coalesce(f.magnitude, -1) >= ` + arg(q.MinMagnitude)
	}
	if q.After != nil {
		m := arg(q.After.Magnitude)
		where += ` AND (coalesce(f.magnitude, -1) < ` + m + ` OR (coalesce(f.magnitude, -1) = ` + m + ` AND f.id > ` + arg(q.After.FetchID) + `))`
	}
	if len(q.Hosts) > 0 {
		where += ` AND u.host = ANY(` + arg(q.Hosts) + `)`
	}
	limit := arg(q.Limit)
	rows, err := db.pool.Query(ctx, `SELECT f.id, f.url_id, u.url, coalesce(t.title, ''), f.fetched_at, coalesce(f.size, 0),
		coalesce(f.magnitude, -1), coalesce(f.archive_path, '') FROM fetches f JOIN urls u ON u.id = f.url_id
		LEFT JOIN page_titles t ON t.url_id = f.url_id
		WHERE `+where+` ORDER BY coalesce(f.magnitude, -1) DESC, f.id LIMIT `+limit, args...)
	if err != nil {
		return nil, fmt.Errorf("changes of run %d: %w", q.Run, err)
	}
	var out []store.Change
	var c store.Change
	var at *string
	if _, err := pgx.ForEachRow(rows, []any{&c.FetchID, &c.URLID, &c.URL, &c.Title, &at, &c.Size, &c.Magnitude, &c.Path}, func() error {
		c.FetchedAt = parseTime(at)
		out = append(out, c)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("changes of run %d: %w", q.Run, err)
	}
	return out, nil
}

// URLsWithPrefix returns up to limit URLs that start with prefix and sort after after, in order.
func (db *DB) URLsWithPrefix(ctx context.Context, prefix, after string, limit int) ([]store.URLHit, error) {
	cond, args := `url >= $1`, []any{prefix}
	if after != "" && strings.HasPrefix(after, prefix) {
		cond, args = `url > $1`, []any{after}
	}
	if end, ok := prefixEnd(prefix); ok {
		args = append(args, end)
		cond += fmt.Sprintf(` AND url < $%d`, len(args))
	}
	args = append(args, limit)
	return db.urlHits(ctx, "URLs under "+prefix, `SELECT id, url, coalesce((SELECT title FROM page_titles WHERE url_id = id), ''), state
		FROM urls WHERE `+cond+fmt.Sprintf(` ORDER BY url LIMIT $%d`, len(args)), args...)
}

// URLsContaining looks for URLs containing sub (ASCII letters in any case) among the rows with ids
// in (after, after+window], in id order: store.DB.URLsContaining. SQLite's LIKE folds ASCII case;
// ILIKE under COLLATE "C" folds the same letters.
func (db *DB) URLsContaining(ctx context.Context, sub string, after int64, window int64, limit int) (hits []store.URLHit, next int64, err error) {
	var maxID int64
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM urls`).Scan(&maxID); err != nil {
		return nil, 0, fmt.Errorf("search URLs for %q: %w", sub, err)
	}
	end := min(after+window, maxID)
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(sub) + "%"
	hits, err = db.urlHits(ctx, fmt.Sprintf("search URLs for %q", sub), `SELECT id, url, coalesce((SELECT title FROM page_titles WHERE url_id = id), ''), state FROM urls
		WHERE id > $1 AND id <= $2 AND url ILIKE $3 ESCAPE '\' ORDER BY id LIMIT $4`, after, end, pattern, limit)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case len(hits) == limit:
		next = hits[len(hits)-1].ID
	case end < maxID:
		next = end
	}
	return hits, next, nil
}

func (db *DB) urlHits(ctx context.Context, op, query string, args ...any) ([]store.URLHit, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var out []store.URLHit
	var h store.URLHit
	if _, err := pgx.ForEachRow(rows, []any{&h.ID, &h.URL, &h.Title, &h.State}, func() error {
		out = append(out, h)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// DataVersion identifies the database's content for caches: it changes whenever a fetch or a run
// is recorded.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	var f, r int64
	var ended *string
	err := db.pool.QueryRow(ctx, `SELECT (SELECT coalesce(max(id), 0) FROM fetches), (SELECT coalesce(max(id), 0) FROM runs),
		(SELECT ended_at FROM runs ORDER BY id DESC LIMIT 1)`).Scan(&f, &r, &ended)
	if err != nil {
		return "", fmt.Errorf("data version: %w", err)
	}
	e := ""
	if ended != nil {
		e = *ended
	}
	return fmt.Sprintf("%d/%d/%s", f, r, e), nil
}

// RunPageCounts returns the page counts of runs; a run the index step has not summarised is absent.
func (db *DB) RunPageCounts(ctx context.Context, runs []int64) (map[int64]store.PageCounts, error) {
	out := map[int64]store.PageCounts{}
	if len(runs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT run_id, new, gone, unlinked, not_found FROM run_pages WHERE run_id = ANY($1)`, runs)
	if err != nil {
		return nil, fmt.Errorf("page counts of %d runs: %w", len(runs), err)
	}
	var id int64
	var c store.PageCounts
	if _, err := pgx.ForEachRow(rows, []any{&id, &c.New, &c.Gone, &c.Unlinked, &c.NotFound}, func() error {
		c.Known = true
		out[id] = c
		return nil
	}); err != nil {
		return nil, fmt.Errorf("page counts of %d runs: %w", len(runs), err)
	}
	return out, nil
}

// DomainPageCounts returns domain's new and gone pages and 404s in runs; a run without any is absent.
func (db *DB) DomainPageCounts(ctx context.Context, domain string, runs []int64) (map[int64]store.PageCounts, error) {
	out := map[int64]store.PageCounts{}
	if len(runs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT run_id, new, gone, not_found FROM run_domain_pages
		WHERE domain = $1 AND run_id = ANY($2)`, domain, runs)
	if err != nil {
		return nil, fmt.Errorf("page counts of %s: %w", domain, err)
	}
	var id int64
	var c store.PageCounts
	if _, err := pgx.ForEachRow(rows, []any{&id, &c.New, &c.Gone, &c.NotFound}, func() error {
		c.Known = true
		out[id] = c
		return nil
	}); err != nil {
		return nil, fmt.Errorf("page counts of %s: %w", domain, err)
	}
	return out, nil
}

// PageEvents lists the events q selects, from the primary key of page_events.
func (db *DB) PageEvents(ctx context.Context, q store.EventQuery) ([]store.PageEvent, error) {
	where := `e.run_id = $1 AND e.kind = $2 AND e.url_id > $3`
	args := []any{q.Run, q.Kind, q.After}
	if len(q.Hosts) > 0 {
		args = append(args, q.Hosts)
		where += fmt.Sprintf(` AND u.host = ANY($%d)`, len(args))
	}
	args = append(args, q.Limit)
	return db.pageEvents(ctx, fmt.Sprintf("%s pages of run %d", q.Kind, q.Run),
		where+fmt.Sprintf(` ORDER BY e.url_id LIMIT $%d`, len(args)), args...)
}

// URLEvents returns up to limit events of one page, the newest first.
func (db *DB) URLEvents(ctx context.Context, urlID int64, limit int) ([]store.PageEvent, error) {
	return db.pageEvents(ctx, fmt.Sprintf("events of URL %d", urlID), `e.url_id = $1 ORDER BY e.run_id DESC LIMIT $2`, urlID, limit)
}

// EventsAmong returns the kinds of the events of the given URLs in run, by URL id.
func (db *DB) EventsAmong(ctx context.Context, run int64, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 || run == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT url_id, kind FROM page_events WHERE run_id = $1 AND url_id = ANY($2) ORDER BY kind`, run, ids)
	if err != nil {
		return nil, fmt.Errorf("events of run %d: %w", run, err)
	}
	var id int64
	var kind string
	if _, err := pgx.ForEachRow(rows, []any{&id, &kind}, func() error {
		out[id] = append(out[id], kind)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("events of run %d: %w", run, err)
	}
	return out, nil
}

func (db *DB) pageEvents(ctx context.Context, op, cond string, args ...any) ([]store.PageEvent, error) {
	rows, err := db.pool.Query(ctx, `SELECT e.kind, e.url_id, u.url, coalesce(t.title, ''), u.state, coalesce(e.fetch_id, 0),
		e.run_id, f.fetched_at FROM page_events e JOIN urls u ON u.id = e.url_id LEFT JOIN page_titles t ON t.url_id = e.url_id
		LEFT JOIN fetches f ON f.id = e.fetch_id WHERE `+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var out []store.PageEvent
	var e store.PageEvent
	var at *string
	if _, err := pgx.ForEachRow(rows, []any{&e.Kind, &e.URLID, &e.URL, &e.Title, &e.State, &e.FetchID, &e.RunID, &at}, func() error {
		e.At = parseTime(at)
		out = append(out, e)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// PageMarks returns the title and state of each of ids.
func (db *DB) PageMarks(ctx context.Context, ids []int64) (map[int64]store.PageMark, error) {
	out := map[int64]store.PageMark{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT u.id, coalesce(t.title, ''), u.state FROM urls u
		LEFT JOIN page_titles t ON t.url_id = u.id WHERE u.id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("titles of %d pages: %w", len(ids), err)
	}
	var id int64
	var m store.PageMark
	if _, err := pgx.ForEachRow(rows, []any{&id, &m.Title, &m.State}, func() error {
		out[id] = m
		return nil
	}); err != nil {
		return nil, fmt.Errorf("titles of %d pages: %w", len(ids), err)
	}
	return out, nil
}

// LastSummarizedRun returns the newest run whose page events are recorded, 0 if none.
func (db *DB) LastSummarizedRun(ctx context.Context) (int64, error) {
	var id int64
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(run_id), 0) FROM run_pages`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last summarised run: %w", err)
	}
	return id, nil
}

// OriginDomain returns the politeness domain of origin, "" when strata has never contacted it.
func (db *DB) OriginDomain(ctx context.Context, origin string) (string, error) {
	var d string
	err := db.pool.QueryRow(ctx, `SELECT domain FROM hosts WHERE origin = $1`, origin).Scan(&d)
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("domain of %s: %w", origin, err)
	}
	return d, nil
}

// URLInfo returns the row of u (normalised), or an error wrapping store.ErrNotFound.
func (db *DB) URLInfo(ctx context.Context, u string) (*store.URLInfo, error) {
	var in store.URLInfo
	var date, siteDate, hint, parent, skipper *string
	var parentID, skippedRun *int64
	err := db.pool.QueryRow(ctx, `SELECT u.id, u.url, u.state, u.level, `+frOf("u.due_tick")+`, u.fr_max, u.threshold, u.is_seed = 1, u.date,
		u.skips, u.skipped_run, s.url, u.parent_id, p.url, coalesce(u.change_rate, -1), u.rate_bucket,
		u.release_days, u.weight, u.priority, u.site_date, u.hint_lastmod, coalesce(u.hint_source, ''),
		coalesce(u.root_id IN `+snapshotRoots+`, false)
		FROM urls u LEFT JOIN urls p ON p.id = u.parent_id LEFT JOIN urls s ON s.id = u.skipped_by WHERE u.url = $1`, u).
		Scan(&in.ID, &in.URL, &in.State, &in.Level, &in.Fr, &in.FrMax, &in.Threshold, &in.IsSeed, &date, &in.Skips,
			&skippedRun, &skipper, &parentID, &parent, &in.ChangeRate, &in.RateBucket,
			&in.ReleaseDays, &in.Weight, &in.Priority, &siteDate, &hint, &in.HintSource, &in.Snapshot)
	if notFound(err) {
		return nil, fmt.Errorf("URL %s: %w", u, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("URL %s: %w", u, err)
	}
	if parentID != nil {
		in.ParentID = *parentID
	}
	if parent != nil {
		in.ParentURL = *parent
	}
	if skippedRun != nil {
		in.SkippedRun = *skippedRun
	}
	if skipper != nil {
		in.SkippedBy = *skipper
	}
	if hint != nil {
		in.HintLastMod = *hint
	}
	in.LastCrawled, in.SiteDate = parseTime(date), parseTime(siteDate)
	if pu, err := url.Parse(in.URL); err == nil {
		in.Origin = pu.Scheme + "://" + pu.Host
	}
	if in.Statuses, err = db.RecentStatuses(ctx, in.ID, 10); err != nil {
		return nil, err
	}
	var lastErr *string
	err = db.pool.QueryRow(ctx, `SELECT error FROM fetches WHERE url_id = $1 ORDER BY id DESC LIMIT 1`, in.ID).Scan(&lastErr)
	if err != nil && !notFound(err) {
		return nil, fmt.Errorf("URL %s: %w", u, err)
	}
	if lastErr != nil {
		in.LastError = *lastErr
	}
	return &in, nil
}

// Records returns a page's last limit records, oldest first.
func (db *DB) Records(ctx context.Context, urlID int64, limit int) ([]store.Record, error) {
	rows, err := db.pool.Query(ctx, `SELECT run_id, changed, failed FROM (SELECT `+recordFields+`, f.id FROM fetches f
		WHERE f.url_id = $1 ORDER BY f.id DESC LIMIT $2) r ORDER BY id`, urlID, limit)
	if err != nil {
		return nil, fmt.Errorf("records of URL %d: %w", urlID, err)
	}
	var out []store.Record
	var r store.Record
	if _, err := pgx.ForEachRow(rows, []any{&r.Run, &r.Changed, &r.Failed}, func() error {
		out = append(out, r)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("records of URL %d: %w", urlID, err)
	}
	return out, nil
}

// SeedReports returns a row per active seed, over each seed's last limit crawls.
func (db *DB) SeedReports(ctx context.Context, limit int) ([]store.SeedReport, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, url, fr_max, threshold FROM urls WHERE is_seed = 1 AND state = 'active' ORDER BY url`)
	if err != nil {
		return nil, fmt.Errorf("seed report: %w", err)
	}
	var out []store.SeedReport
	var r store.SeedReport
	if _, err := pgx.ForEachRow(rows, []any{&r.URLID, &r.URL, &r.FrMax, &r.Threshold}, func() error {
		out = append(out, r)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("seed report: %w", err)
	}
	for i := range out {
		recs, err := db.Records(ctx, out[i].URLID, limit)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if !rec.Failed {
				out[i].Crawls++
				if rec.Changed {
					out[i].Changes++
				}
			}
		}
		err = db.pool.QueryRow(ctx, `SELECT coalesce(avg(n), 0) FROM (
				SELECT f.run_id, (SELECT count(*) FROM links l WHERE l.from_id = f.url_id AND l.internal = 1
					AND l.first_run <= f.run_id AND l.last_run >= f.run_id) AS n
				FROM fetches f WHERE f.url_id = $1 AND f.status = 200 ORDER BY f.id DESC LIMIT $2) c`,
			out[i].URLID, limit).Scan(&out[i].InternalLinks)
		if err != nil {
			return nil, fmt.Errorf("seed report: %w", err)
		}
	}
	return out, nil
}

// Status reads the summary for strata status; recent bounds how many runs it lists.
func (db *DB) Status(ctx context.Context, recent int) (*store.Status, error) {
	st := &store.Status{URLs: map[string]int{}}
	for _, s := range store.States {
		st.URLs[s] = 0
	}
	rows, err := db.pool.Query(ctx, `SELECT state, count(*) FROM urls GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	var s string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&s, &n}, func() error {
		st.URLs[s] = n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	// As in SQLite: the next run first decrements every fr > 0, so pages with fr <= 1 are due then,
	// and so is every page whose last answer was 404 or whose seed asks for a snapshot.
	err = db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM urls WHERE state = 'active' AND due_tick <= `+tickNow+` + 1 AND `+notHeld+`) +
		(SELECT count(*) FROM urls WHERE state = 'active' AND due_tick > `+tickNow+` + 1
			AND (last_status IS NOT DISTINCT FROM 404 OR coalesce(`+snapshotDue+`, false)) AND `+notHeld+`),
		(SELECT count(DISTINCT host) FROM urls WHERE state = 'active'),
		(SELECT count(*) FROM urls WHERE is_seed = 1),
		(SELECT count(*) FROM fetches WHERE run_id = (SELECT max(id) FROM runs))`).
		Scan(&st.DueNextRun, &st.Hosts, &st.Seeds, &st.LastRunFetches)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	if st.Runs, err = db.RecentRuns(ctx, recent); err != nil {
		return nil, err
	}
	return st, nil
}

// History returns every fetch of u (normalised), oldest first, or an error wrapping
// store.ErrNotFound if strata does not know the URL.
func (db *DB) History(ctx context.Context, u string) ([]store.HistoryEntry, error) {
	var id int64
	if err := db.pool.QueryRow(ctx, `SELECT id FROM urls WHERE url = $1`, u).Scan(&id); notFound(err) {
		return nil, fmt.Errorf("history of %s: %w (strata has never seen this URL)", u, store.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("history of %s: %w", u, err)
	}
	rows, err := db.pool.Query(ctx, `SELECT id, coalesce(run_id, 0), fetched_at, status, coalesce(size, 0), changed = 1,
		not_modified = 1, coalesce(error, ''), coalesce(archive_path, ''), pruned_at IS NOT NULL, coalesce(magnitude, -1),
		coalesce(text_mode, '') FROM fetches WHERE url_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", u, err)
	}
	var out []store.HistoryEntry
	current, pruned := "", false
	var h store.HistoryEntry
	var at *string
	var p bool
	if _, err := pgx.ForEachRow(rows, []any{&h.FetchID, &h.RunID, &at, &h.Status, &h.Size, &h.Changed, &h.NotModified, &h.Error,
		&h.Stored, &p, &h.Magnitude, &h.TextMode}, func() error {
		h.FetchedAt = parseTime(at)
		h.First = false
		if h.Stored != "" {
			h.First = current == ""
			current, pruned = h.Stored, p
		}
		h.Current, h.Pruned = current, pruned
		out = append(out, h)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("history of %s: %w", u, err)
	}
	return out, nil
}

// EachVersion calls fn for every stored, unpruned version that f selects, oldest first, streaming
// the rows. fn's error stops the walk and is returned as it is.
func (db *DB) EachVersion(ctx context.Context, f store.VersionFilter, fn func(store.Version) error) error {
	q := `SELECT f.id, u.url, coalesce(f.run_id, 0), f.fetched_at, coalesce(f.content_hash, ''), f.changed = 1,
		f.archive_path, ` + firstOf("f") + `
		FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.archive_path IS NOT NULL AND f.pruned_at IS NULL`
	var args []any
	if f.URL != "" {
		args = append(args, f.URL)
		q += fmt.Sprintf(` AND u.url = $%d`, len(args))
	}
	if !f.Since.IsZero() {
		args = append(args, formatTime(f.Since))
		q += fmt.Sprintf(` AND f.fetched_at >= $%d`, len(args))
	}
	if f.RunID != 0 {
		args = append(args, f.RunID)
		q += fmt.Sprintf(` AND f.run_id = $%d`, len(args))
	}
	if f.Host != "" {
		args = append(args, f.Host)
		q += fmt.Sprintf(` AND u.host = $%d`, len(args))
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY f.id`, args...)
	if err != nil {
		return fmt.Errorf("list versions: %w", err)
	}
	var v store.Version
	var at *string
	return forEachRow(rows, []any{&v.FetchID, &v.URL, &v.RunID, &at, &v.ContentHash, &v.Changed, &v.Path, &v.First}, "list versions", func() error {
		v.FetchedAt = parseTime(at)
		return fn(v)
	})
}

// RunsSince returns the runs that started at or after since (every run for a zero since), oldest
// first: store.DB.RunsSince.
func (db *DB) RunsSince(ctx context.Context, since time.Time) ([]store.Run, error) {
	runs, err := db.runs(ctx, `WHERE started_at >= $1 ORDER BY id`, formatTime(since))
	if err != nil {
		return nil, fmt.Errorf("runs since %s: %w", since, err)
	}
	return runs, nil
}

// EachStoredVersion calls fn for every unpruned version the run stored, in fetch order, with the
// exchange's heads where strata kept them: store.DB.EachStoredVersion. fn's error stops the walk
// and is returned as it is.
func (db *DB) EachStoredVersion(ctx context.Context, run int64, fn func(store.StoredVersion) error) error {
	rows, err := db.pool.Query(ctx, `SELECT u.url, f.fetched_at, f.archive_path, c.fetch_id IS NOT NULL,
		c.request, c.response, coalesce(c.ip, ''), coalesce(c.payload_digest, '')
		FROM fetches f JOIN urls u ON u.id = f.url_id LEFT JOIN captures c ON c.fetch_id = f.id
		WHERE f.run_id = $1 AND f.archive_path IS NOT NULL AND f.pruned_at IS NULL ORDER BY f.id`, run)
	if err != nil {
		return fmt.Errorf("versions of run %d: %w", run, err)
	}
	var v store.StoredVersion
	var at string
	var has bool
	var c store.Capture
	return forEachRow(rows, []any{&v.URL, &at, &v.Path, &has, &c.Request, &c.Response, &c.IP, &c.PayloadDigest},
		fmt.Sprintf("versions of run %d", run), func() error {
			v.FetchedAt, v.Capture = parseTime(&at), nil
			if has && len(c.Response) > 0 {
				kept := c // c is scanned into again for the next row; pgx gives each row's bytea slices of their own
				v.Capture = &kept
			}
			return fn(v)
		})
}
