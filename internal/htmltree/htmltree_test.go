package htmltree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/strata-crawler/strata/internal/testweb"
)

// diffTrees returns where the trees a and b first differ, or "" when they
// are the same: node types, names, namespaces, data and attributes, in the
// same shape.
func diffTrees(a, b *html.Node) string {
	var walk func(a, b *html.Node, path string) string
	walk = func(a, b *html.Node, path string) string {
		if a.Type != b.Type || a.DataAtom != b.DataAtom || a.Data != b.Data || a.Namespace != b.Namespace {
			return fmt.Sprintf("%s: node %v %q %q, want %v %q %q", path, a.Type, a.Namespace, a.Data, b.Type, b.Namespace, b.Data)
		}
		if len(a.Attr) != len(b.Attr) {
			return fmt.Sprintf("%s: attributes %v, want %v", path, a.Attr, b.Attr)
		}
		for i := range a.Attr {
			if a.Attr[i] != b.Attr[i] {
				return fmt.Sprintf("%s: attributes %v, want %v", path, a.Attr, b.Attr)
			}
		}
		ac, bc := a.FirstChild, b.FirstChild
		for i := 0; ac != nil || bc != nil; i++ {
			p := fmt.Sprintf("%s/%d", path, i)
			if ac == nil || bc == nil {
				return fmt.Sprintf("%s: a child only in one tree (got %v, want %v)", p, ac != nil, bc != nil)
			}
			if ac.Parent != a {
				return p + ": wrong parent"
			}
			if d := walk(ac, bc, p+"("+ac.Data+")"); d != "" {
				return d
			}
			ac, bc = ac.NextSibling, bc.NextSibling
		}
		if a.LastChild != nil && a.LastChild.NextSibling != nil {
			return path + ": last child has a next sibling"
		}
		return ""
	}
	return walk(a, b, "")
}

// checkSame fails t unless Parse and html.Parse agree on src: the same tree, or both an error.
func checkSame(t *testing.T, name string, src []byte) {
	t.Helper()
	want, wantErr := html.Parse(bytes.NewReader(src))
	got, err := Parse(src)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, html.Parse's %v", name, err, wantErr)
	}
	if err != nil {
		return
	}
	if d := diffTrees(got, want); d != "" {
		t.Errorf("%s: %s", name, d)
	}
}

// testPages returns the HTML pages of strata's corpora: pagetext's fixtures and real pages,
// linkextract's, and the article web's.
func testPages(t *testing.T) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	for _, glob := range []string{"../pagetext/testdata/*.html", "../pagetext/testdata/realpages/*.html", "../../linkextract/testdata/*.html"} {
		names, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			pages[n] = b
		}
	}
	lw := testweb.NewArticleWeb(50, 20, 50_000)
	for i := range 3 {
		pages[fmt.Sprintf("article %d", i)] = lw.Page("site1-1.test", i)
	}
	if len(pages) < 50 {
		t.Fatalf("only %d pages found", len(pages))
	}
	return pages
}

func TestParseMatchesXNetHTML(t *testing.T) {
	t.Run("html5lib", func(t *testing.T) {
		b, err := os.ReadFile("testdata/html5lib-inputs.json")
		if err != nil {
			t.Fatal(err)
		}
		var inputs []string
		if err := json.Unmarshal(b, &inputs); err != nil {
			t.Fatal(err)
		}
		if len(inputs) < 1000 {
			t.Fatalf("only %d inputs", len(inputs))
		}
		for i, in := range inputs {
			checkSame(t, fmt.Sprintf("input %d %q", i, in), []byte(in))
		}
	})
	t.Run("tokens", func(t *testing.T) { // what the tokenizer changes touch
		for _, in := range []string{
			"<p ID=a id=b Id=c class=x CLASS=y>x", "<p a\x00b=1 A\x00B=2 \x00=3>x", "<d\x00iv>x</d\x00iv>",
			`<p title="&nGt;x&amp&ampx&copy=1">&nGt;y&amp;&notit;`, "<SCRIPT>x</ScRiPt>y", "<TITLE>a<b></TITLE>",
			"<TextArea>\r\nx</textAREA>", "<p>a\r\nb\rc\r</p>", "<p x=\"a\r\nb\rc\">", "<xmp><p></XMP>",
			"<p/><br/ ><a href=x/>y", "<noscript><p>a</noscript>", "<iframe><b></iframe>", "<plaintext></plaintext>",
			"<a href=\"x\" href=\"y\">z", "x<!--c\x00-->y<!doctype x\x00>", "<math><![CDATA[x]]></math>",
		} {
			checkSame(t, fmt.Sprintf("%q", in), []byte(in))
		}
	})
	t.Run("pages", func(t *testing.T) {
		for name, p := range testPages(t) {
			checkSame(t, name, p)
		}
	})
	t.Run("too deep", func(t *testing.T) {
		checkSame(t, "600 divs", []byte(strings.Repeat("<div>", 600)))
		if _, err := Parse([]byte(strings.Repeat("<div>", 600))); err == nil {
			t.Error("600 open elements parsed")
		}
	})
}

