package pagetext

// The main content extractor: a readability-style scorer over the pruned
// tree that the Full walk renders (see docs/text-extraction.md). In outline,
// as in Mozilla's Readability:
//
//  1. Page furniture is dropped: <nav>, <aside>, <footer>, <form>, a
//     <header> outside article/main/section, ARIA navigation, banner,
//     contentinfo, complementary and search landmarks, and block elements
//     whose class or id says navigation, sidebar, footer, share, ad and the
//     like (hintWords), unless they wrap the article or are rows of a data
//     table. An element holding more than half of the page's text is never
//     dropped: that is a wrapper, whatever its name says.
//  2. Every block with 25 or more characters of its own text (a paragraph,
//     a div or cell holding text directly, a list item) scores
//     1 + commas + min(chars/100, 3), added to its parent in full, to its
//     grandparent halved and to three more ancestors divided by 3×level.
//     A candidate starts from its tag and class/id hints; its final score
//     is scaled by (1 - link density).
//  3. The best candidate is moved up to a common ancestor of other nearly
//     as good ones, to a parent scoring higher, through single-child
//     parents, to the data table holding it, and to the nearest <article>,
//     <main> (role=main) or itemprop=articleBody element holding it. If the
//     page declares one main element and the candidate is outside it, the
//     declared element is taken instead.
//  4. Siblings scoring at least a fifth of it, prose paragraphs and the
//     headings just before an included sibling join it.
//  5. Inside, link-heavy boxes are removed (Readability's conditional
//     cleaning: link density over 0.2 outside lists and paragraphs, over
//     0.5 anywhere; data tables and blocks with 10 or more commas are
//     kept), and so are the headings left without their section. When that
//     leaves less than MainMinRunes and removed more than it left, it is
//     undone: the links were the page (a table of contents).
//  6. If the result is not to be trusted (mainResult.trusted: empty, or
//     outside the declared main element and under MainMinShare of Full),
//     the page is parsed again and steps 1-5 run without the class and id
//     drops of step 1.
//
// The result is rendered with the block rules of render.go, so tables, lists
// and <pre> come out exactly as in Full. Everything is a function of the
// tree: no state, no clock, no map iteration order in the output.

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const (
	// minUnitChars is the own text a block needs to count as a paragraph.
	minUnitChars = 25
	// scoreLevels is how many ancestors of a paragraph receive its score.
	scoreLevels = 5
	// hashLinkWeight is the weight of a link to the same page (#anchor) in
	// the link density: permalinks and "top" links are not navigation.
	hashLinkWeight = 0.3
)

// Class and id hints. A class or id is split into its runs of letters,
// which are looked up alone and joined in pairs ("side-bar" → "sidebar",
// "comment-list" → "commentlist"):
//
//   - hintPositive adds 25 to a candidate's score, hintNegative takes 25 off;
//   - hintUnlikely drops a block up front (step 1) unless a hintKeep word is
//     also there ("entry-header", "content-sidebar") or it holds an article
//     or main element (a layout wrapper such as "has-sidebar").
//
// Singular "comment" is not a hint: it marks each comment of a thread, but
// also the posts of some forums; "comments", "commentlist" and "disqus" name
// the comments section of an article. Plurals ("articles", "posts",
// "stories") are not positive: they name lists of teasers, "related-posts".
// "widget" is only negative: page builders wrap every block of an article in
// one.
const (
	hintPositive = 1 << iota
	hintNegative
	hintUnlikely
	hintKeep
	// hintAside is unlikely too, unless the block stands between
	// paragraphs (inFlow): DocBook's boxed asides are <div class="sidebar">
	// inside a section's text, a page's sidebar is a column beside it.
	hintAside
)

var hintWords = func() map[string]uint8 {
	m := map[string]uint8{}
	set := func(flags uint8, words ...string) {
		for _, w := range words {
			m[w] |= flags
		}
	}
	set(hintPositive, "article", "articlebody", "content", "main", "post", "postbody", "entry",
		"entrycontent", "story", "bodytext")
	set(hintKeep, "article", "articlebody", "content", "main", "body", "bodytext", "entry",
		"entrycontent", "story")
	set(hintNegative|hintUnlikely, "nav", "navs", "navbar", "navigation", "topnav", "subnav",
		"sidenav", "menu", "menus", "submenu", "megamenu", "mainmenu", "footer", "header",
		"masthead", "banner", "related", "share", "shares",
		"sharing", "sharebar", "social", "promo", "promos", "ad", "ads", "advert", "adverts",
		"advertisement", "advertising", "sponsor", "sponsored", "breadcrumb", "breadcrumbs",
		"cookie", "cookies", "newsletter", "comments", "commentlist", "disqus", "pagination", "pager")
	set(hintNegative|hintAside, "sidebar", "sidebars", "aside")
	set(hintNegative, "widget", "widgets", "promotion", "promoted", "hidden")
	return m
}()

// boilerplateTags are dropped from Main up front (a <header> only outside
// article, main and section, where it is the page's masthead).
var boilerplateTags = map[string]bool{"nav": true, "aside": true, "footer": true, "form": true, "search": true}

