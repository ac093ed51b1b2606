package pagetext

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"
)

// TestExtractTree checks that a tree the caller parsed gives the text Extract gives, on every
// fixture and real page in both modes, and on a page that is not valid UTF-8.
func TestExtractTree(t *testing.T) {
	pages := map[string][]byte{"not utf-8": []byte("<title>Caf\xe9</title><p>cr\xe8me br\xfbl\xe9e and more words here</p>")}
	for _, name := range fixtureNames {
		pages[name] = readFixture(t, name)
	}
	for _, pg := range readCorpus(t) {
		b, err := os.ReadFile(filepath.Join("testdata", "realpages", pg.name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		pages["real/"+pg.name] = b
	}
	for name, src := range pages {
		for _, mode := range []Mode{Full, Main} {
			want, err := Extract(src, "", mode)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(bytes.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ExtractTree(doc, src, "", mode)
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != want.Title || got.Body != want.Body || got.Mode != want.Mode || got.Alt() != want.Alt() {
				t.Errorf("%s, %s: ExtractTree differs from Extract:\n got %q (%s)\nwant %q (%s)", name, mode,
					head(got.Body), got.Mode, head(want.Body), want.Mode)
			}
		}
	}
	if _, err := ExtractTree(&html.Node{Type: html.DocumentNode}, nil, "", "both"); err == nil {
		t.Error("ExtractTree accepted an unknown mode")
	}
}

func head(s string) string { return s[:min(len(s), 200)] }
