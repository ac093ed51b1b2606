package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/internal/demoweb"
	"github.com/strata-crawler/strata/internal/store"
)

func newDemoCmd(a *app) *cobra.Command {
	var days int
	var keep string
	cmd := &cobra.Command{
		Use:   "demo [--days N] [--keep DIR]",
		Short: "Watch strata adapt: run the whole cycle for N days against a built-in web on your own machine",
		Long: `Start a small scripted web on 127.0.0.1 whose pages change from day to day — a front page
that changes daily, an about page that never does, a weekly column, a hub whose pages never
change and a hub whose threads change daily — then run strata's whole cycle once per simulated
day in a fresh directory, and report how each page's revisit interval adapted and how many
fetches the countdown and the selective rule saved. Nothing leaves your machine. With --keep the
directory stays, to explore with strata history, diff and explain.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 2 || days > 60 {
				return usagef("demo: --days must be between 2 and 60, got %d", days)
			}
			return runDemo(cmd.Context(), a, days, keep)
		},
	}
	cmd.Flags().IntVar(&days, "days", 10, "simulated days, one run each")
	cmd.Flags().StringVar(&keep, "keep", "", "keep the demo's database and archive in this new directory")
	return cmd
}

func runDemo(ctx context.Context, a *app, days int, keep string) error {
	dir := keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "strata-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usagef("demo: --keep %s: the directory is not empty", dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	web, err := demoweb.Start()
	if err != nil {
		return err
	}
	defer web.Close()
	cfg := filepath.Join(dir, "strata.toml")
	if err := os.WriteFile(cfg, []byte(`# written by strata demo
[crawl]
user_agent = "strata-demo/0.1 (+https://example.org/strata-demo)"
[politeness]
loopback_delay = "20ms"
`), 0o644); err != nil {
		return err
	}
	strata := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(ctx, append([]string{"--config", cfg, "--log-level", "error"}, args...), &out, io.Discard)
		return out.String(), err
	}
	for _, p := range demoweb.Pages {
		if _, err := strata("seed", "add", "--level", strconv.Itoa(p.Level), web.URL(p.Path)); err != nil {
			return err
		}
	}
	w := a.stdout
	fmt.Fprintf(w, "A scripted web is up at %s; running the whole cycle once per day for %d days in %s.\n\n", web.URL("/"), days, dir)

	watch := []string{"/", "/about", "/weekly", "/archive/", "/forum/", "/archive/1", "/forum/1"}
	frMax := map[string][]int{}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "DAY\tKNOWN\tFETCHED\tCHANGED\tNOT DUE (fr)\tSKIPPED (selective)\t")
	var known, fetched, notDue, skipped int
	for day := 1; day <= days; day++ {
		if day > 1 {
			web.Advance()
		}
		if _, err := strata("run"); err != nil {
			return fmt.Errorf("demo: day %d: %w", day, err)
		}
		db, err := store.Open(ctx, filepath.Join(dir, "strata.db"), store.Options{})
		if err != nil {
			return err
		}
		runs, err := db.RecentRuns(ctx, 1)
		if err == nil && len(runs) == 1 {
			r := runs[0]
			k := r.Fetched + r.SkippedFr + r.SkippedSelective
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t\n", day, k, r.Fetched, r.Changed, r.SkippedFr, r.SkippedSelective)
			known, fetched, notDue, skipped = known+k, fetched+r.Fetched, notDue+r.SkippedFr, skipped+r.SkippedSelective
		}
		for _, p := range watch {
			if info, err := db.URLInfo(ctx, web.URL(p)); err == nil {
				frMax[p] = append(frMax[p], info.FrMax)
			}
		}
		db.Close()
	}
	tw.Flush()

	fmt.Fprintf(w, "\nRevisit interval (fr_max, in days) after each day:\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	about := map[string]string{"/archive/1": "an archived story (below the archive hub)", "/forum/1": "a forum thread (below the forum hub)"}
	for _, p := range demoweb.Pages {
		about[p.Path] = p.About
	}
	for _, p := range watch {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p, trajectory(frMax[p]), about[p])
	}
	tw.Flush()
	fmt.Fprintf(w, "\nOver %d days strata fetched %d pages where crawling everything every day would have fetched %d (%.0f%% fewer):\n",
		days, fetched, known, 100*(1-float64(fetched)/float64(max(known, 1))))
	fmt.Fprintf(w, "%d page visits waited for their revisit interval (fr), and %d were skipped by the selective rule because\n"+
		"their hub had not changed and too few of its children had.\n", notDue, skipped)
	if keep != "" {
		fmt.Fprintf(w, "\nExplore it:\n  strata --config %s status --seeds\n  strata --config %s explain %s\n  strata --config %s diff %s\n",
			cfg, cfg, web.URL("/forum/"), cfg, web.URL("/"))
	}
	return nil
}

// trajectory writes a sequence of intervals compactly: "1 1 2 2 3".
func trajectory(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
