package cli_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/testweb"
)

// 404 and 410 answers, and the pages marked gone, are counted in the run's summary, in status and
// in status --json (issue 18, item 6: they appeared in no run column).
func TestGoneIsCounted(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", "<p>here</p>")
	s.Handle("/deleted", testweb.Status(http.StatusGone))
	s.Handle("/missing", testweb.Status(http.StatusNotFound))
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", s.URL("/"), s.URL("/deleted"), s.URL("/missing"))
	out := e.mustRun("run")
	if !strings.Contains(out, "0 errors, 2 not found (404 or 410), 1 page marked gone") {
		t.Errorf("the run's summary does not count the 404 and 410 answers and the page marked gone:\n%s", out)
	}
	status := e.mustRun("status")
	if !strings.Contains(status, "404/410") || !strings.Contains(status, "gone               1") {
		t.Errorf("status:\n%s", status)
	}
	var st struct {
		URLs map[string]int `json:"urls"`
		Runs []struct {
			NotFound int `json:"not_found"`
			Gone     int `json:"gone"`
			Errors   int `json:"errors"`
		} `json:"runs"`
		DueNextRun int `json:"due_next_run"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 || st.Runs[0].NotFound != 2 || st.Runs[0].Gone != 1 || st.Runs[0].Errors != 0 || st.URLs["gone"] != 1 {
		t.Errorf("status --json: %+v; want 2 not found, 1 gone, no error, one URL gone", st)
	}
	if out := e.mustRun("explain", s.URL("/missing")); !strings.Contains(out, "due: its last fetch answered 404") {
		t.Errorf("explain of the page that answered 404:\n%s", out)
	}
	if st.DueNextRun != 2 {
		t.Errorf("due next run: %d, want the page and the one that answered 404", st.DueNextRun)
	}
}
