//go:build unix

package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// raiseNoFile raises the open-file limit to at least need, for this process and the crawlers it
// starts (they inherit it). The hard limit is raised only if it is below need, which takes root.
func raiseNoFile(need uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("open-file limit: %w", err)
	}
	if l.Cur >= need {
		return nil
	}
	l.Cur = need
	l.Max = max(l.Max, need)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return fmt.Errorf("raise the open-file limit to %d (ulimit -n; the web needs one per host and some): %w", need, err)
	}
	return nil
}

// peakRSS is the finished process's peak resident set in bytes: wait4's ru_maxrss, which macOS
// counts in bytes and the other Unix systems in KiB.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

// selfCPU is the CPU time (user and system) this process has used so far; 0 if unknown.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
