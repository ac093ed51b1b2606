// Command strata is a polite, adaptive, selective incremental web crawler for data-mining archives.
//
// See README.md for the quick start and internal/cli for the commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-crawler/strata/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal stops the work gracefully; from then on signals have their default effect,
	// so a second Ctrl-C ends a process that is taking too long to wind down.
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata: %v\n", err)
	}
	os.Exit(cli.ExitCode(err))
}
