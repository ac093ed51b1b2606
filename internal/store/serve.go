package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Runs returns up to limit runs with ids below before (0: from the newest), the newest first.
func (db *DB) Runs(ctx context.Context, before int64, limit int) ([]Run, error) {
	if before <= 0 {
		return db.RecentRuns(ctx, limit)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT `+RunColumns+` FROM runs WHERE id < ? ORDER BY id DESC LIMIT ?`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs before %d: %w", before, err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := ScanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs before %d: %w", before, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunByID returns run id, or an error wrapping ErrNotFound.
func (db *DB) RunByID(ctx context.Context, id int64) (Run, error) {
	r, err := ScanRun(db.sql.QueryRowContext(ctx, `SELECT `+RunColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("run %d: %w", id, err)
	}
	return r, nil
}

// Origin is one row of the hosts table: a scheme://host[:port] strata has contacted.
type Origin struct {
	Origin          string
	Domain          string
	Host            string // host[:port], as urls.host has it
	RobotsStatus    int    // HTTP status of the robots.txt fetch; 0 unreachable, -1 never fetched
	RobotsFetchedAt time.Time
	CrawlDelay      time.Duration // the delay in force
	LastAccess      time.Time
}

// Domains returns up to limit politeness domains after after, in order.
func (db *DB) Domains(ctx context.Context, after string, limit int) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT DISTINCT domain FROM hosts WHERE domain > ? ORDER BY domain LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list domains after %q: %w", after, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("list domains after %q: %w", after, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DomainOrigins returns the origins of a politeness domain, in order; none when strata has never
// contacted it.
func (db *DB) DomainOrigins(ctx context.Context, domain string) ([]Origin, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT origin, domain, coalesce(robots_status, -1), robots_fetched_at,
		coalesce(crawl_delay_ms, 0), last_access_at FROM hosts WHERE domain = ? ORDER BY origin`, domain)
	if err != nil {
		return nil, fmt.Errorf("origins of %s: %w", domain, err)
	}
	defer rows.Close()
	var out []Origin
	for rows.Next() {
		var o Origin
		var fetched, access sql.NullString
		var delay int64
		if err := rows.Scan(&o.Origin, &o.Domain, &o.RobotsStatus, &fetched, &delay, &access); err != nil {
			return nil, fmt.Errorf("origins of %s: %w", domain, err)
		}
		o.RobotsFetchedAt, o.LastAccess = parseTime(fetched), parseTime(access)
		o.CrawlDelay = time.Duration(delay) * time.Millisecond
		_, o.Host, _ = strings.Cut(o.Origin, "://")
		out = append(out, o)
	}
	return out, rows.Err()
}

