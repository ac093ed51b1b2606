// Package pagetext turns an archived HTML page into the plain text that strata
// stores as page.txt and feeds to change detection.
//
// Two modes exist, chosen by archive.text:
//
//   - Full: every visible text block of the page in document order (title,
//     headings, paragraphs, list items, table cells), extracted by our own
//     walk of the golang.org/x/net/html tree. Nothing is judged
//     to be boilerplate; only text a browser would not show is dropped.
//   - Main: the main content, found by our own readability-style scorer
//     over the same tree (readability.go: page furniture dropped, blocks
//     scored by text, commas and link density, the best container and its
//     qualifying siblings kept, link-heavy boxes inside it removed) and
//     rendered with the same block rules as Full. When the page has no
//     main content to trust (see [MainMinShare]) or is larger than
//     [MainMaxBytes], Full is used and Text.Mode says so.
//
// A page nested deeper than html.Parse accepts (512 open elements, which a
// page that never closes its tags can reach) is read from its token stream
// with the same rules where they need no tree, in Full mode (see tokenText).
//
// The output format is the same in both modes:
//
//   - blocks (title, headings, paragraphs, a whole list, a whole table, a
//     pre block) are separated by exactly one blank line ("\n\n");
//   - lines inside a block (list items, table rows, <br>, lines of <pre>) by
//     a single "\n"; a block never contains an empty line;
//   - table cells of a row by a single "\t" (a cell never contains a tab,
//     because whitespace inside a cell is collapsed, so rows split exactly);
//   - two inline elements that touch ("<b>x</b><i>int</i>") a space apart
//     when both sides are letters or digits: a style sheet sets them apart
//     on screen (Sphinx's " : " before a type), and glued words corrupt
//     the text;
//   - whitespace inside a line collapsed to one ASCII space, except the
//     indentation of <pre> lines (tabs expanded to 8 columns, the
//     indentation common to the block removed);
//   - no leading or trailing blank lines, no trailing white space on any
//     line, no control characters but "\n" and "\t", valid UTF-8. A line
//     starts with white space only if it is an indented <pre> line or a
//     table row whose first cells are empty.
//
// Extract is deterministic: the same bytes always give the same Text. It is
// safe for concurrent use.
package pagetext

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/strata-crawler/strata/internal/htmltree"
	"golang.org/x/net/html"
)

// Mode selects how much of a page Extract keeps.
type Mode string

const (
	// Full keeps every visible text block, boilerplate included.
	Full Mode = "full"
	// Main keeps the main content, falling back to Full when the main
	// content extractor finds too little.
	Main Mode = "main"
)

// Main falls back to Full only when the page has no main content to trust:
// the extractor found no text, or it found text outside the element the page
// declares as its main content (<main>, role=main, itemprop=articleBody, a
// lone <article>) that is less than MainMinShare of the runes of the Full
// text, which is more likely a wrong pick than the article. Text inside a
// declared main element is trusted however short: a one-line API entry
// beside a navigation of hundreds of links is that page's main content
// (issue 19: the old rule, "under 200 runes or under 25 %", sent 45 % of the
// SciPy manual's pages to Full, navigation and all).
//
// MainMinRunes is the length below which the link-heavy boxes that
// conditional cleaning removed are put back (a page that is a table of
// contents is its links), as Readability retries without that cleaning. The
// runes are counted on the body without the title block.
const (
	MainMinRunes = 200
	MainMinShare = 0.25
)

// MainMaxBytes is the largest page given to the main content extractor;
// a larger page gets the Full text. It bounded go-trafilatura's time, which
// grew faster than the page (1.3 s for 1 MiB of paragraphs); our extractor
// is linear (about 20 ms on top of Full's 30 ms for 1 MiB), so the limit
// now only keeps the behaviour of earlier versions. 1 MiB is also
// crawl.max_bytes' default.
const MainMaxBytes = 1 << 20

// Text is the extracted text of one page.
type Text struct {
	// Title is the text of the first <title>, whitespace collapsed.
	Title string
	// Body is the text: the title as its first block (unless the page's
	// first block already says the same), then the blocks of the page.
	Body string
	// Mode is the mode actually used: Main may fall back to Full.
	Mode Mode
	// alt is the body in the other mode without the title block (see Alt);
	// altSrc, when set, the page whose Full text it is, not yet rendered.
	alt    string
	altSrc []byte
}

