// Package crashpoint lets a test kill the process at a named point of its work, as kill -9 would,
// to prove that whatever strata leaves behind there is repaired by the next run.
//
// Production code only names the points. Nothing arms one but a test binary (strata's own
// main_test.go, through an environment variable it reads before calling main), so in the strata
// binary Hit is a load and a comparison.
package crashpoint

import (
	"os"
	"sync/atomic"
	"time"
)

var armed atomic.Pointer[string]

// Arm makes Hit(name) kill the process. Only tests call it.
func Arm(name string) { armed.Store(&name) }

// Hit kills the process at once, with no deferred call run and nothing flushed or closed, if name
// is the armed point.
func Hit(name string) {
	if p := armed.Load(); p == nil || *p != name {
		return
	}
	if self, err := os.FindProcess(os.Getpid()); err == nil {
		self.Kill() // SIGKILL on Unix, TerminateProcess on Windows
	}
	time.Sleep(time.Hour) // the kill is asynchronous: nothing more may happen meanwhile
}
