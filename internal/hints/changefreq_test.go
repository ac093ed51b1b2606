package hints_test

import (
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/hints"
)

func TestChangeFreqFrMax(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		cf   hints.ChangeFreq
		run  time.Duration
		max  int
		want int
		ok   bool
	}{
		// The documented mapping with daily runs.
		{hints.Always, day, 400, 1, true},
		{hints.Hourly, day, 400, 1, true},
		{hints.Daily, day, 400, 1, true},
		{hints.Weekly, day, 400, 7, true},
		{hints.Monthly, day, 400, 30, true},
		{hints.Yearly, day, 400, 365, true},
		{hints.Never, day, 400, 400, true},
		// Capped at the maximum.
		{hints.Yearly, day, 60, 60, true},
		{hints.Monthly, day, 30, 30, true},
		{hints.Never, day, 60, 60, true},
		// Other run intervals: whole runs, rounded down, at least one.
		{hints.Hourly, time.Hour, 400, 1, true},
		{hints.Daily, time.Hour, 400, 24, true},
		{hints.Daily, 12 * time.Hour, 400, 2, true},
		{hints.Weekly, 2 * day, 400, 3, true},
		{hints.Weekly, 7 * day, 400, 1, true},
		{hints.Daily, 7 * day, 400, 1, true},
		{hints.Yearly, 7 * day, 400, 52, true},
		// Defaults for nonsense settings.
		{hints.Weekly, 0, 400, 7, true},
		{hints.Weekly, day, 0, 1, true},
		// No usable changefreq.
		{"", day, 400, 0, false},
		{"sometimes", day, 400, 0, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.cf)+"/"+tt.run.String(), func(t *testing.T) {
			got, ok := tt.cf.FrMax(tt.run, tt.max)
			if got != tt.want || ok != tt.ok {
				t.Errorf("FrMax(%v, %d) = %d, %v; want %d, %v", tt.run, tt.max, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseChangeFreq(t *testing.T) {
	for in, want := range map[string]hints.ChangeFreq{
		"always": hints.Always, " Hourly ": hints.Hourly, "DAILY": hints.Daily, "weekly\n": hints.Weekly,
		"monthly": hints.Monthly, "yearly": hints.Yearly, "never": hints.Never,
	} {
		if got, ok := hints.ParseChangeFreq(in); got != want || !ok {
			t.Errorf("ParseChangeFreq(%q) = %q, %v; want %q, true", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "sometimes", "daily weekly", "1d"} {
		if got, ok := hints.ParseChangeFreq(in); got != "" || ok {
			t.Errorf("ParseChangeFreq(%q) = %q, %v; want \"\", false", in, got, ok)
		}
	}
}
