package linkextract

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// candidate is a link element as written, before resolution.
type candidate struct {
	tag  string // "a", "area" or "link"
	href string
	rel  string
	typ  string
	// text is the label when it is known while scanning; node is an anchor whose text is read
	// only if its URL turns out to be new, so duplicates and dropped links cost no text walk.
	text      string
	node      *html.Node
	scripting bool // node's tree was parsed with scripting on (see scan.sources)
}

// scan is what one pass over a page collects; page turns it into a Page.
type scan struct {
	cands    []candidate
	base     string // href of the first <base href>, if hasBase
	hasBase  bool
	title    textBuf
	hasTitle bool
	noFollow bool
	noIndex  bool
	buf      textBuf // reused for every anchor's text
	lbl      textBuf // reused for attribute labels, which token scans read inside anchors
	// fragments holds the parsed content of <noscript> elements kept as text (see noscript).
	fragments map[*html.Node][]*html.Node
}

// attrs holds the attributes Extract reads. As in browsers, the first of repeated attributes wins.
type attrs struct {
	href, rel, typ, alt, title, name, content string
	hasHref                                   bool
	seen                                      uint8
}

func (a *attrs) set(key string, val func() string) {
	var bit uint8
	var dst *string
	switch key {
	case "href":
		bit, dst = 1, &a.href
		a.hasHref = true
	case "rel":
		bit, dst = 2, &a.rel
	case "type":
		bit, dst = 4, &a.typ
	case "alt":
		bit, dst = 8, &a.alt
	case "title":
		bit, dst = 16, &a.title
	case "name":
		bit, dst = 32, &a.name
	case "content":
		bit, dst = 64, &a.content
	default:
		return
	}
	if a.seen&bit == 0 {
		a.seen |= bit
		*dst = val()
	}
}

func nodeAttrs(n *html.Node) attrs {
	var a attrs
	for i := range n.Attr {
		if at := &n.Attr[i]; at.Namespace == "" {
			a.set(at.Key, func() string { return at.Val })
		}
	}
	return a
}

// element records one element of interest; tree and tokens both end up here.
func (s *scan) element(tag atom.Atom, a *attrs, n *html.Node) {
	switch tag {
	case atom.A:
		if a.hasHref {
			s.cands = append(s.cands, candidate{tag: "a", href: a.href, rel: a.rel, typ: a.typ, node: n})
		}
	case atom.Area:
		if a.hasHref {
			s.cands = append(s.cands, candidate{tag: "area", href: a.href, rel: a.rel, typ: a.typ,
				text: s.label(a.alt)})
		}
	case atom.Link:
		if a.hasHref && isAlternate(collapseRel(a.rel)) {
			s.cands = append(s.cands, candidate{tag: "link", href: a.href, rel: a.rel, typ: a.typ,
				text: s.label(a.title)})
		}
	case atom.Base:
		if a.hasHref && !s.hasBase {
			s.base, s.hasBase = a.href, true
		}
	case atom.Meta:
		s.meta(a.name, a.content)
	}
}

// isAlternate reports whether a link element names another version of the page (a feed, a
// translation) rather than an alternate style sheet or icon.
func isAlternate(rel string) bool {
	return hasToken(rel, "alternate") && !hasToken(rel, "stylesheet") && !hasToken(rel, "icon")
}

func (s *scan) meta(name, content string) {
	name = strings.TrimSpace(name)
	if !strings.EqualFold(name, "robots") && !strings.EqualFold(name, "strata") {
		return
	}
	for content != "" {
		i := strings.IndexAny(content, ", \t\n\f\r")
		tok := content
		if i >= 0 {
			tok, content = content[:i], content[i+1:]
		} else {
			content = ""
		}
		switch {
		case strings.EqualFold(tok, "nofollow"):
			s.noFollow = true
		case strings.EqualFold(tok, "noindex"):
			s.noIndex = true
		case strings.EqualFold(tok, "none"):
			s.noFollow, s.noIndex = true, true
		}
	}
}

