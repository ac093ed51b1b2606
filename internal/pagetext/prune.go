package pagetext

import (
	"strings"

	"golang.org/x/net/html"
)

// droppedElements are the elements whose content is not page text: code
// and styling, fallback content a browser shows only when something else
// fails (noscript with scripting on, iframe, object, video, ...), graphics,
// and form controls (button labels and <select> option lists are interface,
// and long option lists are a classic source of junk text). <title> is read
// separately; a <title> inside the body is not displayed. Every element of
// <head> is dropped too. As in a CSS selector, the name is matched in any
// namespace.
var droppedElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true, "title": true,
	"iframe": true, "object": true, "embed": true, "canvas": true, "video": true, "audio": true,
	"picture": true, "map": true, "select": true, "datalist": true, "textarea": true, "button": true,
	"input": true,
}

// prune removes from doc, in place, everything that is not visible text:
// droppedElements, the elements of <head>, and hidden elements (isHidden).
// Both modes extract from the pruned tree, so hidden text never reaches the
// main content extractor either. One walk of the tree, not a selector
// engine's two: those were 6 % of extracting a real-sized page's text and
// links (issue 19).
func prune(doc *html.Node) {
	for c := doc.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && (droppedElements[c.Data] || isHeadElement(doc) || isHidden(c)) {
			doc.RemoveChild(c)
		} else {
			prune(c)
		}
		c = next
	}
}

func isHeadElement(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == "head" }

// isHidden reports whether n is hidden by its own markup: the hidden
// attribute, aria-hidden="true", or an inline style with display:none or
// visibility:hidden. Stylesheets and classes are not evaluated.
func isHidden(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch a.Key {
		case "hidden":
			// hidden="until-found" is found by find-in-page: still text.
			if !strings.EqualFold(strings.TrimSpace(a.Val), "until-found") {
				return true
			}
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			if styleHides(a.Val) {
				return true
			}
		}
	}
	return false
}

// styleHides reports whether an inline style declares display:none or
// visibility:hidden (the last declaration of each property wins, as in CSS;
// !important is ignored).
func styleHides(style string) bool {
	display, visibility := "", ""
	for decl := range strings.SplitSeq(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(val))
		val = strings.TrimSpace(strings.TrimSuffix(val, "!important"))
		switch prop {
		case "display":
			display = val
		case "visibility":
			visibility = val
		}
	}
	return display == "none" || visibility == "hidden" || visibility == "collapse"
}
