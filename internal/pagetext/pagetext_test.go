package pagetext

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

// checkInvariants checks the output format promised in the package comment.
func checkInvariants(t testing.TB, body string) {
	t.Helper()
	if !utf8.ValidString(body) {
		t.Errorf("body is not valid UTF-8: %q", body)
	}
	// Only a <pre> line (its indentation) or a table row (empty first
	// cells) may start with white space.
	if strings.HasPrefix(body, "\n") || strings.TrimRightFunc(body, unicode.IsSpace) != body {
		t.Errorf("body has a leading blank line or trailing white space: %q", body)
	}
	if strings.Contains(body, "\n\n\n") {
		t.Errorf("body has more than one blank line in a row: %q", body)
	}
	for _, c := range body {
		if c != '\n' && c != '\t' && (unicode.IsControl(c) || c == '\u00a0' || c == '\u200b' || c == '\ufeff') {
			t.Errorf("body has %U: %q", c, body)
			break
		}
	}
	for l := range strings.SplitSeq(body, "\n") {
		if strings.TrimRight(l, " \t") != l {
			t.Errorf("line with trailing white space: %q", l)
		}
	}
}

// firstDiff shows where two texts start to differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant %q\ngot  %q", i+1, w, g)
		}
	}
	return "(no difference in lines)"
}

func full(t *testing.T, page string) string {
	t.Helper()
	txt, err := Extract([]byte(page), "", Full)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, txt.Body)
	return txt.Body
}

