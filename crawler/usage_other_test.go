//go:build !unix

package crawler_test

import "time"

// selfUsage is unknown (zero) where getrusage does not exist: the benchmarks then report no CPU
// time or peak RSS.
func selfUsage() (user, sys time.Duration, maxRSS int64) { return 0, 0, 0 }
