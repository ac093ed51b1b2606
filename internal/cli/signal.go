package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupted is the cause of the context SignalContext cancels: the signal that asked strata to
// stop.
type Interrupted struct{ Signal os.Signal }

func (e *Interrupted) Error() string { return e.Signal.String() + " received" }

// SignalContext returns a context that SIGINT or SIGTERM cancels, with an *Interrupted as its cause.
// The first signal stops the work gracefully; from then on signals have their default effect, so a
// second Ctrl-C ends a process that is taking too long to wind down. stop releases the handler.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&Interrupted{Signal: s})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(done)
			signal.Stop(ch)
			cancel(nil)
		})
	}
}

// ExitCodeIn is ExitCode for a command that ran under ctx: after a signal, whatever the command
// returned, it is the shell's convention for a process ended by that signal, 128 + its number —
// 130 for SIGINT (Ctrl-C), 143 for SIGTERM — so that a script or cron wrapper can tell an
// interrupted run from a failed one.
func ExitCodeIn(ctx context.Context, err error) int {
	var in *Interrupted
	if errors.As(context.Cause(ctx), &in) {
		if s, ok := in.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return ExitCode(err)
}