func TestBlockRules(t *testing.T) {
	tests := []struct {
		name, page, want string
	}{
		{"empty document", "", ""},
		{"only whitespace", " \n\t ", ""},
		{"text without markup", "hello   world", "hello world"},
		{"title is the first block", "<title> A  page </title><p>Body", "A page\n\nBody"},
		{"title equal to first block is not repeated", "<title>Same</title><h1>Same</h1><p>x", "Same\n\nx"},
		{"paragraphs", "<p>one</p><p>two</p>", "one\n\ntwo"},
		{"unclosed paragraphs", "<p>one<p>two<p>three", "one\n\ntwo\n\nthree"},
		{"inline elements do not break", "<p>a <b>bold</b> and <i>it</i>alic<sup>2</sup>.</p>", "a bold and italic2."},
		// Issue 19: Sphinx's " : " between a parameter and its type comes
		// from CSS; so does the gap between two touching inline elements.
		{"touching inline elements are words apart", `<dl><dt><strong>A</strong><span class="classifier">array_like</span></dt>` +
			`<dt><strong>lower</strong><span class="classifier">bool</span></dt></dl>`, "A array_like\nlower bool"},
		{"nested touching inline elements", "<p><span><em>x</em></span><code><b>int</b></code></p>", "x int"},
		{"touching inline elements with punctuation", "<p><span>scipy.</span><span>stats</span> <span>f</span><span>(</span></p>", "scipy.stats f("},
		{"text running on from an element", "<p><code>str</code>s and <b>W</b>ord</p>", "strs and Word"},
		{"inline boundary inside a table cell", "<table><tr><td><b>n</b><i>int</i></td><td>x</td></tr></table>", "n int\tx"},
		{"whitespace collapsed", "<p>  a \n\t b  \r\n c  </p>", "a b c"},
		{"unicode spaces collapsed", "<p>a\u00a0\u00a0b\u3000c\u2003d</p>", "a b c d"},
		{"invisible characters dropped", "<p>soft\u00adhyphen zero\u200bwidth \ufeffbom</p>", "softhyphen zerowidth bom"},
		{"entities decoded", "<p>&amp; &lt;tag&gt; &eacute;t&eacute; &#x1F600; &nbsp;x &copy;</p>", "& <tag> été 😀 x ©"},
		{"bad numeric entity", "<p>a&#0;b&#xD800;c</p>", "a\ufffdb\ufffdc"},
		{"br is a line break", "<p>one<br>two<br/>three</p>", "one\ntwo\nthree"},
		{"double br is a paragraph break", "<p>one<br><br>two<br> <br>\n<br>three</p>", "one\n\ntwo\n\nthree"},
		{"leading br ignored", "<p><br>one</p>", "one"},
		{"headings are blocks", "<h1>Title</h1>text<h2>Sub</h2>more", "Title\n\ntext\n\nSub\n\nmore"},
		{"div breaks text", "a<div>b</div>c", "a\n\nb\n\nc"},
		{"nested blocks make no empty blocks", "<div><div><section><p>deep</p></section></div></div><div></div><p> </p><p>next", "deep\n\nnext"},
		{"hr breaks", "a<hr>b", "a\n\nb"},
		{"list is one block", "<p>Intro</p><ul><li>one</li><li>two <b>bold</b></li></ul><p>After",
			"Intro\n\none\ntwo bold\n\nAfter"},
		{"nested list", "<ul><li>a<ul><li>a1</li><li>a2</li></ul></li><li>b</li></ul>", "a\na1\na2\nb"},
		{"paragraphs inside list items are lines", "<ol><li><p>one</p><p>more</p></li><li>two</li></ol>", "one\nmore\ntwo"},
		{"definition list", "<dl><dt>Term</dt><dd>Definition</dd></dl>", "Term\nDefinition"},
		{"data table", "<table><caption>Cap</caption><thead><tr><th>A</th><th>B</th></tr></thead><tbody><tr><td>1</td><td> 2 </td></tr></tbody></table>",
			"Cap\nA\tB\n1\t2"},
		{"table cells keep empty columns", "<table><tr><td></td><td>x</td><td>y</td><td></td></tr></table>", "\tx\ty"},
		{"colspan keeps columns aligned", "<table><tr><td colspan=2>a</td><td>b</td></tr><tr><td>1<td>2<td>3</table>", "a\t\tb\n1\t2\t3"},
		{"row with one cell has no tabs", "<table><tr><td><img src=x></td><td>only</td></tr></table>", "only"},
		{"br inside cell is a space", "<table><tr><td>a<br>b</td><td>c<p>d</p></td></tr></table>", "a b\tc d"},
		{"layout table cells are blocks", "<table><tr><td><h2>Menu</h2><a>x</a></td><td><p>one</p><p>two</p></td></tr></table>",
			"Menu\n\nx\n\none\n\ntwo"},
		{"presentation table", "<table role=presentation><tr><td>a</td><td>b</td></tr></table>", "a\n\nb"},
		{"nested table makes a layout table", "<table><tr><td><table><tr><td>1</td><td>2</td></tr></table></td><td>side</td></tr></table>",
			"1\t2\n\nside"},
		{"pre keeps lines and indentation", "<pre>\n  func f() {\n  \treturn\n\n  }\n</pre>", "func f() {\n      return\n}"},
		{"pre with markup", "<pre><code><span>a</span>  b\n<b>c</b></code></pre>", "a  b\nc"},
		{"pre br", "<pre>a<br>b</pre>", "a\nb"},
		{"pre in list", "<ul><li>x<pre>1\n2</pre></li></ul>", "x\n1\n2"},
		{"pre CRLF", "<pre>a\r\nb\rc</pre>", "a\nb\nc"},
		{"script style noscript template dropped",
			"<script>var x=1</script><style>p{}</style><noscript>enable js</noscript><template><p>tpl</p></template><p>kept</p>", "kept"},
		{"svg dropped", "<p>a<svg><title>icon</title><text>svgtext</text></svg>b</p>", "ab"},
		{"math kept", "<p>x<math><mi>y</mi></math></p>", "xy"},
		{"form controls dropped", "<p>Sort <select><option>Price</option></select><button>Go</button><input value=v><textarea>t</textarea> end</p>", "Sort end"},
		{"head dropped except title", "<head><title>T</title><meta name=description content=d><style>x</style></head><body>b", "T\n\nb"},
		{"body title not shown", "<body><p>a</p><title>late</title><p>b</p>", "late\n\na\n\nb"},
		{"hidden attribute", "<p>a</p><div hidden><p>secret</p></div><p hidden=until-found>found</p>", "a\n\nfound"},
		{"aria-hidden", "<p>a<span aria-hidden=\"TRUE\">x</span><span aria-hidden=false>b</span></p>", "ab"},
		{"inline display none", "<p>a<span style=\"color:red; DISPLAY : none !important\">x</span><span style=\"display:block;display:none\">y</span><span style=\"display:none;display:inline\">b</span></p>", "ab"},
		{"visibility hidden", "<p>a<span style=\"visibility:hidden\">x</span></p>", "a"},
		{"nav header footer aside kept in full", "<header>H</header><nav>N</nav><main>M</main><aside>A</aside><footer>F</footer>", "H\n\nN\n\nM\n\nA\n\nF"},
		{"adjacent links are separated", "<p><a>Home</a><a>About</a> <a>x</a>, <a>y</a>z</p>", "Home About x, yz"},
		{"comments and doctype ignored", "<!doctype html><!-- c --><p>a<!-- b -->c</p>", "ac"},
		{"misnested tags", "<p><b>bold <i>both</b> italic</i></p><div>a<p>b</div>c", "bold both italic\n\na\n\nb\n\nc"},
		{"blockquote and figure", "<blockquote>q</blockquote><figure><img><figcaption>cap</figcaption></figure>", "q\n\ncap"},
		{"control characters dropped", "<p>a\x01b\x7fc\u0085d</p>", "abc d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := full(t, tt.page); got != tt.want {
				t.Errorf("Extract(%q)\n got %q\nwant %q", tt.page, got, tt.want)
			}
		})
	}
}

