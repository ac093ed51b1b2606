package cli

import (
	"context"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Go's standard library writes some of what it cannot return as an error to the log package:
// net/http's transport logs "Unsolicited response received on idle HTTP channel starting with …",
// quoting bytes a remote server sent, and an http.Server without an ErrorLog logs its own errors
// there. By default those are raw lines on standard error, outside the configured format. While a
// command runs they go through its logger instead, as warnings.

// stdLogTarget is the logger of the command running now; nil between commands.
var stdLogTarget atomic.Pointer[slog.Logger]

var routeOnce sync.Once

// routeStdLog sends the log package's output to l until the returned function is called. The log
// package is the process's, so the routing is too: the latest command's logger has it.
func routeStdLog(l *slog.Logger) (unroute func()) {
	routeOnce.Do(func() {
		log.SetOutput(stdLogWriter{})
		log.SetFlags(0)
		log.SetPrefix("")
	})
	stdLogTarget.Store(l)
	return func() { stdLogTarget.CompareAndSwap(l, nil) }
}

// stdLogWriter turns each line the log package writes (one Write per line) into a record of the
// running command's logger, whose handler quotes whatever bytes the line carries.
type stdLogWriter struct{}

func (stdLogWriter) Write(p []byte) (int, error) {
	l := stdLogTarget.Load()
	if l == nil {
		// No command is running (a test between commands, say): standard error as before.
		return os.Stderr.Write(p)
	}
	l.Log(context.Background(), slog.LevelWarn, strings.TrimRight(string(p), "\n"), "from", "go standard library")
	return len(p), nil
}
