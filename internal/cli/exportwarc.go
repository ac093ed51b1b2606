package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/warc"
)

// warcSource is what export warc and wacz read: the database, whose captures hold the heads of
// each exchange, and this machine's archive.
type warcSource struct {
	db    readStore
	close func()
	arch  *archive.Dir
	root  string    // this machine's archive.root
	fleet runRooter // where a fleet's workers archived each run; nil on SQLite
	log   *slog.Logger
}

// runRooter lists the archive roots of the fleet workers of a run.
type runRooter interface {
	RunRoots(ctx context.Context, run int64) ([]string, error)
}

func (a *app) openWARCSource(ctx context.Context) (*warcSource, error) {
	db, closeDB, err := a.openReadAny(ctx)
	if err != nil {
		return nil, err
	}
	r := &warcSource{db: db, close: closeDB, arch: archive.ReadOnly(a.cfg.Archive.Root), root: a.cfg.Archive.Root, log: a.log}
	if f, ok := db.(runRooter); ok {
		r.fleet = f
	}
	return r, nil
}

func (r *warcSource) Close() { r.close() }

// warnSpread warns when fleet workers crawled run under archive roots other than this machine's:
// each root holds its worker's WARC files and versions, so this export has this machine's part of
// the run only, and the other parts are exported on their machines (into directories of their own,
// since every worker names its WARC files after the run).
func (r *warcSource) warnSpread(ctx context.Context, run store.Run) error {
	if r.fleet == nil {
		return nil
	}
	roots, err := r.fleet.RunRoots(ctx, run.ID)
	if err != nil {
		return err
	}
	var others []string
	for _, root := range roots {
		if filepath.Clean(root) != filepath.Clean(r.root) {
			others = append(others, root)
		}
	}
	if len(others) > 0 {
		r.log.Warn("fleet workers archived part of this run under other archive roots; this export holds this machine's part, export the rest on their machines",
			"run", run.ID, "other_roots", strings.Join(others, ", "))
	}
	return nil
}

// warcSelection is the runs an export warc or wacz takes.
type warcSelection struct {
	run   int64
	since string
}

func (sel *warcSelection) flags(cmd *cobra.Command) {
	cmd.Flags().Int64Var(&sel.run, "run", 0, "only this run")
	cmd.Flags().StringVar(&sel.since, "since", "", "only runs started on or after this date or time")
}

// runs resolves the selection against the database.
func (sel *warcSelection) runs(ctx context.Context, cmd *cobra.Command, r *warcSource, what string) ([]store.Run, error) {
	if cmd.Flags().Changed("run") && cmd.Flags().Changed("since") {
		return nil, usagef("%s: --run and --since cannot be used together", what)
	}
	if cmd.Flags().Changed("run") {
		if sel.run < 1 {
			return nil, usagef("%s: --run %d: run ids start at 1", what, sel.run)
		}
		if err := checkRun(ctx, r.db, what+": --run", sel.run); err != nil {
			return nil, err
		}
		run, err := r.db.RunByID(ctx, sel.run)
		if err != nil {
			return nil, err
		}
		return []store.Run{run}, nil
	}
	var since time.Time
	if sel.since != "" {
		s, err := parseSelector(sel.since)
		if err != nil || s.run != 0 {
			return nil, usagef("%s: --since wants a date (2026-11-22) or a time (RFC 3339), got %q", what, sel.since)
		}
		since = s.at
		if len(sel.since) == len("2006-01-02") {
			since = s.at.Add(-24*time.Hour + time.Nanosecond) // the start of that day
		}
	}
	return r.db.RunsSince(ctx, since)
}

