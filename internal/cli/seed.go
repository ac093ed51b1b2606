package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

func newSeedCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "seed", Short: "Manage the seed URLs the crawl starts from", Args: noArgs}
	cmd.AddCommand(newSeedAddCmd(a), newSeedListCmd(a), newSeedRemoveCmd(a))
	return cmd
}

func newSeedAddCmd(a *app) *cobra.Command {
	var file string
	var priority float64
	var snapshot bool
	cmd := &cobra.Command{
		Use:   "add URL... [--level N] [--fr-max N] [--priority P] [--snapshot] [--file FILE]",
		Short: "Add seed URLs; they are crawled on the next run",
		Long: `Add seed URLs. Each is normalised and crawled on the next run; its internal links are
followed --level levels down. A URL that is already a seed is left unchanged (a notice, not an
error), except that --priority, when given, is updated. If any URL is invalid, nothing is added.

--priority weighs the seed's pages (default 1): with optimizer.objective = "weighted" the optimal
policy gives them more of the budget, and a run short of budget or time takes them sooner.

--snapshot fetches every page below the seed in every run, whatever its revisit interval and the
selective rule say, for a site you need completely: no intermediate version is lost. It costs a
request per page per run, each as polite as any other; under optimizer.budget the pages still
compete for the budget, first among the known pages. --snapshot=false turns it off again.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("priority") && !(priority > 0 && priority <= 1e6) {
				return usagef("seed add: --priority %v: must be a number above 0 and at most 1000000", priority)
			}
			var snap *bool
			if cmd.Flags().Changed("snapshot") {
				snap = &snapshot
			}
			return runSeedAdd(cmd, a, args, file, priority, snap)
		},
	}
	cmd.Flags().BoolVar(&snapshot, "snapshot", false, "fetch every page below the seeds in every run (--snapshot=false: as their intervals say)")
	cmd.Flags().Float64Var(&priority, "priority", 0, "weight of the seed's pages (default 1; see optimizer.objective)")
	cmd.Flags().StringVar(&file, "file", "", "read URLs from FILE, one per line ('#' comments; '-' for standard input)")
	a.bindInt(cmd.Flags(), "seed.level", "level", "link levels to follow below the seeds (default seed.level)")
	a.bindInt(cmd.Flags(), "seed.fr_max", "fr-max", "revisit interval of the seeds in runs (default seed.fr_max)")
	return cmd
}

// seedArg is one URL as the user gave it, with where it came from for error messages.
type seedArg struct {
	raw, where string
}

func runSeedAdd(cmd *cobra.Command, a *app, args []string, file string, priority float64, snapshot *bool) error {
	in, err := urlArgs(cmd, "seed add", args, file)
	if err != nil {
		return err
	}
	if err := a.setup(); err != nil {
		return err
	}
	// Validate everything before touching the database, so bad input changes nothing.
	seen := map[string]bool{}
	var seeds []store.NewSeed
	for _, s := range in {
		u, err := urlnorm.Parse(s.raw)
		if err != nil {
			return fmt.Errorf("seed add: %s: %w", s.where, err)
		}
		norm := u.String()
		if seen[norm] {
			continue
		}
		seen[norm] = true
		seeds = append(seeds, store.NewSeed{URL: norm, Host: u.Host, Level: a.cfg.Seed.Level, FrMax: a.cfg.Seed.FrMax,
			Priority: priority, Snapshot: snapshot})
	}
	db, err := a.openStore(cmd.Context())
	if err != nil {
		return err
	}
	defer db.Close()
	outcomes, err := db.AddSeeds(cmd.Context(), seeds)
	if err != nil {
		return err
	}
	added := 0
	for i, o := range outcomes {
		snap := ""
		if snapshot != nil && *snapshot {
			snap = ", a snapshot every run"
		}
		switch o {
		case store.SeedAdded:
			added++
			fmt.Fprintf(a.stdout, "added %s (level %d, fr_max %d%s)\n", seeds[i].URL, seeds[i].Level, seeds[i].FrMax, snap)
		case store.SeedExists:
			if snapshot != nil {
				fmt.Fprintf(a.stdout, "%s: a snapshot every run %s\n", seeds[i].URL, map[bool]string{true: "on", false: "off"}[*snapshot])
				continue
			}
			fmt.Fprintf(a.stderr, "notice: %s is already a seed; unchanged\n", seeds[i].URL)
		default:
			added++
			fmt.Fprintf(a.stdout, "added %s: %s\n", seeds[i].URL, o)
		}
	}
	a.log.Debug("seeds added", "added", added, "given", len(in))
	return nil
}

// urlArgs gathers the URLs a command was given, as arguments and from --file, with where each came
// from for error messages; none at all is a usage error.
func urlArgs(cmd *cobra.Command, op string, args []string, file string) ([]seedArg, error) {
	var in []seedArg
	for i, s := range args {
		in = append(in, seedArg{s, fmt.Sprintf("argument %d", i+1)})
	}
	if file != "" {
		more, err := readURLFile(file, cmd.InOrStdin())
		if err != nil {
			return nil, err
		}
		in = append(in, more...)
	}
	if len(in) == 0 {
		return nil, usagef("%s: no URLs given (pass them as arguments or with --file)", op)
	}
	return in, nil
}

// readURLFile reads one URL per line, skipping blank lines and '#' comments.
func readURLFile(name string, stdin io.Reader) ([]seedArg, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("seed add: --file: %w", err)
		}
		defer f.Close()
		r = f
	}
	var out []seedArg
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), urlnorm.MaxLength+1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			// Editors on Windows start UTF-8 files with a byte-order mark; it is not part of the URL.
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, seedArg{line, fmt.Sprintf("%s line %d", name, n)})
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("seed add: read %s: %w", name, err)
	}
	return out, nil
}

func newSeedListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the seeds with their level, revisit interval and pages found below them",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := a.openRead(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			seeds, err := db.Seeds(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, seedsJSON(seeds))
			}
			if len(seeds) == 0 {
				fmt.Fprintln(a.stdout, "no seeds yet: add one with strata seed add URL")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "URL\tLEVEL\tFR\tFR_MAX\tSTATE\tPAGES\tSNAPSHOT\tLAST CRAWLED")
			for _, s := range seeds {
				snap := "-"
				if s.Snapshot {
					snap = "every run"
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%s\t%s\n", s.URL, s.Level, s.Fr, s.FrMax, s.State, s.Pages, snap, fmtTime(s.LastCrawled))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type seedJSON struct {
	URL         string `json:"url"`
	Level       int    `json:"level"`
	Fr          int    `json:"fr"`
	FrMax       int    `json:"fr_max"`
	State       string `json:"state"`
	Pages       int    `json:"pages"`
	Snapshot    bool   `json:"snapshot"` // every page below it is fetched every run
	LastCrawled string `json:"last_crawled,omitempty"`
}

func seedsJSON(seeds []store.SeedInfo) []seedJSON {
	out := make([]seedJSON, 0, len(seeds))
	for _, s := range seeds {
		j := seedJSON{URL: s.URL, Level: s.Level, Fr: s.Fr, FrMax: s.FrMax, State: s.State, Pages: s.Pages, Snapshot: s.Snapshot}
		if !s.LastCrawled.IsZero() {
			j.LastCrawled = s.LastCrawled.UTC().Format("2006-01-02T15:04:05Z")
		}
		out = append(out, j)
	}
	return out
}

func newSeedRemoveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "remove URL",
		Short: "Stop crawling a seed and the pages found below it (their history is kept)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("seed remove: want exactly one URL, got %d", len(args))
			}
			norm, err := urlnorm.Normalize(args[0])
			if err != nil {
				return fmt.Errorf("seed remove: %w", err)
			}
			db, err := a.openExisting(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			n, err := db.RemoveSeed(cmd.Context(), norm)
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintf(a.stdout, "removed %s: %d URLs will no longer be crawled; their history is kept\n", norm, n)
			return nil
		},
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
