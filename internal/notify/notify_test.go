package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/notify"
)

var summary = notify.Summary{Run: 7, Status: "completed", Fetched: 10, Changed: 2, New: 1,
	Pages: []notify.Page{{Kind: "changed", URL: "https://a.test/x", Title: "X"}}}

func TestWebhookGetsTheSummary(t *testing.T) {
	var got notify.Summary
	var ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctype = r.Header.Get("Content-Type")
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
	}))
	defer srv.Close()
	if err := notify.Send(t.Context(), notify.Hooks{Webhook: srv.URL + "/hook"}, summary); err != nil {
		t.Fatal(err)
	}
	if got.Run != 7 || got.Changed != 2 || len(got.Pages) != 1 || got.Pages[0].URL != "https://a.test/x" || ctype != "application/json" {
		t.Errorf("webhook got %+v (%s)", got, ctype)
	}
}

func TestWebhookFailures(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "no", http.StatusInternalServerError)
		case "/redirect":
			http.Redirect(w, r, other.URL, http.StatusFound)
		case "/hang":
			select {
			case <-block:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(block)
	for _, tt := range []struct{ path, want string }{
		{"/fail", "HTTP 500"},
		{"/redirect", "HTTP 302"},              // not followed
		{"/hang", "context deadline exceeded"}, // cut at the timeout
		{"/nowhere:99999", "invalid port"},     // a bad URL is an error, not a panic
	} {
		u := srv.URL + tt.path
		if strings.HasPrefix(tt.path, "/nowhere") {
			u = "http://127.0.0.1" + strings.TrimPrefix(tt.path, "/nowhere")
		}
		err := notify.Send(t.Context(), notify.Hooks{Webhook: u, Timeout: 200 * time.Millisecond}, summary)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("webhook %s: %v, want an error with %q", tt.path, err, tt.want)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed: %d requests elsewhere", n)
	}
}

func TestNothingToSay(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	quiet := notify.Summary{Run: 8, Fetched: 10}
	if err := notify.Send(t.Context(), notify.Hooks{Webhook: srv.URL}, quiet); err != nil || calls.Load() != 0 {
		t.Errorf("a run without changes notified (%d calls, %v)", calls.Load(), err)
	}
	if err := notify.Send(t.Context(), notify.Hooks{Webhook: srv.URL, Always: true}, quiet); err != nil || calls.Load() != 1 {
		t.Errorf("always: %d calls, %v; want 1", calls.Load(), err)
	}
}

func TestCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test command is a shell script")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := script("ok", `cat > "`+out+`"; echo "run=$STRATA_RUN changed=$STRATA_CHANGED new=$STRATA_NEW" >> "`+out+`"`)
	if err := notify.Send(t.Context(), notify.Hooks{Command: ok}, summary); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), `"run":7`) || !strings.Contains(string(b), "run=7 changed=2 new=1") {
		t.Errorf("the command wrote %q, %v", b, err)
	}
	fail := script("fail", "echo broken >&2; exit 3")
	if err := notify.Send(t.Context(), notify.Hooks{Command: fail}, summary); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing command: %v, want its exit and output", err)
	}
	hang := script("hang", "sleep 60")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := notify.Send(ctx, notify.Hooks{Command: hang, Timeout: 200 * time.Millisecond}, summary); err == nil ||
		!strings.Contains(err.Error(), "deadline") {
		t.Errorf("a hanging command: %v, want it stopped at the timeout", err)
	}
}
