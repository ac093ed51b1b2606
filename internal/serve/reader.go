package serve

import (
	"context"

	"github.com/strata-crawler/strata/internal/store"
)

// Reader is everything the server reads from the database, grouped by the views that read it. The
// SQLite store (internal/store) and the PostgreSQL one (internal/pgstore) both provide it. Every
// method only reads, is called concurrently, and returns an error wrapping store.ErrNotFound where
// it names a row that does not exist; lists come in the order each method's comment gives, and a
// keyset cursor (after, before) continues exactly where the previous page stopped.
type Reader interface {
	RunReader
	SiteReader
	PageReader
	URLSearcher
}

// RunReader serves the run list, a run's changes and page events, and the Atom feeds.
type RunReader interface {
	Runs(ctx context.Context, before int64, limit int) ([]store.Run, error)
	RunByID(ctx context.Context, id int64) (store.Run, error)
	RunPageCounts(ctx context.Context, runs []int64) (map[int64]store.PageCounts, error)
	Changes(ctx context.Context, q store.ChangeQuery) ([]store.Change, error)
	PageEvents(ctx context.Context, q store.EventQuery) ([]store.PageEvent, error)
	LastSummarizedRun(ctx context.Context) (int64, error)
	// DataVersion changes whenever a fetch or a run is recorded: the key of the server's caches.
	DataVersion(ctx context.Context) (string, error)
}

// SiteReader serves the site list, a site's summary and its path tree.
type SiteReader interface {
	Domains(ctx context.Context, after string, limit int) ([]string, error)
	DomainOrigins(ctx context.Context, domain string) ([]store.Origin, error)
	OriginDomain(ctx context.Context, origin string) (string, error)
	HostURLs(ctx context.Context, host string) (int, error)
	DomainRuns(ctx context.Context, domain string, runs []int64) ([]store.DomainRun, error)
	DomainPageCounts(ctx context.Context, domain string, runs []int64) (map[int64]store.PageCounts, error)
	DomainTraps(ctx context.Context, domain string, limit int) ([]store.TrapEvent, int, error)
	Tree(ctx context.Context, prefix, after string, limit int) ([]store.TreeEntry, error)
	EventsAmong(ctx context.Context, run int64, ids []int64) (map[int64][]string, error)
	URLID(ctx context.Context, url string) (int64, error)
}

// PageReader serves one page's view: its row, fetches, versions, events and links.
type PageReader interface {
	URLByID(ctx context.Context, id int64) (string, error)
	URLInfo(ctx context.Context, url string) (*store.URLInfo, error)
	Fetches(ctx context.Context, urlID, before int64, limit int) ([]store.Fetch, error)
	FetchByID(ctx context.Context, id int64) (store.Fetch, error)
	StoredVersions(ctx context.Context, urlID int64, limit int) ([]store.Fetch, error)
	LatestVersion(ctx context.Context, urlID int64) (store.Fetch, error)
	VersionBefore(ctx context.Context, urlID, fetch int64) (store.Fetch, error)
	URLEvents(ctx context.Context, urlID int64, limit int) ([]store.PageEvent, error)
	PageMarks(ctx context.Context, ids []int64) (map[int64]store.PageMark, error)
	LinksOut(ctx context.Context, fromID int64, after string, limit int) ([]store.LinkOut, error)
	LinksIn(ctx context.Context, toID, after int64, limit int) ([]store.LinkIn, error)
}

// URLSearcher finds URLs by prefix and by substring.
type URLSearcher interface {
	URLsWithPrefix(ctx context.Context, prefix, after string, limit int) ([]store.URLHit, error)
	URLsContaining(ctx context.Context, sub string, after, window int64, limit int) ([]store.URLHit, int64, error)
}

// TextSearcher is the full-text index, which only a database that keeps one provides (SQLite's
// FTS5 table, PostgreSQL's tsvector table, both filled by the index step); without it the search
// page says so and searches URLs.
type TextSearcher interface {
	SearchText(ctx context.Context, q store.TextQuery) ([]store.TextHit, error)
	// IndexCoverage is the fetch id the index reaches and the newest stored fetch id.
	IndexCoverage(ctx context.Context) (upto, newest int64, err error)
}

// VersionHomes says where a fleet worker archived a version: a database that workers on many
// machines share (PostgreSQL) knows, for each version one of them recorded, the worker and its
// archive root. ok is false for a version no fleet worker recorded.
type VersionHomes interface {
	Home(ctx context.Context, run int64, archivePath string) (worker, root string, ok bool, err error)
}

var (
	_ Reader       = (*store.DB)(nil)
	_ TextSearcher = (*store.DB)(nil)
)
