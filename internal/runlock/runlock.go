// Package runlock makes sure that one strata crawl or run at a time works on a database, so that a
// cron job that overruns its slot is not joined by the next one.
//
// The lock is flock(2) on a file beside the database. The kernel drops it when the process dies, even
// by kill -9, so a crash never leaves a stale lock behind; the file itself stays and only records the
// holder's pid for the error message.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is wrapped by the error Acquire returns when another process holds the lock.
var ErrLocked = errors.New("locked")

// HeldError says who holds the lock.
type HeldError struct {
	Path string // the lock file
	PID  int    // 0 if unknown
}

func (e *HeldError) Error() string {
	who := "another strata"
	if e.PID > 0 {
		who = fmt.Sprintf("another strata (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s is already crawling with this database (lock %s)", who, e.Path)
}

// Is makes errors.Is(err, ErrLocked) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrLocked }

// Lock is a held lock.
type Lock struct {
	f *os.File
}

// Path returns the lock file for a database file.
func Path(dbPath string) string { return dbPath + ".lock" }

// Acquire takes the lock for dbPath without waiting. It fails with a *HeldError if another process
// holds it.
func Acquire(dbPath string) (*Lock, error) {
	path := Path(dbPath)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := 0
			if b, err := os.ReadFile(path); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &HeldError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// Record our pid for the message a second process prints; the lock is the flock, not this text.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
