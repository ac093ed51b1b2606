//go:build !unix

package main

import (
	"os"
	"time"
)

// raiseNoFile does nothing where there is no open-file limit to raise.
func raiseNoFile(uint64) error { return nil }

// peakRSS is unknown where the operating system does not report it with the process's usage.
func peakRSS(*os.ProcessState) int64 { return 0 }

// selfCPU is unknown where the operating system does not report a process's own usage.
func selfCPU() time.Duration { return 0 }
