// Package notify tells the user's own hooks what a run did: a JSON summary POSTed to a configured
// webhook, or written to a configured command's standard input.
//
// A hook must never break or slow a run beyond its bound: each one runs under the configured
// timeout, both run side by side, and their failures come back as one error for the caller to log.
// The webhook's client contacts the configured URL and nothing else: it uses no proxy and follows
// no redirect.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hooks are the configured hooks.
type Hooks struct {
	Webhook string        // http(s) URL; "" = none
	Command string        // absolute path of an executable; "" = none
	Timeout time.Duration // each hook's limit; 0 = 10 s
	Always  bool          // notify after a run that changed nothing too
}

// Page is one page in a summary.
type Page struct {
	Kind      string   `json:"kind"` // changed, new, gone or unlinked
	URL       string   `json:"url"`
	Title     string   `json:"title,omitempty"`
	Magnitude *float64 `json:"magnitude,omitempty"` // share of the text that changed, for changed pages
	FetchID   int64    `json:"fetch_id,omitempty"`
}

// Summary is what a hook receives.
type Summary struct {
	Run       int64     `json:"run"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Status    string    `json:"status"`
	Fetched   int       `json:"fetched"`
	Changed   int       `json:"changed"`
	New       int       `json:"new"`
	Gone      int       `json:"gone"`
	Unlinked  int       `json:"unlinked"`
	NotFound  int       `json:"not_found"`
	Pages     []Page    `json:"pages"`      // the biggest changes first, then new, gone and unlinked pages
	More      int       `json:"more_pages"` // pages left out of Pages
}

// Eventful reports whether anything happened to a page in the run.
func (s Summary) Eventful() bool { return s.Changed+s.New+s.Gone+s.Unlinked > 0 }

// Due reports whether h has anything to do after a run summarised by s.
func (h Hooks) Due(s Summary) bool {
	return (h.Webhook != "" || h.Command != "") && (h.Always || s.Eventful())
}

// Send runs the hooks that are configured, side by side, each under the timeout, and returns their
// failures joined; nil when all succeeded or none is configured.
func Send(ctx context.Context, h Hooks, s Summary) error {
	if !h.Due(s) {
		return nil
	}
	body, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("notify: encode the summary of run %d: %w", s.Run, err)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var wg sync.WaitGroup
	var webErr, cmdErr error
	if h.Webhook != "" {
		wg.Go(func() {
			tctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			webErr = post(tctx, h.Webhook, body)
		})
	}
	if h.Command != "" {
		wg.Go(func() {
			tctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			cmdErr = run(tctx, h.Command, body, s)
		})
	}
	wg.Wait()
	return errors.Join(webErr, cmdErr)
}

// client sends to the configured URL only: no proxy from the environment, no redirect followed.
var client = &http.Client{
	Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableKeepAlives:   true,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func post(ctx context.Context, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify: webhook %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "strata-notify")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("notify: webhook: %w", err) // the error names the URL
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notify: webhook %s: HTTP %d", url, resp.StatusCode)
	}
	return nil
}

// outputCap bounds what a command's output contributes to an error message.
const outputCap = 2 << 10

func run(ctx context.Context, path string, body []byte, s Summary) error {
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = bytes.NewReader(body)
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(),
		"STRATA_RUN="+strconv.FormatInt(s.Run, 10),
		"STRATA_CHANGED="+strconv.Itoa(s.Changed),
		"STRATA_NEW="+strconv.Itoa(s.New),
		"STRATA_GONE="+strconv.Itoa(s.Gone))
	// A command that leaves a child holding its output open would keep Wait from returning.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("notify: command %s: stopped: %w", path, ctx.Err())
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if msg != "" {
			return fmt.Errorf("notify: command %s: %w: %s", path, err, msg)
		}
		return fmt.Errorf("notify: command %s: %w", path, err)
	}
	return nil
}

// capped keeps the first outputCap bytes written to it.
type capped struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := outputCap - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
