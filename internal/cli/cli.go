// Package cli is strata's command line: it parses arguments, loads the configuration, wires the
// stages together for each command, and maps errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

// Exit codes, documented in the README.
const (
	ExitOK      = 0
	ExitRuntime = 1 // the command failed while working: I/O, network, database
	ExitUsage   = 2 // bad arguments, flags, configuration, URL or database file: nothing was changed
	ExitLocked  = 3 // another strata crawl or run holds the lock on this database
)

// Version is the release version; the build may override it with -ldflags "-X …/cli.Version=…".
var Version = defaultVersion

// defaultVersion is Version in a build that does not set it.
const defaultVersion = "0.1.0-dev"

// usageError marks errors in what the user typed.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// ExitCode maps an error returned by Run to the process exit status.
func ExitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, runlock.ErrLocked):
		return ExitLocked
	case errors.As(err, &ue), errors.Is(err, config.ErrInvalid), errors.Is(err, urlnorm.ErrInvalid),
		errors.Is(err, store.ErrNotDatabase), errors.Is(err, store.ErrNewerSchema):
		return ExitUsage
	}
	return ExitRuntime
}

// app is what one invocation's commands share.
type app struct {
	stdout, stderr io.Writer
	errOut         *stderrLines // standard error for the log, shared with a progress bar
	configFile     string
	cpuProfile     string       // --cpuprofile: where to write a CPU profile of the command
	stopProfile    func() error // ends the profile; nil when none runs
	flags          []config.FlagBinding
	cfg            *config.Config
	log            *slog.Logger
	unrouteLog     func() // ends the routing of the standard library's log lines into log
}

// Run executes the command line args (without the program name). Errors are returned, not printed:
// main prints them as one line and exits with ExitCode(err).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := &app{stdout: stdout, stderr: stderr, errOut: &stderrLines{w: stderr}}
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if a.unrouteLog != nil {
		a.unrouteLog()
	}
	if a.stopProfile != nil {
		if perr := a.stopProfile(); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

// startProfile starts the CPU profile --cpuprofile asks for: a hidden flag for measuring strata
// as users run it (docs/performance.md), not a feature of the crawler.
func (a *app) startProfile() error {
	if a.cpuProfile == "" {
		return nil
	}
	f, err := os.Create(a.cpuProfile)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile %s: %w", a.cpuProfile, err)
	}
	a.stopProfile = func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("cpu profile %s: %w", a.cpuProfile, err)
		}
		return nil
	}
	return nil
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "A polite, adaptive, selective incremental web crawler for data-mining archives",
		Long: `strata keeps a dated, browsable history of the text of the sites you study. It visits each
page about as often as it changes, skips subtrees whose pages have not changed, and never
sends more than one request every 10 seconds to any site.`,
		Version:       versionLine(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetVersionTemplate("strata {{.Version}}\n")
	root.SetOut(a.stdout) // before the completion command, which keeps the writer it is made with
	root.SetErr(a.stderr)
	root.PersistentFlags().StringVar(&a.configFile, "config", "", "configuration file (default $STRATA_CONFIG, else ./strata.toml if present)")
	a.bind(root.PersistentFlags(), "log.level", "log-level", "", "log level: debug, info, warn or error")
	a.bind(root.PersistentFlags(), "log.format", "log-format", "", "log format: text or json")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file")
	root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return a.startProfile() }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetHelpCommand(newHelpCmd(root))
	root.AddCommand(newManCmd(root), newVersionCmd(a), newConfigCmd(a), newSeedCmd(a), newStatusCmd(a), newCrawlCmd(a), newFilterCmd(a),
		newHistoryCmd(a), newShowCmd(a), newDiffCmd(a), newExportCmd(a), newPruneCmd(a),
		newRunCmd(a), newRecalcCmd(a), newLinksCmd(a), newExplainCmd(a), newDemoCmd(a), newTrapsCmd(a), newFetchCmd(a), newPlanCmd(a), newServeCmd(a), newIndexCmd(a),
		newSimulateCmd(a), newMigrateDBCmd(a))
	// Cobra adds its help and completion commands when it executes; added now, they are groups
	// like the others (completion refuses a shell it does not know) and the man pages list them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	groupsRefuseTypos(root)
	return root
}

// bind declares a string flag that overrides a configuration key when set.
func (a *app) bind(fs *pflag.FlagSet, key, name, value, usage string) {
	fs.String(name, value, usage)
	a.flags = append(a.flags, config.FlagBinding{Key: key, Flag: fs.Lookup(name)})
}

