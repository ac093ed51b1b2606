//go:build gen

package change

// Regenerates testdata/*.txt from pagetext's fixture pages:
//
//	go test -tags gen -run TestGenerateFixtures ./internal/change/
//
// For each fixture and extraction mode it writes the page text as the
// crawler would store it (NAME.MODE.txt) and the text of the same page on
// another day (NAME.MODE.rot.txt): every digit inside the page's <!--ROT-->
// regions (footer dates, visit counters, "most read" counts, "who is online"
// numbers) replaced by the next digit, as pagetext's quality test does. The
// files are committed so that this package's tests do not depend on the
// extractor; the build tag keeps pagetext out of the normal test build.

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/strata-crawler/strata/internal/pagetext"
)

var rotRE = regexp.MustCompile(`(?s)<!--ROT-->.*?<!--/ROT-->`)

func rotate(page []byte) []byte {
	return rotRE.ReplaceAllFunc(page, func(m []byte) []byte {
		out := bytes.Clone(m)
		for i, c := range out {
			if c >= '0' && c <= '9' {
				out[i] = '0' + (c-'0'+1)%10
			}
		}
		return out
	})
}

func TestGenerateFixtures(t *testing.T) {
	for _, name := range fixtureNames {
		page, err := os.ReadFile(filepath.Join("..", "pagetext", "testdata", name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []pagetext.Mode{pagetext.Full, pagetext.Main} {
			for suffix, src := range map[string][]byte{"": page, ".rot": rotate(page)} {
				txt, err := pagetext.Extract(src, "https://"+name+".example/", mode)
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join("testdata", name+"."+string(mode)+suffix+".txt")
				if err := os.WriteFile(out, []byte(txt.Body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
