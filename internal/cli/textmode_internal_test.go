package cli

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/pagetext"
	"github.com/strata-crawler/strata/internal/store"
)

// TestTextExtractorMode: the mode recorded with a version says whether it is the main content,
// the whole text as configured, or the whole text because Main found no main content.
func TestTextExtractorMode(t *testing.T) {
	article := "<main><p>" + strings.Repeat("The article says a thing, then another. ", 10) + "</p></main>"
	for _, tt := range []struct {
		name, body, ctype string
		mode              pagetext.Mode
		want              string
	}{
		{"main", article, "text/html", pagetext.Main, "main"},
		{"fallback", "<div><a href=/a>a</a> <a href=/b>b</a></div>", "text/html", pagetext.Main, "fallback"},
		{"full as configured", article, "text/html", pagetext.Full, "full"},
		{"not HTML", "plain words", "text/plain", pagetext.Main, ""},
	} {
		got := textExtractor(tt.mode, slog.New(slog.DiscardHandler))([]byte(tt.body), tt.ctype, "https://a.example/")
		if got.Mode != tt.want {
			t.Errorf("%s: mode %q, want %q", tt.name, got.Mode, tt.want)
		}
	}
}

// TestHistoryTrivialAfterFirst: a version stored without a change after the first one (new
// bytes, same words; or the same page moved between main and whole text) reads "trivial", not
// "first", which only the first stored version is.
func TestHistoryTrivialAfterFirst(t *testing.T) {
	hist := []store.HistoryEntry{
		{RunID: 1, Status: 200, Stored: "v1", Current: "v1", TextMode: "fallback"},
		{RunID: 2, Status: 200, Stored: "v2", Current: "v2", TextMode: "main"},
	}
	arch, err := archive.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := printHistory(&b, arch, "https://a.example/", hist, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 4 || !strings.Contains(lines[2], "first") || !strings.Contains(lines[3], "trivial") {
		t.Errorf("history:\n%s\nwant the first version \"first\" and the second \"trivial\"", b.String())
	}
	b.Reset()
	if err := printHistory(&b, arch, "https://a.example/", hist, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"text_mode": "fallback"`) && !strings.Contains(b.String(), `"text_mode":"fallback"`) {
		t.Errorf("history --json has no text_mode:\n%s", b.String())
	}
}
