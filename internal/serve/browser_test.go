package serve_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-crawler/strata/internal/testweb"
)

// TestBrowser drives headless Chromium through strata serve as a researcher would: the runs page,
// the changes of the last run, a page, its latest change; and checks that an archived page's
// script runs neither in the sandboxed frame nor when its raw view is opened directly.
func TestBrowser(t *testing.T) {
	chromium := testweb.Chromium(t)
	f := newFixture(t)
	ts := httptest.NewUnstartedServer(f.srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.Listener = ln
	ts.Start()
	defer ts.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root, where Chromium's own sandbox cannot start
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		chromedp.Flag("proxy-server", "direct://"), // nothing but the loopback server, never a proxy
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	err = chromedp.Do(bctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("runs")),
		chromedp.Click(chromedp.ID("latest-changes")),
		chromedp.WaitVisible(chromedp.ID("changes")),
		chromedp.Click(chromedp.CSS(`#changes a[href="/page/`+fmt.Sprint(f.ids[front])+`"]`)),
		chromedp.WaitVisible(chromedp.ID("fetch-list")),
		chromedp.Click(chromedp.ID("diff-latest")),
		chromedp.WaitVisible(chromedp.ID("diff")),
	)
	if err != nil {
		t.Fatalf("browsing runs → changes → page → diff: %v", err)
	}
	diffText, err := chromedp.Run(bctx, chromedp.Text(chromedp.ID("diff")))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diffText, "harbour bridge closes") || !strings.Contains(diffText, "tram line opens") {
		t.Errorf("the diff shows %q", diffText)
	}
	if !strings.HasPrefix(title, "Diff of News · "+front) {
		t.Errorf("the diff page's title is %q", title)
	}
	path := filepath.Join(testweb.ArtefactDir(t), "serve-diff.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)

	// The archived page's script sets document.title to "pwned" and marks the parent's body if it
	// can reach it; its image's onerror does the same. None of it may run. Navigate returns after the
	// load event, which waits for the frame's own load, by when inline script would have run.
	err = chromedp.Do(bctx,
		chromedp.Navigate(fmt.Sprintf("%s/page/%d/html?v=%d", ts.URL, f.ids[evil], f.fetches[evil][0])),
		chromedp.WaitVisible(chromedp.CSS("iframe.archived")),
	)
	if err != nil {
		t.Fatalf("opening the archived page in its frame: %v", err)
	}
	frameTitle, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	pwned, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.getAttribute("data-pwned") || ""`))
	if err != nil {
		t.Fatal(err)
	}
	frameReachable, err := chromedp.Run(bctx, chromedp.Evaluate[bool](
		`(() => { try { return document.querySelector("iframe.archived").contentDocument !== null } catch (e) { return false } })()`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(fmt.Sprintf("%s/raw/%d", ts.URL, f.fetches[evil][0]))); err != nil {
		t.Fatalf("opening the archived page's raw view: %v", err)
	}
	rawTitle, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if frameTitle == "pwned" || pwned != "" || rawTitle == "pwned" {
		t.Errorf("archived script ran: frame view title %q, parent marked %q, raw view title %q", frameTitle, pwned, rawTitle)
	}
	if frameReachable {
		t.Error("the sandboxed frame's document is reachable from strata's page: it shares strata's origin")
	}
	if rawTitle != hostileTitle {
		// the document did load: its title is its <title> element's text, script-free as it is
		t.Errorf("raw view title %q, want the archived page's own %q", rawTitle, hostileTitle)
	}

	views(t, bctx, ts.URL, f)
}

// views opens every view in the browser, wide and narrow: each must show its main element, run no
// script of its own (the policy forbids it, so a script would log a violation), and fit a narrow
// window without scrolling sideways. It saves a screenshot of each, for docs/.
func views(t *testing.T, bctx context.Context, base string, f *fixture) {
	type viewCase struct {
		name, path, sel string
		narrow          bool // also at phone width
	}
	cases := []viewCase{
		{"runs", "/", "#runs", true},
		{"changes", "/changes?run=3", "#changes", true},
		{"changes-new", "/changes?run=3&kind=new", "#events", false},
		{"changes-gone", "/changes?run=3&kind=gone", "#events", false},
		{"sites", "/sites", "#sites", false},
		{"site", "/sites/news.example", "#origins", false},
		{"tree", "/tree?p=https://news.example/docs/", "#tree", true},
		{"page", fmt.Sprintf("/page/%d", f.ids[front]), "#fetch-list", true},
		{"page-gone", fmt.Sprintf("/page/%d", f.ids[story]), "#fetch-list", false},
		{"text", fmt.Sprintf("/page/%d/text", f.ids[front]), "#text", false},
		{"diff", fmt.Sprintf("/page/%d/diff", f.ids[long]), "#diff", true},
		{"diff-word", fmt.Sprintf("/page/%d/diff?mode=word", f.ids[long]), "#diff", false},
		{"links", fmt.Sprintf("/page/%d/links?dir=out", f.ids[front]), "main table", false},
		{"search", "/search?q=release+notes", "#results", true},
		{"search-urls", "/search?q=many&in=urls", "#hits", false},
	}
	dir := testweb.ArtefactDir(t)
	for _, c := range cases {
		for _, width := range []int64{1200, 390} {
			if width < 1000 && !c.narrow {
				continue
			}
			name := c.name
			if width < 1000 {
				name += "-narrow"
			}
			err := chromedp.Do(bctx,
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(base+c.path),
				chromedp.WaitVisible(chromedp.CSS(c.sel)),
			)
			if err != nil {
				t.Errorf("view %s (%s): %v", name, c.path, err)
				continue
			}
			crumbs, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("nav.crumbs li").length`))
			if err != nil || crumbs == 0 {
				t.Errorf("view %s: %d breadcrumbs, %v", name, crumbs, err)
			}
			scripts, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.scripts.length`))
			if err != nil || scripts != 0 {
				t.Errorf("view %s: %d scripts, %v", name, scripts, err)
			}
			if width < 1000 {
				// the page itself must not scroll sideways; wide tables scroll inside their own box
				over, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
				if err != nil || over > 0 {
					t.Errorf("view %s at %d px is %d px too wide (%v)", name, width, over, err)
				}
			}
			shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "serve-"+name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A folded stretch of a diff opens without script: <details> is the browser's own.
	err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1200, 900),
		chromedp.Navigate(fmt.Sprintf("%s/page/%d/diff", base, f.ids[long])),
		chromedp.WaitVisible(chromedp.CSS("details.fold summary")),
		chromedp.Click(chromedp.CSS("details.fold summary")),
	)
	if err != nil {
		t.Fatalf("opening a fold: %v", err)
	}
	open, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector("details.fold").open`))
	if err != nil || !open {
		t.Errorf("the fold did not open: %v", err)
	}

	// The Atom feed opens as XML (Chromium shows its tree), with its entries.
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/feed.atom?site=news.example&kind=gone,new")); err != nil {
		t.Fatalf("opening the feed: %v", err)
	}
	text, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.textContent`))
	if err != nil || !strings.Contains(text, "Gone: Story") || !strings.Contains(text, "New: Release release.0.7") {
		t.Errorf("the feed shows %q (%v)", text, err)
	}
}
