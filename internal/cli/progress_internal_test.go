package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
)

// TestStderrLines: a log line never prints into the bar: the bar is erased before it and drawn
// again after it.
func TestStderrLines(t *testing.T) {
	var b strings.Builder
	s := &stderrLines{w: &b}
	s.Write([]byte("before the bar\n"))
	s.draw("crawling [=>  ] 10%")
	s.Write([]byte("time=… level=INFO msg=x\n"))
	s.draw("crawling [==> ] 20%")
	s.end()
	s.Write([]byte("after\n"))
	want := "before the bar\n" + eraseLine + "crawling [=>  ] 10%" + eraseLine + "time=… level=INFO msg=x\ncrawling [=>  ] 10%" +
		eraseLine + "crawling [==> ] 20%\nafter\n"
	if b.String() != want {
		t.Errorf("wrote %q\nwant  %q", b.String(), want)
	}
}

func TestProgressLine(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	p := &progress{width: 120, start: t0}
	st := crawler.Stats{Due: 100, Done: 20, KnownFetched: 20, Active: 3, Errors: 1}
	p.rate.add(t0, 0)
	if got := p.line(st, t0.Add(2*time.Second), false); strings.Contains(got, "ETA") || !strings.Contains(got, " 20% 20/100 · 3 domains · 1 error") {
		t.Errorf("line %q: want 20%%, no ETA yet", got)
	}
	p.rate.add(t0.Add(10*time.Second), 20) // 2 URLs a second
	if got := p.line(st, t0.Add(10*time.Second), false); !strings.HasSuffix(got, "· ETA 40s") {
		t.Errorf("line %q: want an ETA of 40s (80 URLs at 2 a second)", got)
	}
	// The selective rule skipped the rest: done is all there is.
	st = crawler.Stats{Due: 100, Done: 60, KnownFetched: 60, SkippedSelective: 40}
	if got := p.line(st, t0.Add(30*time.Second), true); !strings.HasPrefix(got, "crawled  [========================] 100% 60/60") ||
		!strings.HasSuffix(got, "· 30s") {
		t.Errorf("final line %q", got)
	}
	p.width = 30
	if got := p.line(st, t0, false); len([]rune(got)) != 29 {
		t.Errorf("line %q is not cut to the terminal's width", got)
	}
}

func TestRateWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var r rateWindow
	for i := range 300 { // 1 URL a second for five minutes, then 10 a second
		r.add(t0.Add(time.Duration(i)*time.Second), i)
	}
	for i := range 60 {
		r.add(t0.Add(time.Duration(300+i)*time.Second), 300+10*i)
	}
	eta, ok := r.eta(t0.Add(360*time.Second), 900, 1900)
	// The last minute's pace, about 10 a second (the window's first sample is from the slow part).
	if !ok || eta < 90*time.Second || eta > 110*time.Second {
		t.Errorf("eta %v, %v; want about 100s", eta, ok)
	}
	if len(r.samples) > 62 {
		t.Errorf("%d samples kept; the window is a minute", len(r.samples))
	}
}
