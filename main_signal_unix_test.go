//go:build unix

package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

// TestSignalExitCodes: strata stops gracefully on SIGINT and SIGTERM and exits as a process ended by
// that signal, 128 + its number, so a script or cron wrapper can tell an interrupted run from a
// failed one: a crawl interrupted with Ctrl-C while a page is in flight exits 130, having recorded
// the page; serve, stopped with SIGTERM, exits 143.
func TestSignalExitCodes(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.Handle("/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(inFlight) })
		<-release
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>slow</p>"))
	}))
	s.Page("/", `<p>home</p>`)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "strata.toml")
	os.WriteFile(cfg, []byte("[politeness]\nloopback_delay = \"20ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"), 0o644)
	if _, errs, code := strata(t, dir, "--config", cfg, "seed", "add", "--level", "0", s.URL("/slow"), s.URL("/")); code != 0 {
		t.Fatalf("seed add: %s", errs)
	}

	t.Run("SIGINT during a crawl", func(t *testing.T) {
		cmd := strataCmd(dir, "--config", cfg, "crawl")
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-inFlight:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the crawl never requested the slow page")
		}
		cmd.Process.Signal(os.Interrupt)
		time.AfterFunc(200*time.Millisecond, func() { close(release) }) // the page in flight finishes
		err := cmd.Wait()
		if code := exitCode(t, err); code != 130 {
			t.Errorf("exit %d after SIGINT, want 130\n%s", code, errb.String())
		}
		if !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("stderr does not say the crawl was interrupted: %s", errb.String())
		}
	})

	t.Run("SIGTERM to serve", func(t *testing.T) {
		cmd := strataCmd(dir, "--config", cfg, "serve", "--addr", "127.0.0.1:0")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.Contains(line, "strata serve: http://127.0.0.1:") {
			cmd.Process.Kill()
			t.Fatalf("serve printed %q, %v", line, err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if code := exitCode(t, cmd.Wait()); code != 143 {
			t.Errorf("exit %d after SIGTERM, want 143", code)
		}
	})
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}
