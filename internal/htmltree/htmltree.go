// Package htmltree builds the same golang.org/x/net/html tree as html.Parse
// with a fraction of its allocations, so that one parse of a page feeds its
// text, links and title at less cost (issue 19).
//
// parse.go, foreign.go, doctype.go and const.go are x/net/html's tree
// construction (v0.62.0, BSD licence: see LICENSE), changed only where
// tokens and nodes are made. html.Parse copies every token out of the
// tokenizer (Tokenizer.Token: a string per text, attribute value and
// unknown name, a slice per tag's attributes) and allocates every node on
// its own: about 4,000 objects for a 50 KB page, a third of the parse's
// time. Here the token's strings are cut from a few large byte blocks, its
// attributes from a few large attribute blocks, and nodes from blocks of
// nodes, so a page costs tens of allocations for what took thousands. The
// algorithm is x/net/html's, so the tree is too: FuzzParse and
// TestParseMatchesXNetHTML compare the two trees node by node.
//
// The strings of a tree share their blocks: a string kept from it (a link
// taken from an attribute as is) keeps its block alive, tens of kilobytes,
// until the string is dropped.
package htmltree

import (
	"bytes"
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
	Tokenizer = html.Tokenizer
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
		tokenizer:  html.NewTokenizer(bytes.NewReader(src)),
		scripting:  true,
		framesetOK: true,
		im:         initialIM,
	}
	// Most of a page's bytes end up in its tree (text, attribute values), so blocks of about
	// half the page make two or three allocations.
	p.blockSize = max(len(src)/2, 4096)
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

// str returns b as a string held in p's current byte block.
func (p *parser) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(p.bytes)-len(p.bytes) {
		p.bytes = make([]byte, 0, max(p.blockSize, len(b)))
	}
	start := len(p.bytes)
	p.bytes = append(p.bytes, b...)
	// The block's bytes up to len are never written again: a string over them is immutable.
	return unsafe.String(&p.bytes[start], len(b))
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