// HostURLs counts the URLs strata knows on host (host[:port]), from the host index alone.
func (db *DB) HostURLs(ctx context.Context, host string) (int, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM urls WHERE host = ?`, host).Scan(&n); err != nil {
		return 0, fmt.Errorf("count URLs of %s: %w", host, err)
	}
	return n, nil
}

// DomainRun is what one run did on one politeness domain.
type DomainRun struct {
	RunID   int64
	Fetched int
	Changed int
}

// DomainRuns returns domain's fetches and changes in each of runs (run ids), in the order of runs;
// a run that did not touch the domain has zeros.
func (db *DB) DomainRuns(ctx context.Context, domain string, runs []int64) ([]DomainRun, error) {
	out := make([]DomainRun, len(runs))
	if len(runs) == 0 {
		return out, nil
	}
	args := []any{domain}
	at := map[int64]int{}
	for i, r := range runs {
		out[i].RunID = r
		at[r] = i
		args = append(args, r)
	}
	// One primary-key lookup per run, however many domains the runs touched.
	rows, err := db.sql.QueryContext(ctx, `SELECT run_id, fetched, changed FROM run_domains
		WHERE domain = ? AND run_id IN (`+placeholders(len(runs))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("runs of domain %s: %w", domain, err)
	}
	defer rows.Close()
	for rows.Next() {
		var d DomainRun
		if err := rows.Scan(&d.RunID, &d.Fetched, &d.Changed); err != nil {
			return nil, fmt.Errorf("runs of domain %s: %w", domain, err)
		}
		out[at[d.RunID]] = d
	}
	return out, rows.Err()
}

// DomainTraps returns up to limit trap events of domain, the newest first, and how many there are.
func (db *DB) DomainTraps(ctx context.Context, domain string, limit int) ([]TrapEvent, int, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM trap_events WHERE domain = ?`, domain).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("trap events of %s: %w", domain, err)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT coalesce(run_id, 0), at, domain, kind, pattern, detail FROM trap_events
		WHERE domain = ? ORDER BY run_id DESC, id DESC LIMIT ?`, domain, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("trap events of %s: %w", domain, err)
	}
	defer rows.Close()
	var out []TrapEvent
	for rows.Next() {
		var e TrapEvent
		var at sql.NullString
		if err := rows.Scan(&e.RunID, &at, &e.Domain, &e.Kind, &e.Pattern, &e.Detail); err != nil {
			return nil, 0, fmt.Errorf("trap events of %s: %w", domain, err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, n, rows.Err()
}

// TreeEntry is one child of a directory of URLs: a page, a directory of pages, or both.
type TreeEntry struct {
	Name  string // the path segment, with a trailing '/' for a directory
	URL   string // prefix + Name
	Dir   bool
	URLID int64 // the page at URL, 0 if strata knows no URL that is exactly URL
}

// Tree lists the children of the URL directory prefix (a URL ending in '/') whose names sort after
// after, up to limit, like ls: each child once, whether it holds one URL or a million. It reads the
// url index with one seek per child (a loose index scan), so its cost does not grow with the size
// of the subtrees.
func (db *DB) Tree(ctx context.Context, prefix, after string, limit int) ([]TreeEntry, error) {
	past, err := db.sql.PrepareContext(ctx, `SELECT id, url FROM urls WHERE url > ? AND url < ? ORDER BY url LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", prefix, err)
	}
	defer past.Close()
	from, err := db.sql.PrepareContext(ctx, `SELECT id, url FROM urls WHERE url >= ? AND url < ? ORDER BY url LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", prefix, err)
	}
	defer from.Close()
	exact, err := db.sql.PrepareContext(ctx, `SELECT id FROM urls WHERE url = ?`)
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", prefix, err)
	}
	defer exact.Close()
	return WalkTree(prefix, after, limit, TreeLookups{
		Next: func(lower, end string, inclusive bool) (id int64, url string, err error) {
			next := past
			if inclusive {
				next = from
			}
			err = next.QueryRowContext(ctx, lower, end).Scan(&id, &url)
			if errors.Is(err, sql.ErrNoRows) {
				err = ErrNotFound
			}
			return id, url, err
		},
		ID: func(url string) (id int64, err error) {
			err = exact.QueryRowContext(ctx, url).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				err = ErrNotFound
			}
			return id, err
		},
	})
}

// TreeLookups are the two index reads of WalkTree, in a backend's SQL. Each returns an error
// wrapping ErrNotFound when no row answers.
type TreeLookups struct {
	// Next returns the first URL past lower (at or past it when inclusive) and before end.
	Next func(lower, end string, inclusive bool) (id int64, url string, err error)
	// ID returns the id of exactly url.
	ID func(url string) (int64, error)
}

// WalkTree is Tree over any backend's lookups: the walk and the bounds are the same in SQLite and
// PostgreSQL, only the SQL differs.
func WalkTree(prefix, after string, limit int, look TreeLookups) ([]TreeEntry, error) {
	if !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("tree of %s: the prefix must end in '/'", prefix)
	}
	end := prefix[:len(prefix)-1] + "0" // '0' follows '/': the first string past the subtree
	// The next child is the first URL past lower: strictly past it after a page, at or past it after
	// a directory, whose bound is the first string past the directory's subtree.
	lower, inclusive := prefix, false
	if after != "" {
		lower = prefix + after
		if strings.HasSuffix(after, "/") {
			lower, inclusive = prefix+after[:len(after)-1]+"0", true
		}
	}
	var out []TreeEntry
	for len(out) < limit {
		id, u, err := look.Next(lower, end, inclusive)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tree of %s: %w", prefix, err)
		}
		rest := u[len(prefix):]
		e := TreeEntry{Name: rest}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			e.Name, e.Dir = rest[:i+1], true
		}
		e.URL = prefix + e.Name
		switch {
		case !e.Dir:
			e.URLID = id
			lower, inclusive = e.URL, false
		default:
			if u == e.URL {
				e.URLID = id
			} else if e.URLID, err = look.ID(e.URL); err != nil && !errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("tree of %s: %w", prefix, err)
			}
			lower, inclusive = e.URL[:len(e.URL)-1]+"0", true
		}
		out = append(out, e)
	}
	return out, nil
}

// URLID returns the id of url (normalised), or an error wrapping ErrNotFound.
func (db *DB) URLID(ctx context.Context, url string) (int64, error) {
	var id int64
	err := db.sql.QueryRowContext(ctx, `SELECT id FROM urls WHERE url = ?`, url).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("URL %s: %w", url, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("URL %s: %w", url, err)
	}
	return id, nil
}

// URLByID returns the URL with row id, or an error wrapping ErrNotFound.
func (db *DB) URLByID(ctx context.Context, id int64) (string, error) {
	var u string
	err := db.sql.QueryRowContext(ctx, `SELECT url FROM urls WHERE id = ?`, id).Scan(&u)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("URL %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("URL %d: %w", id, err)
	}
	return u, nil
}

// Fetch is one row of the fetches table, for strata serve.
type Fetch struct {
	ID          int64
	URLID       int64
	RunID       int64
	FetchedAt   time.Time
	Status      int
	Size        int64
	Changed     bool
	NotModified bool
	Magnitude   float64 // share of the text that changed, 0..1; -1 when not known
	Error       string
	Path        string // the version this fetch stored, "" if none
	Pruned      bool   // Path's files were removed by archive.keep
	First       bool   // Path is the page's first version
}

var fetchColumns = `id, url_id, coalesce(run_id, 0), fetched_at, status, coalesce(size, 0), changed, not_modified,
	coalesce(magnitude, -1), coalesce(error, ''), coalesce(archive_path, ''), pruned_at IS NOT NULL, ` + firstOf("fetches")

func scanFetch(row interface{ Scan(...any) error }) (Fetch, error) {
	var f Fetch
	var at sql.NullString
	err := row.Scan(&f.ID, &f.URLID, &f.RunID, &at, &f.Status, &f.Size, &f.Changed, &f.NotModified, &f.Magnitude,
		&f.Error, &f.Path, &f.Pruned, &f.First)
	f.FetchedAt = parseTime(at)
	return f, err
}

func (db *DB) fetchList(ctx context.Context, op, query string, args ...any) ([]Fetch, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	var out []Fetch
	for rows.Next() {
		f, err := scanFetch(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// FetchByID returns fetch id, or an error wrapping ErrNotFound.
func (db *DB) FetchByID(ctx context.Context, id int64) (Fetch, error) {
	f, err := scanFetch(db.sql.QueryRowContext(ctx, `SELECT `+fetchColumns+` FROM fetches WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("fetch %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return f, fmt.Errorf("fetch %d: %w", id, err)
	}
	return f, nil
}

