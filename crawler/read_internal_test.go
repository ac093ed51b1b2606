package crawler

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/pagetext"
	"github.com/strata-crawler/strata/internal/testweb"
	"github.com/strata-crawler/strata/linkextract"
)

// TestTextExtractorOneParse: the text function reads a page's links from the parse that gives its
// text, and both are what linkextract and pagetext find on their own, the deeply nested page that
// has no tree included.
func TestTextExtractorOneParse(t *testing.T) {
	const pageURL = "https://a.example/story/x"
	pages := map[string]string{
		"article": string(testweb.NewArticleWeb(50, 20, 50_000).Page("a.example", 7)),
		"noscript and nofollow": `<head><meta name=robots content=nofollow><link rel=alternate type=application/rss+xml href=/feed>` +
			`<noscript><a href=/nojs>no js</a></noscript></head><main><p>` + strings.Repeat("Words of the story. ", 20) +
			`<a href="/b" rel=ugc>b</a></p></main>`,
		"too deep for a tree": strings.Repeat("<div>", 600) + `<p>deep text</p><a href="/deep">deep</a>`,
		"no links":            "<p>nothing to follow</p>",
	}
	read := textExtractor(pagetext.Main, slog.New(slog.DiscardHandler))
	for name, body := range pages {
		t.Run(name, func(t *testing.T) {
			got := read([]byte(body), "text/html", pageURL)
			wantLinks, err := linkextract.Extract(pageURL, []byte(body), linkextract.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Links, wantLinks) {
				t.Errorf("links %+v\nwant %+v", got.Links, wantLinks)
			}
			want, err := pagetext.Extract([]byte(body), pageURL, pagetext.Main)
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != want.Title || got.Body != want.Body || got.Mode != textMode(pagetext.Main, want.Mode) {
				t.Errorf("text %q (%s), want %q (%s)", got.Body, got.Mode, want.Body, want.Mode)
			}
		})
	}
	if got := read([]byte("<a href=/x>x</a>"), "text/plain", pageURL); got.Links != nil {
		t.Errorf("links read from a page that is not HTML: %+v", got.Links)
	}
}
