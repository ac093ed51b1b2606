package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-crawler/strata/internal/notify"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestRunIndexesAndNotifies runs the cycle with a webhook configured: the index step fills the text
// index (so strata index finds nothing left), the webhook hears of the new pages, and a failing
// webhook leaves the run's exit code alone.
func TestRunIndexesAndNotifies(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", `<title>Home</title><a href="/a">a</a>`)
	s.Page("/a", "<title>A</title><p>alpha</p>")
	var fail atomic.Bool
	hook, got := webhook(t, &fail)
	e := newEnv(t, loopbackConfig+"\n[notify]\nwebhook = \""+hook+"\"\nwhen = \"always\"\n")
	e.mustRun("seed", "add", "--level", "1", s.URL("/"))
	e.mustRun("run")
	select {
	case sum := <-got:
		if sum.Run != 1 || sum.New != 2 || len(sum.Pages) != 2 || sum.Pages[0].Kind != "new" {
			t.Errorf("webhook summary %+v, want run 1 with its 2 new pages", sum)
		}
	default:
		t.Fatal("the webhook was not called")
	}
	if out := e.mustRun("index"); !strings.Contains(out, "index: 0 versions") || !strings.Contains(out, "0 runs") {
		t.Errorf("index after a run: %q, want nothing left to do", out)
	}
	if out := e.mustRun("index", "--rebuild"); !strings.Contains(out, "index: 2 versions") || !strings.Contains(out, "1 run") {
		t.Errorf("index --rebuild: %q, want the 2 versions and 1 run again", out)
	}
	fail.Store(true)
	e.mustRun("run") // exits 0 although the webhook answers 503
	if len(got) != 1 {
		t.Errorf("the second run called the webhook %d times, want 1", len(got))
	}
}

// webhook serves a webhook on loopback until t ends, and returns its URL and the summaries it
// receives; while fail (if not nil) is set, it answers 503.
func webhook(t *testing.T, fail *atomic.Bool) (string, chan notify.Summary) {
	got := make(chan notify.Summary, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sum notify.Summary
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &sum); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
		got <- sum
		if fail != nil && fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(hook.Close)
	return hook.URL + "/strata", got
}

func TestBadWebhookIsAConfigError(t *testing.T) {
	e := newEnv(t, "[notify]\nwebhook = \"ftp://example.test/x\"\n")
	if _, errs, code := e.run("config", "check"); code != 2 || !strings.Contains(errs, "notify.webhook") {
		t.Errorf("config check with an ftp webhook: exit %d, %q", code, errs)
	}
}

// TestNotifyOnPostgres: with database.url the webhook hears of each run, from strata run and,
// once per run, from a fleet worker, with the new pages the PostgreSQL store recorded.
func TestNotifyOnPostgres(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", `<title>Home</title><a href="/a">a</a>`)
	s.Page("/a", "<title>A</title><p>alpha</p>")
	hook, got := webhook(t, nil)
	hooks := "\n[notify]\nwebhook = \"" + hook + "\"\n"
	for _, args := range [][]string{{"run"}, {"run", "--worker"}} {
		e := newEnv(t, "url = \""+pgtest.URL(t)+"\"\n"+loopbackConfig+hooks)
		e.mustRun("seed", "add", "--level", "1", s.URL("/"))
		e.mustRun(args...)
		select {
		case sum := <-got:
			if sum.Run != 1 || sum.New != 2 || len(sum.Pages) != 2 || sum.Pages[0].Kind != "new" {
				t.Errorf("strata %v: webhook summary %+v; want run 1 with its 2 new pages", args, sum)
			}
		default:
			t.Fatalf("strata %v: the webhook was not called", args)
		}
		if len(got) != 0 {
			t.Errorf("strata %v called the webhook %d more times; want once", args, len(got))
		}
	}
}