func TestTitle(t *testing.T) {
	for page, want := range map[string]string{
		"<title>  a\n b </title>": "a b",
		"<p>x":                    "",
		"<svg><title>icon</title></svg><title>T</title>": "T",
		"<title>one</title><title>two</title>":           "one",
		"<title>&amp;</title>":                           "&",
	} {
		txt, err := Extract([]byte(page), "", Full)
		if err != nil || txt.Title != want {
			t.Errorf("Extract(%q).Title = %q, %v; want %q", page, txt.Title, err, want)
		}
	}
}

func TestUnknownMode(t *testing.T) {
	for _, m := range []Mode{"", "Full", "MAIN", "readability"} {
		if _, err := Extract([]byte("<p>x"), "", m); err == nil {
			t.Errorf("Extract(mode %q) succeeded, want an error", m)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	tests := []struct{ name, page, want string }{
		{"latin-1 remnant in utf-8 page", "<meta charset=utf-8><p>caf\xe9 na\xefve \xe2\x82\xac</p>", "café naïve €"},
		{"undeclared latin-1", "<p>M\xfcller \x80 5</p>", "Müller € 5"},
		{"truncated utf-8", "<p>ab\xe2\x82</p>", "abâ‚"},
		{"declared shift_jis", "<meta charset=shift_jis><p>\x93\xfa\x96\x7b</p>", "日本"},
		{"utf-16 BOM", "\xff\xfe<\x00p\x00>\x00h\x00i\x00\xff", "hi\ufffd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := full(t, tt.page); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMainFallsBack(t *testing.T) {
	// Too little text for any main content: Main says it used Full.
	txt, err := Extract([]byte("<title>T</title><nav><a>Home</a></nav><p>Short page."), "https://example.org/", Main)
	if err != nil {
		t.Fatal(err)
	}
	if txt.Mode != Full || txt.Body != "T\n\nHome\n\nShort page." {
		t.Errorf("got %+v, want the Full text with Mode full", txt)
	}
	// The news fixture has a real article: Main is used and drops the
	// rotating footer.
	txt, err = Extract(readFixture(t, "news"), "https://example.org/news", Main)
	if err != nil {
		t.Fatal(err)
	}
	if txt.Mode != Main || strings.Contains(txt.Body, "FOOTER") || !strings.Contains(txt.Body, "ARTICLE4 ") {
		t.Errorf("news in main mode: mode %s, body %q", txt.Mode, txt.Body)
	}
}

// TestTrusted: a try's result is the main content when it is inside the
// element the page declares as its main content, however short, or else at
// least MainMinShare of the Full text; an empty result never is.
func TestTrusted(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    mainResult
		full int
		want bool
	}{
		{"empty", mainResult{}, 0, false},
		{"empty though declared", mainResult{text: " \n", declared: true}, 100, false},
		{"short, declared", mainResult{text: "Return len(self).", declared: true}, 5000, true},
		{"short, a quarter of full", mainResult{text: strings.Repeat("é", 25)}, 100, true},
		{"under a quarter of full", mainResult{text: strings.Repeat("é", 249)}, 1000, false},
		{"a quarter of full", mainResult{text: strings.Repeat("é", 250)}, 1000, true},
	} {
		full := &fullText{text: strings.Repeat("x", tt.full), done: true}
		if got := tt.m.trusted(full); got != tt.want {
			t.Errorf("%s: trusted(%d runes of %d, declared %v) = %v, want %v", tt.name,
				len([]rune(tt.m.text)), tt.full, tt.m.declared, got, tt.want)
		}
	}
}

// TestDeterminism extracts every fixture repeatedly, also concurrently, and
// wants the same text each time.
func TestDeterminism(t *testing.T) {
	for _, name := range fixtureNames {
		page := readFixture(t, name)
		for _, mode := range []Mode{Full, Main} {
			first, err := Extract(page, "https://example.org/"+name, mode)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan string, 4)
			for range 4 {
				wg.Go(func() {
					again, _ := Extract(bytes.Clone(page), "https://example.org/"+name, mode)
					if again.Title != first.Title || again.Body != first.Body || again.Mode != first.Mode || again.Alt() != first.Alt() {
						errs <- fmt.Sprintf("%s/%s: second extraction differs: %s", name, mode, firstDiff(first.Body, again.Body))
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		}
	}
}

// TestInputUnchanged checks that Extract does not write to its input.
func TestInputUnchanged(t *testing.T) {
	page := readFixture(t, "broken")
	orig := bytes.Clone(page)
	for _, mode := range []Mode{Full, Main} {
		if _, err := Extract(page, "", mode); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(page, orig) {
		t.Error("Extract changed its input")
	}
}

// TestLargePage extracts a 1 MiB page in both modes; Main leaves a page
// over MainMaxBytes to Full.
func TestLargePage(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head><title>Big</title></head><body><nav><a href=/>Home</a></nav><article>")
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d of a very long page, with <a href=\"/x%d\">a link</a> and some <b>bold</b> text to make it realistic.</p>\n", i, i)
		if i%50 == 0 {
			fmt.Fprintf(&b, "<table><tr><td>%d</td><td>cell</td></tr></table><ul><li>item %d</li></ul><pre>code %d\n  line</pre>", i, i, i)
		}
	}
	b.WriteString("</article></body></html>")
	page := []byte(b.String())
	for _, mode := range []Mode{Full, Main} {
		txt, err := Extract(page, "https://example.org/big", mode)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, txt.Body)
		if !strings.Contains(txt.Body, "Paragraph 0 of") || !strings.Contains(txt.Body, "Paragraph 7000 of") {
			t.Errorf("%s: text of a 1 MiB page is missing paragraphs (%d bytes)", mode, len(txt.Body))
		}
		if len(page) <= MainMaxBytes || txt.Mode != Full {
			t.Errorf("%s: %d-byte page used mode %s, want full", mode, len(page), txt.Mode)
		}
	}
}

// TestDeepNesting: html.Parse rejects trees deeper than 512 open elements;
// such a page is read from its tokens instead, in both modes, with the
// block rules that need no tree.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("<div><span>", 600) + "deep" + strings.Repeat("</span></div>", 600)
	unclosed := "<title>Old  page</title><style>p{}</style>" + strings.Repeat("<div><font>", 600) +
		"<h1>Head</h1><p>one<br>two<br><br>three</p><ul><li>a</li><li>b</li></ul>" +
		"<div style=\"display:none\">hidden<div>x</div>still hidden</div><script>var s = '<p>';</script>" +
		"<pre>  x := 1\n\ty <b>bold</b>  \n</pre><table><tr><td>c1<td>c2</table><a>L1</a><a>L2</a><select><option>o</select>" +
		"<p>caf\xe9 &amp; end<dl><dt><strong>A</strong><span>array_like</span></dt></dl>"
	tests := []struct{ name, page, title, body string }{
		{"deep", deep, "", "deep"},
		{"unclosed", unclosed, "Old page",
			"Old page\n\nHead\n\none\ntwo\n\nthree\n\na\nb\n\nx := 1\n      y bold\n\nc1\n\nc2\n\nL1 L2\n\ncafé & end\n\nA array_like"},
	}
	for _, tt := range tests {
		if _, ok := parse([]byte(tt.page)); ok {
			t.Fatalf("%s: html.Parse accepted the page; the test no longer covers the token fallback", tt.name)
		}
		for _, mode := range []Mode{Full, Main} {
			txt, err := Extract([]byte(tt.page), "", mode)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, txt.Body)
			if txt.Title != tt.title || txt.Body != tt.body || txt.Mode != Full {
				t.Errorf("%s/%s: got %+v\nwant title %q body %q mode full", tt.name, mode, txt, tt.title, tt.body)
			}
		}
	}
}

// TestFooterStability is the property change detection relies on: in Main
// mode, the fixtures whose rotating parts are boilerplate give the same text
// on another day.
func TestFooterStability(t *testing.T) {
	for _, name := range []string{"news", "university", "blog", "docs", "catalog", "broken"} {
		if q := measure(t, name, Main); !q.stable {
			t.Errorf("%s: main text changes when only the footer date changes", name)
		}
	}
	// Full keeps every visible line, the rotating ones too.
	if q := measure(t, "news", Full); q.stable {
		t.Error("news: full text did not change with the footer date; the fixture lost its rotating footer?")
	}
}

// TestAlt: Text.Alt is the body in the other mode, for change detection to
// compare like with like: Full's text beside Main's, the untrusted main
// content beside a fallback, nothing when Full was asked for.
func TestAlt(t *testing.T) {
	article := "<html><head><title>T</title></head><body><nav><a href=/a>Home</a> <a href=/b>About</a></nav><main><p>" +
		strings.Repeat("The article says a thing, then another. ", 10) + "</p></main><footer><p>Footer, 2026.</p></footer></body></html>"
	// No declared main element, and the only paragraph is a small share
	// of a page of links: Main does not trust it.
	links := "<html><head><title>T</title></head><body><div><p>A short note, of a few words.</p></div><ul>" +
		strings.Repeat("<li><a href=/x>a link among very many links</a></li>", 40) + "</ul></body></html>"
	full := func(page string) string {
		txt, err := Extract([]byte(page), "", Full)
		if err != nil {
			t.Fatal(err)
		}
		return txt.Body
	}
	for _, tt := range []struct {
		name, page string
		mode       Mode
		wantMode   Mode
		wantAlt    string
	}{
		{"main beside full", article, Main, Main, full(article)},
		{"fallback beside the untrusted main", links, Main, Full, "T\n\nA short note, of a few words."},
		{"full asked for", article, Full, Full, ""},
	} {
		txt, err := Extract([]byte(tt.page), "", tt.mode)
		if err != nil {
			t.Fatal(err)
		}
		if txt.Mode != tt.wantMode || txt.Alt() != tt.wantAlt {
			t.Errorf("%s: mode %s, Alt %q; want %s, %q", tt.name, txt.Mode, txt.Alt(), tt.wantMode, tt.wantAlt)
		}
	}
}

// TestAltIsTheFullText: where Main is trusted, Alt is the page's Full text, also where Main did not
// need the Full text and Alt renders it from a new parse (issue 19).
func TestAltIsTheFullText(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("testdata", "realpages", "*.html"))
	for _, name := range fixtureNames {
		pages = append(pages, filepath.Join("testdata", name+".html"))
	}
	lazy := 0
	for _, p := range pages {
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Extract(page, "", Main)
		if err != nil {
			t.Fatal(err)
		}
		if m.Mode != Main {
			continue
		}
		if m.altSrc != nil {
			lazy++
		}
		f, err := Extract(page, "", Full)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Alt(); got != f.Body {
			t.Errorf("%s: Alt differs from the Full text: %s", p, firstDiff(f.Body, got))
		}
	}
	if lazy == 0 {
		t.Error("no page left its Full text to Alt: the test no longer covers it")
	}
}
