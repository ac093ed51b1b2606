package pagetext

import (
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// blockElements start and end a block. Lists, tables, <pre> and <br> have
// their own rules (see renderer.element).
var blockElements = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "body": true,
	"caption": true, "center": true, "details": true, "dialog": true, "div": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true,
	"frameset": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
	"h6": true, "header": true, "hgroup": true, "html": true, "legend": true, "main": true,
	"nav": true, "p": true, "search": true, "section": true, "summary": true,
	"table": true, "tbody": true, "td": true, "tfoot": true, "th": true, "thead": true,
	"tr": true,
}

// listElements make one block of their items, one line per item.
var listElements = map[string]bool{"ul": true, "ol": true, "dl": true, "menu": true, "dir": true}

// itemElements are the lines of a list.
var itemElements = map[string]bool{"li": true, "dt": true, "dd": true}

// preElements keep their line structure.
var preElements = map[string]bool{"pre": true, "listing": true, "xmp": true, "plaintext": true}

// The kinds of elements the renderer gives a rule (elementKinds): one map
// lookup where renderer.element and isBlock made up to four (4 % of reading
// a 50 KB page, its parse included).
const (
	kindInline uint8 = iota
	kindBlock
	kindList
	kindItem
	kindPre
)

// elementKinds maps the names of blockElements, listElements, itemElements
// and preElements (disjoint) to their kind.
var elementKinds = func() map[string]uint8 {
	m := map[string]uint8{}
	for kind, names := range map[uint8]map[string]bool{kindBlock: blockElements, kindList: listElements,
		kindItem: itemElements, kindPre: preElements} {
		for name := range names {
			m[name] = kind
		}
	}
	return m
}()

// layoutMarkers inside a table's cell mark it as a layout table: a data
// table's cells hold a value or a sentence, not sections of a page.
var layoutMarkers = map[string]bool{
	"table": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "dl": true, "menu": true, "pre": true, "blockquote": true,
	"form": true, "hr": true, "section": true, "article": true, "nav": true, "aside": true,
	"header": true, "footer": true, "main": true, "fieldset": true, "figure": true,
	"address": true,
}

// maxColspan bounds the empty cells added for a colspan.
const maxColspan = 64

// tabWidth is the tab stop used to expand tabs in <pre> (CSS tab-size).
const tabWidth = 8

// renderNode returns the text of the tree under n by the block rules
// described in the package comment.
func renderNode(n *html.Node) string {
	r := newRenderer()
	r.walk(n)
	r.endBlock()
	return r.finish()
}

// outPool holds the buffers renderers write their text in. A strings.Builder grows by copying:
// about four times the text's size allocated for every page rendered (issue 19: 40 % of what
// extracting a 50 KB article page allocated). A pooled buffer leaves one copy, the result.
var outPool = sync.Pool{New: func() any { return new([]byte) }}

// newRenderer returns a renderer writing into a pooled buffer; finish gives the text and the
// buffer back.
func newRenderer() *renderer {
	r := &renderer{linkEnd: -1, pooled: outPool.Get().(*[]byte)}
	r.out = (*r.pooled)[:0]
	return r
}

// finish returns the text rendered and returns r's buffer to the pool; r is not used afterwards.
func (r *renderer) finish() string {
	s := string(r.out)
	if r.pooled != nil && cap(r.out) <= maxPooledOut {
		*r.pooled = r.out[:0]
		outPool.Put(r.pooled)
	}
	r.out, r.pooled = nil, nil
	return s
}

// maxPooledOut bounds the buffers kept: a rare huge page's is left to the collector.
const maxPooledOut = 1 << 20

// renderer accumulates blocks of lines.
type renderer struct {
	// out is the finished blocks, separated by blank lines: written as each block ends, so the
	// text is not copied again to join blocks and lines (copies were a third of what extraction
	// allocated, and allocation is what makes the collector run).
	out       []byte
	pooled    *[]byte // where out came from (newRenderer), nil if not pooled
	starts    []int   // where each finished line of the current block starts in out
	line      []byte  // the current line, whitespace already collapsed
	space     bool    // a space is due before the next character of line
	afterBR   bool    // the last thing in this block was a <br> ending a line
	listDepth int     // >0 inside a list: blocks become lines
	flat      bool    // inside a table cell: every break is a space
	preFrom   int     // token mode: index in lines of the open <pre>'s first line
	linkEnd   int     // len(line) when the last <a> ended, -1 if none on this line
	// afterInline: an inline element ended and nothing was written since;
	// joinCheck: an inline element started right after one (see inlineStart).
	afterInline, joinCheck bool
}