// label collapses an attribute used as link text.
func (s *scan) label(v string) string {
	s.lbl.reset(MaxTextBytes)
	s.lbl.write(v)
	return s.lbl.String()
}

// text returns the label of a kept link, reading an anchor's subtree only now.
func (s *scan) text(c *candidate) string {
	if c.node == nil {
		return c.text
	}
	t := &s.buf
	t.reset(MaxTextBytes)
	s.writeText(t, c.node, c.scripting)
	return t.String()
}

// writeText writes the text under a to t; scripting says whether a's tree was parsed with
// scripting on (see sources).
func (s *scan) writeText(t *textBuf, a *html.Node, scripting bool) {
	// Iterative pre-order walk: hostile pages nest deeply, and the walk stops once the text is full.
	for n := a.FirstChild; n != nil && !t.full; {
		descend := false
		switch n.Type {
		case html.TextNode:
			t.write(n.Data)
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template:
				// Not shown to readers.
			case atom.Img:
				t.sep()
				t.write(nodeAttrs(n).alt)
				t.sep()
			case atom.Noscript:
				if !scripting {
					descend = true
					break
				}
				for _, f := range s.noscript(n) {
					// A fragment's nodes have no parent: wrap each to walk it like an anchor's children.
					wrap := &html.Node{Type: html.ElementNode, FirstChild: f, LastChild: f}
					f.Parent = wrap
					s.writeText(t, wrap, false)
					f.Parent = nil
				}
			default:
				if isBlock(n.DataAtom) {
					t.sep()
				}
				descend = true
			}
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for n.NextSibling == nil {
			n = n.Parent
			if n == a {
				return
			}
			if isBlock(n.DataAtom) {
				t.sep()
			}
		}
		n = n.NextSibling
	}
}

// isBlock reports elements whose boundaries separate words, so "<li>News</li><li>Sport</li>"
// inside one anchor reads "News Sport", not "NewsSport".
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Br, atom.Div, atom.P, atom.Li, atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Table, atom.Tr, atom.Td, atom.Th,
		atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Aside, atom.Figure,
		atom.Figcaption, atom.Blockquote, atom.Pre, atom.Hr, atom.Address, atom.Main:
		return true
	}
	return false
}

// sources returns, in document order, the HTML elements Extract reads under root. It walks
// iteratively (the parser allows 512 levels) and does not enter <template>, whose content is inert.
// In a tree parsed with scripting on, where every <noscript> holds its content as text, that
// content is read as the markup it is; in a <noscript> fragment (scripting off) text is text.
func (s *scan) sources(out []source, root *html.Node, scripting bool) []source {
	for n := root; ; {
		if n.Type == html.ElementNode && n.Namespace == "" {
			switch n.DataAtom {
			case atom.A, atom.Area, atom.Link, atom.Base, atom.Meta, atom.Title:
				out = append(out, source{n, scripting})
			case atom.Noscript:
				if scripting {
					for _, f := range s.noscript(n) {
						out = s.sources(out, f, false)
					}
				}
			}
		}
		if n.FirstChild != nil && !(n.Type == html.ElementNode && n.DataAtom == atom.Template) {
			n = n.FirstChild
			continue
		}
		for n != root && n.NextSibling == nil {
			n = n.Parent
		}
		if n == root {
			return out
		}
		n = n.NextSibling
	}
}

// noscript returns the content of a <noscript> element of a tree parsed with scripting on, where
// it is one text node, parsed as markup with scripting off, as a browser that runs no scripts
// builds it. Each element is parsed once.
func (s *scan) noscript(n *html.Node) []*html.Node {
	if n.FirstChild == nil || n.FirstChild.Type != html.TextNode {
		return nil
	}
	if f, ok := s.fragments[n]; ok {
		return f
	}
	f, err := html.ParseFragmentWithOptions(strings.NewReader(n.FirstChild.Data), &html.Node{Type: html.ElementNode,
		Data: "body", DataAtom: atom.Body}, html.ParseOptionEnableScripting(false))
	if err != nil {
		f = nil
	}
	if s.fragments == nil {
		s.fragments = map[*html.Node][]*html.Node{}
	}
	s.fragments[n] = f
	return f
}