// boilerplateRoles are the ARIA landmarks dropped from Main up front.
var boilerplateRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true, "search": true,
}

// extractMain returns the main content of a page, rendered by the block
// rules: doc is the page's pruned tree (which extractMain modifies), full
// its Full text, rendered when needed. It returns false when the page has no main content
// (enough) to be trusted, and Extract then uses Full; the text is then the
// main content it found but did not trust, "" if none. Like Readability, it
// tries a second time without dropping blocks for their class or id when
// the first try is not trusted: a layout class ("zen-one-sidebar-second")
// can name a wrapper of the article.
func extractMain(doc *html.Node, full *fullText) (string, bool) {
	first, ok := mainContent(doc, true, full)
	if ok && first.trusted(full) {
		return first.text, true
	}
	doc, ok = parse(full.src)
	if !ok {
		return first.text, false
	}
	prune(doc)
	full.render(doc) // if not yet rendered, from this tree before it changes, not from a third
	m, ok := mainContent(doc, false, nil)
	if ok && m.trusted(full) {
		return m.text, true
	}
	if strings.TrimSpace(m.text) == "" {
		return first.text, false
	}
	return m.text, false
}

// mainResult is what one try of the main content extractor found.
type mainResult struct {
	text string
	// declared: the content is, or is inside, the element the page says
	// holds its main content (a <main>, role=main, itemprop=articleBody
	// or the page's only <article>).
	declared bool
}

// trusted reports whether a try's result is the page's main content rather
// than a wrong pick: not empty, and inside the page's declared main element
// or at least MainMinShare of the Full text. A page
// whose declared main content is short (an API entry of one sentence beside
// a navigation of hundreds of links) keeps that short text.
func (m mainResult) trusted(full *fullText) bool {
	if strings.TrimSpace(m.text) == "" {
		return false
	}
	return m.declared || float64(runeCount(m.text)) >= MainMinShare*float64(runeCount(full.render(nil)))
}

// fewerRunes reports whether s has fewer than n runes, counting no further than n: the texts
// compared with MainMinRunes are mostly far longer.
func fewerRunes(s string, n int) bool {
	if n <= 0 {
		return false
	}
	if len(s) < n {
		return true
	}
	c := 0
	for range s {
		if c++; c >= n {
			return false
		}
	}
	return true
}

