package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

func TestRobotsCache(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now)
	if _, err := db.RobotsCache(ctx, "https://a.example"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	if err := db.TouchHost(ctx, "https://a.example", "a.example", now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RobotsCache(ctx, "https://a.example"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a touched host without robots.txt: %v, want ErrNotFound", err)
	}
	want := store.Robots{Origin: "https://a.example", Domain: "a.example", Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"),
		FetchedAt: now, ExpiresAt: now.Add(24 * time.Hour), CrawlDelay: 15 * time.Second}
	if err := db.SaveRobots(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := db.RobotsCache(ctx, "https://a.example")
	if err != nil || got.Status != 200 || string(got.Body) != string(want.Body) || !got.ExpiresAt.Equal(want.ExpiresAt) ||
		got.CrawlDelay != want.CrawlDelay {
		t.Errorf("RobotsCache = %+v, %v", got, err)
	}
}

func TestLastAccess(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	db := seedDB(t, &now, store.NewSeed{URL: "https://a.example/", Host: "a.example", Level: 0, FrMax: 1})
	d, _ := db.NextDue(ctx, store.DueQuery{Hosts: []string{"a.example"}, Run: 0})
	if err := db.RecordFetch(ctx, store.FetchRecord{URLID: d.ID, FetchedAt: now, Duration: 2 * time.Second, Status: 200,
		NextFr: 1, Origin: "https://a.example", Domain: "a.example"}); err != nil {
		t.Fatal(err)
	}
	db.SaveRobots(ctx, store.Robots{Origin: "http://b.example:8080", Domain: "b.example", Status: 404, FetchedAt: now.Add(time.Minute)})
	got, err := db.LastAccess(ctx, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !got["a.example"].Equal(now.Add(2*time.Second)) || !got["b.example:8080"].Equal(now.Add(time.Minute)) || len(got) != 2 {
		t.Errorf("LastAccess = %v", got)
	}
	if got, _ := db.LastAccess(ctx, now.Add(time.Hour)); len(got) != 0 {
		t.Errorf("LastAccess after the last access = %v, want none", got)
	}
}
