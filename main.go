// Command strata is a polite, adaptive, selective incremental web crawler for data-mining archives.
//
// See README.md for the quick start and internal/cli for the commands.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/strata-crawler/strata/internal/cli"
)

func main() {
	ctx, stop := cli.SignalContext(context.Background())
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata: %v\n", err)
	}
	os.Exit(cli.ExitCodeIn(ctx, err))
}
