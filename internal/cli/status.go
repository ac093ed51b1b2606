package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/store"
)

func newStatusCmd(a *app) *cobra.Command {
	var asJSON, seeds bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Summarise the URL table and the last runs",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, closeDB, err := a.openReadAny(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			if seeds {
				return seedReport(cmd.Context(), a, db, asJSON)
			}
			st, err := db.Status(cmd.Context(), 5)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, statusJSON(st))
			}
			return printStatus(a, st)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&seeds, "seeds", false, "per seed, the paper's table 2: links per crawl, changes, children changed, fr_max, threshold")
	return cmd
}

type seedReportJSON struct {
	URL             string  `json:"url"`
	LinksPerCrawl   float64 `json:"internal_links_per_crawl"`
	Changes         int     `json:"changes"`
	Crawls          int     `json:"crawls"`
	ChildrenChanged float64 `json:"children_changed_share"`
	FrMax           int     `json:"fr_max"`
	Threshold       float64 `json:"threshold"`
}

func seedReport(ctx context.Context, a *app, db statusStore, asJSON bool) error {
	limit := a.cfg.Frequency.Limit
	reports, err := db.SeedReports(ctx, limit)
	if err != nil {
		return err
	}
	kids := map[int64]float64{}
	for _, r := range reports {
		k, err := db.ChildRecords(ctx, r.URLID, limit)
		if err != nil {
			return err
		}
		kids[r.URLID] = frequency.ChildChangeRatio(crawler.FrequencyHistories(k), limit)
	}
	if asJSON {
		out := make([]seedReportJSON, len(reports))
		for i, r := range reports {
			out[i] = seedReportJSON{URL: r.URL, LinksPerCrawl: r.InternalLinks, Changes: r.Changes, Crawls: r.Crawls,
				ChildrenChanged: kids[r.URLID], FrMax: r.FrMax, Threshold: frequency.DefaultSelective().Threshold(r.Threshold)}
		}
		return writeJSON(a.stdout, out)
	}
	if len(reports) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no seeds yet: add one with strata seed add URL")
		return err
	}
	return printSeedReport(a.stdout, reports, kids, limit)
}

func printStatus(a *app, st *store.Status) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "database\t%s\n", a.databaseName())
	total := 0
	for _, s := range store.States {
		total += st.URLs[s]
	}
	fmt.Fprintf(tw, "urls\t%d\n", total)
	for _, s := range store.States {
		fmt.Fprintf(tw, "  %s\t%d\n", s, st.URLs[s])
	}
	fmt.Fprintf(tw, "seeds\t%d\n", st.Seeds)
	fmt.Fprintf(tw, "due next run\t%d\n", st.DueNextRun)
	fmt.Fprintf(tw, "hosts\t%d\n", st.Hosts)
	fmt.Fprintf(tw, "fetches in last run\t%d\n", st.LastRunFetches)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.Runs) == 0 {
		_, err := fmt.Fprintln(a.stdout, "\nno runs yet")
		return err
	}
	fmt.Fprintf(a.stdout, "\nlast %d runs\n", len(st.Runs))
	tw = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The outcome columns (NEW to ERRORS) are package outcome's kinds, counted from the run's fetches
	// as the run's summary, history, serve and export count them; NEW URLS are URLs the run found.
	fmt.Fprintln(tw, "RUN\tSTARTED (UTC)\tOFFSET\tDURATION\tSTATUS\tFETCHED\tNEW\tCHANGED\tEXPECTED\tUNCHANGED\t304\t404/410\tERRORS\tGONE\tNOT DUE\tSKIPPED\tNEW URLS\t")
	now := time.Now()
	for _, r := range st.Runs {
		// EXPECTED is what the rate estimates foresaw among the pages fetched with one (their observed
		// changes in brackets): the change model's calibration at a glance.
		expected := "-"
		if r.Estimated > 0 {
			expected = fmt.Sprintf("%.1f (%d)", r.ExpectedChanges, r.ObservedChanges)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", r.ID, fmtTime(r.StartedAt),
			r.StartOffset.Round(time.Second), r.Duration(now).Round(time.Second), r.Status,
			r.Fetched, r.New, r.Changed, expected, r.Unchanged, r.NotModified, r.NotFound, r.Errors, r.Gone,
			r.SkippedFr, r.SkippedSelective, r.NewURLs)
	}
	return tw.Flush()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

