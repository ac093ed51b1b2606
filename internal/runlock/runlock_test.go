package runlock_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/runlock"
)

func TestAcquireRelease(t *testing.T) {
	db := filepath.Join(t.TempDir(), "strata.db")
	l, err := runlock.Acquire(db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = runlock.Acquire(db) // flock is per open file description, so this conflicts even in-process
	var held *runlock.HeldError
	if !errors.Is(err, runlock.ErrLocked) || !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second Acquire: %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("message does not name the holder: %q", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := runlock.Acquire(db)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

// TestSymlinkedDatabaseSharesTheLock names one database through a symbolic link to the file and
// through one to its directory: every name must take the same lock.
func TestSymlinkedDatabaseSharesTheLock(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "strata.db")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fileLink := filepath.Join(dir, "link.db")
	dirLink := filepath.Join(dir, "datalink")
	for old, name := range map[string]string{real: fileLink, filepath.Dir(real): dirLink} {
		if err := os.Symlink(old, name); err != nil {
			t.Skipf("symbolic links are not available here: %v", err)
		}
	}
	l, err := runlock.Acquire(real)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, name := range []string{fileLink, filepath.Join(dirLink, "strata.db"), filepath.Join(dir, "data", ".", "strata.db")} {
		other, err := runlock.Acquire(name)
		if !errors.Is(err, runlock.ErrLocked) {
			other.Release()
			t.Errorf("Acquire(%s) while %s is locked: %v, want ErrLocked", name, real, err)
		}
	}
	if got, want := runlock.Path(fileLink), runlock.Path(real); got != want {
		t.Errorf("Path(%s) = %s, want %s", fileLink, got, want)
	}
}

// TestResolveMissingDatabase resolves a database that does not exist yet, in a directory that does
// not either, below a symlinked directory.
func TestResolveMissingDatabase(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Skipf("symbolic links are not available here: %v", err)
	}
	realDir, err := filepath.EvalSymlinks(filepath.Join(dir, "real"))
	if err != nil {
		t.Fatal(err)
	}
	got := runlock.Resolve(filepath.Join(dir, "link", "new", "strata.db"))
	if want := filepath.Join(realDir, "new", "strata.db"); got != want {
		t.Errorf("Resolve = %s, want %s", got, want)
	}
}

// TestKilledHolderLeavesNoStaleLock holds the lock in a child process, kills it with SIGKILL, and
// checks that the lock is free at once.
func TestKilledHolderLeavesNoStaleLock(t *testing.T) {
	if os.Getenv("RUNLOCK_HOLD") != "" {
		if _, err := runlock.Acquire(os.Getenv("RUNLOCK_HOLD")); err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	db := filepath.Join(t.TempDir(), "strata.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHolderLeavesNoStaleLock$")
	cmd.Env = append(os.Environ(), "RUNLOCK_HOLD="+db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("child did not take the lock: %q, %v", buf, err)
	}
	if _, err := runlock.Acquire(db); !errors.Is(err, runlock.ErrLocked) {
		t.Fatalf("lock held by the child: Acquire = %v, want ErrLocked", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := runlock.Acquire(db)
	if err != nil {
		t.Fatalf("after kill -9 of the holder: %v", err)
	}
	l.Release()
}