func newExportWARCCmd(a *app) *cobra.Command {
	var sel warcSelection
	var out string
	cmd := &cobra.Command{
		Use:   "warc [--run N | --since DATE] [--out DIR]",
		Short: "Write the history as WARC 1.1 files with a CDXJ index, for warcio, pywb and ReplayWeb.page",
		Long: `Write the selected runs (default: all) as WARC 1.1 files into DIR (default: the current
directory), with index.cdxj over them. A run crawled with archive.warc on is copied as written
during the crawl: every fetch, with revisit records for unchanged payloads and 304s. A run without
WARC files is written from the text archive: a response record for each version it stored, with
the request and response heads strata kept — or, for a version stored before strata kept heads, a
resource record and a metadata record saying so, never invented headers. Existing files in DIR
with the same names are replaced, each whole: exporting again into DIR gives the same files, and
what a killed export left there (names starting ".strata-tmp-") is removed. Run one export into a
directory at a time.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := a.openWARCSource(cmd.Context())
			if err != nil {
				return err
			}
			defer r.Close()
			runs, err := sel.runs(cmd.Context(), cmd, r, "export warc")
			if err != nil {
				return err
			}
			files, err := exportWARC(cmd.Context(), r, runs, out, "strata/"+Version, a.cfg.Archive.WARCGzip)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote %d WARC files and %s to %s\n", len(files), archive.IndexFile, out)
			return nil
		},
	}
	sel.flags(cmd)
	cmd.Flags().StringVar(&out, "out", ".", "directory to write the WARC files and index.cdxj into")
	return cmd
}

func newExportWACZCmd(a *app) *cobra.Command {
	var sel warcSelection
	var out string
	cmd := &cobra.Command{
		Use:   "wacz [--run N | --since DATE] [--out FILE]",
		Short: "Package the history as WACZ 1.1 (WARCs, CDXJ index, pages, datapackage) for ReplayWeb.page",
		Long: `Package the selected runs (default: all) as one WACZ 1.1 file: archive/ holds the WARC
files that export warc writes, indexes/index.cdxj their index, pages/pages.jsonl every HTML page
captured (its URL, time and title), and datapackage.json lists every file with its size and
SHA-256. Open it in ReplayWeb.page (replayweb.page, or its embeddable component) or pywb.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.HasSuffix(out, ".wacz") {
				return usagef("export wacz: --out %q: the file name must end in .wacz", out)
			}
			r, err := a.openWARCSource(cmd.Context())
			if err != nil {
				return err
			}
			defer r.Close()
			runs, err := sel.runs(cmd.Context(), cmd, r, "export wacz")
			if err != nil {
				return err
			}
			if err := removeExportTemps(filepath.Dir(out)); err != nil {
				return fmt.Errorf("export wacz: %w", err)
			}
			tmp, err := os.MkdirTemp(filepath.Dir(out), exportTempPrefix)
			if err != nil {
				return fmt.Errorf("export wacz: %w", err)
			}
			defer os.RemoveAll(tmp)
			files, err := exportWARC(cmd.Context(), r, runs, tmp, "strata/"+Version, a.cfg.Archive.WARCGzip)
			if err != nil {
				return err
			}
			if err := writeWACZ(tmp, files, out, "strata/"+Version); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote %s: %d WARC files\n", out, len(files))
			return nil
		},
	}
	sel.flags(cmd)
	cmd.Flags().StringVar(&out, "out", "strata.wacz", "the WACZ file to write")
	return cmd
}

// exportWARC writes the WARC files of runs into dir and their index.cdxj beside them, returning
// the files' names.
func exportWARC(ctx context.Context, r *warcSource, runs []store.Run, dir, software string, gzipLevel int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export warc: %w", err)
	}
	if err := removeExportTemps(dir); err != nil {
		return nil, fmt.Errorf("export warc: %w", err)
	}
	var files []string
	for _, run := range runs {
		if err := r.warnSpread(ctx, run); err != nil {
			return nil, fmt.Errorf("export warc: %w", err)
		}
		src := r.arch.WARCPath(run.StartedAt)
		names, _ := filepath.Glob(filepath.Join(src, "*"+warc.Ext))
		if len(names) > 0 {
			for _, n := range names {
				if err := copyFile(n, filepath.Join(dir, filepath.Base(n))); err != nil {
					return nil, err
				}
				files = append(files, filepath.Base(n))
			}
			continue
		}
		written, err := synthesizeRun(ctx, r, run, dir, software, gzipLevel)
		if err != nil {
			return nil, err
		}
		files = append(files, written...)
	}
	return files, archive.WriteFileFrom(filepath.Join(dir, archive.IndexFile), 0o644, func(w io.Writer) error {
		return warc.WriteIndex(w, dir, files)
	})
}

// notCaptured is what the metadata record of a version stored before strata kept HTTP heads says.
const notCaptured = "not captured: this version was archived before strata kept HTTP headers; the resource record holds the body as served, decompressed, with the content type recorded then"

// exportTempPrefix starts the name of every scratch file and directory an export makes beside its
// output. Nothing else is named so; removeExportTemps relies on it.
const exportTempPrefix = ".strata-tmp-"

