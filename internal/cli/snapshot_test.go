package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/testweb"
)

// TestSnapshotEveryRun is issue 21's item 11: a page edited before each of runs 2, 3 and 4 is
// captured in each of them when its seed asks for a snapshot every run, while the same site under
// an ordinary seed, whose pages wait their revisit interval (3 runs here), keeps only the last
// edit.
func TestSnapshotEveryRun(t *testing.T) {
	web := testweb.New(t)
	snap, plain := web.AddSite(t), web.AddSite(t)
	e := newEnv(t, loopbackConfig+"[seed]\nfr_max = 3\n[frequency]\nmin = 3\n")
	edit := func(n int) {
		for _, s := range []*testweb.Site{snap, plain} {
			s.Page("/", `<p>the front page</p><a href="/page">page</a>`)
			s.Page("/page", fmt.Sprintf("<p>edition %d: %s</p>", n, strings.Repeat("news ", n)))
		}
	}
	edit(1)
	if out := e.mustRun("seed", "add", "--level", "1", "--snapshot", snap.URL("/")); !strings.Contains(out, "a snapshot every run") {
		t.Errorf("seed add --snapshot printed %q", out)
	}
	e.mustRun("seed", "add", "--level", "1", plain.URL("/"))
	for run := 1; run <= 4; run++ {
		if run > 1 {
			edit(run)
		}
		e.mustRun("run")
	}
	versions := func(s *testweb.Site) (runs []int) {
		var rows []struct {
			Run    int  `json:"run"`
			Stored bool `json:"stored"`
		}
		if err := json.Unmarshal([]byte(e.mustRun("history", "--json", s.URL("/page"))), &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Stored {
				runs = append(runs, r.Run)
			}
		}
		return runs
	}
	if got := fmt.Sprint(versions(snap)); got != "[1 2 3 4]" {
		t.Errorf("the snapshot seed's page has versions from runs %s, want every run: [1 2 3 4]", got)
	}
	if got := fmt.Sprint(versions(plain)); got != "[1 4]" {
		t.Errorf("the ordinary seed's page has versions from runs %s, want [1 4] (fr_max 3)", got)
	}
	if list := e.mustRun("seed", "list"); !strings.Contains(list, "every run") {
		t.Errorf("seed list does not show the snapshot:\n%s", list)
	}
	if ex := e.mustRun("explain", snap.URL("/page")); !strings.Contains(ex, "snapshot every run") {
		t.Errorf("explain does not say why the page is due:\n%s", ex)
	}
	// Off again: the seed's pages go back to their intervals.
	if out := e.mustRun("seed", "add", "--snapshot=false", snap.URL("/")); !strings.Contains(out, "a snapshot every run off") {
		t.Errorf("seed add --snapshot=false printed %q", out)
	}
}
