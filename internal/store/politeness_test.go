package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestHostGaps(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	// A page fetch and a robots.txt, recorded the way they were before the politeness table.
	d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Duration: 2 * time.Second, Status: 200,
		NextFr: 1, Origin: "https://a.example", Domain: "a.example"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveRobots(ctx, store.Robots{Origin: "https://a.example", Domain: "a.example", Status: 200,
		FetchedAt: now.Add(-time.Minute), CrawlDelay: 7 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// The gate's state of two hosts; a second save with earlier times must not move them back, and
	// its Crawl-delay, lower, is believed.
	b := store.HostGap{Host: "b.example:8080", LastEnd: now.Add(time.Minute), Next: now.Add(time.Hour), CrawlDelay: time.Hour}
	if err := db.SaveHostGaps(ctx, []store.HostGap{b, {Host: "a.example", LastEnd: now.Add(time.Second)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveHostGaps(ctx, []store.HostGap{{Host: "b.example:8080", LastEnd: now, Next: now, CrawlDelay: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	gaps, err := db.HostGaps(ctx, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.HostGap{}
	for _, g := range gaps {
		got[g.Host] = g
	}
	want := map[string]store.HostGap{
		"a.example":      {Host: "a.example", LastEnd: now.Add(2 * time.Second), CrawlDelay: 7 * time.Second},
		"b.example:8080": {Host: "b.example:8080", LastEnd: now.Add(time.Minute), Next: now.Add(time.Hour), CrawlDelay: time.Minute},
	}
	if len(got) != len(want) {
		t.Errorf("HostGaps = %+v, want %+v", got, want)
	}
	for h, w := range want {
		if g := got[h]; !g.LastEnd.Equal(w.LastEnd) || !g.Next.Equal(w.Next) || g.CrawlDelay != w.CrawlDelay {
			t.Errorf("%s: %+v, want %+v", h, g, w)
		}
	}
	// Later on, only the host whose next request is still ahead is remembered.
	gaps, err = db.HostGaps(ctx, now.Add(30*time.Minute))
	if err != nil || len(gaps) != 1 || gaps[0].Host != "b.example:8080" {
		t.Errorf("HostGaps half an hour on = %+v, %v; want b.example:8080 alone", gaps, err)
	}
}

// TestUnreachableBacksOff is the store's half of issue 18's fifth defect: a host that refuses every
// connection had its URLs due, and tried, in every run. Its due URLs now wait 1, 2, 4… runs.
func TestUnreachableBacksOff(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now,
		store.NewSeed{URL: "http://127.0.0.1:8080/", Host: "127.0.0.1:8080", Level: 0, FrMax: 1},
		store.NewSeed{URL: "http://127.0.0.1:8080/x", Host: "127.0.0.1:8080", Level: 0, FrMax: 1},
		store.NewSeed{URL: "https://ok.example/", Host: "ok.example", Level: 0, FrMax: 1},
	)
	var tried []int
	for run := 1; run <= 12; run++ {
		if _, _, err := db.Countdown(ctx); err != nil {
			t.Fatal(err)
		}
		hosts, err := db.DueHosts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if hosts["ok.example"] != 1 {
			t.Errorf("run %d: the reachable host has %d due URLs, want 1", run, hosts["ok.example"])
		}
		if n := hosts["127.0.0.1:8080"]; n > 0 {
			tried = append(tried, run)
			runs, moved, err := db.Unreachable(ctx, "127.0.0.1:8080", 6)
			if err != nil || moved != 2 {
				t.Fatalf("run %d: Unreachable = %d runs, %d moved, %v; want both URLs moved", run, runs, moved, err)
			}
		}
	}
	if want := []int{1, 2, 4, 8}; !equal(tried, want) {
		t.Errorf("the unreachable host was tried in runs %v, want %v (then every 6th at most)", tried, want)
	}
	// Once it answers, the next failure backs off from one run again.
	if err := db.Reachable(ctx, "127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	if runs, _, err := db.Unreachable(ctx, "127.0.0.1:8080", 6); err != nil || runs != 1 {
		t.Errorf("after Reachable: Unreachable = %d runs, %v; want 1", runs, err)
	}
	gaps, err := db.HostGaps(ctx, now)
	if err != nil || len(gaps) != 1 || gaps[0].Unreachable != 1 {
		t.Errorf("HostGaps = %+v, %v; want the host with one failure", gaps, err)
	}
	if _, err := db.NextDue(ctx, store.DueQuery{Hosts: []string{"127.0.0.1:8080"}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("NextDue on the backed-off host: %v, want ErrNotFound", err)
	}
}