// removeExportTemps removes, from the top level of dir, the scratch files and directories that an
// export killed there left behind. The directory is the user's, so nothing else is touched and
// nothing below it is searched. It cannot tell a killed export's scratch from a running one's,
// which is why one export into a directory at a time is the rule.
func removeExportTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), exportTempPrefix) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// synthesizeRun writes the versions a run stored, from the text archive, as WARC files in dir. It
// writes them in a scratch directory and then renames each into place, so that exporting again
// replaces the run's files whole rather than adding a second sequence of them beside the first.
func synthesizeRun(ctx context.Context, r *warcSource, run store.Run, dir, software string, gzipLevel int) ([]string, error) {
	prefix := "strata-export-" + archive.RunDir(run.StartedAt)
	scratch, err := os.MkdirTemp(dir, exportTempPrefix)
	if err != nil {
		return nil, fmt.Errorf("export warc: run %d: %w", run.ID, err)
	}
	defer os.RemoveAll(scratch)
	if err := writeRunWARC(ctx, r, run, scratch, prefix, software, gzipLevel); err != nil {
		return nil, fmt.Errorf("export warc: run %d: %w", run.ID, err)
	}
	names, err := runFiles(scratch, prefix)
	if err != nil {
		return nil, fmt.Errorf("export warc: run %d: %w", run.ID, err)
	}
	old, err := runFiles(dir, prefix)
	if err != nil {
		return nil, fmt.Errorf("export warc: run %d: %w", run.ID, err)
	}
	written := map[string]bool{}
	for _, n := range names {
		if err := os.Rename(filepath.Join(scratch, n), filepath.Join(dir, n)); err != nil {
			return nil, fmt.Errorf("export warc: %w", err)
		}
		written[n] = true
	}
	for _, n := range old {
		if !written[n] { // an earlier export's file that this one did not rewrite
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return nil, fmt.Errorf("export warc: %w", err)
			}
		}
	}
	return names, archive.SyncDir(dir)
}

// runFiles lists the WARC files of prefix in dir, by name.
func runFiles(dir, prefix string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, prefix+"-*"+warc.Ext))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	sort.Strings(names)
	return names, err
}

// writeRunWARC writes the versions a run stored as WARC files of prefix in dir.
func writeRunWARC(ctx context.Context, r *warcSource, run store.Run, dir, prefix, software string, gzipLevel int) error {
	w := warc.NewWriter(dir, prefix, 1_000_000_000, warc.Info(software+" (export from the text archive)", "", run.StartedAt))
	err := r.db.EachStoredVersion(ctx, run.ID, func(v store.StoredVersion) error {
		meta, err := r.arch.ReadMeta(v.Path)
		if missing(err) {
			return nil // removed by hand: nothing to write
		}
		if err != nil {
			return err
		}
		body, err := r.arch.ReadRaw(v.Path)
		if err != nil {
			return err
		}
		facts := [][2]string{{"strata-run", strconv.FormatInt(run.ID, 10)}, {"level", strconv.Itoa(meta.Level)},
			{"archive-path", v.Path}, {"text-mode", meta.TextMode}, {"title", meta.Title}}
		if v.Capture != nil {
			x := warc.Exchange{URL: v.URL, Date: v.FetchedAt, IP: v.Capture.IP, Request: v.Capture.Request,
				Response: v.Capture.Response, Body: body}
			if meta.Truncated {
				x.Truncated = "length"
			}
			e, err := warc.EncodePage(warc.Page{Exchange: x, Facts: facts, GzipLevel: gzipLevel})
			if err != nil {
				return err
			}
			_, err = w.Append(e.Members...)
			return err
		}
		ct := meta.ContentType
		if meta.Charset != "" {
			ct += "; charset=" + meta.Charset
		}
		res, err := warc.Resource(v.URL, v.FetchedAt, ct, body)
		if err != nil {
			return err
		}
		md, err := warc.Metadata(v.URL, v.FetchedAt, res.ID(), append([][2]string{{"http-headers", notCaptured},
			{"http-status", strconv.Itoa(meta.Status)}}, facts...))
		if err != nil {
			res.Close()
			return err
		}
		_, err = w.Write(res, md)
		return err
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("export warc: %w", err)
	}
	defer in.Close()
	return writeAtomic(to, func(w io.Writer) error { _, err := io.Copy(w, in); return err })
}

// writeAtomic writes a file through a temporary name in its directory, synced and renamed, so that
// a kill leaves the old file or the new one, never part of one.
func writeAtomic(name string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), exportTempPrefix)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// page is one line of a WACZ's pages.jsonl.
type waczPage struct {
	URL   string `json:"url"`
	TS    string `json:"ts"`
	Title string `json:"title,omitempty"`
}

