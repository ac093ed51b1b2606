package store_test

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestUpdateWeights(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seeds := []store.NewSeed{
		{URL: "https://a.example/", Host: "a.example", FrMax: 1, Priority: 2},
		{URL: "https://a.example/x", Host: "a.example", FrMax: 1},
		{URL: "https://a.example/y", Host: "a.example", FrMax: 1},
		{URL: "https://a.example/z", Host: "a.example", FrMax: 1},
	}
	if _, err := db.AddSeeds(ctx, seeds); err != nil {
		t.Fatal(err)
	}
	run, err := db.BeginRun(ctx, time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// /z is linked from the three other pages; / from one.
	for from, to := range map[int64][]string{
		1: {"https://a.example/z"},
		2: {"https://a.example/z", "https://a.example/"},
		3: {"https://a.example/z"},
	} {
		var links []store.Link
		for _, u := range to {
			links = append(links, store.Link{ToURL: u, Internal: true})
		}
		if err := db.SaveLinks(ctx, from, run, links); err != nil {
			t.Fatal(err)
		}
	}
	for id := int64(1); id <= 4; id++ { // fetched once: the plan counts only pages it can revisit
		if err := db.RecordFetch(ctx, store.FetchRecord{URLID: id, RunID: run, FetchedAt: time.Now(), Status: 200, NextFr: 1}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.UpdateWeights(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 { // / (priority 2, one in-link) and /z (three in-links); /x and /y stay at 1
		t.Errorf("%d weights changed, want 2", n)
	}
	loads, err := db.BucketLoads(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[float64]int{}
	for _, l := range loads {
		got[math.Round(l.Weight*1000)/1000] += l.Pages
	}
	// 1 × (1 + log2 1) = 1 for /x and /y; 2 × (1 + log2 2) = 4 for /; 1 × (1 + log2 4) = 3 for /z.
	want := map[float64]int{1: 2, 4: 1, 3: 1}
	for w, p := range want {
		if got[w] != p {
			t.Errorf("weight %v: %d pages, want %d (all: %v)", w, got[w], p, got)
		}
	}
	if again, _ := db.UpdateWeights(ctx); again != 0 {
		t.Errorf("a second update rewrote %d rows, want 0", again)
	}
}
