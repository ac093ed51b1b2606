package main

import (
	"fmt"
	"strconv"
	"syscall"
)

// limitFileSize caps the size of every file the process writes at limit bytes (RLIMIT_FSIZE), so
// that a write past it fails with EFBIG as one on a full disk fails with ENOSPC. The Go runtime
// ignores the SIGXFSZ that comes with it. "" leaves the limit alone.
func limitFileSize(limit string) error {
	if limit == "" {
		return nil
	}
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		return fmt.Errorf("STRATA_TEST_FSIZE: %w", err)
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		return fmt.Errorf("STRATA_TEST_FSIZE: %w", err)
	}
	rl.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		return fmt.Errorf("STRATA_TEST_FSIZE: %w", err)
	}
	return nil
}
