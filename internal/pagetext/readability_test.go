package pagetext

import (
	"fmt"
	"strings"
	"testing"
)

func TestHints(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want uint8
	}{
		{"", 0},
		{"site-header", hintNegative | hintUnlikely},
		{"entry-header", hintPositive | hintKeep | hintNegative | hintUnlikely},
		{"Main-Navigation", hintPositive | hintKeep | hintNegative | hintUnlikely},
		{"related_posts", hintNegative | hintUnlikely}, // plural "posts" is not positive
		{"related-articles", hintNegative | hintUnlikely},
		{"side-bar", hintNegative | hintAside},      // joined pair
		{"col-4 sidebar", hintNegative | hintAside}, // second class
		{"side bar", 0},   // two classes do not join
		{"headerlink", 0}, // a word, not a run of words
		{"comment", 0},
		{"comment-list", hintNegative | hintUnlikely},
		{"comments-area", hintNegative | hintUnlikely},
		{"elementor-widget-container", hintNegative},
		{"TestReport__Section--Ads", 0}, // a BEM modifier is skipped
		{"post_content700100", hintPositive | hintKeep},
		{"wy-nav-content", hintPositive | hintKeep | hintNegative | hintUnlikely},
		{strings.Repeat("x", 40) + "-nav", hintNegative | hintUnlikely},
		{"nav" + strings.Repeat("x", 40), 0},
	} {
		if got := hints(tt.v); got != tt.want {
			t.Errorf("hints(%q) = %05b, want %05b", tt.v, got, tt.want)
		}
	}
}

func TestHintsDoNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { hints("post-2187 Entry-Content has-sidebar side-bar") }); n != 0 {
		t.Errorf("hints allocates %v times", n)
	}
}

// para is a paragraph of prose long enough to score.
func para(tag string, i int) string {
	return "<p>" + tag + " paragraph " + string(rune('a'+i)) + ", which goes on for a while, with commas, " +
		"so that it counts as prose in the scoring of its container.</p>"
}

func paras(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(para(tag, i))
	}
	return b.String()
}

func mainText(t *testing.T, page string) Text {
	t.Helper()
	txt, err := Extract([]byte(page), "https://example.org/", Main)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, txt.Body)
	return txt
}

