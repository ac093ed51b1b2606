package pagetext

import (
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// droppedSelector matches elements whose content is not page text: code and
// styling, fallback content a browser shows only when something else fails
// (noscript with scripting on, iframe, object, video, ...), graphics, and
// form controls (button labels and <select> option lists are interface, and
// long option lists are a classic source of junk text). <title> is read
// separately; a <title> inside the body is not displayed.
const droppedSelector = "script, style, noscript, template, svg, title, iframe, object, embed, " +
	"canvas, video, audio, picture, map, select, datalist, textarea, button, input, head > *"

// hiddenSelector pre-selects candidates for isHidden.
const hiddenSelector = "[hidden], [aria-hidden], [style]"

// prune removes from doc, in place, everything that is not visible text:
// the elements of droppedSelector and hidden elements (isHidden). Both
// modes extract from the pruned tree, so hidden text never reaches the main
// content extractor either.
func prune(doc *html.Node) {
	d := goquery.NewDocumentFromNode(doc)
	d.Find(droppedSelector).Remove()
	d.Find(hiddenSelector).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return isHidden(s.Nodes[0])
	}).Remove()
}

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
