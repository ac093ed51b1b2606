package cli_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestProgressBar is issue 21's item 9 on a (pretended) terminal: a run that its budget ends draws
// its bar up to 100%, with an ETA on the way, and the log lines of the crawl never share a line
// with the bar.
func TestProgressBar(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	e := newEnv(t, loopbackConfig+"[optimizer]\nbudget = 4\n")
	var seeds []string
	for i := range 10 {
		p := fmt.Sprintf("/p%d", i)
		s.Page(p, fmt.Sprintf("<p>page %d</p>", i))
		seeds = append(seeds, s.URL(p))
	}
	e.mustRun(append([]string{"seed", "add", "--level", "0"}, seeds...)...)
	cli.PretendTerminal(t, true)
	var out, errb bytes.Buffer
	if err := cli.Run(t.Context(), []string{"--config", e.config, "--log-level", "debug", "crawl"}, &out, &errb); err != nil {
		t.Fatalf("crawl: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "Budget 4 pages") {
		t.Fatalf("the budget did not end the run: %s", out.String())
	}
	// What a terminal shows: each line is what follows its last carriage return.
	var screen []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if i := strings.LastIndex(l, "\r"); i >= 0 {
			l = strings.TrimPrefix(l[i+1:], "\x1b[K")
		}
		screen = append(screen, l)
	}
	bars, logs := 0, 0
	for _, l := range screen {
		isBar := strings.HasPrefix(l, "crawling [") || strings.HasPrefix(l, "crawled  [")
		if isBar {
			bars++
		}
		if strings.Contains(l, "level=") {
			logs++
			if !strings.HasPrefix(l, "time=") {
				t.Errorf("a log line printed into the bar: %q", l)
			}
		}
	}
	if bars == 0 || logs == 0 {
		t.Fatalf("%d bar lines and %d log lines on the screen:\n%q", bars, logs, errb.String())
	}
	final := ""
	for _, l := range screen {
		if strings.HasPrefix(l, "crawled  [") {
			final = l
		}
	}
	if !strings.Contains(final, "] 100% 4/4 ·") {
		t.Errorf("the bar's last state %q; want 100%% of the 4 pages the budget allowed\n%q", final, errb.String())
	}
	if strings.Count(errb.String(), "\x1b[") != strings.Count(errb.String(), "\x1b[K") {
		t.Errorf("the bar writes escape sequences other than erasing its line: %q", errb.String())
	}
}