type runJSON struct {
	ID               int64   `json:"id"`
	StartedAt        string  `json:"started_at"`
	EndedAt          string  `json:"ended_at,omitempty"`
	StartOffsetSec   float64 `json:"start_offset_seconds"`
	DurationSec      float64 `json:"duration_seconds"`
	Status           string  `json:"status"`
	Fetched          int     `json:"fetched"`
	New              int     `json:"new"` // fetches that stored a page's first version (package outcome)
	Changed          int     `json:"changed"`
	Unchanged        int     `json:"unchanged"`
	NotModified      int     `json:"not_modified"`
	Errors           int     `json:"errors"`
	NotFound         int     `json:"not_found"` // 404 and 410 answers
	Gone             int     `json:"gone"`      // pages the run marked gone
	Blocked          int     `json:"blocked"`
	SkippedFr        int     `json:"skipped_fr"`
	SkippedSelective int     `json:"skipped_selective"`
	Hubs             int     `json:"hubs"`
	HubsReentered    int     `json:"hubs_reentered"`
	TrapEvents       int     `json:"trap_events"`
	NewURLs          int     `json:"new_urls"`
	Bytes            int64   `json:"bytes"`
	Budget           int     `json:"budget"`
	NewFetched       int     `json:"new_fetched"`
	KnownFetched     int     `json:"known_fetched"`
	// The change model's accountability: pages fetched with a rate estimate, the changes the
	// estimates expected among them, and the changes observed.
	Estimated       int     `json:"estimated"`
	ExpectedChanges float64 `json:"expected_changes"`
	ObservedChanges int     `json:"observed_changes"`
}

type statusOut struct {
	URLs           map[string]int `json:"urls"`
	Seeds          int            `json:"seeds"`
	DueNextRun     int            `json:"due_next_run"`
	Hosts          int            `json:"hosts"`
	LastRunFetches int            `json:"fetches_in_last_run"`
	Runs           []runJSON      `json:"runs"`
}

func statusJSON(st *store.Status) statusOut {
	out := statusOut{URLs: st.URLs, Seeds: st.Seeds, DueNextRun: st.DueNextRun, Hosts: st.Hosts,
		LastRunFetches: st.LastRunFetches, Runs: []runJSON{}}
	now := time.Now()
	for _, r := range st.Runs {
		j := runJSON{ID: r.ID, StartedAt: r.StartedAt.UTC().Format(time.RFC3339), StartOffsetSec: r.StartOffset.Seconds(),
			DurationSec: r.Duration(now).Seconds(), Status: r.Status, Fetched: r.Fetched, New: r.New, Changed: r.Changed,
			Unchanged: r.Unchanged, NotModified: r.NotModified, Errors: r.Errors, NotFound: r.NotFound, Gone: r.Gone, Blocked: r.Blocked,
			SkippedFr: r.SkippedFr, SkippedSelective: r.SkippedSelective, Hubs: r.Hubs, HubsReentered: r.HubsReentered,
			TrapEvents: r.TrapEvents, NewURLs: r.NewURLs, Bytes: r.Bytes, Budget: r.Budget, NewFetched: r.NewFetched,
			KnownFetched: r.KnownFetched, Estimated: r.Estimated, ExpectedChanges: r.ExpectedChanges,
			ObservedChanges: r.ObservedChanges}
		if !r.EndedAt.IsZero() {
			j.EndedAt = r.EndedAt.UTC().Format(time.RFC3339)
		}
		out.Runs = append(out.Runs, j)
	}
	return out
}
