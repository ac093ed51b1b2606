package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// funcs are the template helpers. None of them returns template.HTML: everything a template
// prints is escaped by html/template in its context, archived data above all.
var funcs = template.FuncMap{
	"when":     fmtTime,
	"dur":      fmtDuration,
	"bytes":    fmtBytes,
	"pct":      fmtPercent,
	"num":      fmtCount,
	"count":    fmtNoun,
	"share":    func(v float64) float64 { return max(0, min(100, round2(100*v))) },
	"opname":   func(o Op) string { return [...]string{"same", "del", "ins", "gap"}[o] },
	"robots":   robotsStatus,
	"httpcode": httpStatus,
	"plink":    func(id int64, title, url string) pageLink { return pageLink{id, title, url} },
	"lines":    func(s string) int { return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1 },
	"outcome":  outcome,
}

// pageLink is what the pagelink template shows of a page in a list: its title, and its URL.
type pageLink struct {
	ID         int64
	Title, URL string
}

func (s *Server) parseTemplates() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return fmt.Errorf("serve: templates: %w", err)
	}
	base, err := template.New("layout").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return fmt.Errorf("serve: templates: %w", err)
	}
	s.pages = map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" || name == "parts" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return fmt.Errorf("serve: template %s: %w", n, err)
		}
		s.pages[name] = t
	}
	return nil
}

// render writes v through the layout. It renders into a buffer first, so a template error becomes
// a clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, status int, v *view) {
	t, ok := s.pages[v.Template]
	if !ok {
		s.log.Error("serve: no template", "template", v.Template)
		http.Error(w, "strata serve: internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.Error("serve: render", "template", v.Template, "err", err)
		http.Error(w, "strata serve: internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func fmtBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// fmtPercent writes a share 0..1; a negative share is unknown.
func fmtPercent(v float64) string {
	switch {
	case v < 0:
		return "?"
	case v > 0 && v < 0.01:
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// fmtCount writes a count with thousands separators.
// fmtNoun writes "1 page", "1,024 pages".
func fmtNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmtCount(n) + " " + noun + "s"
}

func fmtCount(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func robotsStatus(code int) string {
	switch {
	case code < 0:
		return "not fetched"
	case code == 0:
		return "unreachable"
	case code >= 200 && code < 300:
		return fmt.Sprintf("%d: rules apply", code)
	case code >= 400 && code < 500:
		return fmt.Sprintf("%d: no robots.txt, all allowed", code)
	}
	return fmt.Sprintf("%d: unavailable, crawling paused", code)
}

func httpStatus(code int) string {
	if code == 0 {
		return "no answer"
	}
	return fmt.Sprint(code)
}
