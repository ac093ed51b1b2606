package cli_test

import (
	"archive/zip"
	"bufio"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	gowarc "github.com/nlnwa/gowarc/v3"
	_ "modernc.org/sqlite"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/testweb"
	"github.com/strata-crawler/strata/internal/warc"
)

// warcWeb is a loopback web of two sites whose second crawl sees every kind of WARC record: a page
// unchanged byte for byte (an identical-payload revisit), a 304 (a server-not-modified revisit), a
// page that changes every run, a redirect, a 404 and the robots.txt of each site.
func warcWeb(t *testing.T) (*env, []*testweb.Site) {
	t.Helper()
	web := testweb.New(t)
	sites := web.AddSites(t, 2)
	a, b := sites[0], sites[1]
	a.Robots("User-agent: *\nDisallow: /private\n")
	a.Page("/", `<title>Site A</title><a href="/static">static</a> <a href="/etag">etag</a> <a href="/moved">moved</a> <a href="/missing">missing</a>`)
	a.Page("/static", "<title>Static</title><p>The same bytes every time.</p>")
	a.Handle("/etag", testweb.Conditional(`"v1"`, "<title>Tagged</title><p>Validated by its ETag.</p>"))
	a.Handle("/moved", testweb.Redirect("/static", http.StatusFound))
	a.Handle("/missing", testweb.Status(http.StatusNotFound))
	var n atomic.Int64
	b.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<title>Site B</title><p>Edition %d: the news of the day is different from yesterday's.</p>", n.Add(1))
	}))
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "1", a.URL("/"), b.URL("/"))
	e.mustRun("crawl")
	e.mustRun("crawl")
	return e, sites
}

type readRecord struct {
	file, typ, uri, profile, status, refersTo, fields string
}

// readWARCs reads every record of the archive's WARC files through gowarc with every validation
// on, digests included, in file order.
func readWARCs(t *testing.T, root string) (files []string, recs []readRecord) {
	t.Helper()
	files, _ = filepath.Glob(filepath.Join(root, "*", "_warc", "*.warc.gz"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no WARC file written")
	}
	for _, f := range files {
		r, err := warc.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatalf("%s at %d: %v", f, rec.Offset, err)
			}
			if len(rec.Validation) > 0 {
				t.Errorf("%s at %d: %v", f, rec.Offset, rec.Validation)
			}
			if _, err := rec.WarcRecord.ValidateDigest(); err != nil {
				t.Errorf("%s at %d: %v", f, rec.Offset, err)
			}
			h := rec.WarcRecord.WarcHeader()
			rr := readRecord{file: filepath.Base(f), typ: rec.WarcRecord.Type().String(), uri: h.Get(gowarc.WarcTargetURI),
				profile: h.Get(gowarc.WarcProfile), refersTo: h.Get(gowarc.WarcRefersTo)}
			switch b := rec.WarcRecord.Block().(type) {
			case gowarc.HttpResponseBlock:
				rr.status = fmt.Sprint(b.HttpStatusCode())
			case gowarc.HttpRequestBlock:
			case gowarc.ProtocolHeaderBlock:
				line, _, _ := strings.Cut(string(b.ProtocolHeaderBytes()), "\r\n")
				rr.status = strings.Fields(line + " x")[1]
			}
			if rec.WarcRecord.Type() == gowarc.Metadata {
				raw, _ := rec.WarcRecord.Block().RawBytes()
				var sb strings.Builder
				bufio.NewReader(raw).WriteTo(&sb)
				rr.fields = sb.String()
			}
			rec.Close()
			recs = append(recs, rr)
		}
		r.Close()
	}
	return files, recs
}

