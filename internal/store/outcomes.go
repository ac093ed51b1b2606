package store

import (
	"context"
	"fmt"

	"github.com/strata-crawler/strata/internal/outcome"
)

// firstOf is the SQL for "the fetch (table alias a) stored its page's first version": no earlier
// fetch of the page stored one. fetches_url (url_id, id) answers it with one probe.
func firstOf(a string) string {
	return `(` + a + `.archive_path IS NOT NULL AND NOT EXISTS (SELECT 1 FROM fetches g
		WHERE g.url_id = ` + a + `.url_id AND g.id < ` + a + `.id AND g.archive_path IS NOT NULL))`
}

// factsOf is the SQL for the columns outcome.Fetch is made of, of the fetch with table alias a, in
// the order scanFacts reads them.
func factsOf(a string) string {
	return a + `.status, ` + a + `.changed, ` + a + `.not_modified, ` + a + `.error IS NOT NULL, ` +
		a + `.archive_path IS NOT NULL, ` + firstOf(a)
}

// factDests are the scan destinations of factsOf's columns.
func factDests(f *outcome.Fetch) []any {
	return []any{&f.Status, &f.Changed, &f.NotModified, &f.Failed, &f.Stored, &f.First}
}

// RunOutcomes counts the kinds of run's fetches (package outcome): the counts the run's summary
// prints and its row in runs keeps, so that every report of the run agrees. It reads the run's
// fetches through fetches_run, and for each stored version one probe of fetches_url.
func (db *DB) RunOutcomes(ctx context.Context, run int64) (outcome.Counts, error) {
	var c outcome.Counts
	rows, err := db.sql.QueryContext(ctx, `SELECT `+factsOf("f")+` FROM fetches f WHERE f.run_id = ?`, run)
	if err != nil {
		return c, fmt.Errorf("count the outcomes of run %d: %w", run, err)
	}
	defer rows.Close()
	for rows.Next() {
		var f outcome.Fetch
		if err := rows.Scan(factDests(&f)...); err != nil {
			return c, fmt.Errorf("count the outcomes of run %d: %w", run, err)
		}
		c.Add(f)
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("count the outcomes of run %d: %w", run, err)
	}
	return c, nil
}

// SetOutcomes sets a run's counts from its outcomes.
func (r *Run) SetOutcomes(c outcome.Counts) {
	r.Fetched, r.New, r.Changed, r.Unchanged, r.NotModified = c.Fetched, c.New, c.Changed, c.Unchanged, c.NotModified
	r.Errors, r.NotFound = c.Errors, c.NotFound
}

// Facts are what the fetch's row says about its outcome.
func (h HistoryEntry) Facts() outcome.Fetch {
	return outcome.Fetch{Status: h.Status, Changed: h.Changed, NotModified: h.NotModified, Failed: h.Error != "",
		Stored: h.Stored != "", First: h.First}
}

// Facts are what the fetch's row says about its outcome.
func (f Fetch) Facts() outcome.Fetch {
	return outcome.Fetch{Status: f.Status, Changed: f.Changed, NotModified: f.NotModified, Failed: f.Error != "",
		Stored: f.Path != "", First: f.First}
}

// Kind is the outcome of the fetch that stored the version: new, changed, or unchanged (new bytes,
// the same words).
func (v Version) Kind() outcome.Kind {
	return outcome.Of(outcome.Fetch{Status: 200, Changed: v.Changed, Stored: true, First: v.First})
}
