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
