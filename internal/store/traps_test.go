package store_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// dueIDs returns the ids NextDue hands out for host in run, recording nothing.
func dueIDs(t *testing.T, db *store.DB, run int64) []int64 {
	t.Helper()
	var ids []int64
	err := db.DueCandidates(t.Context(), run, func(c store.Candidate) error {
		ids = append(ids, c.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkDue checks the due table against its definition: active, tick come, and not held.
func checkDue(t *testing.T, raw *sql.DB, step string) {
	t.Helper()
	const want = `SELECT host, prio, level, id FROM urls WHERE state = 'active' AND due_tick <= (SELECT tick FROM countdown)
		AND NOT EXISTS (SELECT 1 FROM trap_holds WHERE url_id = urls.id AND released = 0)`
	const have = `SELECT host, prio, level, id FROM due`
	var missing, extra int
	if err := raw.QueryRow(`SELECT count(*) FROM (` + want + ` EXCEPT ` + have + `)`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT count(*) FROM (` + have + ` EXCEPT ` + want + `)`).Scan(&extra); err != nil {
		t.Fatal(err)
	}
	if missing != 0 || extra != 0 {
		t.Fatalf("after %s: the due table lacks %d due URLs and holds %d others", step, missing, extra)
	}
}

// farm is a store with a seed, a.example/, and its farm a.example/many/0.html … 9.html, all due.
func farm(t *testing.T) (*store.DB, *sql.DB, *time.Time) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := mustOpen(t, path, store.Options{Now: func() time.Time { return now }})
	ctx := t.Context()
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/", Host: "a.example", Level: 2, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	var found []store.NewURL
	for i := range 10 {
		now = now.Add(time.Second) // added one after the other: the probes go oldest first
		if _, err := db.Discover(ctx, []store.NewURL{{URL: fmt.Sprintf("https://a.example/many/%d.html", i), Host: "a.example",
			Level: 1, FrMax: 1, ParentID: 1, RootID: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	found = append(found, store.NewURL{URL: "https://a.example/about.html", Host: "a.example", Level: 1, FrMax: 1, ParentID: 1, RootID: 1})
	if _, err := db.Discover(ctx, found); err != nil {
		t.Fatal(err)
	}
	return db, rawDB(t, path), &now
}

func manyOnly(u string) bool { return strings.Contains(u, "/many/") }

func TestHeldURLsAreNeverDue(t *testing.T) {
	ctx := t.Context()
	db, raw, now := farm(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := db.Countdown(ctx)
	must(err)
	rule, err := db.SaveTrapRule(ctx, store.TrapRule{Domain: "a.example", Unit: "a.example/many/", Throttled: true, Reason: "duplicates",
		Judged: 20, Dups: 19, Norms: []uint64{7, 1 << 63}, ProbeEvery: 1, FirstRun: 1, LastRun: 1, SinceRun: 1})
	must(err)
	held, wasDue, err := db.HoldURLs(ctx, rule, []string{"https://a.example/", "http://a.example/"}, manyOnly)
	must(err)
	if held != 10 || wasDue != 10 {
		t.Fatalf("HoldURLs = %d held, %d due; want the 10 farm pages", held, wasDue)
	}
	checkDue(t, raw, "holding the farm")
	if ids := dueIDs(t, db, 1); len(ids) != 2 { // the seed and about.html
		t.Fatalf("due candidates %v; want the seed and about.html only", ids)
	}
	farm0 := mustID(t, db, "https://a.example/many/0.html")
	if _, err := db.DueByID(ctx, farm0, 1); err == nil {
		t.Error("DueByID hands out a held URL")
	}
	if d, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 1}); err != nil || strings.Contains(d.URL, "/many/") {
		t.Errorf("NextDue = %v, %v", d, err)
	}
	if hosts, err := db.DueHosts(ctx); err != nil || hosts["a.example"] != 2 {
		t.Errorf("DueHosts = %v, %v; want 2 due on a.example", hosts, err)
	}
	// Whatever moves their tick, held URLs stay out of the due set.
	_, err = db.ForceChildren(ctx, 1, now.Add(time.Hour))
	must(err)
	checkDue(t, raw, "forcing the seed's children")
	must(db.SetDue(ctx, []int64{farm0}, nil))
	_, err = raw.Exec(`UPDATE urls SET due_tick = 0, level = level + 1 WHERE url LIKE '%/many/%'`)
	must(err)
	checkDue(t, raw, "moving the held URLs' ticks and levels by hand")
	if ids := dueIDs(t, db, 1); len(ids) != 2 {
		t.Fatalf("due candidates %v after moving ticks; want 2", ids)
	}
	// Rules and their evidence come back as stored, with what they hold.
	rules, err := db.TrapRules(ctx)
	must(err)
	if len(rules) != 1 || rules[0].ID != rule || rules[0].Held != 10 || rules[0].Released != 0 || !rules[0].Throttled ||
		!slices.Equal(rules[0].Norms, []uint64{7, 1 << 63}) || rules[0].Dups != 19 || rules[0].Reason != "duplicates" {
		t.Errorf("TrapRules = %+v", rules)
	}
	// Discover puts a new URL straight under its rule; an immediate fetch and a seed take one out.
	added, err := db.Discover(ctx, []store.NewURL{{URL: "https://a.example/many/10.html", Host: "a.example", Level: 1, FrMax: 1, Hold: rule}})
	must(err)
	if len(added) != 1 {
		t.Fatalf("Discover with a hold added %v", added)
	}
	checkDue(t, raw, "discovering a held URL")
	ids, err := db.Immediate(ctx, []store.NewURL{{URL: "https://a.example/many/3.html", Host: "a.example"}})
	must(err)
	checkDue(t, raw, "an immediate fetch of a held URL")
	if _, err := db.DueByID(ctx, ids[0], 1); err != nil {
		t.Errorf("a URL asked for by name is not due: %v", err)
	}
	_, err = db.AddSeeds(ctx, []store.NewSeed{{URL: "https://a.example/many/4.html", Host: "a.example", Level: 1, FrMax: 1}})
	must(err)
	checkDue(t, raw, "seeding a held URL")
	if n := len(dueIDs(t, db, 1)); n != 4 {
		t.Errorf("%d due after the immediate fetch and the seed, want 4", n)
	}
	// Forgetting the rule releases the rest.
	rules2, released, err := db.ForgetTrapRules(ctx, "a.example/many/")
	must(err)
	if rules2 != 1 || released != 9 {
		t.Errorf("ForgetTrapRules = %d rules, %d released; want 1 and 9", rules2, released)
	}
	checkDue(t, raw, "forgetting the rule")
	if n := len(dueIDs(t, db, 1)); n != 13 {
		t.Errorf("%d due after forgetting the rule, want all 13", n)
	}
	if n, _, err := db.ForgetTrapRules(ctx, "nosuch.example"); err != nil || n != 0 {
		t.Errorf("forgetting nothing: %d, %v", n, err)
	}
}

// TestCountdownReleasesProbes plays the probes of a throttled rule through countdowns and fetches:
// one URL at a time, oldest first, not another while one is out, every probe_every runs, and a
// fetched probe goes back under the rule.
func TestCountdownReleasesProbes(t *testing.T) {
	ctx := t.Context()
	db, raw, now := farm(t)
	rule, err := db.SaveTrapRule(ctx, store.TrapRule{Domain: "a.example", Unit: "a.example/many/", Throttled: true, Reason: "duplicates", ProbeEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.HoldURLs(ctx, rule, []string{"https://a.example/"}, manyOnly); err != nil {
		t.Fatal(err)
	}
	probes := func(run int64) []string {
		t.Helper()
		var out []string
		err := db.DueCandidates(ctx, run, func(c store.Candidate) error {
			if strings.Contains(c.URL, "/many/") {
				out = append(out, strings.TrimPrefix(c.URL, "https://a.example/many/"))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(out)
		return out
	}
	fetch := func(run int64, name string) {
		t.Helper()
		*now = now.Add(time.Hour)
		id := mustID(t, db, "https://a.example/many/"+name)
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: id, FetchedAt: *now, Status: 200, ContentHash: "h", NextFr: 1}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		every int    // probe_every before the countdown
		fetch bool   // fetch the probe in the run
		want  string // probes due in the run
	}{
		{1, true, "0.html"},
		{1, false, "1.html"},
		{1, true, "1.html"}, // not fetched last run: still out, no other released
		{2, true, "2.html"}, // two runs since the last release
		{2, true, ""},       // released last run, every 2: none this run
		{2, true, "3.html"},
		{1, true, "4.html"},
	}
	for i, st := range steps {
		run := int64(i + 1)
		if _, err := raw.Exec(`UPDATE trap_rules SET probe_every = ?`, st.every); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		checkDue(t, raw, fmt.Sprintf("countdown %d", run))
		got := strings.Join(probes(run), " ")
		if got != st.want {
			t.Fatalf("run %d: probes %q, want %q", run, got, st.want)
		}
		if st.fetch && got != "" {
			fetch(run, got)
			checkDue(t, raw, fmt.Sprintf("fetching probe %d", run))
		}
	}
	rules, _ := db.TrapRules(ctx)
	if rules[0].Held != 10 || rules[0].Released != 1 {
		t.Errorf("after the probes: %d held, %d out; want 10, the last probe out until the next countdown", rules[0].Held, rules[0].Released)
	}
	// When the never-fetched are gone, known pages are probed, the longest unseen first; a URL
	// that is no longer active leaves the holds.
	if _, err := raw.Exec(`UPDATE urls SET state = 'gone' WHERE date IS NULL AND url LIKE '%/many/%'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	checkDue(t, raw, "the countdown after pages went")
	if got := strings.Join(probes(8), " "); got != "0.html" {
		t.Errorf("with only known pages held: probe %q, want 0.html, fetched longest ago", got)
	}
	if rules, _ := db.TrapRules(ctx); rules[0].Held != 5 || rules[0].Released != 1 {
		t.Errorf("after pages went: %d held, %d out; want the 5 fetched ones, one of them out", rules[0].Held, rules[0].Released)
	}
	// A rule stored as no longer throttling, whose URLs were not released (a crash between the two
	// writes): the next countdown lets them go.
	if _, err := raw.Exec(`UPDATE trap_rules SET state = 'watch', reason = ''`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Countdown(ctx); err != nil {
		t.Fatal(err)
	}
	checkDue(t, raw, "the countdown after the rule ended")
	if rules, _ := db.TrapRules(ctx); rules[0].Held != 0 {
		t.Errorf("a rule that no longer throttles still holds %d URLs after a countdown", rules[0].Held)
	}
}

func TestSaveTrapRulesForgets(t *testing.T) {
	ctx := t.Context()
	db, _, _ := farm(t)
	save := func(unit string, lastRun int64, throttled bool) int64 {
		t.Helper()
		id, err := db.SaveTrapRule(ctx, store.TrapRule{Domain: "a.example", Unit: unit, Throttled: throttled, Reason: "pattern", LastRun: lastRun})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	save("a.example/old/", 1, false)
	holding := save("a.example/many/", 1, true)
	dropped := save("a.example/clean/", 50, false)
	if _, _, err := db.HoldURLs(ctx, holding, []string{"https://a.example/"}, manyOnly); err != nil {
		t.Fatal(err)
	}
	// An update keeps the id; run 70 forgets what has had no evidence since run 10 and holds nothing.
	if err := db.SaveTrapRules(ctx, []store.TrapRule{{Domain: "a.example", Unit: "a.example/new/", LastRun: 70, Dups: 1}},
		[]int64{dropped}, 10); err != nil {
		t.Fatal(err)
	}
	rules, err := db.TrapRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, r := range rules {
		units = append(units, r.Unit)
	}
	if got := strings.Join(units, " "); got != "a.example/many/ a.example/new/" {
		t.Errorf("rules left: %q; want the one holding URLs and the new one", got)
	}
}

// TestTrapEventsMigration checks that the events recorded before schema 19 (trap rules) survive it,
// and that the new kind is accepted.
func TestTrapEventsMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
	old := mustOpen(t, path, store.Options{MaxVersion: 18})
	if err := old.RecordTrap(ctx, store.TrapEvent{At: time.Now(), Domain: "a.example", Kind: "pattern", Pattern: "a.example/cal/N/N", Detail: "old"}); err != nil {
		t.Fatal(err)
	}
	if err := old.RecordTrap(ctx, store.TrapEvent{At: time.Now(), Domain: "a.example", Kind: "cleared"}); err == nil {
		t.Fatal("the old schema accepted a cleared event: this test no longer tests the migration")
	}
	old.Close()
	db := mustOpen(t, path, store.Options{})
	if err := db.RecordTrap(ctx, store.TrapEvent{At: time.Now(), Domain: "a.example", Kind: "cleared", Pattern: "a.example/cal/N/"}); err != nil {
		t.Fatal(err)
	}
	evs, err := db.TrapEvents(ctx, 10)
	if err != nil || len(evs) != 2 || evs[1].Detail != "old" || evs[0].Kind != "cleared" {
		t.Errorf("TrapEvents = %+v, %v", evs, err)
	}
}