// runeCount is utf8.RuneCountInString, eight ASCII bytes at a time: the texts are mostly ASCII.
func runeCount(s string) int {
	n, i := 0, 0
	for i < len(s) {
		if i+8 <= len(s) {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if w&0x8080808080808080 == 0 {
				n, i = n+8, i+8
				continue
			}
		}
		if s[i] < utf8.RuneSelf {
			n, i = n+1, i+1
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		n, i = n+1, i+size
	}
	return n
}

// fullText is the Full text of a page, rendered only when Main needs it: to
// judge a result that is not inside a declared main element, or as the
// fallback. A page that declares its main content (most, and the article
// web's) then costs one render, not two (issue 19: the Full render was
// about a third of pagetext's CPU).
type fullText struct {
	src  []byte // the page, valid UTF-8
	text string
	done bool
}

// render returns the Full text, rendered from doc, the page's pruned tree
// not yet changed by the extractor, or, if doc is nil, from a new parse of
// src (the same tree: the parse is deterministic).
func (f *fullText) render(doc *html.Node) string {
	if f.done {
		return f.text
	}
	if doc == nil {
		var ok bool
		if doc, ok = parse(f.src); !ok {
			return "" // cannot be: the page was parsed before
		}
		prune(doc)
	}
	f.text, f.done = renderNode(doc), true
	return f.text
}

// mainContent returns the main content of doc, already pruned, rendered by
// the block rules; false when no block of the page has enough text to be
// scored. useHints says whether blocks are dropped for their class or id.
// It modifies doc.
func mainContent(doc *html.Node, useHints bool, full *fullText) (mainResult, bool) {
	body := findBody(doc)
	if body == nil {
		return mainResult{}, false
	}
	m := getMainMaps()
	defer putMainMaps(m)
	d := measureBody(body, useHints, m.info)
	if full != nil && len(d.mains) == 0 && d.articles != 1 {
		// Nothing here can be declared main, so trusting the result will need the Full
		// text: render it now, while the tree is still whole, rather than parse again.
		full.render(doc)
	}
	d.walk(body, false)
	s := &scorer{index: m.index}
	s.element(body, &textStats{}, 0)
	declared := d.declaredMain(body)
	var top *html.Node
	switch {
	case len(s.cands) > 0:
		s.finish()
		top = s.promote(s.best(), body)
		// The page's own word wins where the scores disagree with it: a
		// footer's prose can outscore a declared main element that holds
		// a heading and a list of links (a table of contents page).
		if declared != nil && top != declared && !contains(declared, top) {
			top = declared
		}
	case declared != nil:
		top = declared // no block long enough to score: an attribute's one line
	default:
		return mainResult{}, false
	}
	nodes := []*html.Node{top}
	if top != declared { // what the page declares is all of it: no siblings join
		nodes = s.siblings(top, body)
	}
	// Conditional cleaning (step 5), undone when it leaves less than
	// MainMinRunes and removed more than it left: then the link-heavy boxes
	// were the content (a page that is a table of contents), as in
	// Readability's last retry. A short page keeps its cleaning when what
	// went was less than what stayed (previous/next links under an API
	// entry).
	var u undo
	keep := make([]bool, len(nodes))
	for i, n := range nodes {
		if n != top {
			_, removed := cleanNode(n, 0, true, &u)
			keep[i] = !removed
		} else {
			cleanNode(n, 0, false, &u)
			keep[i] = true
		}
	}
	text := renderNodes(nodes, keep)
	if fewerRunes(text, MainMinRunes) && u.chars() > utf8.RuneCountInString(text) {
		u.restore()
		for i := range keep {
			keep[i] = true
		}
		if uncleaned := renderNodes(nodes, keep); len(uncleaned) > len(text) {
			text = uncleaned
		}
	}
	return mainResult{text: text, declared: d.declares(top)}, true
}

// renderNodes renders the nodes whose keep is true, each as its own blocks.
func renderNodes(nodes []*html.Node, keep []bool) string {
	r := newRenderer()
	for i, n := range nodes {
		if keep[i] {
			r.walk(n)
			r.endBlock()
		}
	}
	return r.finish()
}

// undo records removals from the tree so that they can be taken back.
type undo []removal

type removal struct{ parent, node, next *html.Node }

// remove removes node from parent and records it.
func (u *undo) remove(parent, node *html.Node) {
	*u = append(*u, removal{parent, node, node.NextSibling})
	parent.RemoveChild(node)
}

// chars is the length of the text removed.
func (u undo) chars() int {
	n := 0
	for _, r := range u {
		n += subtreeStats(r.node, 0).chars
	}
	return n
}

// restore puts every removed node back where it was, the last first.
func (u *undo) restore() {
	for i := len(*u) - 1; i >= 0; i-- {
		r := (*u)[i]
		r.parent.InsertBefore(r.node, r.next)
	}
	*u = (*u)[:0]
}

// findBody returns the <body> element of a parsed document.
func findBody(doc *html.Node) *html.Node {
	for h := doc.FirstChild; h != nil; h = h.NextSibling {
		if h.Type != html.ElementNode || h.Data != "html" {
			continue
		}
		for b := h.FirstChild; b != nil; b = b.NextSibling {
			if b.Type == html.ElementNode && b.Data == "body" {
				return b
			}
		}
	}
	return nil
}

// textStats measures text: characters (white space runs count as one),
// characters inside links (weighted, see hashLinkWeight) and commas.
type textStats struct {
	chars  int
	link   float64
	commas int
}

func (t *textStats) add(u textStats) {
	t.chars += u.chars
	t.link += u.link
	t.commas += u.commas
}

// linkDensity is the share of the text that is link text.
func (t textStats) linkDensity() float64 {
	if t.chars == 0 {
		return 0
	}
	return t.link / float64(t.chars)
}

// measureText returns the stats of a text node's data; weight is the link
// weight of the text (0 outside links).
func measureText(s string, weight float64) textStats {
	var t textStats
	space := false
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf { // most text is ASCII: a table, not a call per character
			if c := asciiClass[b]; c == asciiPlain || c == asciiDrop {
				// A run of characters that are neither space nor comma counts at once: most
				// text is one, and the per-character branches were 4 % of a crawl's CPU.
				j := i + 1
				for j < len(s) && countedByte[s[j]] {
					j++
				}
				t.chars += j - i
				space = false
				i = j
				continue
			}
			i++
			switch asciiClass[b] {
			case asciiSpace:
				if !space {
					t.chars++
				}
				space = true
				continue
			case asciiComma:
				t.commas++
			}
			space = false
			t.chars++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case isSpace(c):
			if !space {
				t.chars++
			}
			space = true
			continue
		case isComma(c):
			t.commas++
		}
		space = false
		t.chars++
	}
	t.link = weight * float64(t.chars)
	return t
}

// The counts of a text node are kept in its DataAtom, which the parser leaves 0 on text nodes and
// nothing reads there, so that the dropper, the scorer and the cleaning measure each text node once
// between them (issue 19: measureText ran three times over every text node, 3.3 % of a crawl's CPU;
// html.Node has no other room, and a map by node costs what the count does). measuredFlag marks a
// node measured; a node whose counts do not fit is measured every time.
const (
	measuredFlag   = 1 << 31
	measuredChars  = 21 // bits of chars: 2 M runes, above MainMaxBytes
	measuredCommas = 10 // bits of commas, above them
	measuredMaxC   = 1<<measuredChars - 1
	measuredMaxK   = 1<<measuredCommas - 1
)