// TestWARCOfACrawl crawls a loopback web of two sites twice and reads every WARC record back through
// gowarc with its validation on: each fetch is there as it went over the wire, with revisits for
// what did not change, strata's facts beside it, and an index that finds it.
func TestWARCOfACrawl(t *testing.T) {
	e, sites := warcWeb(t)
	a, b := sites[0], sites[1]
	root := filepath.Join(e.dir, "archive")
	files, recs := readWARCs(t, root)
	if len(files) != 2 {
		t.Fatalf("WARC files %v, want one per run", files)
	}
	has := func(file int, typ, uri, status, profile string) bool {
		for _, r := range recs {
			if r.file == filepath.Base(files[file]) && r.typ == typ && r.uri == uri && r.status == status && r.profile == profile {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		file                      int
		typ, uri, status, profile string
	}{
		{0, "response", a.URL("/robots.txt"), "200", ""},
		{0, "request", a.URL("/robots.txt"), "", ""},
		{0, "response", b.URL("/robots.txt"), "404", ""},
		{0, "response", a.URL("/"), "200", ""},
		{0, "response", a.URL("/static"), "200", ""},
		{0, "response", a.URL("/etag"), "200", ""},
		{0, "response", a.URL("/moved"), "302", ""},
		{0, "response", a.URL("/missing"), "404", ""},
		{0, "request", a.URL("/"), "", ""},
		{1, "revisit", a.URL("/static"), "200", warc.ProfileIdentical},
		{1, "revisit", a.URL("/"), "200", warc.ProfileIdentical},
		{1, "revisit", a.URL("/etag"), "304", warc.ProfileNotModified},
		{1, "response", b.URL("/"), "200", ""},
		{1, "response", a.URL("/missing"), "404", ""},
	} {
		if !has(c.file, c.typ, c.uri, c.status, c.profile) {
			t.Errorf("run %d has no %s %s record of %s %s", c.file+1, c.status, c.typ, c.uri, c.profile)
		}
	}
	for _, r := range recs {
		if r.typ == "revisit" && r.refersTo == "" {
			t.Errorf("revisit of %s refers to no record", r.uri)
		}
		if r.typ == "metadata" && r.uri == a.URL("/") && !strings.Contains(r.fields, "outlink: "+a.URL("/static")) {
			t.Errorf("metadata of / lacks its outlinks:\n%s", r.fields)
		}
		if r.typ == "metadata" && r.uri == b.URL("/") && strings.Contains(r.fields, "change: changed") &&
			(!strings.Contains(r.fields, "change-magnitude: ") || !strings.Contains(r.fields, "level: 1") || !strings.Contains(r.fields, "fr-max: ")) {
			t.Errorf("metadata of a changed page lacks strata's facts:\n%s", r.fields)
		}
	}
	// Each run's index is what indexing its files gives, and the merged index holds both, by path.
	if lines, _ := filepath.Glob(filepath.Join(root, "*", "_warc", "*"+warc.LinesSuffix+"*")); len(lines) > 0 {
		t.Errorf("index lines left after the seal: %v", lines)
	}
	for _, f := range files {
		var want []string
		err := warc.IndexFile(f, filepath.Base(f), func(l warc.Line) error { want = append(want, l.String()+"\n"); return nil })
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(want)
		got, err := os.ReadFile(filepath.Join(filepath.Dir(f), "index.cdxj"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.Join(want, "") {
			t.Errorf("%s: index.cdxj is not the index of the run's files", f)
		}
	}
	merged, err := os.ReadFile(filepath.Join(root, "index.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		if !strings.Contains(string(merged), `"filename":"`+filepath.ToSlash(rel)+`"`) {
			t.Errorf("merged index names no record of %s", rel)
		}
	}
}

// TestWARCReadByWarcio has warcio, the Webrecorder project's reader, read every record of a crawl's
// WARC files and check their digests, and index them: its index must be strata's, line for line.
// It needs node and warcio (STRATA_TEST_WARCIO: the directory warcio was installed in); .ci/run
// installs both and sets it, so in CI this test runs and fails rather than skips.
func TestWARCReadByWarcio(t *testing.T) {
	dir := warcioDir(t)
	e, _ := warcWeb(t)
	out := checkWithWarcio(t, dir, filepath.Join(e.dir, "archive"))
	if strings.Count(out, `"profile":"`+warc.ProfileIdentical) == 0 || strings.Count(out, `"profile":"`+warc.ProfileNotModified) == 0 {
		t.Errorf("warcio saw no revisit of one of the profiles:\n%s", out)
	}
}

// TestDemoWARCReadByWarcio: the WARC files of strata demo's ten days on its scripted web, read by
// warcio record for record, revisits included, and indexed as strata indexed them.
func TestDemoWARCReadByWarcio(t *testing.T) {
	t.Parallel()
	dir := warcioDir(t)
	keep := filepath.Join(t.TempDir(), "demo")
	var errb strings.Builder
	if err := cli.Run(t.Context(), []string{"demo", "--keep", keep}, io.Discard, &errb); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	out := checkWithWarcio(t, dir, filepath.Join(keep, "archive"))
	if !strings.Contains(out, `"profile":"`+warc.ProfileIdentical) {
		t.Errorf("warcio saw no identical-payload revisit in ten days of the demo:\n%s", out)
	}
}

// warcioDir returns where warcio was installed (STRATA_TEST_WARCIO), or skips the test. .ci/run
// installs node and warcio and sets it, so in CI these tests run and fail rather than skip.
func warcioDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STRATA_TEST_WARCIO")
	if dir == "" {
		t.Skip("STRATA_TEST_WARCIO is not set: install warcio with npm (see .ci/run) to run this test")
	}
	return dir
}

// checkWithWarcio has warcio, the Webrecorder project's reader, read every record of the WARC
// files under root and check their digests, and index each file: its index must be strata's, line
// for line, and it must read as many records as gowarc does. It returns warcio's record listing.
func checkWithWarcio(t *testing.T, dir, root string) string {
	t.Helper()
	files, recs := readWARCs(t, root)
	if len(files) == 0 {
		t.Fatalf("no WARC files under %s", root)
	}
	script, _ := filepath.Abs("testdata/warcio-check.mjs")
	cmd := exec.Command("node", append([]string{script}, files...)...)
	cmd.Env = append(os.Environ(), "STRATA_TEST_WARCIO="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("warcio read the WARC files with an error: %v\n%s", err, out)
	}
	if got := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; got != len(recs) {
		t.Errorf("warcio read %d records, gowarc %d", got, len(recs))
	}
	for _, f := range files {
		cmd := exec.Command("node", filepath.Join(dir, "node_modules", "warcio", "dist", "cli.js"), "cdx-index", filepath.Base(f))
		cmd.Dir = filepath.Dir(f)
		idx, err := cmd.Output()
		if err != nil {
			t.Fatalf("warcio cdx-index %s: %v", f, err)
		}
		theirs := strings.Split(strings.TrimSpace(string(idx)), "\n")
		sort.Strings(theirs)
		ours, err := os.ReadFile(filepath.Join(filepath.Dir(f), "index.cdxj"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(theirs, "\n"), strings.TrimSpace(string(ours)); got != want {
			t.Errorf("%s: warcio's index differs from strata's\nwarcio:\n%s\nstrata:\n%s", filepath.Base(f), got, want)
		}
	}
	return string(out)
}

// TestExportWARCAndWACZ: a run without WARC files is written from the text archive, and a version
// from before strata kept heads gets a resource record marked as such, never invented headers; the
// WACZ holds the WARCs, the index, the pages and a datapackage whose hashes are the files'.
func TestExportWARCAndWACZ(t *testing.T) {
	e, sites := warcWeb(t)
	a := sites[0]
	root := filepath.Join(e.dir, "archive")
	runs, _ := filepath.Glob(filepath.Join(root, "*", "_warc"))
	for _, r := range runs {
		os.RemoveAll(r) // as if crawled with archive.warc off
	}
	db, err := sql.Open("sqlite", e.db)
	if err != nil {
		t.Fatal(err)
	}
	// As if the first run's versions had been stored before strata kept heads.
	if _, err := db.Exec(`DELETE FROM captures WHERE fetch_id IN (SELECT id FROM fetches WHERE run_id = 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(e.dir, "export")
	e.mustRun("export", "warc", "--out", out)
	files, _ := filepath.Glob(filepath.Join(out, "*.warc.gz"))
	if len(files) != 2 {
		t.Fatalf("export wrote %v, want a file per run", files)
	}
	var types []string
	for _, f := range files {
		r, err := warc.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range r.Records() {
			if err != nil {
				t.Fatal(err)
			}
			wr := rec.WarcRecord
			types = append(types, filepath.Base(f)[:len("strata-export-")]+wr.Type().String()+" "+wr.WarcHeader().Get(gowarc.WarcTargetURI))
			if wr.Type() == gowarc.Metadata && strings.Contains(f, "strata-export") && wr.WarcHeader().Get(gowarc.WarcTargetURI) == a.URL("/static") {
				raw, _ := wr.Block().RawBytes()
				var sb strings.Builder
				bufio.NewReader(raw).WriteTo(&sb)
				if f == files[0] && !strings.Contains(sb.String(), "http-headers: not captured") {
					t.Errorf("metadata of a version without heads does not say so:\n%s", sb.String())
				}
			}
			rec.Close()
		}
		r.Close()
	}
	joined := strings.Join(types, "\n")
	for _, want := range []string{"strata-export-resource " + a.URL("/static"), "strata-export-response " + sites[1].URL("/")} {
		if !strings.Contains(joined, want) {
			t.Errorf("export lacks %q:\n%s", want, joined)
		}
	}

	// Exporting again, over what a killed export left, gives the same files: the runs' files
	// replaced rather than a second sequence beside them, the scratch gone, the user's file kept.
	index, err := os.ReadFile(filepath.Join(out, "index.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]string{
		".strata-tmp-1234567890":                "part of an index",
		".strata-tmp-987/strata-x.warc.gz.open": "part of a run",
		"notes.txt":                             "the user's",
	}
	for name, data := range left {
		os.MkdirAll(filepath.Dir(filepath.Join(out, name)), 0o755)
		if err := os.WriteFile(filepath.Join(out, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.mustRun("export", "warc", "--out", out)
	again, _ := filepath.Glob(filepath.Join(out, "*.warc.gz"))
	if !slices.Equal(again, files) {
		t.Errorf("exported again: %v, want %v", again, files)
	}
	// The records are written anew (new record IDs, so new lengths): the index has the same captures.
	reindexed, _ := os.ReadFile(filepath.Join(out, "index.cdxj"))
	if g, w := cdxjCaptures(reindexed), cdxjCaptures(index); !slices.Equal(g, w) {
		t.Errorf("exported again, the index holds %v, want %v", g, w)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	if want := append([]string{"index.cdxj", "notes.txt"}, baseNames(files)...); !slices.Equal(names, want) {
		t.Errorf("after exporting again the directory holds %v, want %v", names, want)
	}

	wacz := filepath.Join(e.dir, "all.wacz")
	e.mustRun("export", "wacz", "--out", wacz)
	zr, err := zip.OpenReader(wacz)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	got := map[string][]byte{}
	for _, f := range zr.File {
		if f.Method != zip.Store {
			t.Errorf("%s is compressed; WACZ stores its entries", f.Name)
		}
		rc, _ := f.Open()
		got[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	var dp struct {
		WACZVersion string `json:"wacz_version"`
		Resources   []struct {
			Path  string `json:"path"`
			Hash  string `json:"hash"`
			Bytes int    `json:"bytes"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(got["datapackage.json"], &dp); err != nil {
		t.Fatal(err)
	}
	if dp.WACZVersion != "1.1.1" || len(dp.Resources) != 4 {
		t.Errorf("datapackage: %s", got["datapackage.json"])
	}
	for _, r := range dp.Resources {
		sum := sha256.Sum256(got[r.Path])
		if r.Hash != "sha256:"+hex.EncodeToString(sum[:]) || r.Bytes != len(got[r.Path]) {
			t.Errorf("datapackage: %s does not match its entry", r.Path)
		}
	}
	if !strings.Contains(string(got["pages/pages.jsonl"]), `"url":"`+a.URL("/")+`"`) {
		t.Errorf("pages.jsonl lacks the front page:\n%s", got["pages/pages.jsonl"])
	}
	if !strings.Contains(string(got["indexes/index.cdxj"]), a.URL("/static")) {
		t.Error("the WACZ's index lacks a page")
	}
}

// TestWARCGzipLevel crawls the same real-sized page with archive.warc_gzip_level 1 and 9: the WARC
// at 9 is smaller, reads back with every digest valid, and holds the same records.
func TestWARCGzipLevel(t *testing.T) {
	web := testweb.New(t)
	site := web.AddSites(t, 1)[0]
	var b strings.Builder
	for i := range 600 { // about 50 KB of text that deflates differently at 1 and 9
		fmt.Fprintf(&b, "<p>Paragraph %d: the council met on day %d and spoke of budget line %d.</p>\n", i, i%31, i*7%97)
	}
	site.Page("/", "<title>Long</title>"+b.String())
	size := map[int]int64{}
	records := map[int][]readRecord{}
	for _, level := range []int{1, 9} {
		e := newEnv(t, loopbackConfig+fmt.Sprintf("[archive]\nwarc_gzip_level = %d\n", level))
		e.mustRun("seed", "add", "--level", "0", site.URL("/"))
		e.mustRun("crawl")
		files, recs := readWARCs(t, filepath.Join(e.dir, "archive"))
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			size[level] += st.Size()
		}
		for i := range recs {
			recs[i].file = ""
		}
		records[level] = recs
	}
	if size[9] >= size[1] {
		t.Errorf("WARC %d bytes at level 9, %d at level 1; want it smaller", size[9], size[1])
	}
	if fmt.Sprint(records[1]) != fmt.Sprint(records[9]) {
		t.Errorf("records differ between levels:\n1: %v\n9: %v", records[1], records[9])
	}
	e := newEnv(t, loopbackConfig+"[archive]\nwarc_gzip_level = 10\n")
	if _, errs, code := e.run("crawl"); code == 0 || !strings.Contains(errs, "warc_gzip_level") {
		t.Errorf("level 10: exit %d, %q; want a refusal naming the key", code, errs)
	}
}

func baseNames(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

// cdxjCaptures is each line's key and timestamp.
func cdxjCaptures(index []byte) []string {
	var out []string
	for line := range strings.Lines(string(index)) {
		f := strings.Fields(line)
		out = append(out, f[0]+" "+f[1])
	}
	return out
}
