package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

func TestChildCrawlsTheSeeds(t *testing.T) {
	ls, err := testweb.ServeLoad(testweb.NewLoadWeb(3), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://"+ls.Hosts[0]+"/\n\nhttp://"+ls.Hosts[1]+"/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-child", "colly", "-seeds", seeds, "-workers", "2"}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), `"Pages":6,`) {
		t.Errorf("child output %q: want 6 pages", out.String())
	}
	if st := ls.Stats(); st.Pages != 6 || st.Robots != 2 || st.Overlaps != 0 {
		t.Errorf("served %+v: want 6 pages, 2 robots.txt, no overlap", st)
	}
}

func TestRunRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no hosts", []string{"-hosts", "0"}, "at least 1"},
		{"unknown crawler", []string{"-hosts", "1", "-pages", "1", "-crawlers", "wget"}, `unknown crawler "wget"`},
		{"unknown child", []string{"-child", "wget"}, `unknown child "wget"`},
		{"bad flag", []string{"-no-such-flag"}, "not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), tt.args, &out, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v, want an error with %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	full := testweb.LoadStats{Pages: 6, Robots: 2}
	tests := []struct {
		name   string
		served testweb.LoadStats
		o      options
		want   string // "" for no error
	}{
		{"whole web", full, options{hosts: 2, pages: 3}, ""},
		{"missed a page", testweb.LoadStats{Pages: 5, Robots: 2}, options{hosts: 2, pages: 3}, "5 of 6 pages served"},
		{"robots.txt twice", testweb.LoadStats{Pages: 6, Robots: 3}, options{hosts: 2, pages: 3}, "robots.txt served 3 times for 2 hosts"},
		{"overlap", testweb.LoadStats{Pages: 6, Robots: 2, Overlaps: 1}, options{hosts: 2, pages: 3}, "1 requests overlapped"},
		{"stopped early", testweb.LoadStats{Pages: 4, Robots: 2}, options{hosts: 2, pages: 3, maxDuration: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&measurement{name: "x", served: tt.served}).check(tt.o)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("check = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestPrintBoundsTheRateByTheCores(t *testing.T) {
	start := time.Unix(0, 0)
	m := &measurement{name: "x", wall: 2 * time.Second, usage: usage{user: 1500 * time.Millisecond, sys: 500 * time.Millisecond},
		served: testweb.LoadStats{Pages: 1000, First: start, Last: start.Add(2 * time.Second)}, webCPU: 500 * time.Millisecond}
	var out bytes.Buffer
	m.print(&out, options{})
	// 2.5 CPU seconds per 1,000 pages, crawler and web together: the cores allow 400 pages/s each.
	want := fmt.Sprintf("x: the test web's CPU 0.50 s per 1,000 pages; crawler and web together allow at most %d pages/s on %d cores",
		400*runtime.NumCPU(), runtime.NumCPU())
	if !strings.Contains(out.String(), want) {
		t.Errorf("print wrote\n%s\nwant a line %q", out.String(), want)
	}
	if !strings.Contains(out.String(), "x: CPU 2.00 s per 1,000 pages") {
		t.Errorf("print wrote\n%s\nwant the crawler's CPU per 1,000 pages", out.String())
	}
}