// measureNode returns measureText(n.Data, weight) for a text node n, measuring it only the first
// time. The link weight is not kept: it is weight times the characters.
func measureNode(n *html.Node, weight float64) textStats {
	if a := uint32(n.DataAtom); a&measuredFlag != 0 {
		chars := int(a & measuredMaxC)
		return textStats{chars: chars, commas: int(a >> measuredChars & measuredMaxK), link: weight * float64(chars)}
	}
	t := measureText(n.Data, weight)
	if n.DataAtom == 0 && t.chars <= measuredMaxC && t.commas <= measuredMaxK {
		n.DataAtom = atom.Atom(measuredFlag | uint32(t.commas)<<measuredChars | uint32(t.chars))
	}
	return t
}

// isComma reports the commas of the scripts Readability counts.
func isComma(c rune) bool {
	switch c {
	case ',', '\u060c', '\ufe50', '\ufe10', '\ufe11', '\u2e41', '\u2e34', '\u2e32', '\uff0c':
		return true
	}
	return false
}

// isBlock reports elements that start a block of text (the renderer's
// block, list, item and pre elements).
func isBlock(name string) bool {
	return elementKinds[name] != kindInline
}

// subtreeStats measures the text under n.
func subtreeStats(n *html.Node, weight float64) textStats {
	var t textStats
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			t.add(measureNode(c, weight))
		case html.ElementNode:
			t.add(subtreeStats(c, childLinkWeight(c, weight)))
		}
	}
	return t
}

// childLinkWeight is the link weight of the text inside element c whose
// parent's text has weight w.
func childLinkWeight(c *html.Node, w float64) float64 {
	if w > 0 || c.Data != "a" || c.Namespace != "" {
		return w
	}
	href, ok := attr(c, "href")
	if !ok {
		return 0
	}
	if strings.HasPrefix(strings.TrimSpace(href), "#") {
		return hashLinkWeight
	}
	return 1
}

// attr returns the value of n's attribute key (no namespace).
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

// hasRole reports whether n's role attribute lists one of roles.
func hasRole(n *html.Node, roles map[string]bool) bool {
	v, ok := attr(n, "role")
	if !ok {
		return false
	}
	for r := range strings.FieldsSeq(v) {
		if roles[strings.ToLower(r)] {
			return true
		}
	}
	return false
}

// hintWeight scores n's class and id: +25 for each that holds a positive
// hint, -25 for each that holds a negative one (both can apply).
func hintWeight(n *html.Node) int {
	w := 0
	for _, a := range n.Attr {
		if a.Namespace != "" || (a.Key != "class" && a.Key != "id") {
			continue
		}
		h := hints(a.Val)
		if h&hintPositive != 0 {
			w += 25
		}
		if h&hintNegative != 0 {
			w -= 25
		}
	}
	return w
}

// unlikely reports whether n's class or id has an unlikely hint and no
// keep hint.
func unlikely(n *html.Node) bool {
	var h uint8
	for _, a := range n.Attr {
		if a.Namespace == "" && (a.Key == "class" || a.Key == "id") {
			h |= hints(a.Val)
		}
	}
	if h&hintKeep != 0 {
		return false
	}
	return h&hintUnlikely != 0 || h&hintAside != 0 && !inFlow(n)
}

// inFlow reports whether the element just before or after n is a paragraph
// (a <p>, or a block with 25 characters of its own text): n sits in the
// running text, not beside it.
func inFlow(n *html.Node) bool {
	return isParagraph(prevElement(n)) || isParagraph(nextElement(n))
}

func prevElement(n *html.Node) *html.Node {
	for c := n.PrevSibling; c != nil; c = c.PrevSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

func nextElement(n *html.Node) *html.Node {
	for c := n.NextSibling; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// isParagraph reports a <p>, or a block holding 25 characters of text
// directly.
func isParagraph(n *html.Node) bool {
	if n == nil || n.Namespace != "" {
		return false
	}
	if n.Data == "p" {
		return true
	}
	if !blockElements[n.Data] {
		return false
	}
	chars := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			chars += measureNode(c, 0).chars
		}
	}
	return chars >= minUnitChars
}

