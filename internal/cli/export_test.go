package cli

import (
	"io"
	"testing"
)

// PretendTerminal makes the commands take every output for a terminal (or none) until the test ends.
func PretendTerminal(tb testing.TB, on bool) {
	old := isTerminal
	isTerminal = func(io.Writer) bool { return on }
	tb.Cleanup(func() { isTerminal = old })
}
