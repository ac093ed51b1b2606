// Package schedule decides when a cron-started run really begins and in which order it visits
// domains, so that no site sees strata at the same time of day every day (Bouras et al., 3.1 and 5).
//
// The start offset for day d is frac(d·φ)·window with φ the golden ratio: a low-discrepancy sequence.
// Consecutive days land at least 38% of the window apart, and over any stretch of days every part of
// the window is used about equally often, which a random offset only achieves on average.
package schedule

import (
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"time"
)

// phi is the fractional part of the golden ratio.
const phi = 0.6180339887498949

// Day numbers days since 1970-01-01 in UTC, the clock every strata installation agrees on.
func Day(t time.Time) int64 {
	return int64(math.Floor(float64(t.UTC().Unix()) / 86400))
}

// Offset is how long a run started on the day of t waits before it begins, inside window.
func Offset(t time.Time, window time.Duration) time.Duration {
	if window <= 0 {
		return 0
	}
	_, frac := math.Modf(float64(Day(t)) * phi)
	return time.Duration(frac * float64(window)).Truncate(time.Second)
}

// Order sorts keys into the day's order: a hash of the day and the key, so the order changes every day
// and every domain takes its turn near the front.
func Order(t time.Time, keys []string) {
	day := strconv.FormatInt(Day(t), 10)
	rank := make(map[string]uint64, len(keys))
	for _, k := range keys {
		h := fnv.New64a()
		h.Write([]byte(day))
		h.Write([]byte{0})
		h.Write([]byte(k))
		rank[k] = h.Sum64()
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if rank[keys[i]] != rank[keys[j]] {
			return rank[keys[i]] < rank[keys[j]]
		}
		return keys[i] < keys[j]
	})
}