// TestParseKeepsTreesApart: two trees parsed one after the other share no
// memory (the blocks are per parse), so changing one leaves the other as
// it was.
func TestParseKeepsTreesApart(t *testing.T) {
	src := []byte(`<p class=x>one <b>two</b></p>`)
	a, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	pa := a.LastChild.LastChild.FirstChild // html > body > p
	pa.Attr[0].Val = "changed"
	pa.FirstChild.Data = "changed"
	pb := b.LastChild.LastChild.FirstChild
	if pb.Attr[0].Val != "x" || pb.FirstChild.Data != "one " {
		t.Errorf("second tree changed with the first: %v %q", pb.Attr, pb.FirstChild.Data)
	}
}

// FuzzParse: Parse never panics and builds html.Parse's tree for any input.
//
//	go test ./internal/htmltree/ -run '^$' -fuzz FuzzParse -fuzztime 2m
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "<p>x", "<table><tr><td>1<td>2</table>x", "<a href=/a>1<a href=/b>2", "<b><p>x</b>y",
		"<svg viewbox='0 0 1 1'><foreignObject><p>x</svg>", "<math><mi>x</math>", "<template><td>x</template>",
		"<select><option>a<option>b</select>", "<noscript><a href=/n>x</a></noscript>", "<pre>\nx</pre>",
		"<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><p><table>", "a\x00b<frameset>", "<body a=1><body b=2>",
		"a\r\nb\rc\r\r\nd<p>e\r", "<title>t<\r\n</title >x", "<style>a<b</ style></style>", "<textarea>a< /b</textarea",
		"x<", "<<<a>", "<p>a < b <= c</p>", "<script>a<b<!--<script></script>-->x</script>",
		"<script>if (a<b) x--; s='</scr'+'ipt>'</script>y", "<script>a", "<p title='a>b' id=\"c\">d", "<a href=\"x", "<a b='",
		"a &amp; b &notit; &#x41;&lt;c&", "<a title='x&amp;y&z&eacute;&#128;'>&AElig&&#0;</a>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkSame(t, "input", src)
	})
}

// BenchmarkParse: html.Parse against Parse on the article web's 50 KB pages and pagetext's real
// pages.
//
//	go test ./internal/htmltree/ -run '^$' -bench Parse -benchmem
func BenchmarkParse(b *testing.B) {
	lw := testweb.NewArticleWeb(50, 20, 50_000)
	var article [][]byte
	for i := range 8 {
		article = append(article, lw.Page("site1-1.test", i))
	}
	names, err := filepath.Glob("../pagetext/testdata/realpages/*.html")
	if err != nil {
		b.Fatal(err)
	}
	var real [][]byte
	for _, n := range names {
		p, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		real = append(real, p)
	}
	parsers := []struct {
		name  string
		parse func([]byte) (*html.Node, error)
	}{
		{"xnet", func(p []byte) (*html.Node, error) { return html.Parse(bytes.NewReader(p)) }},
		{"htmltree", Parse},
	}
	for _, pages := range []struct {
		name  string
		pages [][]byte
	}{{"article", article}, {"real", real}} {
		for _, p := range parsers {
			b.Run(pages.name+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, page := range pages.pages {
						if _, err := p.parse(page); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pages.pages)), "ns/page")
			})
		}
	}
}
