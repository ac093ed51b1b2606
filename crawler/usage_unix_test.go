//go:build unix

package crawler_test

import (
	"runtime"
	"syscall"
	"time"
)

// selfUsage is the CPU time this process has used and its peak resident set in bytes, from
// getrusage (whose ru_maxrss macOS counts in bytes and the other Unix systems in KiB).
func selfUsage() (user, sys time.Duration, maxRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	maxRSS = int64(ru.Maxrss) << 10
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		maxRSS = int64(ru.Maxrss)
	}
	return tv(ru.Utime), tv(ru.Stime), maxRSS
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
