package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

func newSeedCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "seed", Short: "Manage the seed URLs the crawl starts from", Args: noArgs}
	cmd.AddCommand(newSeedAddCmd(a), newSeedListCmd(a), newSeedRemoveCmd(a))
	return cmd
}

func newSeedAddCmd(a *app) *cobra.Command {
	var o seedAddOptions
	var snapshot bool
	cmd := &cobra.Command{
		Use:   "add URL... [--sitemap URL] [--level N] [--fr-max N] [--priority P] [--snapshot] [--file FILE]",
		Short: "Add seed URLs; they are crawled on the next run",
		Long: `Add seed URLs. Each is normalised and crawled on the next run; its internal links are
followed --level levels down. A URL that is already a seed is left unchanged (a notice, not an
error), except that --priority and --snapshot, when given, are updated. If any URL is invalid,
nothing is added.

--sitemap URL adds the pages a sitemap lists (a sitemaps.org urlset, a sitemap index — then up to
50 of the sitemaps it lists — or a text sitemap) as seeds, through the URL filter: the way to reach
the pages a site links only from menus it builds with JavaScript, which strata does not run. The
sitemap is read as a crawl reads one: its site's robots.txt first, with the same politeness gap and
identity, holding the run lock. A sitemap robots.txt disallows, or that is no sitemap, adds nothing.

--priority weighs the seed's pages (default 1): with optimizer.objective = "weighted" the optimal
policy gives them more of the budget, and a run short of budget or time takes them sooner.

--snapshot fetches every page below the seed in every run, whatever its revisit interval and the
selective rule say, for a site you need completely: no intermediate version is lost. It costs a
request per page per run, each as polite as any other; under optimizer.budget the pages still
compete for the budget, first among the known pages. --snapshot=false turns it off again.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("priority") && !(o.priority > 0 && o.priority <= 1e6) {
				return usagef("seed add: --priority %v: must be a number above 0 and at most 1000000", o.priority)
			}
			if cmd.Flags().Changed("snapshot") {
				o.snapshot = &snapshot
			}
			return runSeedAdd(cmd, a, args, o)
		},
	}
	cmd.Flags().BoolVar(&snapshot, "snapshot", false, "fetch every page below the seeds in every run (--snapshot=false: as their intervals say)")
	cmd.Flags().StringArrayVar(&o.sitemaps, "sitemap", nil, "add the pages this sitemap or sitemap index lists (repeatable)")
	cmd.Flags().Float64Var(&o.priority, "priority", 0, "weight of the seed's pages (default 1; see optimizer.objective)")
	cmd.Flags().StringVar(&o.file, "file", "", "read URLs from FILE, one per line ('#' comments; '-' for standard input)")
	a.bindInt(cmd.Flags(), "seed.level", "level", "link levels to follow below the seeds (default seed.level)")
	a.bindInt(cmd.Flags(), "seed.fr_max", "fr-max", "revisit interval of the seeds in runs (default seed.fr_max)")
	return cmd
}

// seedAddOptions are seed add's flags.
type seedAddOptions struct {
	file     string
	sitemaps []string
	priority float64
	snapshot *bool // nil: not given
}

// seedArg is one URL as the user gave it, with where it came from for error messages.
type seedArg struct {
	raw, where string
}

func runSeedAdd(cmd *cobra.Command, a *app, args []string, o seedAddOptions) error {
	var in []seedArg
	var err error
	if len(args) > 0 || o.file != "" || len(o.sitemaps) == 0 {
		if in, err = urlArgs(cmd, "seed add", args, o.file); err != nil {
			return err
		}
	}
	for i, sm := range o.sitemaps {
		if _, err := urlnorm.Parse(sm); err != nil {
			return fmt.Errorf("seed add: --sitemap %d: %w", i+1, err)
		}
	}
	if err := a.setup(); err != nil {
		return err
	}
	// Validate everything before touching the database, so bad input changes nothing.
	seen := map[string]bool{}
	var seeds []store.NewSeed
	newSeed := func(u *url.URL) store.NewSeed {
		return store.NewSeed{URL: u.String(), Host: u.Host, Level: a.cfg.Seed.Level, FrMax: a.cfg.Seed.FrMax,
			Priority: o.priority, Snapshot: o.snapshot}
	}
	for _, s := range in {
		u, err := urlnorm.Parse(s.raw)
		if err != nil {
			return fmt.Errorf("seed add: %s: %w", s.where, err)
		}
		if seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		seeds = append(seeds, newSeed(u))
	}
	given := len(seeds)
	var db interface {
		AddSeeds(ctx context.Context, seeds []store.NewSeed) ([]store.SeedOutcome, error)
	}
	var fromSitemaps []sitemapSeeds
	if len(o.sitemaps) > 0 {
		// Reading a sitemap is a request like a crawl's, with its politeness state: it holds the
		// run lock, and creates the database as fetch does.
		s, err := a.openSession(cmd.Context(), true)
		if err != nil {
			return err
		}
		defer s.Close()
		db = s.db
		if fromSitemaps, err = a.readSitemaps(cmd.Context(), s, o.sitemaps); err != nil {
			return err
		}
		for i := range fromSitemaps {
			for _, u := range fromSitemaps[i].accepted {
				if !seen[u.String()] {
					seen[u.String()] = true
					seeds = append(seeds, newSeed(u))
				}
			}
		}
	} else if a.postgres() {
		pg, err := a.openPostgres(cmd.Context())
		if err != nil {
			return err
		}
		defer pg.Close()
		db = pg
	} else {
		lite, err := a.openStore(cmd.Context())
		if err != nil {
			return err
		}
		defer lite.Close()
		db = lite
	}
	outcomes, err := db.AddSeeds(cmd.Context(), seeds)
	if err != nil {
		return err
	}
	snap := ""
	if o.snapshot != nil && *o.snapshot {
		snap = ", a snapshot every run"
	}
	added, existed := 0, 0
	for i, out := range outcomes {
		if i >= given { // from a sitemap: counted, not listed
			if out == store.SeedExists {
				existed++
			} else {
				added++
			}
			continue
		}
		switch out {
		case store.SeedAdded:
			fmt.Fprintf(a.stdout, "added %s (level %d, fr_max %d%s)\n", seeds[i].URL, seeds[i].Level, seeds[i].FrMax, snap)
		case store.SeedExists:
			if o.snapshot != nil {
				fmt.Fprintf(a.stdout, "%s: a snapshot every run %s\n", seeds[i].URL, map[bool]string{true: "on", false: "off"}[*o.snapshot])
				continue
			}
			fmt.Fprintf(a.stderr, "notice: %s is already a seed; unchanged\n", seeds[i].URL)
		default:
			fmt.Fprintf(a.stdout, "added %s: %s\n", seeds[i].URL, out)
		}
	}
	for _, r := range fromSitemaps {
		fmt.Fprintf(a.stdout, "%s: %s listed (%s read)", r.url, plural(r.listed, "page"), plural(r.documents, "sitemap"))
		if r.rejected > 0 {
			fmt.Fprintf(a.stdout, ", %d rejected by the URL filter (see strata filter test)", r.rejected)
		}
		fmt.Fprintln(a.stdout)
	}
	if len(fromSitemaps) > 0 {
		fmt.Fprintf(a.stdout, "added %s from sitemaps (level %d, fr_max %d%s); %d were seeds already\n",
			plural(added, "seed"), a.cfg.Seed.Level, a.cfg.Seed.FrMax, snap, existed)
	}
	return nil
}

// sitemapSeeds is what one --sitemap gave.
type sitemapSeeds struct {
	url               string
	listed, documents int
	rejected          int
	accepted          []*url.URL // through the URL filter, rewritten as it rewrites them
}

// readSitemaps reads each sitemap through the session's polite client and passes the pages they
// list through the URL filter, as seeds.
func (a *app) readSitemaps(ctx context.Context, s *session, sitemaps []string) ([]sitemapSeeds, error) {
	c, err := s.runner().Open(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []sitemapSeeds
	for _, sm := range sitemaps {
		pages, err := c.Sitemap(ctx, sm)
		if errors.Is(err, crawler.ErrSitemap) {
			return nil, usagef("seed add: --sitemap: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("seed add: --sitemap %s: %w", sm, err)
		}
		for _, why := range pages.Skipped {
			a.log.Warn("a sitemap of the index was not read", "sitemap", sm, "why", why)
		}
		if pages.Truncated {
			a.log.Warn("a sitemap was read in part (cut at the protocol's limits, or broken part way)", "sitemap", sm)
		}
		r := sitemapSeeds{url: sm, listed: len(pages.URLs), documents: pages.Documents}
		for _, p := range pages.URLs {
			u, err := urlnorm.Parse(p)
			if err != nil {
				r.rejected++
				continue
			}
			d := a.cfg.Filter.Decide(filter.Input{URL: u, Level: a.cfg.Seed.Level, Seed: true})
			if !d.Accept {
				r.rejected++
				continue
			}
			if d.URL != nil {
				u = d.URL
			}
			r.accepted = append(r.accepted, u)
		}
		out = append(out, r)
	}
	return out, nil
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
			db, closeDB, err := a.openReadAny(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
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
			fmt.Fprintf(a.stdout, "removed %s: %s will no longer be crawled; their history is kept\n", norm, plural(n, "URL"))
			return nil
		},
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
