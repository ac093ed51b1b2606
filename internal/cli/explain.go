package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/frequency"
	"github.com/strata-crawler/strata/internal/config"
	"github.com/strata-crawler/strata/internal/hints"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

func newExplainCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "explain URL",
		Short: "Explain a page's schedule: fr, fr_max, threshold, last records, children, and why it will or will not be crawled next run",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("explain: want exactly one URL, got %d", len(args))
			}
			u, err := urlnorm.Normalize(args[0])
			if err != nil {
				return fmt.Errorf("explain: %w", err)
			}
			db, closeDB, err := a.openReadAny(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			return explain(cmd.Context(), a, db, u)
		},
	}
}

func explain(ctx context.Context, a *app, db explainStore, u string) error {
	e, err := explainURL(ctx, a.cfg, db, u)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("explain: strata does not know %s (add it with strata seed add)", u)
	}
	if err != nil {
		return err
	}
	w := a.stdout
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range e.Facts {
		fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.Value)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "next run:")
	for _, line := range e.NextRun {
		fmt.Fprintf(w, "  %s\n", line)
	}
	return nil
}

// explainURL works out why the page u (normalised) will or will not be crawled next run, from the
// database alone: strata explain prints it and strata serve shows it on the page's view, so both say
// the same. It only reads db, and returns an error wrapping store.ErrNotFound for an unknown URL.
func explainURL(ctx context.Context, cfg *config.Config, db explainStore, u string) (*serve.Explanation, error) {
	info, err := db.URLInfo(ctx, u)
	if err != nil {
		return nil, err
	}
	limit := cfg.Frequency.Limit
	recs, err := db.Records(ctx, info.ID, limit)
	if err != nil {
		return nil, err
	}
	kids, err := db.ChildRecords(ctx, info.ID, limit)
	if err != nil {
		return nil, err
	}
	policy, err := crawler.SetupOf(cfg).Policy.PerPage() // nil for the optimal policy, which plans every page at once
	if err != nil {
		return nil, err
	}
	hh, err := db.HostHints(ctx, info.Origin)
	if err != nil {
		return nil, err
	}
	rule := frequency.DefaultSelective()
	e := &serve.Explanation{}
	fact := func(name, format string, args ...any) {
		e.Facts = append(e.Facts, serve.Fact{Name: name, Value: fmt.Sprintf(format, args...)})
	}
	fact("url", "%s", info.URL)
	role := "page"
	switch {
	case info.IsSeed:
		role = "seed"
	case info.ParentURL != "":
		role = "found on " + info.ParentURL
	}
	fact("role", "%s, level %d", role, info.Level)
	fact("state", "%s", info.State)
	fact("fr / fr_max", "%d / %d (runs to wait / revisit interval in runs)", info.Fr, info.FrMax)
	fact("last crawled", "%s", fmtTime(info.LastCrawled))
	fact(fmt.Sprintf("last %d records", limit), "%s", recordLine(recs))
	fr := crawler.FrequencyRecords(recs)
	fact("own change share", "%.0f%%", 100*frequency.ChangeRatio(fr, limit))
	if info.ChangeRate >= 0 {
		fact("change rate", "%.3f changes per run, estimated from its history (bucket %d of 256)", info.ChangeRate, info.RateBucket)
	}
	if info.ReleaseDays != 0 {
		fact("release days", "%s: its changes are first seen on these weekdays (UTC), so it is crawled once one has begun",
			frequency.WeekdayNames(info.ReleaseDays))
	}
	if info.Weight != 1 || info.Priority != 1 {
		fact("weight", "%.2g (seed priority %.2g, and its in-links)", info.Weight, info.Priority)
	}
	if info.HintLastMod != "" {
		fact("provider hint", "%s says it last changed %s (site clock; the site's Date at our last fetch: %s)",
			info.HintSource, info.HintLastMod, fmtTime(info.SiteDate))
	}
	if trust := (hints.Trust{Agreed: hh.Agreed, Disagreed: hh.Disagreed}); trust.Observations() > 0 || !hh.ReadAt.IsZero() {
		fact("site's hints", "trust %s; announced %d of the %d changes seen on hinted pages; sitemaps and feeds last read %s",
			trust, hh.Announced, hh.Announced+hh.Missed, fmtTime(hh.ReadAt))
	}
	if len(kids) > 0 {
		ev := frequency.ChildEvidence(crawler.FrequencyHistories(kids), limit)
		fact("children", "%d known, %d of them fetched twice or more; of those %.0f%% changed over their last %d records",
			ev.Children, ev.Known, 100*ev.Ratio(), limit)
		fact("threshold", "%.2f (when the hub is unchanged: its subtree is opened if at least this share of children changed, "+
			"else its quiet pages wait)", rule.Threshold(info.Threshold))
	}
	if info.SkippedRun > 0 {
		fact("last skipped", "run %d, by the selective rule of %s (skipped %d runs in a row so far)", info.SkippedRun, info.SkippedBy, info.Skips)
	}
	e.NextRun = nextRun(info, recs, kids, rule, limit)
	if info.State == "active" && policy == nil {
		e.NextRun = append(e.NextRun, "after its next crawl, its change rate is re-estimated and the optimal plan gives it its bucket's fr_max (see strata plan)")
	}
	if info.State == "active" && policy != nil {
		unchanged := append(fr, frequency.Record{Run: -1})
		changed := append(append([]frequency.Record(nil), fr...), frequency.Record{Run: -1, Changed: len(fr) > 0})
		e.NextRun = append(e.NextRun, fmt.Sprintf("after its next crawl, fr_max becomes %d if the page is unchanged, %d if it changed (%s policy)",
			policy.NextFrMax(frequency.Page{FrMax: info.FrMax, History: unchanged}),
			policy.NextFrMax(frequency.Page{FrMax: info.FrMax, History: changed}), policy.Name()))
	}
	return e, nil
}