// source is an element sources found, and whether its tree was parsed with scripting on.
type source struct {
	n         *html.Node
	scripting bool
}

// tree scans a parsed document; scripting says how it was parsed (see sources).
func (s *scan) tree(doc *html.Node, scripting bool) {
	nodes := s.sources(make([]source, 0, 64), doc, scripting)
	s.cands = make([]candidate, 0, len(nodes))
	for _, src := range nodes {
		n := src.n
		if n.DataAtom == atom.Title {
			if !s.hasTitle {
				s.hasTitle = true
				s.title.reset(MaxTitleBytes)
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.TextNode {
						s.title.write(c.Data)
					}
				}
			}
			continue
		}
		a := nodeAttrs(n)
		s.element(n.DataAtom, &a, n)
		if n.DataAtom == atom.A && len(s.cands) > 0 && s.cands[len(s.cands)-1].node == n {
			s.cands[len(s.cands)-1].scripting = src.scripting
		}
	}
}

// tokens scans a page the parser refused, tag by tag in source order.
func (s *scan) tokens(src []byte) {
	z := html.NewTokenizer(bytes.NewReader(src))
	open := -1 // index in s.cands of the anchor whose text is being read
	inTitle := false
	var skip atom.Atom // the raw-text element (script, style, a later title) whose text is no label
	t := &s.buf
	closeAnchor := func() {
		if open >= 0 {
			s.cands[open].text = t.String()
			open = -1
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			closeAnchor()
			return
		case html.TextToken:
			switch {
			case skip != 0:
			case inTitle:
				s.title.write(string(z.Text()))
			case open >= 0 && !t.full:
				t.write(string(z.Text()))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := atom.Lookup(name)
			if tag == skip {
				skip = 0
			}
			switch tag {
			case atom.A:
				closeAnchor()
			case atom.Title:
				inTitle = false
			default:
				if open >= 0 && isBlock(tag) {
					t.sep()
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			tag := atom.Lookup(name)
			var a attrs
			for more {
				var key, val []byte
				key, val, more = z.TagAttr()
				a.set(string(key), func() string { return string(val) })
			}
			switch tag {
			case atom.A:
				// Browsers close an open anchor when another starts.
				closeAnchor()
				if a.hasHref {
					open = len(s.cands)
					t.reset(MaxTextBytes)
				}
				s.element(tag, &a, nil)
			case atom.Area, atom.Link, atom.Base, atom.Meta:
				s.element(tag, &a, nil)
			case atom.Title:
				if !s.hasTitle {
					s.hasTitle, inTitle = true, true
					s.title.reset(MaxTitleBytes)
				} else {
					skip = tag
				}
			case atom.Script, atom.Style:
				skip = tag
			case atom.Noscript:
				z.NextIsNotRawText()
			case atom.Img:
				if open >= 0 {
					t.sep()
					t.write(a.alt)
					t.sep()
				}
			default:
				if open >= 0 && isBlock(tag) {
					t.sep()
				}
			}
		}
	}
}

// textBuf collapses white space and control characters to single spaces, trims both ends, repairs
// invalid UTF-8 and stops at a byte limit without splitting a character.
type textBuf struct {
	b     []byte
	max   int
	space bool // a separator is due before the next character
	full  bool
}

func (t *textBuf) reset(max int) {
	t.b, t.max, t.space, t.full = t.b[:0], max, false, false
}

func (t *textBuf) sep() { t.space = true }

func (t *textBuf) write(s string) {
	if t.full {
		return
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			t.space = true
			continue
		}
		need := utf8.RuneLen(r)
		gap := t.space && len(t.b) > 0
		if gap {
			need++
		}
		if len(t.b)+need > t.max {
			t.full = true
			return
		}
		if gap {
			t.b = append(t.b, ' ')
		}
		t.space = false
		t.b = utf8.AppendRune(t.b, r)
	}
}

func (t *textBuf) String() string { return string(t.b) }
