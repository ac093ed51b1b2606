package linkextract

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

const newsURL = "https://news.example.com/politics/2024/05/council-budget-vote-delayed"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestGolden(t *testing.T) {
	tests := []struct{ name, page, url string }{
		{"news", "news.html", newsURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.url, readFixture(t, tt.page), Options{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, '\n')
			golden := filepath.Join("testdata", tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("Extract(%s) differs from %s (go test -update rewrites it); got:\n%s", tt.page, golden, out)
			}
		})
	}
}

// TestTokenFallbackMatchesTree checks that the fallback for pages the parser refuses reads a
// well-formed page the way the tree scan does, so the two paths cannot drift apart unnoticed.
func TestTokenFallbackMatchesTree(t *testing.T) {
	src := readFixture(t, "news.html")
	base, err := urlnorm.Parse(newsURL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Extract(newsURL, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s scan
	s.tokens(src)
	got := s.page(base, DefaultMaxLinks)
	// The tree scan ignores SVG and template anchors, which the fallback cannot recognise.
	var links []Link
	for _, l := range got.Links {
		switch l.URL {
		case "https://news.example.com/svg-only-link", "https://news.example.com/%7B%7Bslug%7D%7D":
			continue
		}
		links = append(links, l)
	}
	got.Links = links
	if !reflect.DeepEqual(got, want) {
		t.Errorf("token scan differs from tree scan\n got %s\nwant %s", dump(got), dump(want))
	}
}
