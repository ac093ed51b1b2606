package crawler

import (
	"log/slog"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/htmltree"
	"github.com/strata-crawler/strata/internal/pagetext"
	"github.com/strata-crawler/strata/linkextract"
)

// textExtractor returns the crawler's text function: for HTML, one parse of the page whose tree
// gives its links (linkextract) and then its text (pagetext, which prunes the tree); the text itself
// otherwise. Parsing is the larger part of either, and each page was parsed up to four times
// before: for its text, for the links it adds to the run, for its WARC record's outlinks and again
// by the links stage (issue 19).
func textExtractor(mode pagetext.Mode, log *slog.Logger) TextFunc {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(body []byte, contentType, pageURL string) Text {
		if !archive.IsHTML(contentType) {
			return Text{Body: string(body)}
		}
		// html.Parse's tree, built with a fraction of its allocations
		doc, err := htmltree.Parse(body)
		if err != nil { // nested too deeply for a tree: each reads the tokens its own way
			links, _ := linkextract.Extract(pageURL, body, linkextract.Options{})
			t, err := pagetext.Extract(body, pageURL, mode)
			return textOf(t, err, mode, links, pageURL, log)
		}
		links, _ := linkextract.ExtractTree(pageURL, doc, linkextract.Options{}) // before the text prunes the tree
		t, err := pagetext.ExtractTree(doc, body, pageURL, mode)
		return textOf(t, err, mode, links, pageURL, log)
	}
}

func textOf(t pagetext.Text, err error, mode pagetext.Mode, links *linkextract.Page, pageURL string, log *slog.Logger) Text {
	if err != nil { // only an unknown mode, which the configuration refuses
		log.Error("text extraction", "url", pageURL, "error", err)
		return Text{Links: links}
	}
	return Text{Title: t.Title, Body: t.Body, Mode: textMode(mode, t.Mode), Alt: t.Alt, Links: links}
}

// textMode is the mode recorded with a version: "fallback" where Main was asked for and Full used.
func textMode(asked, used pagetext.Mode) string {
	if asked == pagetext.Main && used == pagetext.Full {
		return "fallback"
	}
	return string(used)
}

// pageLinks returns the links of a kept HTML page: those its text function read from the same
// parse, or, where it read none (a text function of a test), its own extraction. Nil when the page
// is not HTML or its final URL does not normalise.
func pageLinks(resp *fetch.Response, t Text) *linkextract.Page {
	if t.Links != nil || !archive.IsHTML(resp.ContentType) {
		return t.Links
	}
	links, err := linkextract.Extract(resp.FinalURL, resp.Text, linkextract.Options{})
	if err != nil {
		return nil
	}
	return links
}
