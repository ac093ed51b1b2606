package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// TestKnownURLsAgreesWithAMap notes URLs at random levels, enough to merge the recent additions
// into the sorted slices several times, and checks every answer against a plain map: the level a
// URL is known at is the highest noted, and a URL never noted is unknown.
func TestKnownURLsAgreesWithAMap(t *testing.T) {
	k := newKnownURLs()
	want := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(when string) {
		t.Helper()
		for u, level := range want {
			for _, asked := range []int{level, level + 1} {
				got := k.unknown([]NewURL{{URL: u, Level: asked}})
				if unknown := len(got) == 1; unknown != (asked > level) {
					t.Fatalf("%s: %s at level %d (noted at %d): unknown = %v", when, u, asked, level, unknown)
				}
			}
		}
		for i := range 100 {
			u := fmt.Sprintf("https://never.example/%d", i)
			if len(k.unknown([]NewURL{{URL: u}})) != 1 {
				t.Fatalf("%s: %s, never noted, is known", when, u)
			}
		}
		if !slices.IsSorted(k.keys) || len(k.keys) != len(k.levels) {
			t.Fatalf("%s: %d keys (sorted: %v), %d levels", when, len(k.keys), slices.IsSorted(k.keys), len(k.levels))
		}
	}
	for round := range 5 {
		for range 3 * mergeAt {
			u := fmt.Sprintf("https://a.example/%d", rng.IntN(6*mergeAt))
			level := rng.IntN(5)
			if rng.IntN(2) == 0 {
				k.note(u, level)
			} else {
				k.noteAll([]NewURL{{URL: u, Level: level}})
			}
			want[u] = max(want[u], level)
		}
		check(fmt.Sprintf("round %d", round))
	}
	if len(k.keys) == 0 {
		t.Fatal("nothing was merged into the sorted slices")
	}
	// Levels out of a byte's range are not kept: such URLs stay unknown, so they are looked up.
	k.note("https://a.example/deep", 300)
	k.note("https://a.example/negative", -1)
	if got := k.unknown([]NewURL{{URL: "https://a.example/deep", Level: 300}, {URL: "https://a.example/negative", Level: -1}}); len(got) != 2 {
		t.Errorf("URLs noted at levels 300 and -1: unknown %v, want both", got)
	}
}

// TestDiscoverOfSeenURLsAsksNothing: a URL this handle has read from the table, or written to it,
// at a level at least the one found, is not looked up again. With the handle's connections closed,
// Discover of such URLs still succeeds, and Discover of any other URL fails.
func TestDiscoverOfSeenURLsAsksNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// /old is in the table before this handle sees it: the first Discover reads it.
	other, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Discover(ctx, []NewURL{{URL: "https://a.example/old", Host: "a.example", Level: 2, FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	page := []NewURL{
		{URL: "https://a.example/old", Host: "a.example", Level: 1, FrMax: 1},
		{URL: "https://a.example/new", Host: "a.example", Level: 1, FrMax: 1},
	}
	if added, err := db.Discover(ctx, page); err != nil || len(added) != 1 || added[0].URL != "https://a.example/new" {
		t.Fatalf("Discover = %v, %v; want /new added", added, err)
	}
	if _, _, err := db.Enqueue(ctx, NewURL{URL: "https://a.example/redirected", Host: "a.example", Level: 1, FrMax: 1}, db.now()); err != nil {
		t.Fatal(err)
	}
	db.sql.Close()
	seen := append(page, NewURL{URL: "https://a.example/redirected", Host: "a.example", Level: 0, FrMax: 1})
	seen[0].Level = 2 // the level it was read at
	if added, err := db.Discover(ctx, seen); err != nil || len(added) != 0 {
		t.Errorf("Discover of URLs seen = %v, %v; want nothing, without asking the database", added, err)
	}
	for _, u := range []NewURL{
		{URL: "https://a.example/never", Host: "a.example", Level: 0, FrMax: 1},
		{URL: "https://a.example/old", Host: "a.example", Level: 3, FrMax: 1}, // its level is raised
	} {
		if _, err := db.Discover(ctx, []NewURL{u}); err == nil {
			t.Errorf("Discover of %s at level %d did not ask the (closed) database", u.URL, u.Level)
		}
	}
}

// TestDiscoverLooksUpWhatItHasNotSeen: URLs this handle has not seen are looked up, one alone or
// several together, and those the table holds at their level are not written: Discover succeeds
// while another connection holds the write lock, and learns their levels.
func TestDiscoverLooksUpWhatItHasNotSeen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	other, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var inTable []NewURL
	for i := range 3 {
		inTable = append(inTable, NewURL{URL: fmt.Sprintf("https://a.example/%d", i), Host: "a.example", Level: 2, FrMax: 1})
	}
	if _, err := other.Discover(ctx, inTable); err != nil {
		t.Fatal(err)
	}
	other.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `ROLLBACK`)
	for _, tt := range []struct {
		name  string
		found []NewURL
	}{
		{"one", inTable[:1]},
		{"several", inTable[1:]},
	} {
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		found := append([]NewURL(nil), tt.found...)
		found[0].Level = 1
		if added, err := db.Discover(ctx, found); err != nil || len(added) != 0 {
			t.Errorf("%s: Discover of URLs in the table = %v, %v; want nothing, no write", tt.name, added, err)
		}
		for _, u := range tt.found {
			if level, ok := db.known.levelLocked(db.known.hash(u.URL)); !ok || level != 2 {
				t.Errorf("%s: %s known at %d, %v after the lookup; want level 2", tt.name, u.URL, level, ok)
			}
		}
		db.Close()
	}
}