// hints returns the hint flags of the words of a class or id value: each
// run of ASCII letters, lower-cased, and each pair of adjacent runs of one
// class name joined ("side-bar" → "sidebar"). It does not allocate.
func hints(v string) uint8 {
	const maxWord = 32
	var pair [2 * maxWord]byte // the previous word, then the current one
	var h uint8
	prev := 0 // length of the previous word in pair, 0 if none
	for i := 0; i < len(v); {
		if !isASCIILetter(v[i]) {
			if isHTMLSpace(v[i]) {
				prev = 0 // class names do not join across white space
			}
			i++
			continue
		}
		j := i
		for j < len(v) && isASCIILetter(v[j]) {
			j++
		}
		word := v[i:j]
		if i >= 2 && v[i-1] == '-' && v[i-2] == '-' {
			// A BEM modifier says what kind of block this is
			// ("section--ads" has ads in it): skip it, to the end of the
			// class name.
			for j < len(v) && !isHTMLSpace(v[j]) {
				j++
			}
			i, prev = j, 0
			continue
		}
		i = j
		if len(word) > maxWord {
			prev = 0
			continue
		}
		for k := 0; k < len(word); k++ {
			pair[prev+k] = word[k] | 0x20 // ASCII letters only: lower case
		}
		cur := pair[prev : prev+len(word)]
		h |= hintWords[string(cur)]
		if prev > 0 {
			h |= hintWords[string(pair[:prev+len(word)])]
		}
		prev = copy(pair[:], cur)
	}
	return h
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func isASCIILetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// measureBody returns the dropper of the tree under body, measured; its
// walk then removes page furniture (step 1 in the file comment). useHints
// says whether class and id hints count.
// mainMaps are the per-node maps of mainContent, kept between pages: filled afresh for every
// page, their growing was 0.8 % of a crawl's CPU (docs/performance.md, section 10, "After
// read19").
type mainMaps struct {
	info  map[*html.Node]subtreeInfo
	index map[*html.Node]int
}

// mainMapsFree is a small free list rather than a sync.Pool, which every garbage collection
// empties (one comes every few pages of a crawl).
var mainMapsFree = make(chan *mainMaps, 8)

// mainMapsKeep is the most entries a map may have had to be kept: clear keeps a map's table, and
// one huge page should not hold its tables for good.
const mainMapsKeep = 1 << 14

func getMainMaps() *mainMaps {
	select {
	case m := <-mainMapsFree:
		return m
	default:
		return &mainMaps{info: map[*html.Node]subtreeInfo{}, index: map[*html.Node]int{}}
	}
}

func putMainMaps(m *mainMaps) {
	if len(m.info) > mainMapsKeep || len(m.index) > mainMapsKeep {
		return
	}
	clear(m.info) // not to keep the page's nodes alive
	clear(m.index)
	select {
	case mainMapsFree <- m:
	default:
	}
}

func measureBody(body *html.Node, useHints bool, info map[*html.Node]subtreeInfo) *dropper {
	d := &dropper{useHints: useHints, info: info}
	body0 := d.measure(body)
	d.bodyChars, d.articles = body0.chars, body0.articles
	return d
}

// declares reports whether n is, or is inside, an element that says it
// holds the page's main content: <main>, role=main, itemprop=articleBody,
// or an <article> when the page has only one.
func (d *dropper) declares(n *html.Node) bool {
	for a := n; a != nil; a = a.Parent {
		if a.Type != html.ElementNode || a.Namespace != "" {
			continue
		}
		if a.Data == "article" {
			if d.articles == 1 {
				return true
			}
			continue
		}
		if isMainElement(a) {
			return true
		}
	}
	return false
}

type dropper struct {
	useHints  bool
	bodyChars int                        // the length of the page's text
	articles  int                        // <article> elements not inside one
	mains     []*html.Node               // <main>, role=main and articleBody elements
	info      map[*html.Node]subtreeInfo // by element that can be furniture (mayBeFurniture), measured once
	layout    map[*html.Node]bool        // isLayoutTable, by table
}

// subtreeInfo is what the dropper needs to know of an element's subtree.
type subtreeInfo struct {
	chars    int  // characters of text
	articles int  // <article> elements, not counting those inside one
	main     bool // a main element other than <article>, not inside one
}

// measure fills d.info for the elements under n, in one pass, and returns n's.
func (d *dropper) measure(n *html.Node) subtreeInfo {
	var in subtreeInfo
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			in.chars += measureNode(c, 0).chars
		case html.ElementNode:
			if c.Namespace == "" && c.Data != "article" && isMainElement(c) {
				d.mains = append(d.mains, c) // in document order: the outermost first
			}
			ci := d.measure(c)
			if mayBeFurniture(c) {
				d.info[c] = ci
			}
			in.chars += ci.chars
			if c.Namespace == "" && c.Data == "article" {
				in.articles++ // what an article holds is its own
				continue
			}
			in.articles += ci.articles
			in.main = in.main || ci.main || isMainElement(c)
		}
	}
	return in
}

// mayBeFurniture reports the elements whose info isFurniture can ask for: a boilerplate tag, a
// header, or an element with attributes (a role, a class or an id). Only they are kept in
// d.info: a map entry for every element was a third of measuring the page (issue 19).
func mayBeFurniture(n *html.Node) bool {
	return n.Namespace == "" && (len(n.Attr) > 0 || boilerplateTags[n.Data] || n.Data == "header")
}

// walk drops the furniture among the descendants of n; inContent says
// whether n is inside an article, main or section element.
func (d *dropper) walk(n *html.Node, inContent bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode {
			if d.isFurniture(c, inContent) || isPermalink(c) {
				n.RemoveChild(c)
			} else {
				d.walk(c, inContent || isSection(c))
			}
		}
		c = next
	}
}

// declaredMain returns the element the page declares as its main content:
// its one <main>, role=main or itemprop=articleBody element (others may be
// nested inside it), if it is still in the tree under body; nil otherwise.
func (d *dropper) declaredMain(body *html.Node) *html.Node {
	if len(d.mains) == 0 {
		return nil
	}
	m := d.mains[0]
	for _, o := range d.mains[1:] {
		if !contains(m, o) {
			return nil // two of them: the page does not say which
		}
	}
	if !contains(body, m) {
		return nil
	}
	return m
}

