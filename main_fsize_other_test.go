//go:build !linux

package main

import "errors"

// limitFileSize is Linux's RLIMIT_FSIZE cap (main_fsize_linux_test.go); elsewhere the full-disk
// test does not run.
func limitFileSize(limit string) error {
	if limit == "" {
		return nil
	}
	return errors.New("STRATA_TEST_FSIZE: only on Linux")
}
