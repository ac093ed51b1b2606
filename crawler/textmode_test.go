package crawler_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/pagetext"
)

// mainText is the crawler's text function as strata configures it with archive.text = "main".
func mainText(body []byte, contentType, pageURL string) crawler.Text {
	t, err := pagetext.Extract(body, pageURL, pagetext.Main)
	if err != nil {
		panic(err)
	}
	mode := string(t.Mode)
	if t.Mode == pagetext.Full {
		mode = "fallback"
	}
	return crawler.Text{Title: t.Title, Body: t.Body, Mode: mode, Alt: t.Alt}
}

// TestModeSwitchComparesLikeWithLike: an edit that adds a paragraph takes a page from Main's
// fallback (its article too small a share of a page of links) to its main content. The change is
// measured on the same kind of text as the previous version (issue 19: it was reported as 52-77 %
// of the page, the navigation that went counting as change), and each version records its mode.
func TestModeSwitchComparesLikeWithLike(t *testing.T) {
	h := newHarness(t, harnessOptions{archive: true, text: mainText})
	s := h.web.AddSite(t)
	var nav strings.Builder
	nav.WriteString("<ul>")
	for i := range 60 {
		w := string(rune('a'+i/26)) + string(rune('a'+i%26)) + "x" // distinct words: numbers normalise away
		fmt.Fprintf(&nav, "<li><a href=\"/s%d\">Papers of the %s working group</a></li>", i, w)
	}
	nav.WriteString("</ul>")
	para := func(topic string) string {
		return "<p>The " + topic + " committee met on a wet evening, heard the treasurer, argued about the " +
			"hall, and agreed, after some time, to write to the council about the " + topic + ".</p>"
	}
	v1 := "<title>Minutes</title><div>" + para("harbour") + "</div>" + nav.String()
	v2 := "<title>Minutes</title><div>" + para("harbour") + para("library") + para("orchard") + para("bridge") +
		para("museum") + para("ferry") + "</div>" + nav.String()
	for _, v := range []string{v1, v2} {
		if got := mainText([]byte(v), "text/html", ""); got.Mode != map[bool]string{true: "fallback", false: "main"}[v == v1] {
			t.Fatalf("the fixture no longer switches modes: %s for version %d", got.Mode, map[bool]int{true: 1, false: 2}[v == v1])
		}
	}
	s.Page("/", v1)
	h.seed(0, 1, s.URL("/"))
	h.mustCrawl()
	s.Page("/", v2)
	h.mustCrawl()
	hist, err := h.db.History(t.Context(), s.URL("/"))
	if err != nil || len(hist) != 2 {
		t.Fatalf("history %v, %v", hist, err)
	}
	if hist[0].TextMode != "fallback" || hist[1].TextMode != "main" {
		t.Errorf("text modes recorded %q, %q; want fallback, main", hist[0].TextMode, hist[1].TextMode)
	}
	// Five short paragraphs added to a page of links: 0.07 in the whole text; 0.84 when the
	// main content was compared with the previous whole text.
	if !hist[1].Changed || hist[1].Magnitude <= 0 || hist[1].Magnitude > 0.25 {
		t.Errorf("magnitude of five added paragraphs = %.2f (changed %v), want above 0 and at most 0.25",
			hist[1].Magnitude, hist[1].Changed)
	}
	for i, p := range h.archivedVersions(s.URL("/")) {
		b, err := os.ReadFile(filepath.Join(h.arch.Root(), p, "page.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m archive.Meta
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if want := []string{"fallback", "main"}[i]; m.TextMode != want {
			t.Errorf("version %d page.json text_mode = %q, want %q", i+1, m.TextMode, want)
		}
	}
}
