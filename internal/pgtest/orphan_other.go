//go:build !linux

package pgtest

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a child's life to its parent's; Run
// stops the server when the tests end normally.
func dieWithParent(*exec.Cmd) {}
