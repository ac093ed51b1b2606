package crawler

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/pagetext"
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
