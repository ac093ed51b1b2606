package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/strata-crawler/strata/crawler"
)

// stderrLines is standard error as the log and a progress bar share it. The bar is one line that
// is drawn again in place ("\r", erase the line, the bar); a log line first erases the bar and
// draws it again after itself, so that log lines never print into the bar and the bar stays last.
type stderrLines struct {
	mu  sync.Mutex
	w   io.Writer
	bar string // the bar as last drawn; "" when none is on the screen
}

// eraseLine returns the cursor to the start of the line and erases the line.
const eraseLine = "\r\x1b[K"

func (s *stderrLines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar == "" {
		return s.w.Write(p)
	}
	io.WriteString(s.w, eraseLine)
	n, err := s.w.Write(p)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		io.WriteString(s.w, "\n")
	}
	io.WriteString(s.w, s.bar)
	return n, err
}

// draw puts line on the screen as the bar, in place of the one before.
func (s *stderrLines) draw(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.w, eraseLine+line)
	s.bar = line
}

// end leaves the bar on the screen as it is, with the line ended, and forgets it.
func (s *stderrLines) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar != "" {
		io.WriteString(s.w, "\n")
		s.bar = ""
	}
}

// progress shows a crawl's progress: a bar on a terminal, drawn at most every redrawEvery, with
// the share done of what the stage will do (crawler.Stats.Progress), the domains at work, the
// errors and an ETA; otherwise (under cron) a log line a minute with the same numbers.
type progress struct {
	a     *app
	out   *stderrLines // nil: standard error is not a terminal
	width int          // the terminal's columns
	now   func() time.Time

	mu       sync.Mutex
	start    time.Time
	lastDraw time.Time
	lastLog  time.Time
	rate     rateWindow
}

const redrawEvery = 200 * time.Millisecond

func newProgress(a *app) *progress {
	p := &progress{a: a, now: time.Now, width: 80}
	p.start = p.now()
	p.lastLog = p.start
	if isTerminal(a.stderr) && a.errOut != nil {
		p.out = a.errOut
		if f, ok := a.stderr.(*os.File); ok {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
				p.width = w
			}
		}
	}
	return p
}

func (p *progress) update(st crawler.Stats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	done, total := st.Progress()
	p.rate.add(now, done)
	if p.out != nil {
		if now.Sub(p.lastDraw) < redrawEvery && done < total {
			return
		}
		p.lastDraw = now
		p.out.draw(p.line(st, now, false))
		return
	}
	if now.Sub(p.lastLog) >= time.Minute {
		p.lastLog = now
		args := []any{"done", done, "of", total, "percent", percent(done, total), "active_domains", st.Active,
			"errors", st.Errors, "changed", st.Changed}
		if eta, ok := p.rate.eta(now, done, total); ok {
			args = append(args, "eta", eta.Round(time.Second).String())
		}
		p.a.log.Info("crawl progress", args...)
	}
}

// finish draws the stage's last state, when it ran on a terminal, and leaves it on the screen.
func (p *progress) finish(st *crawler.Stats) {
	if p.out == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st != nil {
		p.out.draw(p.line(*st, p.now(), true))
	}
	p.out.end()
}

// line is the bar: "crawling [=========>          ]  45% 1,234/2,741 · 3 domains · 0 errors · ETA 2m10s".
func (p *progress) line(st crawler.Stats, now time.Time, final bool) string {
	done, total := st.Progress()
	const width = 24
	filled := width
	if total > 0 {
		filled = width * done / total
	}
	bar := strings.Repeat("=", filled)
	if filled < width {
		bar += ">" + strings.Repeat(" ", width-filled-1)
	}
	verb := "crawling"
	if final {
		verb = "crawled "
		if st.Stopped {
			verb = "stopped "
		}
	}
	s := fmt.Sprintf("%s [%s] %3d%% %s/%s", verb, bar, percent(done, total), count(done), count(total))
	if !final {
		s += " · " + plural(st.Active, "domain")
	}
	s += " · " + plural(st.Errors, "error")
	switch eta, ok := p.rate.eta(now, done, total); {
	case final:
		s += " · " + fmtElapsed(now.Sub(p.start))
	case ok && done < total:
		s += " · ETA " + fmtElapsed(eta)
	}
	// A line longer than the terminal wraps, and the next draw could not erase its first part.
	if utf8.RuneCountInString(s) >= p.width {
		s = string([]rune(s)[:p.width-1])
	}
	return s
}

func percent(done, total int) int {
	if total <= 0 {
		return 100
	}
	return min(100, 100*done/total)
}

// count writes n with thousands separators: 1,234.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtElapsed writes a duration to the second, or to the minute past an hour: 45s, 2m10s, 1h05m.
func fmtElapsed(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return d.String()
}

// rateWindow estimates the rate at which URLs are done from the last rateSpan of progress, so that
// the ETA follows the crawl's pace now (robots.txt first, politeness gaps later) rather than its
// average since the start.
type rateWindow struct {
	samples []rateSample
}

type rateSample struct {
	at   time.Time
	done int
}

const (
	rateSpan = time.Minute     // the window the rate is measured over
	rateMin  = 5 * time.Second // how much of it an ETA needs
)

func (r *rateWindow) add(now time.Time, done int) {
	if n := len(r.samples); n > 0 && r.samples[n-1].done == done && now.Sub(r.samples[n-1].at) < time.Second {
		return
	}
	r.samples = append(r.samples, rateSample{now, done})
	i := 0
	for i < len(r.samples)-2 && now.Sub(r.samples[i+1].at) >= rateSpan {
		i++
	}
	r.samples = r.samples[i:]
}

// eta returns the time the URLs left should take at the recent rate; ok is false until there is a
// rate to go by.
func (r *rateWindow) eta(now time.Time, done, total int) (time.Duration, bool) {
	if done >= total {
		return 0, true
	}
	if len(r.samples) < 2 {
		return 0, false
	}
	first := r.samples[0]
	span := now.Sub(first.at)
	if span < rateMin || done <= first.done {
		return 0, false
	}
	perURL := span / time.Duration(done-first.done)
	return perURL * time.Duration(total-done), true
}
