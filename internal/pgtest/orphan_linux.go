package pgtest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel send the server a fast-shutdown signal if the test binary dies
// first (a test timeout's panic, kill -9), which skips Run's cleanup: no server outlives its tests.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
}
