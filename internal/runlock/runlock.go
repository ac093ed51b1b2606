// Package runlock makes sure that one strata crawl or run at a time works on a database, so that a
// cron job that overruns its slot is not joined by the next one.
//
// The lock is an OS file lock (github.com/gofrs/flock: flock(2) on Unix, LockFileEx on Windows) on a
// file beside the database. The kernel drops it when the process dies, even by kill -9, so a crash
// never leaves a stale lock behind; the file itself stays and only records the holder's pid for the
// error message.
//
// The lock file sits beside the database's resolved path, with every symbolic link followed, so two
// runs that name one database by different paths (a symlink to the file or to its directory) take
// the same lock.
package runlock

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
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
	fl *flock.Flock
}

// pidOffset is where the holder's pid is written in the lock file. Windows locks byte 0 (that is
// what flock.TryLock takes there) and forbids every other handle to read or write a locked byte, so
// the pid lives after it, where the holder can write it and a refused process can read it.
const pidOffset = 1

// Path returns the lock file for a database file: beside its resolved path, so that every name of
// one database leads to one lock file.
func Path(dbPath string) string { return Resolve(dbPath) + ".lock" }

// Resolve returns dbPath made absolute with its symbolic links followed. A database that does not
// exist yet is resolved through its directory, or through the nearest ancestor that exists.
func Resolve(dbPath string) string {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		abs = filepath.Clean(dbPath)
	}
	var tail []string
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, tail...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		tail = append([]string{filepath.Base(p)}, tail...)
		p = parent
	}
}

// Acquire takes the lock for dbPath without waiting. It fails with a *HeldError if another process
// holds it. The lock file's directory must exist.
func Acquire(dbPath string) (*Lock, error) {
	path := Path(dbPath)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the message names the file already
		}
		return nil, fmt.Errorf("lock %s: %w (a crawl keeps its lock in this file beside the database, so their directory must be writable)", path, err)
	}
	if !ok {
		return nil, &HeldError{Path: path, PID: readPID(path)}
	}
	// Record our pid for the message a second process prints; the lock is the OS lock, not this text.
	// Byte 0 is a newline where the OS lets us write it (everywhere but Windows), so that the file
	// reads as text.
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		pid := strconv.Itoa(os.Getpid()) + "\n"
		if _, err := f.WriteAt([]byte("\n"+pid), 0); err != nil {
			f.WriteAt([]byte(pid), pidOffset)
		}
		f.Truncate(int64(pidOffset + len(pid)))
		f.Close()
	}
	return &Lock{fl: fl}, nil
}

// readPID returns the pid recorded in the lock file, or 0.
func readPID(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, pidOffset, 32))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	err := l.fl.Unlock()
	l.fl = nil
	return err
}
