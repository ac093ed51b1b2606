package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// Reach looks up whether each due URL was fetched in the run by the URL, never by scanning the
// run's fetches once per due URL: that plan is quadratic in the size of a first crawl.
func TestReachLooksUpFetchesByURL(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "strata.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, only := range [][]int64{nil, {4, 5, 6}} {
		q, args := reachQuery(1, only)
		rows, err := db.sql.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		found := false
		for _, step := range plan {
			if strings.HasPrefix(step, "SEARCH f ") {
				found = true
				if !strings.Contains(step, "fetches_url (url_id=?)") {
					t.Errorf("only %v: the run's fetches are searched %q, want by URL:\n%s", only, step, strings.Join(plan, "\n"))
				}
			}
		}
		if !found {
			t.Errorf("only %v: no search of the fetches in the plan:\n%s", only, strings.Join(plan, "\n"))
		}
	}
}
