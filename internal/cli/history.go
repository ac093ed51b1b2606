package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/outcome"
	"github.com/strata-crawler/strata/internal/serve"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

// reader is what show, diff and export jsonl share: the database, on either backend, and this
// machine's archive.
type reader struct {
	db    readStore
	close func()
	arch  *archive.Dir
	homes serve.VersionHomes // where fleet workers archived versions; nil on SQLite
}

// openReader opens the database and the archive read-only, for the commands that only read them.
func (a *app) openReader(ctx context.Context) (*reader, error) {
	db, closeDB, err := a.openReadAny(ctx)
	if err != nil {
		return nil, err
	}
	r := &reader{db: db, close: closeDB, arch: archive.ReadOnly(a.cfg.Archive.Root)}
	if h, ok := db.(serve.VersionHomes); ok {
		r.homes = h
	}
	return r, nil
}

func (r *reader) Close() { r.close() }

// readVersion reads version v with read (one of the archive's readers). A version missing from this
// machine's archive is an error that says where it is: under a fleet worker's archive root, which
// only that machine can read, or gone (deleted by hand).
func readVersion[T any](ctx context.Context, r *reader, what string, v store.Version, read func(string) (T, error)) (T, error) {
	out, err := read(v.Path)
	if !missing(err) {
		return out, err
	}
	at := v.FetchedAt.UTC().Format(time.RFC3339)
	if r.homes != nil {
		worker, root, ok, herr := r.homes.Home(ctx, v.RunID, v.Path)
		if herr != nil {
			return out, herr
		}
		if ok {
			return out, fmt.Errorf("%s: the version of %s (%s) is held by worker %s under its archive root %s, not in this machine's archive; run the command there",
				what, at, v.Path, worker, root)
		}
	}
	return out, fmt.Errorf("%s: the version of %s (%s) is missing from the archive; was it deleted by hand?", what, at, v.Path)
}

// versions returns the normalised URL and its stored versions, oldest first.
func (r *reader) versions(ctx context.Context, rawURL string) (string, []store.Version, error) {
	u, err := urlnorm.Normalize(rawURL)
	if err != nil {
		return "", nil, err
	}
	var vs []store.Version
	err = r.db.EachVersion(ctx, store.VersionFilter{URL: u}, func(v store.Version) error {
		vs = append(vs, v)
		return nil
	})
	if err == nil && len(vs) == 0 {
		if _, herr := r.db.History(ctx, u); errors.Is(herr, store.ErrNotFound) {
			return u, nil, usageError{herr}
		}
		return u, nil, fmt.Errorf("%s: no version is stored yet (see strata history)", u)
	}
	return u, vs, err
}

// missing reports whether the error means a version's files are gone from the archive.
func missing(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// selector picks a version: a run id ("12"), a day ("2026-11-22": the end of that day, UTC) or a
// time (RFC 3339). The version current then is the last one stored at or before it.
type selector struct {
	run   int64
	at    time.Time
	start time.Time // when the named day or time begins; zero for a run
	text  string    // as the user wrote it
}

func parseSelector(s string) (selector, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return selector{run: n, text: s}, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return selector{at: t.Add(24*time.Hour - time.Nanosecond), start: t, text: s}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return selector{at: t, start: t, text: s}, nil
	}
	return selector{}, usagef("%q is not a run id, a date (2026-11-22) or a time (2026-11-22T03:15:00Z)", s)
}

// parseFlagSelector parses the value of flag and checks that it names something: a run that
// exists, a day or time that has begun. A selector past everything would otherwise quietly pick the
// latest version.
func (r *reader) parseFlagSelector(ctx context.Context, flag, s string) (selector, error) {
	sel, err := parseSelector(s)
	if err != nil {
		return sel, usagef("%s %w", flag, err)
	}
	if sel.run > 0 {
		return sel, checkRun(ctx, r.db, flag, sel.run)
	}
	if sel.start.After(time.Now()) {
		return sel, usagef("%s %s is in the future", flag, s)
	}
	return sel, nil
}

