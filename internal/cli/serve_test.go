package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/runlock"
	"github.com/strata-crawler/strata/internal/testweb"
)

func TestServeRefuses(t *testing.T) {
	e := newEnv(t, loopbackConfig)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no database", []string{"serve", "--addr", "127.0.0.1:0"}, "no database at"},
		{"all interfaces", []string{"serve", "--addr", ":0"}, "not a loopback address; add --public"},
		{"a public address", []string{"serve", "--addr", "192.0.2.1:8377"}, "not a loopback address"},
		{"no port", []string{"serve", "--addr", "127.0.0.1"}, "want host:port"},
		{"arguments", []string{"serve", "extra"}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := e.run(tt.args...)
			if code != cli.ExitUsage || !strings.Contains(errs, tt.want) {
				t.Errorf("strata %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, errs, tt.want)
			}
		})
	}
	if _, err := os.Stat(e.db); err == nil {
		t.Error("a refused serve created the database")
	}
}

// syncBuffer is a bytes.Buffer that the server goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe crawls a loopback site twice, then serves it while another process holds the crawl
// lock, reads a few pages through HTTP and stops the server by cancelling its context.
func TestServe(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	e := newEnv(t, loopbackConfig)
	s.Page("/", `<html><head><title>Home</title></head><body><p>first story</p><a href="/a">a</a></body></html>`)
	s.Page("/a", "<p>page a</p>")
	e.mustRun("seed", "add", "--level", "1", s.URL("/"))
	e.mustRun("run")
	s.Page("/", `<html><head><title>Home</title></head><body><p>second story</p><a href="/a">a</a></body></html>`)
	e.mustRun("run")

	lock, err := runlock.Acquire(e.db) // a crawl is running: serve must not need the lock
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, []string{"--config", e.config, "--log-level", "error", "serve", "--addr", "127.0.0.1:0"}, &out, io.Discard)
	}()
	addrRE := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); {
		select {
		case err := <-done:
			t.Fatalf("serve ended before it listened: %v\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = "http://" + m[1]
		}
	}
	if base == "" {
		t.Fatalf("serve printed no address: %q", out.String())
	}

	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if runs := get("/"); !strings.Contains(runs, "run 2") || !strings.Contains(runs, "/changes?run=2") {
		t.Errorf("runs page:\n%s", runs)
	}
	changes := get("/changes")
	m := regexp.MustCompile(`href="(/page/\d+)/diff\?to=\d+"`).FindStringSubmatch(changes)
	if m == nil || !strings.Contains(changes, s.URL("/")) {
		t.Fatalf("the changes of run 2 do not list the front page:\n%s", changes)
	}
	if diff := get(m[1] + "/diff"); !strings.Contains(diff, `<del class="w">first</del> story`) || !strings.Contains(diff, `<ins class="w">second</ins> story`) {
		t.Errorf("diff of the front page:\n%s", diff)
	}
	// strata run filled the text index: the words of the current version are found, with a snippet
	if search := get("/search?q=second+story"); !strings.Contains(search, "<mark>second</mark> <mark>story</mark>") {
		t.Errorf("full-text search after strata run:\n%s", search)
	}
	page := get(m[1])
	for _, want := range []string{"after its next crawl, fr_max becomes", "fr / fr_max", s.URL("/a")} {
		if !strings.Contains(page, want) {
			t.Errorf("page view lacks %q (explain's reasoning, links)", want)
		}
	}

	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	req.Host = "rebound.attacker.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("a request for another host name: %v, %v; want 421", resp, err)
	} else {
		resp.Body.Close()
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve ended with %v after its context was cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after its context was cancelled")
	}
}
