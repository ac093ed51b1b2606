// Package htmltree builds the same golang.org/x/net/html tree as html.Parse
// with a fraction of its allocations, so that one parse of a page feeds its
// text, links and title at less cost (issue 19).
//
// The other files are x/net/html's tokenizer and tree construction
// (v0.62.0, BSD licence: see LICENSE), changed only where bytes, tokens and
// nodes are made. html.Parse allocates about 3,700 objects for a 50 KB
// page: its tokenizer copies each tag name and attribute (to replace NUL
// bytes that are almost never there) and each attribute key again (to find
// duplicates), Token copies every text and attribute value into a string
// and every tag's attributes into a slice, and every node is allocated on
// its own. Here the tokenizer reads one copy of the whole page and hands
// out slices of it, a token's strings are those slices (never written once
// handed out), and nodes and attributes come from blocks: about 20
// allocations a page. The algorithm is x/net/html's, so the tree is too:
// TestParseMatchesXNetHTML (html5lib's inputs, strata's page corpora) and
// FuzzParse compare the two trees node by node.
//
// The strings of a tree share the copy of its page: a string kept from the
// tree (a link taken from an attribute as is) keeps the whole copy alive
// until it is dropped.
package htmltree

import (
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The x/net/html names the copied parser uses.
type (
	Node      = html.Node
	Attribute = html.Attribute
	Token     = html.Token
	NodeType  = html.NodeType
	TokenType = html.TokenType
)

const (
	ErrorNode    = html.ErrorNode
	TextNode     = html.TextNode
	DocumentNode = html.DocumentNode
	ElementNode  = html.ElementNode
	CommentNode  = html.CommentNode
	DoctypeNode  = html.DoctypeNode
	RawNode      = html.RawNode
	// scopeMarkerNode is x/net/html's unexported marker type, one past RawNode; no node of a
	// returned tree has it.
	scopeMarkerNode = html.RawNode + 1

	ErrorToken          = html.ErrorToken
	TextToken           = html.TextToken
	StartTagToken       = html.StartTagToken
	EndTagToken         = html.EndTagToken
	SelfClosingTagToken = html.SelfClosingTagToken
	CommentToken        = html.CommentToken
	DoctypeToken        = html.DoctypeToken
)

// Section 12.2.4.3 says "The markers are inserted when entering applet,
// object, marquee, template, td, th, and caption elements, and are used
// to prevent formatting from "leaking" into applet, object, marquee,
// template, td, th, and caption elements".
var scopeMarker = Node{Type: scopeMarkerNode}

// Parse returns the tree html.Parse returns for src, and an error where
// html.Parse fails: a document nested deeper than 512 open elements.
func Parse(src []byte) (*html.Node, error) {
	p := &parser{
		tokenizer:  newTokenizer(src),
		scripting:  true,
		framesetOK: true,
		im:         initialIM,
	}
	p.doc = p.newNode()
	p.doc.Type = DocumentNode
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.doc, nil
}

// parse reads tokens until the end of the input.
func (p *parser) parse() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("htmltree: parse: %v", r) // x/net/html's panics, as html.Parse returns them
		}
	}()
	for err != io.EOF {
		// CDATA sections are allowed only in foreign content.
		n := p.oe.top()
		p.tokenizer.AllowCDATA(n != nil && n.Namespace != "")
		p.token(p.tokenizer.Next())
		if p.tok.Type == ErrorToken {
			err = p.tokenizer.Err()
			if err != nil && err != io.EOF {
				return err
			}
		}
		p.parseCurrentToken()
	}
	for n, b := range p.textNodes {
		n.Data = string(b)
	}
	p.textNodes = nil
	return nil
}

// token sets p.tok to the tokenizer's current token, of type tt, as
// Tokenizer.Token does, with its strings and attributes cut from p's blocks.
func (p *parser) token(tt TokenType) {
	z := p.tokenizer
	p.tok = Token{Type: tt}
	switch tt {
	case TextToken, CommentToken, DoctypeToken:
		p.tok.Data = p.str(z.Text())
	case StartTagToken, SelfClosingTagToken, EndTagToken:
		name, more := z.TagName()
		if more {
			scratch := p.scratch[:0]
			for more {
				var key, val []byte
				key, val, more = z.TagAttr()
				k := atom.Lookup(key).String()
				if k == "" {
					k = p.str(key)
				}
				scratch = append(scratch, Attribute{Key: k, Val: p.str(val)})
			}
			p.tok.Attr = p.attrs(len(scratch))
			copy(p.tok.Attr, scratch)
			p.scratch = scratch
		}
		if a := atom.Lookup(name); a != 0 {
			p.tok.DataAtom, p.tok.Data = a, a.String()
		} else {
			p.tok.Data = p.str(name)
		}
	}
}

// str returns b, bytes the tokenizer returned for the current token, as a
// string without copying them. The tokenizer reads its own copy of the
// input and rewrites (lower-cases, unescapes) only the bytes of the token it
// is on, so bytes it has returned are never written again, and a string
// over them is immutable. (An entity that unescapes to more bytes than it
// takes, and a NUL replaced, give a new slice, which is never written
// either.)
func (p *parser) str(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// newNode returns a zero node from p's current node block.
func (p *parser) newNode() *Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]Node, 0, 256)
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	return &p.nodes[len(p.nodes)-1]
}

// attrs returns a slice of n attributes from p's current attribute block,
// its capacity n so that appending to it (copyAttributes) copies it.
func (p *parser) attrs(n int) []Attribute {
	if n > cap(p.attrBlock)-len(p.attrBlock) {
		p.attrBlock = make([]Attribute, 0, max(512, n))
	}
	start := len(p.attrBlock)
	p.attrBlock = p.attrBlock[:start+n]
	return p.attrBlock[start : start+n : start+n]
}

// clone returns a new node with the same type, data and attributes.
// The clone has no parent, no siblings and no children.
func (p *parser) clone(n *Node) *Node {
	m := p.newNode()
	m.Type, m.DataAtom, m.Data = n.Type, n.DataAtom, n.Data
	m.Attr = p.attrs(len(n.Attr))
	copy(m.Attr, n.Attr)
	return m
}
