package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// HistoryEntry is one fetch of a page, for strata history.
type HistoryEntry struct {
	FetchID     int64
	RunID       int64
	FetchedAt   time.Time
	Status      int
	Size        int64
	Changed     bool
	Magnitude   float64 // share of the text that changed, 0..1; -1 when not known
	NotModified bool
	Error       string
	Stored      string // the version this fetch stored, "" if it stored none
	First       bool   // Stored is the page's first version
	Current     string // the version current after this fetch
	Pruned      bool   // Current's files were removed by archive.keep
	TextMode    string // how the text was extracted: "main", "full", "fallback"; "" if none was (FetchRecord.TextMode)
}

// History returns every fetch of url (normalised), oldest first, or an error wrapping ErrNotFound if
// strata does not know the URL.
func (db *DB) History(ctx context.Context, url string) ([]HistoryEntry, error) {
	var id int64
	if err := db.sql.QueryRowContext(ctx, `SELECT id FROM urls WHERE url = ?`, url).Scan(&id); err == sql.ErrNoRows {
		return nil, fmt.Errorf("history of %s: %w (strata has never seen this URL)", url, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("history of %s: %w", url, err)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT id, coalesce(run_id, 0), fetched_at, status, coalesce(size, 0), changed,
		not_modified, coalesce(error, ''), coalesce(archive_path, ''), pruned_at IS NOT NULL, coalesce(magnitude, -1),
		coalesce(text_mode, '') FROM fetches WHERE url_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", url, err)
	}
	defer rows.Close()
	var out []HistoryEntry
	current, pruned := "", false
	for rows.Next() {
		var h HistoryEntry
		var at sql.NullString
		var p bool
		if err := rows.Scan(&h.FetchID, &h.RunID, &at, &h.Status, &h.Size, &h.Changed, &h.NotModified, &h.Error, &h.Stored, &p, &h.Magnitude, &h.TextMode); err != nil {
			return nil, fmt.Errorf("history of %s: %w", url, err)
		}
		h.FetchedAt = parseTime(at)
		if h.Stored != "" {
			h.First = current == ""
			current, pruned = h.Stored, p
		}
		h.Current, h.Pruned = current, pruned
		out = append(out, h)
	}
	return out, rows.Err()
}

// Version is one stored version of a page.
type Version struct {
	FetchID     int64 // the fetch that stored it
	URL         string
	RunID       int64
	FetchedAt   time.Time
	ContentHash string
	Changed     bool // false for the first version
	First       bool // the page's first stored version
	Path        string
}

// VersionFilter selects versions for EachVersion; zero fields select everything.
type VersionFilter struct {
	URL   string
	Since time.Time
	RunID int64
	Host  string
}

// EachVersion calls fn for every stored, unpruned version that f selects, oldest first, streaming from the
// database so that memory stays constant however large the archive. fn's error stops the walk and is
// returned.
func (db *DB) EachVersion(ctx context.Context, f VersionFilter, fn func(Version) error) error {
	q := `SELECT f.id, u.url, coalesce(f.run_id, 0), f.fetched_at, coalesce(f.content_hash, ''), f.changed, f.archive_path,
		` + firstOf("f") + `
		FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.archive_path IS NOT NULL AND f.pruned_at IS NULL`
	var args []any
	if f.URL != "" {
		q += ` AND u.url = ?`
		args = append(args, f.URL)
	}
	if !f.Since.IsZero() {
		q += ` AND f.fetched_at >= ?`
		args = append(args, formatTime(f.Since))
	}
	if f.RunID != 0 {
		q += ` AND f.run_id = ?`
		args = append(args, f.RunID)
	}
	if f.Host != "" {
		q += ` AND u.host = ?`
		args = append(args, f.Host)
	}
	rows, err := db.sql.QueryContext(ctx, q+` ORDER BY f.id`, args...)
	if err != nil {
		return fmt.Errorf("list versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v Version
		var at sql.NullString
		if err := rows.Scan(&v.FetchID, &v.URL, &v.RunID, &at, &v.ContentHash, &v.Changed, &v.Path, &v.First); err != nil {
			return fmt.Errorf("list versions: %w", err)
		}
		v.FetchedAt = parseTime(at)
		if err := fn(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Prunable lists the stored versions fetched before cutoff that are not their page's current version
// and not pruned already, oldest first.
func (db *DB) Prunable(ctx context.Context, cutoff time.Time) ([]Version, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT f.id, u.url, coalesce(f.run_id, 0), f.fetched_at, coalesce(f.content_hash, ''),
		f.changed, f.archive_path
		FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE f.archive_path IS NOT NULL AND f.pruned_at IS NULL AND f.fetched_at < ?
		  AND f.id <> (SELECT max(g.id) FROM fetches g WHERE g.url_id = f.url_id AND g.archive_path IS NOT NULL)
		ORDER BY f.id`, formatTime(cutoff))
	if err != nil {
		return nil, fmt.Errorf("list prunable versions: %w", err)
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		var at sql.NullString
		if err := rows.Scan(&v.FetchID, &v.URL, &v.RunID, &at, &v.ContentHash, &v.Changed, &v.Path); err != nil {
			return nil, fmt.Errorf("list prunable versions: %w", err)
		}
		v.FetchedAt = parseTime(at)
		out = append(out, v)
	}
	return out, rows.Err()
}