// writeWACZ packages the WARC files in dir and their index as the WACZ file out (WACZ 1.1.1):
// every entry stored uncompressed, as the spec asks of WARCs so that a reader can seek in them.
func writeWACZ(dir string, files []string, out, software string) error {
	pages, err := waczPages(dir, files)
	if err != nil {
		return err
	}
	var pj bytes.Buffer
	pj.WriteString(`{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}` + "\n")
	enc := json.NewEncoder(&pj)
	enc.SetEscapeHTML(false)
	for _, p := range pages {
		enc.Encode(p)
	}
	index, err := os.ReadFile(filepath.Join(dir, archive.IndexFile))
	if err != nil {
		return fmt.Errorf("export wacz: %w", err)
	}
	type resource struct {
		Name  string `json:"name"`
		Path  string `json:"path"`
		Hash  string `json:"hash"`
		Bytes int64  `json:"bytes"`
	}
	type entry struct {
		path string
		data []byte // nil: the file src
		src  string
	}
	entries := []entry{}
	for _, f := range files {
		entries = append(entries, entry{path: "archive/" + f, src: filepath.Join(dir, f)})
	}
	entries = append(entries, entry{path: "indexes/index.cdxj", data: index}, entry{path: "pages/pages.jsonl", data: pj.Bytes()})
	var resources []resource
	for _, e := range entries {
		h := sha256.New()
		var n int64
		if e.data != nil {
			h.Write(e.data)
			n = int64(len(e.data))
		} else {
			f, err := os.Open(e.src)
			if err != nil {
				return fmt.Errorf("export wacz: %w", err)
			}
			n, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("export wacz: %w", err)
			}
		}
		resources = append(resources, resource{Name: filepath.Base(e.path), Path: e.path, Hash: "sha256:" + hex.EncodeToString(h.Sum(nil)), Bytes: n})
	}
	dp, _ := json.MarshalIndent(map[string]any{
		"profile": "data-package", "wacz_version": "1.1.1", "title": "strata archive",
		"created": time.Now().UTC().Format(time.RFC3339), "software": software,
		"mainPageURL": firstURL(pages), "resources": resources,
	}, "", "  ")
	dpSum := sha256.Sum256(dp)
	digest, _ := json.MarshalIndent(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(dpSum[:])}, "", "  ")
	entries = append(entries, entry{path: "datapackage.json", data: dp}, entry{path: "datapackage-digest.json", data: digest})
	return writeAtomic(out, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, e := range entries {
			fw, err := zw.CreateHeader(&zip.FileHeader{Name: e.path, Method: zip.Store, Modified: time.Now()})
			if err != nil {
				return err
			}
			if e.data != nil {
				if _, err := fw.Write(e.data); err != nil {
					return err
				}
				continue
			}
			f, err := os.Open(e.src)
			if err != nil {
				return err
			}
			_, err = io.Copy(fw, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		return zw.Close()
	})
}

func firstURL(pages []waczPage) string {
	if len(pages) == 0 {
		return ""
	}
	return pages[0].URL
}

// waczPages lists the HTML pages captured in files, each at its first capture, with the title
// strata's metadata records give it.
func waczPages(dir string, files []string) ([]waczPage, error) {
	titles := map[string]string{}
	var pages []waczPage
	seen := map[string]bool{}
	for _, f := range files {
		rd, err := warc.OpenReader(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("export wacz: %w", err)
		}
		for rec, err := range rd.Records() {
			if err != nil {
				rd.Close()
				return nil, fmt.Errorf("export wacz: %s: %w", f, err)
			}
			wr := rec.WarcRecord
			h := wr.WarcHeader()
			uri := h.Get(gowarc.WarcTargetURI)
			switch wr.Type() {
			case gowarc.Metadata:
				if raw, err := wr.Block().RawBytes(); err == nil {
					b, _ := io.ReadAll(raw)
					for _, l := range strings.Split(string(b), "\r\n") {
						if t, ok := strings.CutPrefix(l, "title: "); ok && titles[uri] == "" {
							titles[uri] = t
						}
					}
				}
			case gowarc.Response, gowarc.Resource:
				html := strings.HasPrefix(h.Get(gowarc.ContentType), "text/html")
				if hb, ok := wr.Block().(gowarc.HttpResponseBlock); ok {
					html = hb.HttpStatusCode() == 200 && strings.HasPrefix(hb.HttpHeader().Get("Content-Type"), "text/html")
				}
				if html && !seen[uri] {
					seen[uri] = true
					d, _ := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcDate))
					pages = append(pages, waczPage{URL: uri, TS: d.UTC().Format(time.RFC3339)})
				}
			}
			rec.Close()
		}
		rd.Close()
	}
	for i := range pages {
		pages[i].Title = titles[pages[i].URL]
	}
	sort.SliceStable(pages, func(i, j int) bool { return pages[i].TS < pages[j].TS })
	return pages, nil
}
