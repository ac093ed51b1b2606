package pagetext

import (
	"net/url"
	"strings"

	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// trafilaturaOptions are fixed for determinism: no external fallback
// extractors (go-readability, go-domdistiller), no publish-date search
// (go-htmldate bounds dates by the current time, and we do not use the
// date), comments excluded, no deduplication (its cache would make a result
// depend on the pages seen before), tables and lists kept, links and images
// not marked up. The focus is Balanced: FavorPrecision was tried and drops
// every post of the forum fixture (see docs/text-extraction.md) while
// keeping the same text on the other seven.
func trafilaturaOptions(pageURL string) trafilatura.Options {
	opts := trafilatura.Options{
		EnableFallback:  false,
		Focus:           trafilatura.Balanced,
		ExcludeComments: true,
		ExcludeTables:   false,
		IncludeImages:   false,
		IncludeLinks:    false,
		Deduplicate:     false,
		HtmlDateMode:    trafilatura.Disabled,
		EnableLog:       false,
	}
	if u, err := url.Parse(pageURL); err == nil && u.IsAbs() {
		opts.OriginalURL = u
	}
	return opts
}

// mainContent returns the main content of doc (already pruned) by the
// block rules, and false when trafilatura found nothing or failed. A panic
// inside trafilatura is recovered and counts as a failure: the page is then
// archived with the Full text rather than crashing the crawl.
func mainContent(doc *html.Node, pageURL string) (text string, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			text, ok = "", false
		}
	}()
	res, err := trafilatura.ExtractDocument(doc, trafilaturaOptions(pageURL))
	if err != nil || res == nil || res.ContentNode == nil {
		return "", false
	}
	codeToPre(res.ContentNode)
	return renderNode(res.ContentNode), true
}

// codeToPre turns trafilatura's code blocks back into <pre>: it outputs a
// <pre> block as <code> holding the raw lines, which the block rules would
// otherwise run together as inline text.
func codeToPre(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data == "code" && strings.Contains(textOf(c), "\n") {
			c.Data, c.DataAtom = "pre", atom.Pre
			continue
		}
		codeToPre(c)
	}
}

// textOf returns the text under n.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
