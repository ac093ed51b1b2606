package cli

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/traps"
)

func newTrapsCmd(a *app) *cobra.Command {
	var runs int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "traps [--runs N] [--json]",
		Short: "Rank domains by suspicious growth: the operator's trap report (Bouras et al., section 4)",
		Long: `Rank the domains by how suspiciously they grow: trap defences that fired in the last runs (caps,
calendar or counter patterns, prefixes full of duplicates), URLs discovered in the last run, the
share of their pages with distinct content, the longest URL and the commonest URL shapes — with a
filter line to paste into the configuration for each suspect.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs < 1 {
				return usagef("traps: --runs %d: must be 1 or more", runs)
			}
			db, err := a.openRead(cmd.Context())
			if err != nil {
				return err
			}
			defer db.Close()
			reps, err := trapReport(cmd.Context(), a, db, runs)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, reps)
			}
			return printTrapReport(a, reps)
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 10, "look at the trap events of the last N runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// domainReport is one domain of the trap report.
type domainReport struct {
	Domain      string         `json:"domain"`
	URLs        int            `json:"urls"`
	NewLastRun  int            `json:"new_in_last_run"`
	Pages       int            `json:"pages_with_content"`
	Distinct    int            `json:"distinct_contents"`
	Events      []string       `json:"trap_events"`
	Longest     string         `json:"longest_url"`
	TopShapes   []shapeCount   `json:"top_shapes"`
	Suggestion  string         `json:"suggested_filter,omitempty"`
	Score       float64        `json:"score"`
	eventShapes map[string]int // shapes named by events
}

type shapeCount struct {
	Shape string `json:"shape"`
	URLs  int    `json:"urls"`
}

// DuplicateShare is the share of pages whose content another page of the domain also has.
func (r *domainReport) DuplicateShare() float64 {
	if r.Pages == 0 {
		return 0
	}
	return 1 - float64(r.Distinct)/float64(r.Pages)
}

func trapReport(ctx context.Context, a *app, db *store.DB, runs int) ([]*domainReport, error) {
	byHost := a.cfg.Politeness.DomainKey == "host"
	key := func(host string) string {
		h := (&url.URL{Host: host}).Hostname()
		if byHost {
			return h
		}
		return filter.RegistrableDomain(h)
	}
	var lastStart time.Time
	if rs, err := db.RecentRuns(ctx, 1); err != nil {
		return nil, err
	} else if len(rs) == 1 {
		lastStart = rs[0].StartedAt
	}
	reps := map[string]*domainReport{}
	hashes := map[string]map[string]bool{}
	shapes := map[string]map[string]int{}
	err := db.EachURL(ctx, func(r store.URLRow) error {
		d := key(r.Host)
		rep := reps[d]
		if rep == nil {
			rep = &domainReport{Domain: d, eventShapes: map[string]int{}}
			reps[d], hashes[d], shapes[d] = rep, map[string]bool{}, map[string]int{}
		}
		rep.URLs++
		if !lastStart.IsZero() && !r.Added.Before(lastStart) {
			rep.NewLastRun++
		}
		if r.ContentHash != "" {
			rep.Pages++
			if !hashes[d][r.ContentHash] {
				hashes[d][r.ContentHash] = true
				rep.Distinct++
			}
		}
		if len(r.URL) > len(rep.Longest) {
			rep.Longest = r.URL
		}
		if u, err := url.Parse(r.URL); err == nil {
			shapes[d][traps.Shape(u)]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	events, err := db.TrapEvents(ctx, runs)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		rep := reps[e.Domain]
		if rep == nil {
			continue
		}
		line := fmt.Sprintf("run %d: %s", e.RunID, e.Kind)
		if e.Pattern != "" {
			line += " " + e.Pattern
			rep.eventShapes[e.Pattern]++
		}
		rep.Events = append(rep.Events, line+": "+e.Detail)
	}
	var out []*domainReport
	for d, rep := range reps {
		for s, n := range shapes[d] {
			rep.TopShapes = append(rep.TopShapes, shapeCount{s, n})
		}
		sort.Slice(rep.TopShapes, func(i, j int) bool {
			if rep.TopShapes[i].URLs != rep.TopShapes[j].URLs {
				return rep.TopShapes[i].URLs > rep.TopShapes[j].URLs
			}
			return rep.TopShapes[i].Shape < rep.TopShapes[j].Shape
		})
		if len(rep.TopShapes) > 3 {
			rep.TopShapes = rep.TopShapes[:3]
		}
		rep.Score = 1000*float64(len(rep.Events)) + float64(rep.NewLastRun)*(0.1+rep.DuplicateShare()) + float64(len(rep.Longest))/100
		rep.Suggestion = suggestFilter(rep)
		out = append(out, rep)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Domain < out[j].Domain
	})
	return out, nil
}

// suggestFilter proposes a [filter] entry that keeps the crawl out of the domain's most suspicious
// pattern: the one a trap event named, else its commonest shape, when that shape holds many URLs.
func suggestFilter(rep *domainReport) string {
	shape := ""
	for s := range rep.eventShapes {
		if shape == "" || s < shape {
			shape = s
		}
	}
	if shape == "" && len(rep.TopShapes) > 0 && rep.TopShapes[0].URLs >= 100 {
		shape = rep.TopShapes[0].Shape
	}
	if shape == "" {
		return ""
	}
	host, rest, _ := strings.Cut(shape, "/")
	host = (&url.URL{Host: host}).Hostname()
	path, query, hasQuery := strings.Cut(rest, "?")
	seg, _, _ := strings.Cut(path, "/")
	if seg != "" && !strings.Contains(seg, "N") {
		return fmt.Sprintf(`{ not = { all = [ { host = %q }, { path_glob = "/%s/**" } ] } }`, host, seg)
	}
	if hasQuery {
		param, _, _ := strings.Cut(query, "=")
		return fmt.Sprintf(`{ not = { all = [ { host = %q }, { url_regex = '[?&]%s=[0-9]' } ] } }`, host, param)
	}
	return fmt.Sprintf(`{ max_depth = %d }`, strings.Count(path, "/")+1)
}

func printTrapReport(a *app, reps []*domainReport) error {
	w := a.stdout
	if len(reps) == 0 {
		_, err := fmt.Fprintln(w, "no URLs yet")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tDOMAIN\tURLS\tNEW LAST RUN\tDISTINCT CONTENT\tTRAP EVENTS\tLONGEST URL")
	for i, r := range reps {
		distinct := "-"
		if r.Pages > 0 {
			distinct = fmt.Sprintf("%.0f%% of %d", 100*float64(r.Distinct)/float64(r.Pages), r.Pages)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%d\t%d bytes\n", i+1, r.Domain, r.URLs, r.NewLastRun, distinct, len(r.Events), len(r.Longest))
	}
	tw.Flush()
	for i, r := range reps {
		if i >= 5 || (len(r.Events) == 0 && r.Suggestion == "") {
			continue
		}
		fmt.Fprintf(w, "\n%d. %s\n", i+1, r.Domain)
		for _, e := range r.Events {
			fmt.Fprintf(w, "   %s\n", e)
		}
		for _, s := range r.TopShapes {
			fmt.Fprintf(w, "   %6d URLs like %s\n", s.URLs, s.Shape)
		}
		if r.Suggestion != "" {
			fmt.Fprintf(w, "   suggested filter: add it to the all = [ … ] list of [filter], or start one with it; the default rule\n"+
				"   still applies unless [filter] says extends = \"none\" (strata config check shows the effective filter):\n     %s\n", r.Suggestion)
		}
	}
	return nil
}