// Fetches returns up to limit fetches of a URL with ids below before (0: from the newest), the
// newest first.
func (db *DB) Fetches(ctx context.Context, urlID, before int64, limit int) ([]Fetch, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	return db.fetchList(ctx, fmt.Sprintf("fetches of URL %d", urlID), `SELECT `+fetchColumns+` FROM fetches
		WHERE url_id = ? AND id < ? ORDER BY id DESC LIMIT ?`, urlID, before, limit)
}

// StoredVersions returns up to limit of a URL's stored versions (fetches that wrote files), the
// newest first.
func (db *DB) StoredVersions(ctx context.Context, urlID int64, limit int) ([]Fetch, error) {
	return db.fetchList(ctx, fmt.Sprintf("versions of URL %d", urlID), `SELECT `+fetchColumns+` FROM fetches
		WHERE url_id = ? AND archive_path IS NOT NULL ORDER BY id DESC LIMIT ?`, urlID, limit)
}

// LatestVersion returns the current version of a URL: the last one stored, or an error wrapping
// ErrNotFound when none is.
func (db *DB) LatestVersion(ctx context.Context, urlID int64) (Fetch, error) {
	return db.versionBefore(ctx, urlID, 1<<63-1)
}

// VersionBefore returns the version of a URL stored last before fetch (the one a diff of fetch's
// version compares with), or an error wrapping ErrNotFound when none is.
func (db *DB) VersionBefore(ctx context.Context, urlID, fetch int64) (Fetch, error) {
	return db.versionBefore(ctx, urlID, fetch)
}

