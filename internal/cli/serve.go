package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
)

// defaultServeAddr is where strata serve listens unless told otherwise: loopback only.
const defaultServeAddr = "127.0.0.1:8377"

func newServeCmd(a *app) *cobra.Command {
	var addr string
	var public bool
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8377] [--public]",
		Short: "Browse the runs, sites, pages, versions and changes in a web browser (read-only)",
		Long: `Serve a read-only web view of the database and the archive: the runs, what changed in each,
the sites and their path trees, and every page's fetches, versions, diffs, links and schedule.
It never writes and never takes the crawl lock, so it runs beside strata run. It listens on
loopback only unless --public is given with a non-loopback --addr. Ctrl-C stops it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), a, addr, public)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", defaultServeAddr, "host:port to listen on")
	cmd.Flags().BoolVar(&public, "public", false, "allow a non-loopback --addr: anyone who can reach it can read the archive")
	return cmd
}

func runServe(ctx context.Context, a *app, addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("serve: --addr %q: want host:port, such as %s", addr, defaultServeAddr)
	}
	loopback := isLoopback(host)
	if !loopback && !public {
		return usagef("serve: --addr %s is not a loopback address; add --public to serve the archive to the network", addr)
	}
	if err := a.setup(); err != nil {
		return err
	}
	db, closeDB, err := a.openServe(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	opts := serve.Options{
		DB:            db,
		Log:           a.log,
		Delay:         a.cfg.Politeness.Delay,
		LoopbackDelay: a.cfg.Politeness.LoopbackDelay,
		Explain: func(ctx context.Context, u string) (*serve.Explanation, error) {
			return explainURL(ctx, a.cfg, db, u)
		},
	}
	// archive.Open creates a missing root; serve must not write, so it opens only one that exists.
	if st, err := os.Stat(a.cfg.Archive.Root); err == nil && st.IsDir() {
		if opts.Archive, err = archive.Open(a.cfg.Archive.Root); err != nil {
			return err
		}
	} else {
		a.log.Warn("the archive directory does not exist yet; versions cannot be shown", "archive", a.cfg.Archive.Root)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	if loopback {
		// Only names of this machine: a web page that rebinds its own name to 127.0.0.1 is refused.
		opts.AllowedHosts = []string{"localhost", "127.0.0.1", "::1", host}
	} else {
		a.log.Warn("serving on a non-loopback address: anyone who can reach it can read the archive", "addr", ln.Addr().String())
	}
	srv, err := serve.New(opts)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(a.stdout, "strata serve: http://%s/ (read-only; Ctrl-C to stop)\n", ln.Addr())
	return serve.Serve(ctx, ln, srv, a.log)
}

// openServe opens the database for serve: read-only, and never written, not even to upgrade an
// older schema (so not openRead).
func (a *app) openServe(ctx context.Context) (readStore, func(), error) {
	if a.postgres() {
		return a.openPostgresRead(ctx)
	}
	if err := a.requireDatabase(); err != nil {
		return nil, nil, err
	}
	db, err := store.OpenReadOnly(ctx, a.cfg.Database.Path)
	if errors.Is(err, store.ErrOldSchema) {
		return nil, nil, usageError{err}
	}
	if err != nil {
		return nil, nil, err
	}
	return db, func() { db.Close() }, nil
}

// isLoopback reports whether host names only this machine: localhost or a loopback IP.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