func TestMainContent(t *testing.T) {
	menu := "<ul><li><a href=/a>Home page link</a><li><a href=/b>About us link</a><li><a href=/c>Contact link</a></ul>"
	tests := []struct {
		name, page string
		want, not  []string
	}{
		{"semantic furniture dropped",
			"<header><p>HEADERTEXT of the site, with a tagline long enough to score.</p></header><nav>" + menu + "</nav>" +
				"<main><article><h1>Title</h1>" + paras("ARTICLE", 4) + "</article></main>" +
				"<aside><p>ASIDETEXT in a sidebar box, long enough to be scored as a paragraph.</p></aside>" +
				"<form><p>FORMTEXT sign up for our newsletter, long enough to be scored.</p></form>" +
				"<div role=contentinfo><p>ROLETEXT copyright line long enough to be scored here.</p></div>" +
				"<footer><p>FOOTERTEXT copyright line long enough to be scored here.</p></footer>",
			[]string{"Title", "ARTICLE paragraph a", "ARTICLE paragraph d"},
			[]string{"HEADERTEXT", "Home page link", "ASIDETEXT", "FORMTEXT", "ROLETEXT", "FOOTERTEXT"}},
		{"header inside the article is kept, its footer is not",
			"<article><header><h1>The headline</h1><p>By someone</p></header>" + paras("ARTICLE", 4) +
				"<footer>Tagged: <a href=/t>TAGLINK</a></footer></article>",
			[]string{"The headline\n\nBy someone", "ARTICLE paragraph a"},
			[]string{"TAGLINK"}},
		{"class and id hints drop blocks",
			"<div id=content>" + paras("ARTICLE", 4) +
				"<div class=share-buttons><p>SHARETEXT on every social network you can name today.</p></div>" +
				"<div id=comments><p>COMMENTTEXT from a reader who has something to say about it.</p></div>" +
				"<div class=\"widget related-posts\"><p>RELATEDTEXT teaser of another article on this site.</p></div></div>" +
				"<div class=sidebar>" + paras("SIDEBAR", 2) + "</div>",
			[]string{"ARTICLE paragraph a", "ARTICLE paragraph d"},
			[]string{"SHARETEXT", "COMMENTTEXT", "RELATEDTEXT", "SIDEBAR"}},
		{"best candidate over a link list and a teaser column",
			"<div class=teasers>" + strings.Repeat("<p><a href=/x>TEASER link text that goes on and on, with commas, and more</a></p>", 6) + "</div>" +
				"<div class=text>" + paras("ARTICLE", 5) + "</div>",
			[]string{"ARTICLE paragraph a", "ARTICLE paragraph e"},
			[]string{"TEASER"}},
		{"link-dense boxes inside the content are cleaned",
			"<article>" + paras("ARTICLE", 3) + "<div><h3>More on this</h3>" + menu + "</div>" +
				"<p>Topics: <a href=/t1>PORTTOPIC</a> <a href=/t2>ENVTOPIC</a></p>" + paras("MORE", 2) + "</article>",
			[]string{"ARTICLE paragraph c", "MORE paragraph b"},
			[]string{"More on this", "Home page link", "PORTTOPIC"}},
		{"a heading left without its list goes",
			"<article>" + paras("ARTICLE", 3) + "<h2>Related stories</h2>" + menu + "</article>",
			[]string{"ARTICLE paragraph c"},
			[]string{"Related stories", "Home page link"}},
		{"data tables render as in full, first column and all",
			"<article>" + paras("ARTICLE", 3) +
				"<table><tr class=header><th>Option<th>Type</tr><tr><td><code>name</code><td>string</tr>" +
				"<tr><td><a href=/l>latitude</a><td>float</tr></table><dl><dd><strong>Posts:</strong> 412</dl></article>",
			[]string{"Option\tType\nname\tstring\nlatitude\tfloat", "Posts: 412"},
			nil},
		{"pre and lists keep their lines",
			"<article>" + paras("ARTICLE", 3) + "<pre>  a := 1\n    b := 2</pre><ol><li>one<li>two</ol></article>",
			[]string{"a := 1\n  b := 2", "one\ntwo"},
			nil},
		{"a layout table's navigation cell is not content",
			"<table><tr><td class=nav><a href=/1>NAVCELL one</a><br><a href=/2>NAVCELL two</a></td>" +
				"<td><h1>Department</h1>" + paras("ARTICLE", 4) + "</td></tr>" +
				"<tr><td colspan=2>FOOTERROW last modified 14/05/2024 by the webmaster, visitors 1029341</td></tr></table>",
			[]string{"Department", "ARTICLE paragraph d"},
			[]string{"NAVCELL", "FOOTERROW"}},
		{"a form around the whole page is not furniture",
			"<form id=aspnetForm><div class=main>" + paras("ARTICLE", 4) + "</div><nav>" + menu + "</nav></form>",
			[]string{"ARTICLE paragraph a"},
			[]string{"Home page link"}},
		{"a layout class does not hide the article",
			"<div class=\"panel zen-one-sidebar-second\"><div>" + paras("ARTICLE", 4) + "</div></div>" +
				"<aside>" + paras("ASIDE", 3) + "</aside><footer>" + paras("FOOTER", 3) + "</footer>",
			[]string{"ARTICLE paragraph a", "ARTICLE paragraph d"},
			[]string{"ASIDE", "FOOTER"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			txt := mainText(t, tt.page)
			if txt.Mode != Main {
				t.Fatalf("mode %s, want main:\n%s", txt.Mode, txt.Body)
			}
			for _, w := range tt.want {
				if !strings.Contains(txt.Body, w) {
					t.Errorf("missing %q in\n%s", w, txt.Body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(txt.Body, n) {
					t.Errorf("unwanted %q in\n%s", n, txt.Body)
				}
			}
		})
	}
}

// TestMainContentSiblings: prose paragraphs and the heading of the best
// candidate's siblings join it; a link box does not.
func TestMainContentSiblings(t *testing.T) {
	page := "<div id=wrap><h2>Intro heading</h2><div class=body-a>" + paras("FIRST", 4) + "</div>" +
		"<p>A closing remark that stands on its own as a sentence, with no links in it at all.</p>" +
		"<div class=box><a href=/x>LINKBOX</a></div></div>"
	txt := mainText(t, page)
	for _, w := range []string{"FIRST paragraph a", "A closing remark"} {
		if !strings.Contains(txt.Body, w) {
			t.Errorf("missing %q in\n%s", w, txt.Body)
		}
	}
	if strings.Contains(txt.Body, "LINKBOX") {
		t.Errorf("link box kept:\n%s", txt.Body)
	}
}

// TestInFlowAside: a block named "sidebar" between the paragraphs of a
// section is a boxed aside of the text (DocBook's <div class="sidebar">,
// as the Debian Administrator's Handbook has them) and stays; a sidebar
// column beside the content goes.
func TestInFlowAside(t *testing.T) {
	page := []byte(`<div class="wrap"><div class="content"><div class="section"><h2>Virtualization</h2>` +
		`<div class="para">` + strings.Repeat("Virtualization is one of the major advances, ", 4) + `</div>` +
		`<div class="sidebar"><p class="title">CULTURE Xen</p><div class="para">ASIDE1 the box beside the ` +
		`text tells, at some length, where Xen comes from and why it matters.</div></div>` +
		`<div class="para">` + strings.Repeat("Xen is a paravirtualization solution, it says, ", 4) + `</div>` +
		`</div></div><div class="sidebar"><ul><li><a href="/a">NAVLINK1 one</a></li><li><a href="/b">NAVLINK2 two</a></li>` +
		`</ul><div>SIDEBAR1 a blurb about the site, long enough to be a paragraph of its own.</div></div></div>`)
	txt, err := Extract(page, "", Main)
	if err != nil {
		t.Fatal(err)
	}
	if txt.Mode != Main || !strings.Contains(txt.Body, "ASIDE1") || strings.Contains(txt.Body, "SIDEBAR1") ||
		strings.Contains(txt.Body, "NAVLINK") {
		t.Errorf("want the in-flow aside and not the sidebar column, got (%s):\n%s", txt.Mode, txt.Body)
	}
}

// TestMainRetry: the first try, which drops blocks for their class, finds
// nothing when the article's wrapper has a layout class naming a sidebar;
// the second try, without class hints, finds the article.
func TestMainRetry(t *testing.T) {
	page := []byte("<div class=\"panel zen-one-sidebar-second\"><div>" + paras("ARTICLE", 4) + "</div></div>" +
		"<aside>" + paras("ASIDE", 3) + "</aside><footer>" + paras("FOOTER", 3) + "</footer>")
	doc, _ := parse(page)
	prune(doc)
	if m, ok := mainContent(doc, true, nil); ok {
		t.Fatalf("first try found %q; the test no longer covers the second", m.text)
	}
	doc, _ = parse(page)
	prune(doc)
	main, ok := extractMain(doc, &fullText{src: page})
	if !ok || !strings.HasPrefix(main, "ARTICLE paragraph a") || strings.Contains(main, "ASIDE") {
		t.Errorf("extractMain = %q, %v", main, ok)
	}
}

// TestDeclaredMain: the element a page declares as its main content is its
// main content, however short, and wins over a higher-scoring block outside
// it (issue 19: an API entry of one line beside a navigation of hundreds of
// links fell back to Full, navigation and all).
func TestDeclaredMain(t *testing.T) {
	var nav strings.Builder
	for i := range 80 {
		fmt.Fprintf(&nav, "<li><a href=\"/f%d\">function number %d of the module</a></li>", i, i)
	}
	footer := `<div class="copyright"><p>` + strings.Repeat("Copyright, the authors, licensed under a licence, see the file. ", 4) + `</p></div>`
	for _, tt := range []struct{ name, main, want string }{
		{"one line, nothing to score", `<main><h1>KDTree.m</h1><p>The dimension.</p></main>`, "T\n\nKDTree.m\n\nThe dimension."},
		{"a short entry", `<div role="main"><h1>get_coeffs</h1><p>Return spline coefficients, in order.</p></div>`,
			"T\n\nget_coeffs\n\nReturn spline coefficients, in order."},
		{"a table of contents", `<div role="main"><h1>FAQ</h1><ul><li><a href="/g">General questions</a></li>` +
			`<li><a href="/p">Programming questions</a></li><li><a href="/d">Design questions</a></li></ul></div>`,
			"T\n\nFAQ\n\nGeneral questions\nProgramming questions\nDesign questions"},
	} {
		page := "<title>T</title><div class=sidebar><ul>" + nav.String() + "</ul></div>" + tt.main + footer
		txt, err := Extract([]byte(page), "", Main)
		if err != nil {
			t.Fatal(err)
		}
		if txt.Mode != Main || txt.Body != tt.want {
			t.Errorf("%s: %s mode, body\n%s\nwant main mode, body\n%s", tt.name, txt.Mode, txt.Body, tt.want)
		}
	}
}
