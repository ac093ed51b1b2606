package cli_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/strata-crawler/strata/internal/testweb"
)

// replaySentence is the archived page's text the replay must show. The live site is closed before
// the browser starts, so the sentence can only come out of the WACZ.
const replaySentence = "The lighthouse keeper counted four hundred and twelve gulls on Tuesday."

// TestWACZReplaysInReplayWebPage opens strata's WACZ in ReplayWeb.page, the Webrecorder viewer
// researchers load WACZ files into, in headless Chromium, and waits for the archived page's text
// in the replay frame. Every request goes to loopback: the crawled site is closed before replay,
// and anything Chromium tries to fetch beyond loopback goes to a proxy that refuses it.
//
// It needs chromium and the files of the npm package replaywebpage (STRATA_TEST_REPLAYWEBPAGE: the
// directory holding its index.html, ui.js and sw.js); .ci/run unpacks it and sets STRATA_BROWSER_TEST=1, so in
// CI a missing piece fails this test instead of skipping it.
func TestWACZReplaysInReplayWebPage(t *testing.T) {
	rwp := os.Getenv("STRATA_TEST_REPLAYWEBPAGE")
	if rwp == "" {
		if os.Getenv("STRATA_BROWSER_TEST") == "1" {
			t.Fatal("STRATA_BROWSER_TEST=1 but STRATA_TEST_REPLAYWEBPAGE is not set (see .ci/run: npm pack replaywebpage@2.5.3)")
		}
		t.Skip("STRATA_TEST_REPLAYWEBPAGE is not set: unpack the npm package replaywebpage (see .ci/run) to run this test")
	}
	for _, f := range []string{"index.html", "ui.js", "sw.js"} {
		if _, err := os.Stat(filepath.Join(rwp, f)); err != nil {
			t.Fatalf("STRATA_TEST_REPLAYWEBPAGE=%s lacks %s: %v", rwp, f, err)
		}
	}
	chromium := testweb.Chromium(t)

	web := testweb.New(t)
	site := web.AddSite(t)
	site.Page("/", `<title>Harbour log</title><p>`+replaySentence+`</p>`)
	e := newEnv(t, loopbackConfig)
	e.mustRun("seed", "add", "--level", "1", site.URL("/"))
	e.mustRun("crawl")
	wacz := filepath.Join(e.dir, "strata.wacz")
	e.mustRun("export", "wacz", "--out", wacz)
	site.Close()

	var served requestLog
	viewer := replayViewer(t, rwp, wacz, site.URL("/"), &served)
	// Two proxies refuse every request that is not for loopback (Chromium sends loopback requests
	// directly): one for Chromium's own background traffic (component updates, sign-in checks),
	// which it sends even for about:blank, and one for the browser context of the viewer's tab,
	// whose page, frames and service worker must ask for nothing beyond loopback at all.
	background, viewerProxy := refusingProxy(t), refusingProxy(t)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root, where Chromium's own sandbox cannot start
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.ProxyServer(background.url),
		// and no name lookups leave the machine either (prefetching resolves names itself)
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	first, fcancel := chromedp.NewContext(actx)
	defer fcancel()
	if err := chromedp.Do(first); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	bctx, bcancel := chromedp.NewContext(first, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
		p.ProxyServer = viewerProxy.url
	}))
	defer bcancel()

	start := time.Now()
	if err := chromedp.Do(bctx, chromedp.Navigate(viewer)); err != nil {
		t.Fatalf("opening ReplayWeb.page at %s: %v", viewer, err)
	}
	// The replayed page sits in an iframe inside the shadow DOM of <replay-web-page>, inside the
	// shadow DOM of the viewer's own frame; walk both kinds of boundary and name the document that
	// holds the sentence.
	found, err := chromedp.Run(bctx, chromedp.PollFunction[string](`(sentence) => {
		const seen = new Set();
		const walk = (root, where) => {
			if (!root || seen.has(root)) return "";
			seen.add(root);
			const top = root.documentElement || root;
			if (root.documentElement && (top.textContent || "").includes(sentence)) return where;
			for (const el of root.querySelectorAll("*")) {
				let got = "";
				if (el.shadowRoot) got = walk(el.shadowRoot, where);
				if (!got && el.tagName === "IFRAME") {
					let doc = null;
					try { doc = el.contentDocument; } catch (e) {}
					if (doc) got = walk(doc, doc.location.href);
				}
				if (got) return got;
			}
			return "";
		};
		return walk(document, document.location.href);
	}`, chromedp.WithPollingInterval(250*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second),
		chromedp.WithPollingArgs(replaySentence)))
	elapsed := time.Since(start)
	// Checked first, so that a replay that failed for want of the internet says so.
	if hosts := viewerProxy.hosts(); len(hosts) > 0 {
		t.Errorf("the viewer asked for hosts beyond loopback: %v", hosts)
	}
	if hosts := background.hosts(); len(hosts) > 0 {
		t.Logf("refused Chromium's own requests to %v", hosts)
	}
	if err != nil {
		if shot, serr := chromedp.Run(bctx, chromedp.FullScreenshot(100)); serr == nil {
			path := filepath.Join(testweb.ArtefactDir(t), "replay-failed.png")
			if werr := os.WriteFile(path, shot, 0o644); werr == nil {
				t.Logf("screenshot: %s", path)
			}
		}
		t.Fatalf("ReplayWeb.page did not show the archived sentence within 60 s (%v); the viewer's server answered:\n%s", err, &served)
	}
	// The sentence must be in the replay frame, whose address ReplayWeb.page's service worker
	// answers as /replay/w/<collection>/<timestamp>mp_/<archived URL>.
	if !strings.Contains(found, "/replay/w/") || !strings.HasSuffix(found, "mp_/"+site.URL("/")) {
		t.Errorf("the sentence is in the document at %s, not in the replay of %s", found, site.URL("/"))
	}
	t.Logf("ReplayWeb.page showed the archived page %s after navigation, in the frame at %s", elapsed.Round(time.Millisecond), found)
}