func (r *renderer) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		r.text(n.Data)
	case html.DocumentNode:
		r.children(n)
	case html.ElementNode:
		r.element(n)
	}
}

func (r *renderer) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.walk(c)
	}
}

func (r *renderer) element(n *html.Node) {
	if n.Namespace != "" { // MathML (svg is pruned): its text, inline
		r.children(n)
		return
	}
	name := n.Data
	kind := kindInline
	if name != "a" && name != "br" {
		kind = elementKinds[name]
	}
	switch {
	case name == "br":
		r.br()
	case name == "a":
		// Links that touch ("<a>Home</a><a>About</a>", a calendar's day
		// number and its events) are separated by a space: CSS keeps them
		// apart on screen, and glued words would corrupt the text.
		if len(r.line) > 0 && r.linkEnd == len(r.line) {
			r.space = true
		}
		r.inlineStart()
		r.children(n)
		r.linkEnd = len(r.line)
		r.afterInline = true
	case name == "hr":
		r.blockBreak()
	case kind == kindPre:
		r.pre(n)
	case name == "table" && !r.flat && !isLayoutTable(n):
		r.dataTable(n)
	case kind == kindList:
		r.blockBreak()
		r.listDepth++
		r.children(n)
		r.listDepth--
		r.blockBreak()
	case kind == kindItem:
		r.lineBreak()
		r.children(n)
		r.lineBreak()
	case kind == kindBlock:
		r.blockBreak()
		r.children(n)
		r.blockBreak()
	default:
		r.inlineStart()
		r.children(n)
		r.afterInline = true
	}
}

// inlineStart is called where an inline element starts. Two inline
// elements that touch ("<strong>x</strong><span class=classifier>int</span>",
// whose " : " comes from CSS) are separated by a space when the text on
// both sides is a letter or digit: a style sheet sets them apart on
// screen, and glued words ("xint") would corrupt the text. Text that runs
// on from an element ("<code>str</code>s") is not an element boundary and
// stays as written.
func (r *renderer) inlineStart() {
	if r.afterInline && len(r.line) > 0 {
		r.joinCheck = true
	}
}

// text appends s to the current line, collapsing whitespace.
func (r *renderer) text(s string) {
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf && asciiClass[b] == asciiPlain {
			// A run of printable ASCII is written at once: most text is one, and a call per
			// character was the largest cost of rendering (issue 19).
			j := i + 1
			for j < len(s) && plainByte[s[j]] {
				j++
			}
			r.startRune(rune(b))
			r.line = append(r.line, s[i:j]...)
			i = j
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case isSpace(c):
			if len(r.line) > 0 {
				r.space = true
			}
		case dropRune(c):
		default:
			r.startRune(c)
			r.line = utf8.AppendRune(r.line, c)
		}
	}
}

// startRune does what comes before a visible rune c is written: the space collapsed from white
// space before it, or the space between two touching inline elements (see inlineStart).
func (r *renderer) startRune(c rune) {
	if r.space {
		r.line = append(r.line, ' ')
		r.space = false
	} else if r.joinCheck && isWordRune(c) && endsInWord(r.line) {
		r.line = append(r.line, ' ')
	}
	r.joinCheck, r.afterInline = false, false
	r.afterBR = false
}

// The classes of ASCII bytes for the renderer and measureText: white space (isSpace), invisible
// control characters (dropRune), the comma (isComma), and every other printable character.
const (
	asciiPlain uint8 = iota
	asciiSpace
	asciiDrop
	asciiComma
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		switch c := rune(b); {
		case isSpace(c):
			t[b] = asciiSpace
		case dropRune(c):
			t[b] = asciiDrop
		case isComma(c):
			t[b] = asciiComma
		}
	}
	return t
}()

// plainByte and countedByte answer, with one lookup per byte in the loops over runs of ASCII text,
// whether a byte is ASCII of class asciiPlain (plainByte), or of class asciiPlain or asciiDrop
// (countedByte: a character that measureText counts and that is neither space nor comma).
var plainByte, countedByte = func() (p, c [256]bool) {
	for b := range utf8.RuneSelf {
		p[b] = asciiClass[b] == asciiPlain
		c[b] = asciiClass[b] == asciiPlain || asciiClass[b] == asciiDrop
	}
	return p, c
}()

// isWordRune reports letters, marks and digits: the runes two glued words
// would run together on.
func isWordRune(c rune) bool {
	if c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsMark(c)
}