// isPermalink reports a link to a place on the same page whose text is a
// glyph (Sphinx's "¶" after each heading, "#", "§"): a control to copy a
// link, not text.
func isPermalink(n *html.Node) bool {
	if n.Data != "a" || n.Namespace != "" {
		return false
	}
	href, _ := attr(n, "href")
	if !strings.HasPrefix(strings.TrimSpace(href), "#") {
		return false
	}
	runes := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.TextNode {
			return false
		}
		for _, r := range c.Data {
			switch {
			case isSpace(r):
			case isWordRune(r):
				return false
			default:
				runes++
			}
		}
	}
	return runes > 0 && runes <= 2
}

// isFurniture reports elements dropped from Main up front.
func (d *dropper) isFurniture(n *html.Node, inContent bool) bool {
	if n.Namespace != "" {
		return false
	}
	switch {
	case boilerplateTags[n.Data] || hasRole(n, boilerplateRoles) || n.Data == "header" && !inContent:
	case n.Data == "main" || n.Data == "article" || n.Data == "body" || !isBlock(n.Data):
		return false
	case !d.useHints || !unlikely(n) || d.holdsMain(n) || d.inDataTable(n):
		return false
	}
	// An element holding most of the page's text is a wrapper, whatever its
	// name: a <form> around the whole page (ASP.NET), a "for_sidebar"
	// section, a header <div> left unclosed.
	return 2*d.infoOf(n).chars <= d.bodyChars
}

// infoOf returns n's info, which measure kept if mayBeFurniture(n) holds, as it does for every
// element isFurniture asks about; any other is measured on its own, without touching d.
func (d *dropper) infoOf(n *html.Node) subtreeInfo {
	if in, ok := d.info[n]; ok {
		return in
	}
	return (&dropper{info: map[*html.Node]subtreeInfo{}}).measure(n)
}

// inDataTable reports whether n is a part of a data table (a row of class
// "header" is not the page's header); the cells of a layout table are
// blocks like any other ("<td class=nav>").
func (d *dropper) inDataTable(n *html.Node) bool {
	if !isTablePart(n) {
		return false
	}
	t := n.Parent
	for t != nil && t.Data != "table" {
		t = t.Parent
	}
	if t == nil {
		return false
	}
	layout, ok := d.layout[t]
	if !ok {
		if d.layout == nil {
			d.layout = map[*html.Node]bool{}
		}
		layout = isLayoutTable(t)
		d.layout[t] = layout
	}
	return !layout
}

// holdsMain reports whether a main or articleBody element, or exactly one
// article, is under n: n is a layout wrapper ("has-sidebar"). A comments
// section holds an article per comment.
func (d *dropper) holdsMain(n *html.Node) bool {
	in := d.infoOf(n)
	return in.main || in.articles == 1
}

// isSection reports article, main and section elements (and their roles).
func isSection(n *html.Node) bool {
	switch n.Data {
	case "article", "main", "section":
		return true
	}
	return hasRole(n, contentRoles)
}

var contentRoles = map[string]bool{"main": true, "article": true}

// candidate is an element that received paragraph scores.
type candidate struct {
	node  *html.Node
	score float64
	total textStats // the text of its whole subtree
}

// scorer collects candidates in the order they are first scored.
type scorer struct {
	cands []candidate
	index map[*html.Node]int
}

// element walks the subtree of n (an element): text outside nested blocks
// goes to own (the text of the enclosing block), every block with enough
// own text scores its ancestors. It returns the stats of the subtree.
func (s *scorer) element(n *html.Node, own *textStats, weight float64) textStats {
	var mine, total textStats
	target := own
	if isBlock(n.Data) {
		target = &mine
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			t := measureNode(c, weight)
			target.add(t)
			total.add(t)
		case html.ElementNode:
			total.add(s.element(c, target, childLinkWeight(c, weight)))
		}
	}
	if target == &mine && mine.chars >= minUnitChars {
		s.addUnit(n, mine)
	}
	if i, ok := s.index[n]; ok {
		s.cands[i].total = total
	}
	return total
}

// addUnit gives the score of paragraph n to its ancestors, up to <body>.
func (s *scorer) addUnit(n *html.Node, t textStats) {
	score := 1 + float64(t.commas) + float64(min(t.chars/100, 3))
	level := 0
	for a := n.Parent; a != nil && a.Type == html.ElementNode && level < scoreLevels; a = a.Parent {
		if a.Data == "html" {
			break
		}
		divider := 1.0
		switch level {
		case 0:
		case 1:
			divider = 2
		default:
			divider = float64(level * 3)
		}
		s.cand(a).score += score / divider
		level++
	}
}

// cand returns n's candidate, creating it with the score of its tag and
// hints.
func (s *scorer) cand(n *html.Node) *candidate {
	if i, ok := s.index[n]; ok {
		return &s.cands[i]
	}
	s.index[n] = len(s.cands)
	s.cands = append(s.cands, candidate{node: n, score: tagScore(n.Data) + float64(hintWeight(n))})
	return &s.cands[len(s.cands)-1]
}