// Alt returns the body in the other mode, where Extract computed it on the
// way: the Full text when Mode is Main, and the main content found but not
// trusted when Main fell back to Full ("" if none was found, or if Full was
// asked for). Change detection compares a new version with the previous
// one in the same mode with it (issue 19: a page moving between fallback
// and main looked 52-77 % changed). It is built only when asked for, which
// is rare; the Full text of a page whose Main text was trusted without it
// is then rendered from a new parse of the page.
func (t Text) Alt() string {
	alt := t.alt
	if t.altSrc != nil {
		alt = (&fullText{src: t.altSrc}).render(nil)
	}
	if alt == "" {
		return ""
	}
	return withTitle(t.Title, alt)
}

// Extract returns the text of page, an HTML document. page should be the
// document decoded to UTF-8 (as fetch does); if it is not valid UTF-8 it is
// repaired (see toUTF8), so any bytes give text. pageURL is the page's
// address; it may be empty, and no extractor uses it at present (the text
// depends on the page alone). The only error is an unknown mode.
func Extract(page []byte, pageURL string, mode Mode) (Text, error) {
	if mode != Full && mode != Main {
		return Text{}, fmt.Errorf("pagetext: unknown mode %q (want %q or %q)", string(mode), Full, Main)
	}
	src := toUTF8(page)
	doc, ok := parse(src)
	if !ok { // nested too deeply for html.Parse: read the tokens
		title, body := tokenText(src)
		return Text{Title: title, Body: withTitle(title, body), Mode: Full}, nil
	}
	return extractTree(doc, src, mode), nil
}

// ExtractTree is Extract for a page the caller has parsed already, so that one parse serves
// everything read from the page (its links too): doc is what html.Parse returned for src, the page
// as valid UTF-8 (as fetch decodes it). ExtractTree prunes doc in place and keeps counts in the
// DataAtom of its text nodes, so read anything else from the tree first. The Text's Alt may parse src again: src must not change while the Text is used. For src that is not valid UTF-8 it ignores doc and extracts as Extract does, from
// the repaired page. pageURL and the error are as for Extract.
func ExtractTree(doc *html.Node, src []byte, pageURL string, mode Mode) (Text, error) {
	if mode != Full && mode != Main {
		return Text{}, fmt.Errorf("pagetext: unknown mode %q (want %q or %q)", string(mode), Full, Main)
	}
	if !utf8.Valid(src) {
		return Extract(src, pageURL, mode)
	}
	return extractTree(doc, src, mode), nil
}

// extractTree extracts the text of doc, the tree of src.
func extractTree(doc *html.Node, src []byte, mode Mode) Text {
	title := findTitle(doc)
	prune(doc)
	if mode == Full || len(src) > MainMaxBytes {
		full := renderNode(doc)
		return Text{Title: title, Body: withTitle(title, full), Mode: Full}
	}
	full := &fullText{src: src}
	main, ok := extractMain(doc, full)
	if !ok {
		t := Text{Title: title, Body: withTitle(title, full.render(nil)), Mode: Full}
		if strings.TrimSpace(main) != "" {
			t.alt = main
		}
		return t
	}
	t := Text{Title: title, Body: withTitle(title, main), Mode: Main}
	if full.done {
		t.alt = full.text
	} else {
		t.altSrc = src
	}
	return t
}

// parse builds the document tree, html.Parse's (htmltree builds it with
// fewer allocations). It fails only on a document nested deeper than 512
// open elements.
func parse(src []byte) (*html.Node, bool) {
	doc, err := htmltree.Parse(src)
	if err != nil {
		return nil, false
	}
	return doc, true
}

// findTitle returns the collapsed text of the document's first <title>
// outside <svg> and <math> (whose <title> elements are tooltips).
func findTitle(doc *html.Node) string {
	var find func(n *html.Node) *html.Node
	find = func(n *html.Node) *html.Node {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "title":
				return c
			case "svg", "math":
				continue
			}
			if t := find(c); t != nil {
				return t
			}
		}
		return nil
	}
	t := find(doc)
	if t == nil {
		return ""
	}
	var b strings.Builder
	var text func(n *html.Node)
	text = func(n *html.Node) { // what goquery's Text gives: every text node below, in order
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
			text(c)
		}
	}
	text(t)
	return collapse(b.String())
}

// withTitle puts title in front of body as its own block, unless it is
// empty or the body already starts with the same text (the usual <h1>).
func withTitle(title, body string) string {
	first, _, _ := strings.Cut(body, "\n\n")
	switch {
	case title == "" || first == title:
		return body
	case body == "":
		return title
	}
	return title + "\n\n" + body
}