// endsInWord reports whether line ends in a word rune.
func endsInWord(line []byte) bool {
	c, _ := utf8.DecodeLastRune(line)
	return c != utf8.RuneError && isWordRune(c)
}

// lineBreak ends the current line (a no-op on an empty line).
func (r *renderer) lineBreak() {
	if r.flat {
		r.space = len(r.line) > 0
		return
	}
	for len(r.line) > 0 && r.line[len(r.line)-1] == ' ' { // only <pre> text in token mode ends in spaces
		r.line = r.line[:len(r.line)-1]
	}
	if len(r.line) > 0 {
		r.addToBlock(r.line)
		r.line = r.line[:0]
	}
	r.linkEnd = -1
	r.space = false
	r.afterBR = false
	r.afterInline, r.joinCheck = false, false
}

// addToBlock writes a finished line (not empty) of the current block to out: a line of a block is
// written where the block's text goes, not kept as a string of its own (issue 19: a string per
// line was the most frequent allocation of pagetext).
func addToBlock[T string | []byte](r *renderer, l T) {
	switch {
	case len(r.starts) > 0:
		r.out = append(r.out, '\n')
	case len(r.out) > 0:
		r.out = append(r.out, "\n\n"...)
	}
	r.starts = append(r.starts, len(r.out))
	r.out = append(r.out, l...)
}

func (r *renderer) addToBlock(l []byte) { addToBlock(r, l) }

// dedentFrom removes the indentation common to the lines of the current block from its line
// from on (a <pre>'s lines).
func (r *renderer) dedentFrom(from int) {
	if from >= len(r.starts) {
		return
	}
	lines := make([]string, 0, len(r.starts)-from)
	for i := from; i < len(r.starts); i++ {
		end := len(r.out)
		if i+1 < len(r.starts) {
			end = r.starts[i+1] - 1
		}
		lines = append(lines, string(r.out[r.starts[i]:end]))
	}
	dedent(lines)
	cut := r.starts[from]
	if from > 0 {
		cut-- // the newline before the line
	} else if cut >= 2 {
		cut -= 2 // the blank line before the block
	}
	r.out, r.starts = r.out[:cut], r.starts[:from]
	for _, l := range lines {
		addToBlock(r, l)
	}
}

// endBlock ends the current block (a no-op on an empty block).
func (r *renderer) endBlock() {
	r.lineBreak()
	r.starts = r.starts[:0]
}

// blockBreak is what a block element does at its edges: a new block, or a
// new line inside a list.
func (r *renderer) blockBreak() {
	if r.listDepth > 0 || r.flat {
		r.lineBreak()
		return
	}
	r.endBlock()
}

// br ends the line; a second <br> with no text in between (the "<br><br>"
// paragraphs of older pages and forums) ends the block.
func (r *renderer) br() {
	switch {
	case r.flat:
		r.lineBreak()
	case len(r.line) > 0:
		r.lineBreak()
		r.afterBR = true
	case r.afterBR:
		r.blockBreak()
	}
}

// pre renders preformatted text: its lines are kept, each with trailing
// whitespace trimmed, tabs expanded and the indentation common to all lines
// removed; blank lines are dropped so that a block never holds one.
func (r *renderer) pre(n *html.Node) {
	if r.flat {
		r.children(n)
		return
	}
	var raw strings.Builder
	collectPre(n, &raw)
	r.blockBreak()
	var lines []string
	s := strings.ReplaceAll(raw.String(), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	for l := range strings.SplitSeq(s, "\n") {
		if l = preLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	dedent(lines)
	for _, l := range lines {
		addToBlock(r, l)
	}
	r.blockBreak()
}

// dedent removes the indentation common to lines (none of them empty).
func dedent(lines []string) {
	indent := -1
	for _, l := range lines {
		if in := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || in < indent {
			indent = in
		}
	}
	for i := range lines {
		lines[i] = lines[i][indent:]
	}
}

// collectPre appends the raw text under n, with <br> and block edges as
// newlines.
func collectPre(n *html.Node, b *strings.Builder) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			switch {
			case c.Data == "br":
				b.WriteByte('\n')
			case blockElements[c.Data] || itemElements[c.Data] || listElements[c.Data]:
				b.WriteByte('\n')
				collectPre(c, b)
				b.WriteByte('\n')
			default:
				collectPre(c, b)
			}
		}
	}
}