// tagScore is Readability's initial score of an element by its name.
func tagScore(name string) float64 {
	switch name {
	case "div":
		return 5
	case "pre", "td", "blockquote":
		return 3
	case "address", "ol", "ul", "dl", "dd", "dt", "li", "form":
		return -3
	case "h1", "h2", "h3", "h4", "h5", "h6", "th":
		return -5
	}
	return 0
}

// finish scales every score by (1 - link density).
func (s *scorer) finish() {
	for i := range s.cands {
		c := &s.cands[i]
		c.score *= 1 - min(c.total.linkDensity(), 1)
	}
}

// score returns n's final score and whether n is a candidate.
func (s *scorer) score(n *html.Node) (float64, bool) {
	if i, ok := s.index[n]; ok {
		return s.cands[i].score, true
	}
	return 0, false
}

// best returns the highest scoring candidate, the first one on a tie.
func (s *scorer) best() *html.Node {
	b := 0
	for i := range s.cands {
		if s.cands[i].score > s.cands[b].score {
			b = i
		}
	}
	return s.cands[b].node
}

// runnersUp returns the n best candidates after top, best first (the
// earlier one on a tie).
func (s *scorer) runnersUp(top *html.Node, n int) []*candidate {
	var out []*candidate
	for i := range s.cands {
		c := &s.cands[i]
		if c.node == top {
			continue
		}
		at := len(out)
		for at > 0 && c.score > out[at-1].score {
			at--
		}
		if at < n {
			out = append(out, nil)
			copy(out[at+1:], out[at:])
			out[at] = c
			if len(out) > n {
				out = out[:n]
			}
		}
	}
	return out
}

// promote moves the best candidate up the tree (step 3 in the file comment).
func (s *scorer) promote(top, body *html.Node) *html.Node {
	topScore, _ := s.score(top)
	// A common ancestor of three of the next four candidates, if they are
	// nearly as good: the container of a list of posts or teasers, rather
	// than one of them.
	const next, others, nearly = 4, 3, 0.75
	var close []*html.Node
	for _, c := range s.runnersUp(top, next) {
		if topScore > 0 && c.score >= nearly*topScore {
			close = append(close, c.node)
		}
	}
	if len(close) >= others {
	up:
		for a := top.Parent; a != nil && a != body; a = a.Parent {
			n := 0
			for _, c := range close {
				if contains(a, c) {
					if n++; n >= others {
						top = a
						break up
					}
				}
			}
		}
	}
	// A parent scoring higher than the candidate, looking up as long as
	// the scores do not drop below a third.
	last, _ := s.score(top)
	threshold := last / 3
	for a := top.Parent; a != nil && a != body; a = a.Parent {
		sc, ok := s.score(a)
		if !ok {
			continue
		}
		if sc < threshold {
			break
		}
		if sc > last {
			top = a
			break
		}
		last = sc
	}
	// Through parents that hold nothing else.
	for top != body && top.Parent != nil && top.Parent != body && onlyElementChild(top) {
		top = top.Parent
	}
	// A cell or row of a data table: the table.
	for a := top; a != nil && a != body; a = a.Parent {
		if a.Data == "table" && !isLayoutTable(a) {
			if isTablePart(top) {
				top = a
			}
			break
		}
	}
	// The nearest article, main or articleBody element holding it.
	for a := top; a != nil && a != body; a = a.Parent {
		if a.Type == html.ElementNode && isMainElement(a) {
			return a
		}
	}
	return top
}

// contains reports whether n is a descendant of a.
func contains(a, n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// onlyElementChild reports whether n is its parent's only element child.
func onlyElementChild(n *html.Node) bool {
	for c := n.Parent.FirstChild; c != nil; c = c.NextSibling {
		if c != n && c.Type == html.ElementNode {
			return false
		}
	}
	return true
}

func isTablePart(n *html.Node) bool {
	switch n.Data {
	case "td", "th", "tr", "tbody", "thead", "tfoot", "caption":
		return true
	}
	return false
}

// isMainElement reports the elements that say they hold the page's main
// content or an article.
func isMainElement(n *html.Node) bool {
	if n.Namespace != "" {
		return false
	}
	if n.Data == "article" || n.Data == "main" || hasRole(n, contentRoles) {
		return true
	}
	v, _ := attr(n, "itemprop")
	return strings.EqualFold(strings.TrimSpace(v), "articleBody")
}

// siblings returns top and the siblings that join it, in document order
// (step 4 in the file comment).
func (s *scorer) siblings(top, body *html.Node) []*html.Node {
	if top == body || top.Parent == nil {
		return []*html.Node{top}
	}
	topScore, _ := s.score(top)
	threshold := max(10, 0.2*topScore)
	topClass, _ := attr(top, "class")
	var kids []*html.Node
	var in []bool
	for c := top.Parent.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		ok := c == top
		if !ok {
			bonus := 0.0
			if cl, _ := attr(c, "class"); cl != "" && cl == topClass {
				bonus = 0.2 * topScore
			}
			if sc, scored := s.score(c); scored && sc+bonus >= threshold {
				ok = true
			} else if c.Data == "p" {
				ok = isProse(c)
			}
		}
		kids = append(kids, c)
		in = append(in, ok)
	}
	// A heading just before an included sibling is its heading.
	for i := len(kids) - 2; i >= 0; i-- {
		if !in[i] && in[i+1] && isHeading(kids[i].Data) {
			in[i] = true
		}
	}
	var out []*html.Node
	for i, k := range kids {
		if in[i] {
			out = append(out, k)
		}
	}
	return out
}

