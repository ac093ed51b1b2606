package pagetext

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// droppedTags are the elements prune drops (droppedElements and <head>), for tokenText.
var droppedTags = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true,
	"title": true, "iframe": true, "object": true, "embed": true, "canvas": true,
	"video": true, "audio": true, "picture": true, "map": true, "select": true,
	"datalist": true, "textarea": true, "button": true, "head": true,
}

// tokenText is the fallback for documents html.Parse rejects: it refuses
// trees nested deeper than 512 open elements, which a page that never closes
// its <div>s or <font>s reaches. It reads the token stream instead of a tree,
// with the same block rules where they need no tree: block, list and item
// tags break, <br> and <pre> as usual, table cells become blocks (a data
// table's rows cannot be told from a layout), dropped and hidden elements
// are skipped up to their end tag. It returns the title and the body
// without the title block.
func tokenText(src []byte) (title, body string) {
	z := html.NewTokenizer(bytes.NewReader(src))
	r := newRenderer()
	skip, skipDepth := "", 0 // skipping the content of this element
	pre := 0                 // depth of <pre> elements
	inTitle := false
	var titleText strings.Builder
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			r.endBlock()
			return collapse(titleText.String()), r.finish()
		case html.TextToken:
			switch {
			case inTitle:
				titleText.Write(z.Text())
			case skip != "":
			case pre > 0:
				r.preText(string(z.Text()))
			default:
				r.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			tok := z.Token()
			name := tok.Data
			if skip != "" {
				if name == skip && tt == html.StartTagToken {
					skipDepth++
				} else if name == skip && tt == html.EndTagToken {
					if skipDepth--; skipDepth == 0 {
						skip = ""
					}
				}
				continue
			}
			if name == "title" {
				inTitle = tt == html.StartTagToken && titleText.Len() == 0
				continue
			}
			if tt == html.EndTagToken {
				r.tokenEnd(name, &pre)
				continue
			}
			n := &html.Node{Type: html.ElementNode, Data: name, Attr: tok.Attr}
			if (droppedTags[name] || isHidden(n)) && !voidElements[name] && tt == html.StartTagToken {
				skip, skipDepth = name, 1
				continue
			}
			r.tokenStart(name, &pre)
			if tt == html.SelfClosingTagToken {
				r.tokenEnd(name, &pre)
			}
		}
	}
}

// voidElements have no end tag.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true,
	"track": true, "wbr": true,
}

func (r *renderer) tokenStart(name string, pre *int) {
	switch {
	case name == "br":
		if *pre > 0 {
			r.preText("\n")
		} else {
			r.br()
		}
	case name == "hr":
		r.blockBreak()
	case preElements[name]:
		r.blockBreak()
		r.preFrom = len(r.starts)
		*pre++
	case name == "a":
		if len(r.line) > 0 && r.linkEnd == len(r.line) {
			r.space = true
		}
		r.inlineStart()
	case listElements[name]:
		r.blockBreak()
		r.listDepth++
	case itemElements[name]:
		r.lineBreak()
	case blockElements[name]:
		r.blockBreak()
	case !voidElements[name]:
		r.inlineStart()
	}
}

func (r *renderer) tokenEnd(name string, pre *int) {
	switch {
	case preElements[name]:
		if *pre > 0 {
			*pre--
			r.lineBreak()
			if r.preFrom <= len(r.starts) {
				r.dedentFrom(r.preFrom)
			}
		}
		r.blockBreak()
	case name == "a":
		r.linkEnd = len(r.line)
		r.afterInline = true
	case listElements[name]:
		if r.listDepth > 0 {
			r.listDepth--
		}
		r.blockBreak()
	case itemElements[name]:
		r.lineBreak()
	case blockElements[name]:
		r.blockBreak()
	case !voidElements[name]:
		r.afterInline = true
	}
}

// preText adds preformatted text in token mode: each newline ends a line,
// white space is kept (tabs expanded), and lineBreak trims the line's end.
func (r *renderer) preText(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			r.lineBreak()
		}
		for _, c := range l {
			switch {
			case c == '\t':
				for n := utf8.RuneCount(r.line); ; n++ {
					r.line = append(r.line, ' ')
					if (n+1)%tabWidth == 0 {
						break
					}
				}
			case isSpace(c):
				r.line = append(r.line, ' ')
			case dropRune(c):
			default:
				r.line = utf8.AppendRune(r.line, c)
				r.afterBR = false
			}
		}
	}
}