func (db *DB) versionBefore(ctx context.Context, urlID, fetch int64) (Fetch, error) {
	f, err := scanFetch(db.sql.QueryRowContext(ctx, `SELECT `+fetchColumns+` FROM fetches
		WHERE url_id = ? AND id < ? AND archive_path IS NOT NULL ORDER BY id DESC LIMIT 1`, urlID, fetch))
	if errors.Is(err, sql.ErrNoRows) {
		return f, fmt.Errorf("version of URL %d before fetch %d: %w", urlID, fetch, ErrNotFound)
	}
	if err != nil {
		return f, fmt.Errorf("version of URL %d before fetch %d: %w", urlID, fetch, err)
	}
	return f, nil
}

// LinkOut is one link on a page.
type LinkOut struct {
	ToURL             string
	Title             string // the target's, when strata tracks it
	ToID              int64  // 0 when strata does not track the target
	Internal          bool
	FirstRun, LastRun int64
}

// LinksOut returns up to limit links of page fromID whose targets sort after after, in order.
func (db *DB) LinksOut(ctx context.Context, fromID int64, after string, limit int) ([]LinkOut, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT to_url, coalesce(to_id, 0), coalesce((SELECT title FROM page_titles WHERE url_id = to_id), ''), internal,
		coalesce(first_run, 0), coalesce(last_run, 0) FROM links WHERE from_id = ? AND to_url > ? ORDER BY to_url LIMIT ?`, fromID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("links of URL %d: %w", fromID, err)
	}
	defer rows.Close()
	var out []LinkOut
	for rows.Next() {
		var l LinkOut
		if err := rows.Scan(&l.ToURL, &l.ToID, &l.Title, &l.Internal, &l.FirstRun, &l.LastRun); err != nil {
			return nil, fmt.Errorf("links of URL %d: %w", fromID, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// LinkIn is one page that links to a given page.
type LinkIn struct {
	FromID            int64
	FromURL           string
	Title             string
	FirstRun, LastRun int64
}

// LinksIn returns up to limit pages that link to page toID, with row ids above after, in id order.
func (db *DB) LinksIn(ctx context.Context, toID, after int64, limit int) ([]LinkIn, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT l.from_id, u.url, coalesce((SELECT title FROM page_titles WHERE url_id = l.from_id), ''), coalesce(l.first_run, 0), coalesce(l.last_run, 0)
		FROM links l JOIN urls u ON u.id = l.from_id WHERE l.to_id = ? AND l.from_id > ? ORDER BY l.from_id LIMIT ?`,
		toID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("links to URL %d: %w", toID, err)
	}
	defer rows.Close()
	var out []LinkIn
	for rows.Next() {
		var l LinkIn
		if err := rows.Scan(&l.FromID, &l.FromURL, &l.Title, &l.FirstRun, &l.LastRun); err != nil {
			return nil, fmt.Errorf("links to URL %d: %w", toID, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Change is a page that changed in a run.
type Change struct {
	FetchID   int64
	URLID     int64
	URL       string
	Title     string
	FetchedAt time.Time
	Size      int64
	Magnitude float64 // -1 when not known
	Path      string  // the version stored, "" if none
}

// ChangeQuery selects the changes of one run, the biggest first. After is the keyset cursor: the
// last change of the previous page (zero for the first page).
type ChangeQuery struct {
	Run          int64
	Hosts        []string // only these host[:port]s; none: every host
	MinMagnitude float64  // only changes at least this big (0..1); 0 includes unknown magnitudes
	After        *Change
	Limit        int
}

// Changes lists the changes q selects, by magnitude (biggest first, unknown last), then fetch id.
// It reads the partial index fetches_changes, so its cost follows the changes it returns, not the
// fetches of the run.
func (db *DB) Changes(ctx context.Context, q ChangeQuery) ([]Change, error) {
	where := `f.run_id = ? AND f.changed = 1`
	args := []any{q.Run}
	if q.MinMagnitude > 0 {
		where += ` AND ifnull(f.magnitude, -1) >= ?`
		args = append(args, q.MinMagnitude)
	}
	if q.After != nil {
		where += ` AND (ifnull(f.magnitude, -1) < ? OR (ifnull(f.magnitude, -1) = ? AND f.id > ?))`
		args = append(args, q.After.Magnitude, q.After.Magnitude, q.After.FetchID)
	}
	if len(q.Hosts) > 0 {
		where += ` AND u.host IN (` + placeholders(len(q.Hosts)) + `)`
		for _, h := range q.Hosts {
			args = append(args, h)
		}
	}
	args = append(args, q.Limit)
	rows, err := db.sql.QueryContext(ctx, `SELECT f.id, f.url_id, u.url, coalesce(t.title, ''), f.fetched_at, coalesce(f.size, 0),
		ifnull(f.magnitude, -1), coalesce(f.archive_path, '') FROM fetches f INDEXED BY fetches_changes JOIN urls u ON u.id = f.url_id
		LEFT JOIN page_titles t ON t.url_id = f.url_id
		WHERE `+where+` ORDER BY ifnull(f.magnitude, -1) DESC, f.id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("changes of run %d: %w", q.Run, err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var at sql.NullString
		if err := rows.Scan(&c.FetchID, &c.URLID, &c.URL, &c.Title, &at, &c.Size, &c.Magnitude, &c.Path); err != nil {
			return nil, fmt.Errorf("changes of run %d: %w", q.Run, err)
		}
		c.FetchedAt = parseTime(at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// URLHit is a URL found by a search.
type URLHit struct {
	ID    int64
	URL   string
	Title string
	State string
}

// URLsWithPrefix returns up to limit URLs that start with prefix and sort after after, in order,
// from the url index.
func (db *DB) URLsWithPrefix(ctx context.Context, prefix, after string, limit int) ([]URLHit, error) {
	cond, args := `url >= ?`, []any{prefix}
	if after != "" && strings.HasPrefix(after, prefix) {
		cond, args = `url > ?`, []any{after}
	}
	if end, ok := prefixEnd(prefix); ok {
		cond += ` AND url < ?`
		args = append(args, end)
	}
	return db.urlHits(ctx, "URLs under "+prefix, `SELECT id, url, coalesce((SELECT title FROM page_titles WHERE url_id = id), ''), state
		FROM urls WHERE `+cond+` ORDER BY url LIMIT ?`,
		append(args, limit)...)
}

// prefixEnd returns the first string after every string that starts with p, if there is one.
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// URLsContaining looks for URLs containing sub (ASCII letters in any case) among the rows with ids
// in (after, after+window], in id order, and returns up to limit hits and the last id it examined.
// Bounding each call by an id window keeps a search for a rare string from reading the whole table
// in one request: the caller shows the hits and offers to go on from next. next is 0 when the
// window reached the last row.
func (db *DB) URLsContaining(ctx context.Context, sub string, after int64, window int64, limit int) (hits []URLHit, next int64, err error) {
	var maxID int64
	if err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM urls`).Scan(&maxID); err != nil {
		return nil, 0, fmt.Errorf("search URLs for %q: %w", sub, err)
	}
	end := min(after+window, maxID)
	pattern := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(sub) + "%"
	hits, err = db.urlHits(ctx, fmt.Sprintf("search URLs for %q", sub), `SELECT id, url, coalesce((SELECT title FROM page_titles WHERE url_id = id), ''), state FROM urls
		WHERE id > ? AND id <= ? AND url LIKE ? ESCAPE '\' ORDER BY id LIMIT ?`, after, end, pattern, limit)
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

func (db *DB) urlHits(ctx context.Context, op, query string, args ...any) ([]URLHit, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	var out []URLHit
	for rows.Next() {
		var h URLHit
		if err := rows.Scan(&h.ID, &h.URL, &h.Title, &h.State); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// DataVersion identifies the database's content for caches: it changes whenever a fetch or a run
// is recorded. It reads two rowid maxima, so it costs two index seeks.
func (db *DB) DataVersion(ctx context.Context) (string, error) {
	var f, r int64
	var ended sql.NullString
	err := db.sql.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(id), 0) FROM fetches), coalesce(max(id), 0),
		(SELECT ended_at FROM runs ORDER BY id DESC LIMIT 1) FROM runs`).Scan(&f, &r, &ended)
	if err != nil {
		return "", fmt.Errorf("data version: %w", err)
	}
	return fmt.Sprintf("%d/%d/%s", f, r, ended.String), nil
}

// PageCounts are a run's page events and 404s, as the index step recorded them.
type PageCounts struct {
	Known               bool // the index step has summarised the run
	New, Gone, Unlinked int
	NotFound            int // fetches answered 404 or 410
}

// RunPageCounts returns the page counts of runs (run ids); a run the index step has not
// summarised yet is absent.
func (db *DB) RunPageCounts(ctx context.Context, runs []int64) (map[int64]PageCounts, error) {
	out := map[int64]PageCounts{}
	if len(runs) == 0 {
		return out, nil
	}
	args := make([]any, len(runs))
	for i, r := range runs {
		args[i] = r
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT run_id, new, gone, unlinked, not_found FROM run_pages
		WHERE run_id IN (`+placeholders(len(runs))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("page counts of %d runs: %w", len(runs), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		c := PageCounts{Known: true}
		if err := rows.Scan(&id, &c.New, &c.Gone, &c.Unlinked, &c.NotFound); err != nil {
			return nil, fmt.Errorf("page counts of %d runs: %w", len(runs), err)
		}
		out[id] = c
	}
	return out, rows.Err()
}

// DomainPageCounts returns domain's new and gone pages and 404s in runs; a run without any is absent.
func (db *DB) DomainPageCounts(ctx context.Context, domain string, runs []int64) (map[int64]PageCounts, error) {
	out := map[int64]PageCounts{}
	if len(runs) == 0 {
		return out, nil
	}
	args := []any{domain}
	for _, r := range runs {
		args = append(args, r)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT run_id, new, gone, not_found FROM run_domain_pages
		WHERE domain = ? AND run_id IN (`+placeholders(len(runs))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("page counts of %s: %w", domain, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		c := PageCounts{Known: true}
		if err := rows.Scan(&id, &c.New, &c.Gone, &c.NotFound); err != nil {
			return nil, fmt.Errorf("page counts of %s: %w", domain, err)
		}
		out[id] = c
	}
	return out, rows.Err()
}

// PageEvent is a page that appeared, went or lost its links in a run.
type PageEvent struct {
	Kind    string // new, gone or unlinked
	URLID   int64
	URL     string
	Title   string
	State   string
	FetchID int64 // the fetch that showed it; 0 for unlinked
	RunID   int64
	At      time.Time // when that fetch was made; zero for unlinked
}

// EventQuery selects the page events of one kind in one run, in URL id order after After.
type EventQuery struct {
	Run   int64
	Kind  string
	Hosts []string // only these host[:port]s; none: every host
	After int64    // URL id
	Limit int
}

// PageEvents lists the events q selects, from the primary key of page_events.
func (db *DB) PageEvents(ctx context.Context, q EventQuery) ([]PageEvent, error) {
	where := `e.run_id = ? AND e.kind = ? AND e.url_id > ?`
	args := []any{q.Run, q.Kind, q.After}
	if len(q.Hosts) > 0 {
		where += ` AND u.host IN (` + placeholders(len(q.Hosts)) + `)`
		for _, h := range q.Hosts {
			args = append(args, h)
		}
	}
	return db.pageEvents(ctx, fmt.Sprintf("%s pages of run %d", q.Kind, q.Run), where+` ORDER BY e.url_id LIMIT ?`,
		append(args, q.Limit)...)
}

// URLEvents returns up to limit events of one page, the newest first.
func (db *DB) URLEvents(ctx context.Context, urlID int64, limit int) ([]PageEvent, error) {
	return db.pageEvents(ctx, fmt.Sprintf("events of URL %d", urlID), `e.url_id = ? ORDER BY e.run_id DESC LIMIT ?`, urlID, limit)
}

// EventsAmong returns the kinds of the events of the given URLs in run, by URL id: the site tree
// marks new, gone and unlinked pages with them.
func (db *DB) EventsAmong(ctx context.Context, run int64, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 || run == 0 {
		return out, nil
	}
	args := []any{run}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT url_id, kind FROM page_events WHERE run_id = ?
		AND url_id IN (`+placeholders(len(ids))+`) ORDER BY kind`, args...)
	if err != nil {
		return nil, fmt.Errorf("events of run %d: %w", run, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var kind string
		if err := rows.Scan(&id, &kind); err != nil {
			return nil, fmt.Errorf("events of run %d: %w", run, err)
		}
		out[id] = append(out[id], kind)
	}
	return out, rows.Err()
}

func (db *DB) pageEvents(ctx context.Context, op, cond string, args ...any) ([]PageEvent, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT e.kind, e.url_id, u.url, coalesce(t.title, ''), u.state, coalesce(e.fetch_id, 0),
		e.run_id, f.fetched_at FROM page_events e JOIN urls u ON u.id = e.url_id LEFT JOIN page_titles t ON t.url_id = e.url_id
		LEFT JOIN fetches f ON f.id = e.fetch_id WHERE `+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	var out []PageEvent
	for rows.Next() {
		var e PageEvent
		var at sql.NullString
		if err := rows.Scan(&e.Kind, &e.URLID, &e.URL, &e.Title, &e.State, &e.FetchID, &e.RunID, &at); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		e.At = parseTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// PageMark is what the lists show of a page besides its URL.
type PageMark struct {
	Title string
	State string
}

// PageMarks returns the title and state of each of ids.
func (db *DB) PageMarks(ctx context.Context, ids []int64) (map[int64]PageMark, error) {
	out := map[int64]PageMark{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT u.id, coalesce(t.title, ''), u.state FROM urls u
		LEFT JOIN page_titles t ON t.url_id = u.id WHERE u.id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("titles of %d pages: %w", len(ids), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var m PageMark
		if err := rows.Scan(&id, &m.Title, &m.State); err != nil {
			return nil, fmt.Errorf("titles of %d pages: %w", len(ids), err)
		}
		out[id] = m
	}
	return out, rows.Err()
}

// TextHit is a stored version whose text or title matches a full-text search.
type TextHit struct {
	FetchID   int64
	URLID     int64
	URL       string
	Title     string
	State     string
	RunID     int64
	FetchedAt time.Time
	Current   bool    // the page's newest stored version
	Score     float64 // bm25: lower is better
	Snippet   string  // the text around the match, with marks (see SnippetOpen)
}

// Marks around the matched words in TextHit.Snippet: control characters that no extracted text
// holds, so that the caller can escape the snippet and then mark the words.
const (
	SnippetOpen  = "\x02"
	SnippetClose = "\x03"
)

// TextQuery is a full-text search: its match, the hosts it is limited to (none: all), and After,
// the keyset cursor (the last hit of the previous page).
type TextQuery struct {
	Match TextMatch
	Hosts []string
	After *TextHit
	Limit int
}

// ErrBadQuery wraps a full-text search that has no word to look for, or that an index refuses.
var ErrBadQuery = errors.New("bad search query")

// SearchText returns up to limit versions matching q, the best first (bm25, a title match weighing
// five times a text match), ties by fetch id. Ranking reads every match, as any ranked search must;
// each page after the first continues from the cursor. It ranks first and cuts snippets only for the
// versions it returns: a snippet costs a pass over the version's text.
func (db *DB) SearchText(ctx context.Context, q TextQuery) ([]TextHit, error) {
	const score = `bm25(version_text, 5.0, 1.0)`
	if len(q.Match.All) == 0 {
		return nil, fmt.Errorf("search the text: %w: no word to look for", ErrBadQuery)
	}
	match := q.Match.String()
	where := `version_text MATCH ?`
	args := []any{match}
	if q.After != nil {
		where += ` AND (` + score + ` > ? OR (` + score + ` = ? AND v.rowid > ?))`
		args = append(args, q.After.Score, q.After.Score, q.After.FetchID)
	}
	from := `version_text v`
	if len(q.Hosts) > 0 {
		from += ` JOIN urls u ON u.id = v.url_id`
		where += ` AND u.host IN (` + placeholders(len(q.Hosts)) + `)`
		for _, h := range q.Hosts {
			args = append(args, h)
		}
	}
	args = append(args, q.Limit)
	op := fmt.Sprintf("search the text for %s", match)
	rows, err := db.sql.QueryContext(ctx, `SELECT v.rowid, `+score+` AS score FROM `+from+`
		WHERE `+where+` ORDER BY score, v.rowid LIMIT ?`, args...)
	if err != nil {
		if strings.Contains(err.Error(), "fts5") || strings.Contains(err.Error(), "syntax error") {
			return nil, fmt.Errorf("%s: %w: %v", op, ErrBadQuery, err)
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var out []TextHit
	at := map[int64]int{}
	for rows.Next() {
		var h TextHit
		if err := rows.Scan(&h.FetchID, &h.Score); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		at[h.FetchID] = len(out)
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if len(out) == 0 {
		return out, nil
	}
	args = []any{match}
	for _, h := range out {
		args = append(args, h.FetchID)
	}
	rows, err = db.sql.QueryContext(ctx, `SELECT v.rowid, u.id, u.url, v.title, u.state, coalesce(f.run_id, 0), f.fetched_at,
		NOT EXISTS (SELECT 1 FROM fetches n WHERE n.url_id = u.id AND n.id > v.rowid AND n.archive_path IS NOT NULL),
		snippet(version_text, 1, '`+SnippetOpen+`', '`+SnippetClose+`', '…', 24)
		FROM version_text v JOIN urls u ON u.id = v.url_id JOIN fetches f ON f.id = v.rowid
		WHERE version_text MATCH ? AND v.rowid IN (`+placeholders(len(out))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var h TextHit
		var when sql.NullString
		if err := rows.Scan(&h.FetchID, &h.URLID, &h.URL, &h.Title, &h.State, &h.RunID, &when, &h.Current, &h.Snippet); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		h.FetchedAt = parseTime(when)
		i := at[h.FetchID]
		h.Score = out[i].Score
		out[i] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// IndexCoverage says how much of the archive the full-text index covers: the fetch id it reaches
// and the newest fetch id.
func (db *DB) IndexCoverage(ctx context.Context) (upto, newest int64, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT (SELECT fetch_upto FROM text_index WHERE one = 1),
		(SELECT coalesce(max(id), 0) FROM fetches WHERE archive_path IS NOT NULL)`).Scan(&upto, &newest)
	if err != nil {
		return 0, 0, fmt.Errorf("text index coverage: %w", err)
	}
	return upto, newest, nil
}

// LastSummarizedRun returns the newest run whose page events are recorded, 0 if none.
func (db *DB) LastSummarizedRun(ctx context.Context) (int64, error) {
	var id int64
	if err := db.sql.QueryRowContext(ctx, `SELECT coalesce(max(run_id), 0) FROM run_pages`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last summarised run: %w", err)
	}
	return id, nil
}

// OriginDomain returns the politeness domain of origin (scheme://host[:port]), "" when strata has
// never contacted it.
func (db *DB) OriginDomain(ctx context.Context, origin string) (string, error) {
	var d string
	err := db.sql.QueryRowContext(ctx, `SELECT domain FROM hosts WHERE origin = ?`, origin).Scan(&d)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("domain of %s: %w", origin, err)
	}
	return d, nil
}