// bindInt declares an integer flag that overrides a configuration key when set.
func (a *app) bindInt(fs *pflag.FlagSet, key, name string, usage string) {
	fs.Int(name, 0, usage)
	a.flags = append(a.flags, config.FlagBinding{Key: key, Flag: fs.Lookup(name)})
}

// setup loads the configuration and the logger; commands that need either call it first.
func (a *app) setup() error {
	cfg, err := config.Load(config.Options{File: a.configFile, Flags: a.flags})
	if err != nil {
		return err
	}
	a.cfg = cfg
	a.log = newLogger(a.errOut, cfg)
	if a.unrouteLog != nil {
		a.unrouteLog()
	}
	a.unrouteLog = routeStdLog(a.log)
	for _, w := range cfg.Warnings {
		a.log.Warn(w)
	}
	return nil
}

// openStore sets up and opens the database for a command that writes it, creating it if it does
// not exist yet. Only the commands that add URLs (seed add, fetch) create a database; the others
// open it with openExisting or openRead.
func (a *app) openStore(ctx context.Context) (*store.DB, error) {
	if a.cfg == nil {
		if err := a.setup(); err != nil {
			return nil, err
		}
	}
	if a.postgres() {
		return nil, a.errSQLiteOnly()
	}
	return store.Open(ctx, a.cfg.Database.Path, store.Options{})
}

// openExisting opens the database for a command that writes it, refusing one that does not exist.
func (a *app) openExisting(ctx context.Context) (*store.DB, error) {
	if a.cfg == nil {
		if err := a.setup(); err != nil {
			return nil, err
		}
	}
	if a.postgres() {
		return nil, a.errSQLiteOnly()
	}
	if err := a.requireDatabase(); err != nil {
		return nil, err
	}
	return a.openStore(ctx)
}

// openRead opens the existing database for a command that only reads it: read-only, so that it runs
// beside a crawl, on a read-only disk and without write permission, and never creates anything. A
// database of an older schema is upgraded first where it can be written, as every strata command
// did before it read; where it cannot, the error says how to upgrade it.
func (a *app) openRead(ctx context.Context) (*store.DB, error) {
	if a.cfg == nil {
		if err := a.setup(); err != nil {
			return nil, err
		}
	}
	if a.postgres() {
		return nil, a.errSQLiteOnly()
	}
	if err := a.requireDatabase(); err != nil {
		return nil, err
	}
	path := a.cfg.Database.Path
	db, err := store.OpenReadOnly(ctx, path)
	if errors.Is(err, store.ErrOldSchema) {
		// Where the upgrade cannot be made (a read-only database), its error is not the user's to
		// act on: the schema error below says what to do.
		if w, werr := store.Open(ctx, path, store.Options{}); werr == nil {
			w.Close()
			a.log.Info("upgraded the database to this strata's schema", "database", path, "schema", store.SchemaVersion())
			db, err = store.OpenReadOnly(ctx, path)
		}
	}
	if errors.Is(err, store.ErrOldSchema) || errors.Is(err, fs.ErrNotExist) {
		return nil, usageError{err}
	}
	return db, err
}

// requireDatabase refuses a database that does not exist, saying where its path came from: a
// mistyped path must not silently become a new, empty database.
func (a *app) requireDatabase() error {
	path := a.cfg.Database.Path
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var from string
	switch src := a.cfg.Source("database.path"); {
	case src == "file":
		from = "database.path in " + a.cfg.File
	case src != "default":
		from = "database.path from " + strings.TrimPrefix(src, "env ")
	case a.cfg.File != "":
		from = "the default database.path, beside " + a.cfg.File
	default:
		from = "the default database.path; no configuration file was found (see --config)"
	}
	return usagef("no database at %s (%s): start one with strata seed add URL, then strata run", path, from)
}

func newLogger(w io.Writer, cfg *config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect the configuration", Args: noArgs}
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Validate the configuration and print the effective values with their sources",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.setup(); err != nil {
				return err
			}
			a.warnPlaceholder()
			return a.cfg.WriteTOML(a.stdout)
		},
	})
	return cmd
}

func (a *app) warnPlaceholder() {
	if a.cfg.UserAgentIsPlaceholder() {
		a.log.Warn("crawl.user_agent still carries the example contact URL; set it so site owners can reach you",
			"user_agent", a.cfg.Crawl.UserAgent)
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}
