package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/strata-crawler/strata/internal/outcome"
)

// HasArchivePath reports whether a fetch records the version at rel.
func (db *DB) HasArchivePath(ctx context.Context, rel string) (bool, error) {
	var one int
	err := db.sql.QueryRowContext(ctx, `SELECT 1 FROM fetches WHERE archive_path = ? LIMIT 1`, rel).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up archive path %s: %w", rel, err)
	}
	return true, nil
}

// ManifestEntry is one page crawled in a run, for the run's manifest.
type ManifestEntry struct {
	URL     string
	Outcome string // the fetch's outcome.Kind (new, changed, unchanged, not_modified, not_found, redirect, error), or http_<status> for another status
	Current string // archive path of the page's current version, "" if none
}

// RunManifest calls fn with each page crawled in a run, in the order they were crawled, one row
// at a time: a run of a million pages is not held in memory. An error from fn stops it.
func (db *DB) RunManifest(ctx context.Context, runID int64, fn func(ManifestEntry) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT u.url, `+factsOf("f")+`,
		(SELECT g.archive_path FROM fetches g WHERE g.url_id = f.url_id AND g.archive_path IS NOT NULL AND g.id <= f.id
		 ORDER BY g.id DESC LIMIT 1)
		FROM fetches f JOIN urls u ON u.id = f.url_id WHERE f.run_id = ? ORDER BY f.id`, runID)
	if err != nil {
		return fmt.Errorf("manifest of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e ManifestEntry
		var f outcome.Fetch
		var current sql.NullString
		if err := rows.Scan(append(append([]any{&e.URL}, factDests(&f)...), &current)...); err != nil {
			return fmt.Errorf("manifest of run %d: %w", runID, err)
		}
		e.Current = current.String
		e.Outcome = ManifestOutcome(f)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("manifest of run %d: %w", runID, err)
	}
	return nil
}

// ManifestOutcome is what a run's manifest says of fetch f: its outcome.Kind, or http_<status>
// for a status no kind names.
func ManifestOutcome(f outcome.Fetch) string {
	if k := outcome.Of(f); k != outcome.Other {
		return string(k)
	}
	return fmt.Sprintf("http_%d", f.Status)
}

// ArchivePaths returns the archive paths of a URL's stored versions, oldest first.
func (db *DB) ArchivePaths(ctx context.Context, url string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT f.archive_path FROM fetches f JOIN urls u ON u.id = f.url_id
		WHERE u.url = ? AND f.archive_path IS NOT NULL ORDER BY f.id`, url)
	if err != nil {
		return nil, fmt.Errorf("archive paths of %s: %w", url, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