// nextRun explains, in sentences, what the next run will do with the page.
func nextRun(info *store.URLInfo, recs []store.Record, kids [][]store.Record, rule frequency.Selective, limit int) []string {
	var out []string
	switch info.State {
	case "active":
	case "blocked":
		return []string{"not crawled: robots.txt forbids it (it becomes active again if a later robots.txt allows it)"}
	case "filtered":
		return []string{"not crawled: the URL filter rejects it, or it is not text, or its host resolves to a private address"}
	case "gone":
		return []string{"not crawled: the site said it is gone (410, or 404 three times in a row)"}
	case "removed":
		return []string{"not crawled: its seed was removed (strata seed add brings it back)"}
	}
	if len(info.Statuses) > 0 && info.Statuses[0] == http.StatusNotFound {
		n := 0
		for n < len(info.Statuses) && info.Statuses[n] == http.StatusNotFound {
			n++
		}
		last := "its last fetch"
		if n > 1 {
			last = fmt.Sprintf("its last %d fetches", n)
		}
		return []string{fmt.Sprintf("due: %s answered 404, and a page that answered 404 is fetched in every run, "+
			"whatever its fr, and never skipped with its hub; three 404s in a row mark it gone", last)}
	}
	if info.Snapshot {
		return []string{"due: its seed asks for a snapshot every run (strata seed add --snapshot), so it is fetched in every run, " +
			"whatever its fr, and never skipped with its hub; only a host backed off as unreachable waits"}
	}
	if info.Fr > 1 {
		out = append(out, fmt.Sprintf("not due: fr %d counts down to %d (due in %d runs)", info.Fr, info.Fr-1, info.Fr))
	} else {
		out = append(out, fmt.Sprintf("due: fr %d counts down to 0", info.Fr))
		quiet := frequency.Quiet(crawler.FrequencyRecords(recs), limit, rule.Threshold(0))
		switch {
		case info.ParentURL == "":
		case !frequency.HasEvidence(crawler.FrequencyRecords(recs)):
			out = append(out, "its hubs cannot skip it: it has not been fetched twice yet, so nothing shows it is quiet")
		case info.Skips >= 3:
			out = append(out, "crawled whatever its hubs decide: skipped 3 runs in a row already")
		case quiet:
			out = append(out, fmt.Sprintf("unless a hub above it (its parent %s, or one further up) comes due too, is unchanged and too few of "+
				"its children changed: then its quiet pages, this one included, wait a run (skipped %d runs in a row so far; crawled anyway after 3)",
				info.ParentURL, info.Skips))
		default:
			out = append(out, "its hubs cannot skip it: its own history shows it changes too often")
		}
	}
	if len(kids) > 0 {
		ev := frequency.ChildEvidence(crawler.FrequencyHistories(kids), limit)
		verdict, why := rule.Decide(false, rule.Threshold(info.Threshold), ev)
		var what string
		switch verdict {
		case frequency.Open:
			what = "opened: its children are crawled in this run"
		case frequency.Skip:
			what = "skipped: its quiet due pages wait a run"
		default:
			what = "left alone: its children are crawled as their own fr allows"
		}
		out = append(out, fmt.Sprintf("as a hub: if it is crawled and unchanged, its subtree will be %s (%s); "+
			"if it changed, its links are followed and its children visited as their own fr allows", what, why))
	}
	return out
}

func recordLine(recs []store.Record) string {
	if len(recs) == 0 {
		return "none yet"
	}
	var b strings.Builder
	for i, r := range recs {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case r.Failed:
			b.WriteString("x")
		case r.Changed:
			b.WriteString("C")
		default:
			b.WriteString(".")
		}
	}
	b.WriteString("   (oldest first; C changed, . unchanged, x no usable answer)")
	return b.String()
}

// printSeedReport prints the paper's table 2 for every seed.
func printSeedReport(w io.Writer, reports []store.SeedReport, kids map[int64]float64, limit int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "SEED\tLINKS/CRAWL\tCHANGES (LAST %d)\tCHILDREN CHANGED\tFR_MAX\tTHRESHOLD\n", limit)
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%.1f\t%d of %d\t%.0f%%\t%d\t%.2f\n", r.URL, r.InternalLinks, r.Changes, r.Crawls,
			100*kids[r.URLID], r.FrMax, frequency.DefaultSelective().Threshold(r.Threshold))
	}
	return tw.Flush()
}