// isProse reports a paragraph that reads as text: over 80 characters with
// little link text, or a shorter sentence without links.
func isProse(p *html.Node) bool {
	t := subtreeStats(p, 0)
	if t.chars > 80 {
		return t.linkDensity() < 0.25
	}
	if t.chars == 0 || t.link > 0 {
		return false
	}
	txt := strings.TrimSpace(textOf(p))
	return strings.HasSuffix(txt, ".") || strings.Contains(txt, ". ")
}

func isHeading(name string) bool {
	switch name {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		return true
	}
	return false
}

// cleanable are the containers conditional cleaning may remove.
var cleanable = map[string]bool{
	"div": true, "section": true, "center": true, "table": true, "ul": true, "ol": true,
	"dl": true, "menu": true, "dir": true, "p": true, "header": true, "fieldset": true,
	"details": true, "figure": true, "blockquote": true,
}

// cleanNode removes the link-heavy boxes under n, and n itself when
// removable and link-heavy (step 5 in the file comment). A heading whose
// section lost everything to cleaning goes too ("Related articles" above a
// removed list), and so does a box left with nothing but headings. It
// returns the stats of what is left and whether n was removed; weight is
// the link weight of n's text.
func cleanNode(n *html.Node, weight float64, removable bool, u *undo) (textStats, bool) {
	if n.Data == "table" && isDataTable(n) {
		return subtreeStats(n, weight), false
	}
	var t textStats
	headingChars, removedAny := 0, false
	// the last heading kept, its stats, and what came after it
	var heading *html.Node
	var hs textStats
	removedSince, contentSince := false, false
	dropHeading := func() {
		if heading != nil && removedSince && !contentSince {
			u.remove(n, heading)
			t.chars -= hs.chars
			t.link -= hs.link
			t.commas -= hs.commas
			headingChars -= hs.chars
		}
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch c.Type {
		case html.TextNode:
			ct := measureNode(c, weight)
			t.add(ct)
			if strings.TrimSpace(c.Data) != "" {
				contentSince = true
			}
		case html.ElementNode:
			ct, removed := cleanNode(c, childLinkWeight(c, weight), true, u)
			switch {
			case removed:
				u.remove(n, c)
				removedAny, removedSince = true, true
			case isHeading(c.Data):
				dropHeading()
				t.add(ct)
				headingChars += ct.chars
				heading, hs = c, ct
				removedSince, contentSince = false, false
			default:
				t.add(ct)
				if ct.chars > 0 {
					contentSince = true
				}
			}
		}
		c = next
	}
	dropHeading()
	if !removable {
		return t, false
	}
	if removedAny && t.chars <= headingChars {
		return t, true // nothing but headings (or nothing) is left
	}
	if !cleanable[n.Data] || t.commas >= 10 {
		return t, false
	}
	ld := t.linkDensity()
	isList := listElements[n.Data]
	switch {
	case ld > 0.5:
		return t, true
	case n.Data == "p" || wrapsParagraph(n):
		return t, false
	case !isList && hintWeight(n) < 25 && ld > 0.2:
		return t, true
	case !isList && t.chars < minUnitChars && t.link > 0:
		return t, true
	}
	return t, false
}

// wrapsParagraph reports a box whose only content is one <p> (AsciiDoc's
// <div class="paragraph"><p>): Readability turns such a div into its
// paragraph before scoring, so it is judged as a paragraph.
func wrapsParagraph(n *html.Node) bool {
	p := false
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
			return false
		case c.Type == html.ElementNode && c.Data == "p" && !p:
			p = true
		case c.Type == html.ElementNode:
			return false
		}
	}
	return p
}

// isDataTable reports a table that holds data: not a layout table, and it
// has a caption or header cells, or more than 10 cells, or 10 rows, or more
// than 4 columns (Readability's test, without its attribute hints).
func isDataTable(t *html.Node) bool {
	if isLayoutTable(t) {
		return false
	}
	rows, cols, header := 0, 0, false
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "caption", "thead", "tfoot":
				header = true
				walk(c)
			case "tbody":
				walk(c)
			case "tr":
				rows++
				cells := 0
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.Type == html.ElementNode && (d.Data == "td" || d.Data == "th") {
						cells += min(colspan(d), maxColspan)
						header = header || d.Data == "th"
					}
				}
				cols = max(cols, cells)
			}
		}
	}
	walk(t)
	return header || rows >= 10 || cols > 4 || rows*cols > 10
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
