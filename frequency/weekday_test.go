package frequency_test

import (
	"testing"
	"time"

	"github.com/strata-crawler/strata/frequency"
)

// daily returns n days of fetches at 03:00 UTC from Monday 2026-11-02, with changes seen on the days
// for which change returns true.
func daily(n int, change func(day int, wd time.Weekday) bool) []frequency.Observation {
	start := time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC)
	var obs []frequency.Observation
	for i := 1; i <= n; i++ {
		to := start.AddDate(0, 0, i)
		obs = append(obs, frequency.Observation{From: to.AddDate(0, 0, -1), To: to, Changed: change(i, to.Weekday())})
	}
	return obs
}

// sameDay returns n fetches a minute apart, all on Tuesday 2026-11-03: a month of runs compressed
// into an hour, as a test harness might run them.
func sameDay(n int, change func(i int) bool) []frequency.Observation {
	start := time.Date(2026, 11, 3, 3, 0, 0, 0, time.UTC)
	var obs []frequency.Observation
	for i := 1; i <= n; i++ {
		to := start.Add(time.Duration(i) * time.Minute)
		obs = append(obs, frequency.Observation{From: to.Add(-time.Minute), To: to, Changed: change(i)})
	}
	return obs
}

func TestReleaseDays(t *testing.T) {
	tue := uint8(1 << time.Tuesday)
	tests := []struct {
		name    string
		obs     []frequency.Observation
		current uint8
		want    uint8
	}{
		{"weekly on Monday, first seen on Tuesday", daily(28, func(_ int, wd time.Weekday) bool { return wd == time.Tuesday }), 0, tue},
		{"Tuesday and Friday", daily(28, func(_ int, wd time.Weekday) bool { return wd == time.Tuesday || wd == time.Friday }), 0,
			1<<time.Tuesday | 1<<time.Friday},
		{"missed one week of five still clusters", daily(35, func(d int, wd time.Weekday) bool { return wd == time.Tuesday && d > 7 }), 0, tue},
		{"every day is Poisson-like, not quasi-deterministic", daily(28, func(int, time.Weekday) bool { return true }), 0, 0},
		{"every other day", daily(28, func(d int, _ time.Weekday) bool { return d%2 == 0 }), 0, 0},
		{"too little history", daily(10, func(_ int, wd time.Weekday) bool { return wd == time.Tuesday }), 0, 0},
		{"never changes", daily(28, func(int, time.Weekday) bool { return false }), 0, 0},
		{"a Tuesday page with a stray change elsewhere", daily(35, func(d int, wd time.Weekday) bool { return wd == time.Tuesday || d == 3 }), 0, tue},
		{"runs minutes apart on one day are no daily looks", sameDay(40, func(d int) bool { return d%2 == 0 }), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := frequency.ReleaseDays(tc.obs, tc.current); got != tc.want {
				t.Errorf("ReleaseDays = %s (%b), want %s (%b)", frequency.WeekdayNames(got), got, frequency.WeekdayNames(tc.want), tc.want)
			}
		})
	}
}

// TestReleaseDaysKeepsAWeeklyPage: once crawled only on Tuesdays, the page gives weekly observations;
// the mask stays while Tuesdays see changes and goes when they stop.
func TestReleaseDaysKeepsAWeeklyPage(t *testing.T) {
	tue := uint8(1 << time.Tuesday)
	weekly := func(changed ...bool) []frequency.Observation {
		start := time.Date(2026, 11, 3, 3, 0, 0, 0, time.UTC) // a Tuesday
		var obs []frequency.Observation
		for i, c := range changed {
			to := start.AddDate(0, 0, 7*(i+1))
			obs = append(obs, frequency.Observation{From: to.AddDate(0, 0, -7), To: to, Changed: c})
		}
		return obs
	}
	if got := frequency.ReleaseDays(weekly(true, true, true, false), tue); got != tue {
		t.Errorf("changes on 3 of 4 Tuesdays: mask %b, want %b", got, tue)
	}
	if got := frequency.ReleaseDays(weekly(true, false, false, false), tue); got != 0 {
		t.Errorf("changes on 1 of 4 Tuesdays: mask %b, want 0", got)
	}
	if got := frequency.ReleaseDays(weekly(true, true), 0); got != 0 {
		t.Errorf("no mask to keep and no daily looks: mask %b, want 0", got)
	}
}

func TestReleaseDue(t *testing.T) {
	tue := uint8(1 << time.Tuesday)
	mon := time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC) // Monday
	tests := []struct {
		last, now time.Time
		want      bool
	}{
		{mon, mon.Add(2 * time.Hour), false},                // the same day
		{mon, mon.AddDate(0, 0, 1), true},                   // Tuesday has begun
		{mon.AddDate(0, 0, 1), mon.AddDate(0, 0, 1), false}, // fetched this Tuesday already
		{mon.AddDate(0, 0, 1), mon.AddDate(0, 0, 6), false}, // Sunday: not yet
		{mon.AddDate(0, 0, 1), mon.AddDate(0, 0, 8), true},  // the next Tuesday
		{mon.AddDate(0, 0, 2), mon.AddDate(0, 0, 9), true},  // a week has passed
	}
	for i, tc := range tests {
		if got := frequency.ReleaseDue(tue, tc.last, tc.now); got != tc.want {
			t.Errorf("%d: ReleaseDue(last %s, now %s) = %v, want %v", i, tc.last.Weekday(), tc.now.Weekday(), got, tc.want)
		}
	}
	if frequency.ReleaseDue(0, mon, mon.AddDate(0, 0, 30)) {
		t.Error("a page without release days is never due by them")
	}
}
