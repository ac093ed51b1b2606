package schedule_test

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/schedule"
)

var day0 = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

func TestOffsetSpreadsOverTheWindow(t *testing.T) {
	const window = 3 * time.Hour
	const days = 1000
	var buckets [10]int
	prev := schedule.Offset(day0, window)
	for d := 1; d <= days; d++ {
		off := schedule.Offset(day0.AddDate(0, 0, d), window)
		if off < 0 || off >= window {
			t.Fatalf("day %d: offset %v outside [0, %v)", d, off, window)
		}
		if gap := (off - prev).Abs(); gap < window*38/100 {
			t.Errorf("days %d and %d start only %v apart", d-1, d, gap)
		}
		buckets[int(off*10/window)]++
		prev = off
	}
	for i, n := range buckets {
		if n < days/10-5 || n > days/10+5 { // low discrepancy: within 5 of the ideal 100 per tenth
			t.Errorf("tenth %d of the window used %d times in %d days", i, n, days)
		}
	}
}

func TestOffsetStableWithinADay(t *testing.T) {
	a := schedule.Offset(day0, time.Hour)
	b := schedule.Offset(day0.Add(20*time.Hour), time.Hour)
	if a != b {
		t.Errorf("offset changed within a day: %v vs %v", a, b)
	}
	if schedule.Offset(day0, 0) != 0 {
		t.Error("a zero window must give no offset")
	}
}

func TestOrderRotates(t *testing.T) {
	keys := []string{"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"}
	firsts := map[string]int{}
	for d := 0; d < 600; d++ {
		k := slices.Clone(keys)
		schedule.Order(day0.AddDate(0, 0, d), k)
		again := slices.Clone(keys)
		schedule.Order(day0.AddDate(0, 0, d), again)
		if !slices.Equal(k, again) {
			t.Fatal("order is not deterministic for a day")
		}
		firsts[k[0]]++
	}
	for _, k := range keys {
		if n := firsts[k]; n < 60 || n > 140 { // each ~100 of 600
			t.Errorf("%s was first on %d of 600 days", k, n)
		}
	}
}
