package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/testweb"
)

// fleetBudgetBound is how far a fleet's page fetches in a run may fall short of optimizer.budget
// without a worker killed: a worker that finds the run's account empty ends its stage while each
// other worker may still hold the unused part of a reserved block (crawler's maxBlock − 1). The cap
// itself is exact.
const fleetBudgetBound = 2 * (8 - 1)

// TestFleetBudget runs 3 workers with optimizer.budget below the due count: the budget is the
// run's, so the fleet fetches at most the budget in all (not 3 × it) and, short of the bound, no
// less; and never-fetched URLs take their share of it (new_share) and no more while known pages
// are due.
func TestFleetBudget(t *testing.T) {
	const sites, pages, budget, share, newPerSite = 6, 10, 30, 0.2, 5
	const newCap = 6 // ⌈share × budget⌉
	dbURL := pgtest.URL(t)
	web := testweb.New(t)
	var all []string
	siteList := web.AddSites(t, sites)
	for i, s := range siteList {
		var links strings.Builder
		for p := 1; p < pages; p++ {
			fmt.Fprintf(&links, `<a href="/p%d">p%d</a> `, p, p)
			s.Page(fmt.Sprintf("/p%d", p), fmt.Sprintf("<p>site %d page %d</p>", i, p))
			all = append(all, s.URL(fmt.Sprintf("/p%d", p)))
		}
		s.Page("/", "<p>home</p> "+links.String())
	}
	var homes []string
	for _, s := range siteList {
		homes = append(homes, s.URL("/"))
	}
	dir, cfgs := fleetDir(t, dbURL, homes, 3)
	args := append([]string{"--config", cfgs[0], "seed", "add", "--level", "0"}, all...)
	if out, err := strataCmd(dir, args...).CombinedOutput(); err != nil {
		t.Fatalf("seed add: %v\n%s", err, out)
	}
	// Every page every run (the uniform policy), so that run 2 has known pages due.
	for _, cfg := range cfgs {
		appendFile(t, cfg, "[frequency]\npolicy = \"uniform\"\n")
	}
	// Run 1, one worker, no budget: every page becomes known.
	if err := waitWorker(t, startWorkers(t, dir, cfgs[:1])[0]); err != nil {
		t.Fatalf("run 1: %v\n%s", err, workerOutput(t, dir, 0))
	}
	if n := queryInt(t, dbURL, `SELECT count(DISTINCT url_id) FROM fetches WHERE run_id = 1 AND status = 200`); n != sites*pages {
		t.Fatalf("run 1 fetched %d pages, want all %d", n, sites*pages)
	}
	// Run 2: new pages besides the 60 known, and a budget for the 3 workers.
	var fresh []string
	for _, s := range siteList {
		for q := range newPerSite {
			s.Page(fmt.Sprintf("/q%d", q), "<p>new</p>")
			fresh = append(fresh, s.URL(fmt.Sprintf("/q%d", q)))
		}
	}
	args = append([]string{"--config", cfgs[0], "seed", "add", "--level", "0"}, fresh...)
	if out, err := strataCmd(dir, args...).CombinedOutput(); err != nil {
		t.Fatalf("seed add: %v\n%s", err, out)
	}
	for _, cfg := range cfgs {
		appendFile(t, cfg, fmt.Sprintf("[optimizer]\nbudget = %d\nnew_share = %v\n", budget, share))
	}
	before := len(web.Requests())
	cmds := startWorkers(t, dir, cfgs)
	for i, cmd := range cmds {
		if err := waitWorker(t, cmd); err != nil {
			t.Fatalf("worker %d: %v\n%s", i, err, workerOutput(t, dir, i))
		}
	}
	if n := queryInt(t, dbURL, `SELECT count(DISTINCT worker) FROM fleet_workers WHERE run_id = 2`); n != 3 {
		t.Fatalf("%d workers in run 2, want 3", n)
	}
	newFetched, knownFetched := 0, 0
	for _, r := range web.Requests()[before:] {
		switch {
		case strings.HasPrefix(r.Path, "/q"):
			newFetched++
		case r.Path == "/" || strings.HasPrefix(r.Path, "/p"):
			knownFetched++
		}
	}
	total := newFetched + knownFetched
	t.Logf("run 2: %d pages fetched by the fleet (%d new, %d known), budget %d", total, newFetched, knownFetched, budget)
	if total > budget || total < budget-fleetBudgetBound {
		t.Errorf("the fleet fetched %d pages in run 2, want %d (at least %d)\n%s\n%s\n%s", total, budget, budget-fleetBudgetBound,
			workerOutput(t, dir, 0), workerOutput(t, dir, 1), workerOutput(t, dir, 2))
	}
	if newFetched > newCap || newFetched < newCap-fleetBudgetBound {
		t.Errorf("the fleet fetched %d never-fetched pages in run 2, want their share %d", newFetched, newCap)
	}
	// The run's row has the fleet's figures, not the worker's that finished the run.
	if n := queryInt(t, dbURL, `SELECT new_fetched * 1000 + known_fetched FROM runs WHERE id = 2`); n != int64(newFetched*1000+knownFetched) {
		t.Errorf("run 2's row says %d new and %d known fetched, the server saw %d and %d", n/1000, n%1000, newFetched, knownFetched)
	}
	if n := queryInt(t, dbURL, `SELECT count(*) FROM fetches WHERE run_id = 2`); int(n) != total {
		t.Errorf("run 2 recorded %d fetches, the server saw %d", n, total)
	}
}

func appendFile(t *testing.T, name, text string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
