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
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/traps"
)

func newTrapsCmd(a *app) *cobra.Command {
	var runs int
	var asJSON bool
	var clear string
	cmd := &cobra.Command{
		Use:   "traps [--runs N] [--json] [--clear DOMAIN|UNIT]",
		Short: "Rank domains by suspicious growth: the operator's trap report (Bouras et al., section 4)",
		Long: `Rank the domains by how suspiciously they grow: the URL patterns the trap defences throttle now,
with their evidence (pages that repeated an earlier page's text, URLs found on the pattern's own
pages, link levels) and the URLs they hold; the defences that fired in the last runs (caps,
patterns, duplicates, patterns cleared); URLs discovered in the last run, the share of pages with
distinct content, the longest URL and the commonest URL shapes — with a filter line to paste into
the configuration for each suspect.

--clear forgets what the defences learnt about a domain, or about one pattern (as the report
names it), and releases the URLs they hold: use it when a site has changed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs < 1 {
				return usagef("traps: --runs %d: must be 1 or more", runs)
			}
			if clear != "" { // a write: with the run lock, as a crawl could be learning the same rules
				if err := a.setup(); err != nil {
					return err
				}
				if a.postgres() {
					db, err := a.openPostgres(cmd.Context())
					if err != nil {
						return err
					}
					defer db.Close()
					unlock, err := lockPostgres(cmd.Context(), db)
					if err != nil {
						return err
					}
					defer unlock()
					return clearTraps(cmd.Context(), a, db, clear)
				}
				lock, err := runlock.Acquire(a.cfg.Database.Path)
				if err != nil {
					return err
				}
				defer lock.Release()
				db, err := a.openExisting(cmd.Context())
				if err != nil {
					return err
				}
				defer db.Close()
				return clearTraps(cmd.Context(), a, db, clear)
			}
			db, closeDB, err := a.openReadAny(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
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
	cmd.Flags().StringVar(&clear, "clear", "", "forget the trap evidence of a domain or URL pattern and release its held URLs")
	return cmd
}

// trapReader is what the trap report reads, on either backend.
type trapReader interface {
	RecentRuns(ctx context.Context, limit int) ([]store.Run, error)
	EachURL(ctx context.Context, fn func(store.URLRow) error) error
	TrapEvents(ctx context.Context, runs int) ([]store.TrapEvent, error)
	TrapRules(ctx context.Context) ([]store.TrapRule, error)
}

// clearTraps forgets the trap rules of a domain or unit.
func clearTraps(ctx context.Context, a *app, db interface {
	ForgetTrapRules(ctx context.Context, domainOrUnit string) (rules, released int, err error)
}, which string) error {
	rules, released, err := db.ForgetTrapRules(ctx, which)
	if err != nil {
		return err
	}
	if rules == 0 {
		return fmt.Errorf("traps --clear %s: no trap evidence for that domain or pattern (strata traps lists them)", which)
	}
	_, err = fmt.Fprintf(a.stdout, "forgot %d trap rule(s) of %s; %d held URL(s) released\n", rules, which, released)
	return err
}

// ruleReport is a URL pattern the trap defences watch or throttle.
type ruleReport struct {
	Unit       string `json:"pattern"`
	State      string `json:"state"`            // throttled or watched
	Reason     string `json:"reason,omitempty"` // duplicates or pattern
	Fetched    int    `json:"pages_fetched"`
	Repeats    int    `json:"pages_repeating"`
	SelfFound  int    `json:"found_on_own_pages"`
	Depth      int    `json:"levels"`
	Held       int    `json:"held_urls"`
	ProbeEvery int    `json:"probe_every_runs,omitempty"`
	Since      int64  `json:"since_run,omitempty"`
}

func (r ruleReport) String() string {
	line := fmt.Sprintf("%s %s: %d of %d pages fetched repeated an earlier one's text; %d URLs found on its own pages, %d levels",
		r.State, r.Unit, r.Repeats, r.Fetched, r.SelfFound, r.Depth)
	if r.State == "throttled" {
		line += fmt.Sprintf("; %s since run %d, %d URLs held, a probe every %d run(s)", r.Reason, r.Since, r.Held, r.ProbeEvery)
	}
	return line
}

// domainReport is one domain of the trap report.
type domainReport struct {
	Domain      string         `json:"domain"`
	URLs        int            `json:"urls"`
	NewLastRun  int            `json:"new_in_last_run"`
	Pages       int            `json:"pages_with_content"`
	Distinct    int            `json:"distinct_contents"`
	Events      []string       `json:"trap_events"`
	Rules       []ruleReport   `json:"trap_rules"`
	Held        int            `json:"held_urls"`
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

func trapReport(ctx context.Context, a *app, db trapReader, runs int) ([]*domainReport, error) {
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
	rules, err := db.TrapRules(ctx)
	if err != nil {
		return nil, err
	}
	throttled := map[string]int{}
	for _, r := range rules {
		rep := reps[r.Domain]
		if rep == nil || (!r.Throttled && r.Dups == 0) {
			continue
		}
		rr := ruleReport{Unit: r.Unit, State: "watched", Fetched: r.Judged, Repeats: r.Dups, SelfFound: r.SelfFound,
			Depth: r.MaxLevel - r.MinLevel, Held: r.Held}
		if r.Throttled {
			rr.State, rr.Reason, rr.ProbeEvery, rr.Since = "throttled", r.Reason, r.ProbeEvery, r.SinceRun
			throttled[r.Domain]++
		}
		rep.Rules = append(rep.Rules, rr)
		rep.Held += r.Held
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
		rep.Score = 1000*float64(len(rep.Events)+throttled[d]) + float64(rep.NewLastRun)*(0.1+rep.DuplicateShare()) + float64(len(rep.Longest))/100
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
	fmt.Fprintln(tw, "RANK\tDOMAIN\tURLS\tNEW LAST RUN\tDISTINCT CONTENT\tTRAP EVENTS\tHELD\tLONGEST URL")
	for i, r := range reps {
		distinct := "-"
		if r.Pages > 0 {
			distinct = fmt.Sprintf("%.0f%% of %d", 100*float64(r.Distinct)/float64(r.Pages), r.Pages)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%d\t%d\t%d bytes\n", i+1, r.Domain, r.URLs, r.NewLastRun, distinct, len(r.Events), r.Held,
			len(r.Longest))
	}
	tw.Flush()
	for i, r := range reps {
		if i >= 5 || (len(r.Events) == 0 && len(r.Rules) == 0 && r.Suggestion == "") {
			continue
		}
		fmt.Fprintf(w, "\n%d. %s\n", i+1, r.Domain)
		for _, rr := range r.Rules {
			fmt.Fprintf(w, "   %s\n", rr)
		}
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