// runLister finds runs, on either backend.
type runLister interface {
	RunByID(ctx context.Context, id int64) (store.Run, error)
	RecentRuns(ctx context.Context, limit int) ([]store.Run, error)
}

// checkRun refuses a run id (given as flag) that names no run.
func checkRun(ctx context.Context, db runLister, flag string, id int64) error {
	_, err := db.RunByID(ctx, id)
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	runs, rerr := db.RecentRuns(ctx, 1)
	switch {
	case rerr != nil:
		return rerr
	case len(runs) == 0:
		return usagef("%s %d: there is no run yet", flag, id)
	}
	return usagef("%s %d: there is no run %d (the last is run %d)", flag, id, id, runs[0].ID)
}

// pick returns the version current at sel, or an error naming the earliest stored one.
func (sel selector) pick(url string, vs []store.Version) (store.Version, error) {
	var found *store.Version
	for i := range vs {
		v := vs[i]
		if (sel.run != 0 && v.RunID <= sel.run) || (!sel.at.IsZero() && !v.FetchedAt.After(sel.at)) {
			found = &vs[i]
		}
	}
	if found == nil {
		return store.Version{}, fmt.Errorf("%s: no version stored by then; the first is from %s (run %d)",
			url, vs[0].FetchedAt.UTC().Format(time.RFC3339), vs[0].RunID)
	}
	return *found, nil
}

func newHistoryCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history URL",
		Short: "List every fetch of a page: run, time, status, size, whether it changed, the stored version",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("history: want exactly one URL, got %d", len(args))
			}
			u, err := urlnorm.Normalize(args[0])
			if err != nil {
				return fmt.Errorf("history: %w", err)
			}
			db, closeDB, err := a.openReadAny(cmd.Context())
			if err != nil {
				return err
			}
			defer closeDB()
			hist, err := db.History(cmd.Context(), u)
			if errors.Is(err, store.ErrNotFound) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			var homes serve.VersionHomes
			if h, ok := db.(serve.VersionHomes); ok {
				homes = h
			}
			return printHistoryHomes(cmd.Context(), a.stdout, archive.ReadOnly(a.cfg.Archive.Root), homes, u, hist, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type historyJSON struct {
	Run         int64   `json:"run"`
	Outcome     string  `json:"outcome"` // package outcome's kind: new, changed, unchanged, not_modified, not_found, redirect, error, other
	FetchedAt   string  `json:"fetched_at"`
	Status      int     `json:"status"`
	Size        int64   `json:"size"`
	Changed     bool    `json:"changed"`
	Magnitude   float64 `json:"magnitude,omitempty"`
	NotModified bool    `json:"not_modified"`
	Stored      bool    `json:"stored"`
	Error       string  `json:"error,omitempty"`
	Version     string  `json:"version,omitempty"`
	Missing     bool    `json:"missing,omitempty"`
	Pruned      bool    `json:"pruned,omitempty"`
	// HeldBy and HeldIn are the fleet worker whose archive root holds a version missing here.
	HeldBy   string `json:"held_by,omitempty"`
	HeldIn   string `json:"held_in,omitempty"`
	TextMode string `json:"text_mode,omitempty"`
}

func printHistory(w io.Writer, arch *archive.Dir, u string, hist []store.HistoryEntry, asJSON bool) error {
	return printHistoryHomes(context.Background(), w, arch, nil, u, hist, asJSON)
}

// printHistoryHomes prints hist; a version missing from arch that homes (nil: none) says a fleet
// worker archived is shown with that worker and its archive root.
func printHistoryHomes(ctx context.Context, w io.Writer, arch *archive.Dir, homes serve.VersionHomes, u string, hist []store.HistoryEntry, asJSON bool) error {
	rows := make([]historyJSON, len(hist))
	var storedRun int64 // the run of the fetch that stored the current version
	for i, h := range hist {
		if h.Stored != "" {
			storedRun = h.RunID
		}
		rows[i] = historyJSON{Run: h.RunID, Outcome: string(outcome.Of(h.Facts())), FetchedAt: h.FetchedAt.UTC().Format(time.RFC3339), Status: h.Status,
			Size: h.Size, Changed: h.Changed, Magnitude: max(h.Magnitude, 0), NotModified: h.NotModified, Stored: h.Stored != "", Error: h.Error,
			Version: h.Current, Pruned: h.Pruned, TextMode: h.TextMode}
		if h.Current != "" && !h.Pruned {
			if err := arch.Check(h.Current); err != nil {
				rows[i].Missing = true
				if homes != nil {
					worker, root, ok, err := homes.Home(ctx, storedRun, h.Current)
					if err != nil {
						return err
					}
					if ok {
						rows[i].Missing, rows[i].HeldBy, rows[i].HeldIn = false, worker, root
					}
				}
			}
		}
	}
	if asJSON {
		return writeJSON(w, rows)
	}
	fmt.Fprintf(w, "%s: %d fetches\n", u, len(hist))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tFETCHED (UTC)\tSTATUS\tSIZE\tOUTCOME\tVERSION")
	for i, r := range rows {
		change := outcome.Label(hist[i].Facts(), hist[i].Magnitude)
		status := strconv.Itoa(r.Status)
		if r.Status == 0 {
			status = "error"
		}
		version := r.Version
		switch {
		case r.Pruned:
			version += " (pruned: older than archive.keep)"
		case r.HeldBy != "":
			version += fmt.Sprintf(" (held by worker %s, under %s)", r.HeldBy, r.HeldIn)
		case r.Missing:
			version += " (missing from the archive)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Run, hist[i].FetchedAt.UTC().Format("2006-01-02 15:04:05"),
			status, humanBytes(r.Size), change, version)
	}
	return tw.Flush()
}

func newShowCmd(a *app) *cobra.Command {
	var at string
	var html bool
	cmd := &cobra.Command{
		Use:   "show URL [--at DATE|RUN] [--html]",
		Short: "Print the stored text (or HTML) of the version current at a time or run (default: the latest)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("show: want exactly one URL, got %d", len(args))
			}
			sel := selector{at: time.Now()}
			if at != "" {
				if _, err := parseSelector(at); err != nil {
					return usagef("show: --at %w", err)
				}
			}
			r, err := a.openReader(cmd.Context())
			if err != nil {
				return err
			}
			defer r.Close()
			if at != "" {
				if sel, err = r.parseFlagSelector(cmd.Context(), "show: --at", at); err != nil {
					return err
				}
			}
			u, vs, err := r.versions(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			v, err := sel.pick(u, vs)
			if err != nil {
				return err
			}
			read := func(p string) ([]byte, error) {
				s, err := r.arch.ReadText(p)
				return []byte(s), err
			}
			if html {
				read = r.arch.ReadRaw
			}
			body, err := readVersion(cmd.Context(), r, "show "+u, v, read)
			if err != nil {
				return err
			}
			if isTerminal(a.stdout) {
				body = terminalSafe(body) // an archived page must not drive the terminal
			}
			if _, err := a.stdout.Write(body); err != nil {
				return err
			}
			if len(body) > 0 && body[len(body)-1] != '\n' {
				fmt.Fprintln(a.stdout)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "a run id, a date (2026-11-22) or a time (RFC 3339)")
	cmd.Flags().BoolVar(&html, "html", false, "print the page as served instead of its text")
	return cmd
}

func newDiffCmd(a *app) *cobra.Command {
	var from, to, color string
	cmd := &cobra.Command{
		Use:   "diff URL [--from A] [--to B]",
		Short: "Show what changed in a page's text between two versions (default: the last two)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("diff: want exactly one URL, got %d", len(args))
			}
			if color != "auto" && color != "always" && color != "never" {
				return usagef("diff: --color must be auto, always or never, got %q", color)
			}
			for flag, v := range map[string]string{"--from": from, "--to": to} {
				if _, err := parseSelector(v); v != "" && err != nil {
					return usagef("diff: %s %w", flag, err)
				}
			}
			r, err := a.openReader(cmd.Context())
			if err != nil {
				return err
			}
			defer r.Close()
			var fromSel, toSel *selector
			for _, f := range []struct {
				flag, value string
				sel         **selector
			}{{"--from", from, &fromSel}, {"--to", to, &toSel}} {
				if f.value == "" {
					continue
				}
				sel, err := r.parseFlagSelector(cmd.Context(), "diff: "+f.flag, f.value)
				if err != nil {
					return err
				}
				*f.sel = &sel
			}
			u, vs, err := r.versions(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			older, newer, err := pickPair(u, vs, fromSel, toSel)
			if err != nil {
				return err
			}
			texts := make([]string, 2)
			for i, v := range []store.Version{older, newer} {
				if texts[i], err = readVersion(cmd.Context(), r, "diff "+u, v, r.arch.ReadText); err != nil {
					return err
				}
			}
			if isTerminal(a.stdout) {
				for i := range texts {
					texts[i] = string(terminalSafe([]byte(texts[i])))
				}
			}
			label := func(v store.Version) string {
				return fmt.Sprintf("%s %s (run %d)", u, v.FetchedAt.UTC().Format(time.RFC3339), v.RunID)
			}
			d := udiff.Unified(label(older), label(newer), withNewline(texts[0]), withNewline(texts[1]))
			if d == "" {
				fmt.Fprintf(a.stdout, "%s: the two versions have the same text\n", u)
				return nil
			}
			return writeDiff(a.stdout, d, colorOn(color, a.stdout))
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the older version: a run id, a date or a time")
	cmd.Flags().StringVar(&to, "to", "", "the newer version: a run id, a date or a time")
	cmd.Flags().StringVar(&color, "color", "auto", "colour the diff: auto (on a terminal, unless NO_COLOR is set), always or never")
	return cmd
}

// pickPair chooses the versions to compare: by default the last two stored (every stored version
// after the first is a change).
func pickPair(u string, vs []store.Version, from, to *selector) (older, newer store.Version, err error) {
	newer = vs[len(vs)-1]
	if to != nil {
		if newer, err = to.pick(u, vs); err != nil {
			return older, newer, err
		}
	}
	if from != nil {
		older, err = from.pick(u, vs)
		return older, newer, err
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].FetchedAt.Before(newer.FetchedAt) {
			return vs[i], newer, nil
		}
	}
	return older, newer, fmt.Errorf("%s: only one version is stored before %s; nothing to compare",
		u, newer.FetchedAt.UTC().Format(time.RFC3339))
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// isTerminal reports whether w is a terminal; a variable so that tests can stand in for one.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// colorOn decides whether output to w is coloured: --color always or never as asked; auto on a
// terminal unless the NO_COLOR environment variable is set to anything but the empty string
// (no-color.org), which a flag the user typed overrides.
func colorOn(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

func writeDiff(w io.Writer, d string, color bool) error {
	bw := bufio.NewWriter(w)
	for _, line := range strings.SplitAfter(d, "\n") {
		if !color || line == "" {
			bw.WriteString(line)
			continue
		}
		code := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			code = "1"
		case strings.HasPrefix(line, "@@"):
			code = "36"
		case strings.HasPrefix(line, "+"):
			code = "32"
		case strings.HasPrefix(line, "-"):
			code = "31"
		}
		if code == "" {
			bw.WriteString(line)
		} else {
			fmt.Fprintf(bw, "\x1b[%sm%s\x1b[0m\n", code, strings.TrimSuffix(line, "\n"))
		}
	}
	return bw.Flush()
}

func newExportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Export the archive for data-mining pipelines", Args: noArgs}
	var since string
	var run int64
	var host string
	jsonl := &cobra.Command{
		Use:   "jsonl [--since DATE] [--run ID] [--host H]",
		Short: "Write one JSON object per stored page version to standard output, streaming",
		Long: `Write one JSON object per stored page version: url, fetched_at, run, title, text,
content_hash, changed (false for a page's first version), outcome (new: the page's first
version; changed; unchanged: new bytes with the same words, as history and serve say), path and text_mode (main, full, or
fallback: the whole text because the page had no main content; absent for versions stored
before strata recorded it). Versions come oldest first and
are streamed, so memory stays constant however large the archive. A version whose files were
removed by hand is written with "missing": true and no text; with database.url, one that a fleet
worker archived under its own archive root is written with no text and "held_by" and "held_in"
naming that worker and root.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := store.VersionFilter{RunID: run, Host: host}
			if since != "" {
				sel, err := parseSelector(since)
				if err != nil || sel.run != 0 {
					return usagef("export: --since wants a date (2026-11-22) or a time (RFC 3339), got %q", since)
				}
				f.Since = sel.at
				if len(since) == len("2006-01-02") {
					f.Since = sel.at.Add(-24*time.Hour + time.Nanosecond) // the start of that day
				}
			}
			if cmd.Flags().Changed("run") && run < 1 {
				return usagef("export: --run %d: run ids start at 1", run)
			}
			r, err := a.openReader(cmd.Context())
			if err != nil {
				return err
			}
			defer r.Close()
			if run > 0 {
				if err := checkRun(cmd.Context(), r.db, "export: --run", run); err != nil {
					return err
				}
			}
			bw := bufio.NewWriterSize(a.stdout, 64<<10)
			enc := json.NewEncoder(bw)
			n, gone, elsewhere := 0, 0, 0
			err = r.db.EachVersion(cmd.Context(), f, func(v store.Version) error {
				rec := exportJSON{URL: v.URL, FetchedAt: v.FetchedAt.UTC().Format(time.RFC3339), Run: v.RunID,
					ContentHash: v.ContentHash, Changed: v.Changed, Outcome: string(v.Kind()), Path: v.Path}
				text, err := r.arch.ReadText(v.Path)
				meta, merr := r.arch.ReadMeta(v.Path)
				switch {
				case (missing(err) || missing(merr)) && r.homes != nil:
					worker, root, ok, herr := r.homes.Home(cmd.Context(), v.RunID, v.Path)
					if herr != nil {
						return herr
					}
					rec.Missing, rec.HeldBy, rec.HeldIn = !ok, worker, root
					if ok {
						elsewhere++
					} else {
						gone++
					}
				case missing(err) || missing(merr):
					rec.Missing = true
					gone++
				case err != nil:
					return err
				case merr != nil:
					return merr
				default:
					rec.Text, rec.Title, rec.TextMode = text, meta.Title, meta.TextMode
				}
				n++
				return enc.Encode(rec)
			})
			if err != nil {
				return err
			}
			if gone > 0 {
				a.log.Warn("some versions are missing from the archive", "missing", gone, "exported", n)
			}
			if elsewhere > 0 {
				a.log.Warn("some versions are held by fleet workers under their own archive roots, and were exported without their text; export on each worker's machine for those",
					"held_elsewhere", elsewhere, "exported", n)
			}
			return bw.Flush()
		},
	}
	jsonl.Flags().StringVar(&since, "since", "", "only versions fetched on or after this date or time")
	jsonl.Flags().Int64Var(&run, "run", 0, "only versions stored by this run")
	jsonl.Flags().StringVar(&host, "host", "", "only versions of this host[:port]")
	cmd.AddCommand(jsonl, newExportWARCCmd(a), newExportWACZCmd(a))
	return cmd
}

type exportJSON struct {
	URL         string `json:"url"`
	FetchedAt   string `json:"fetched_at"`
	Run         int64  `json:"run"`
	Title       string `json:"title"`
	Text        string `json:"text"`
	ContentHash string `json:"content_hash"`
	Changed     bool   `json:"changed"`
	Outcome     string `json:"outcome"` // new, changed or unchanged (new bytes, the same words): package outcome's kind
	Path        string `json:"path"`
	Missing     bool   `json:"missing,omitempty"`
	TextMode    string `json:"text_mode,omitempty"` // page.json's: main, full or fallback
	// HeldBy and HeldIn are the fleet worker whose archive root holds a version missing here.
	HeldBy string `json:"held_by,omitempty"`
	HeldIn string `json:"held_in,omitempty"`
}