// replayViewer serves ReplayWeb.page's embedding page, its two scripts and the WACZ from one
// loopback origin (a service worker needs a secure context, which http://127.0.0.1 is), and
// returns the page's URL.
func replayViewer(t *testing.T, rwp, wacz, pageURL string, log *requestLog) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>replay</title><script src="/replay/ui.js"></script>`+
			`<replay-web-page source="/strata.wacz" url="%s" replayBase="/replay/" embed="replayonly" style="display:block;height:600px"></replay-web-page>`,
			html.EscapeString(pageURL))
	})
	mux.HandleFunc("GET /replay/ui.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rwp, "ui.js"))
	})
	// The viewer's frame may load before the service worker controls it; then the server, not the
	// worker, answers, and must give ReplayWeb.page's own index page, or the frame stays a 404.
	mux.HandleFunc("GET /replay/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rwp, "index.html"))
	})
	mux.HandleFunc("GET /replay/sw.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rwp, "sw.js"))
	})
	mux.HandleFunc("GET /strata.wacz", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, wacz)
	})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rec, r)
		log.add(fmt.Sprintf("%s %s %d", r.Method, r.URL, rec.status))
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL + "/"
}

// requestLog keeps the requests a test server answered, for the message of a failure.
type requestLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *requestLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *requestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// proxyRecord is a loopback HTTP proxy that refuses every request and remembers the host asked for.
type proxyRecord struct {
	url string
	mu  sync.Mutex
	set []string
}

func (p *proxyRecord) hosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.set)
}

func refusingProxy(t *testing.T) *proxyRecord {
	t.Helper()
	p := &proxyRecord{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if !slices.Contains(p.set, r.Host) {
			p.set = append(p.set, r.Host)
		}
		p.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		http.Error(w, "strata test: no request leaves loopback", http.StatusForbidden)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	p.url = ts.URL
	return p
}