// preLine cleans one line of preformatted text: tabs expanded to the next
// multiple of tabWidth, other whitespace as a space, invisible characters
// dropped, trailing spaces trimmed.
func preLine(l string) string {
	var b strings.Builder
	col := 0
	for _, c := range l {
		switch {
		case c == '\t':
			for {
				b.WriteByte(' ')
				col++
				if col%tabWidth == 0 {
					break
				}
			}
		case isSpace(c):
			b.WriteByte(' ')
			col++
		case dropRune(c):
		default:
			b.WriteRune(c)
			col++
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// dataTable renders a table as one block: the caption, then one line per
// row with the cells separated by tabs. Trailing empty cells and empty rows
// are dropped, a row with one non-empty cell is just that cell, and a
// colspan adds empty cells so that columns stay aligned.
func (r *renderer) dataTable(n *html.Node) {
	r.blockBreak()
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.Data {
		case "caption":
			r.addLine(cellText(c))
		case "tr":
			r.addLine(rowText(c))
		case "thead", "tbody", "tfoot":
			for tr := c.FirstChild; tr != nil; tr = tr.NextSibling {
				if tr.Type == html.ElementNode && tr.Data == "tr" {
					r.addLine(rowText(tr))
				}
			}
		}
	}
	r.blockBreak()
}

// addLine adds a finished line to the current block.
func (r *renderer) addLine(l string) {
	r.lineBreak()
	if l != "" {
		addToBlock(r, l)
	}
}

// rowText joins the cells of tr with tabs.
func rowText(tr *html.Node) string {
	var cells []string
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.Data != "td" && c.Data != "th") {
			continue
		}
		cells = append(cells, cellText(c))
		for range min(colspan(c), maxColspan) - 1 {
			cells = append(cells, "")
		}
	}
	for len(cells) > 0 && cells[len(cells)-1] == "" {
		cells = cells[:len(cells)-1]
	}
	// A row with a single non-empty cell (an image beside a caption, a
	// spacer column) is that cell's text, without leading tabs.
	nonEmpty, last := 0, ""
	for _, c := range cells {
		if c != "" {
			nonEmpty, last = nonEmpty+1, c
		}
	}
	if nonEmpty <= 1 {
		return last
	}
	return strings.Join(cells, "\t")
}

// cellText is the text of a cell on one line.
func cellText(n *html.Node) string {
	r := &renderer{flat: true, linkEnd: -1}
	r.children(n)
	return string(r.line)
}

func colspan(n *html.Node) int {
	for _, a := range n.Attr {
		if a.Key == "colspan" && a.Namespace == "" {
			if v, err := strconv.Atoi(strings.TrimSpace(a.Val)); err == nil && v > 1 {
				return v
			}
		}
	}
	return 1
}

// isLayoutTable reports whether a table lays out a page rather than
// holding data: it says role="presentation" (or "none"), or a cell holds
// a nested table or a section-like element (layoutMarkers), or two or more
// paragraphs or divs. Its rows and cells are then rendered as blocks.
func isLayoutTable(t *html.Node) bool {
	for _, a := range t.Attr {
		if a.Key == "role" && a.Namespace == "" {
			if v := strings.ToLower(strings.TrimSpace(a.Val)); v == "presentation" || v == "none" {
				return true
			}
		}
	}
	var inCell func(n *html.Node, blocks *int) bool
	inCell = func(n *html.Node, blocks *int) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if layoutMarkers[c.Data] {
				return true
			}
			if blockElements[c.Data] || itemElements[c.Data] {
				if *blocks++; *blocks > 1 {
					return true
				}
			}
			if inCell(c, blocks) {
				return true
			}
		}
		return false
	}
	var rows func(n *html.Node) bool
	rows = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "td", "th":
				blocks := 0
				if inCell(c, &blocks) {
					return true
				}
			case "thead", "tbody", "tfoot", "tr":
				if rows(c) {
					return true
				}
			case "caption", "colgroup", "col":
			default: // content misplaced in the table: not a clean data table
				if blockElements[c.Data] || layoutMarkers[c.Data] {
					return true
				}
			}
		}
		return false
	}
	return rows(t)
}

// isSpace reports the characters collapsed to one space: Unicode white
// space, which includes the no-break and ideographic spaces.
func isSpace(c rune) bool {
	return unicode.IsSpace(c)
}

// dropRune reports invisible characters removed from the text: control
// characters, zero-width space, word joiner, byte order mark, soft hyphen.
func dropRune(c rune) bool {
	switch c {
	case '\u200b', '\u2060', '\ufeff', '\u00ad':
		return true
	}
	return unicode.IsControl(c)
}

// collapse returns s with whitespace collapsed and trimmed and invisible
// characters removed.
func collapse(s string) string {
	r := &renderer{flat: true, linkEnd: -1}
	r.text(s)
	return string(r.line)
}
