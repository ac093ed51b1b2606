package urlnorm_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

func TestResolve(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/page.html?q=1")
	tests := []struct{ ref, want string }{
		{"other.html", "https://example.com/dir/other.html"},
		{"  /a  ", "https://example.com/a"},
		{"/a\tb\nc\r", "https://example.com/abc"},
		{`\a\b?x=\y#\z`, `https://example.com/a/b?x=%5Cy`},
		{"50%", "https://example.com/dir/50%25"},
		{"%41%zz", "https://example.com/dir/A%25zz"},
		{"1a:b", "https://example.com/dir/1a:b"},
		{"x y:z", "https://example.com/dir/x%20y:z"},
		{"/p:q", "https://example.com/p:q"},
		{"?a:b", "https://example.com/dir/page.html?a:b"},
		{"../up", "https://example.com/up"},
		{"../../../../up", "https://example.com/up"},
		{"//cdn.example.org/x", "https://cdn.example.org/x"},
		{"HTTP://Other.Example/", "http://other.example/"},
		{"#frag", "https://example.com/dir/page.html?q=1"},
		{"", "https://example.com/dir/page.html?q=1"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := urlnorm.Resolve(base, tt.ref)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.ref, err)
			}
			if got.String() != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.ref, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"javascript:alert(1)", "mailto:a@b.example", "//", "http://user@x/", "a:b"} {
		if got, err := urlnorm.Resolve(base, bad); !errors.Is(err, urlnorm.ErrInvalid) {
			t.Errorf("Resolve(%q) = %v, %v; want ErrInvalid", bad, got, err)
		}
	}
}

// BenchmarkResolve resolves the kinds of href pages carry most: root-relative and relative paths
// on a host with a port (the loopback test webs), and absolute links to other hosts.
//
//	go test ./internal/urlnorm/ -run '^$' -bench . -benchmem -count 5
func BenchmarkResolve(b *testing.B) {
	base, _ := url.Parse("http://127.0.1.5:41627/story/abcdefg-river")
	refs := []string{"/story/qwertyu-harbour", "sibling-page", "../up/one?x=1", "https://News.Example.com/2024/05/story",
		"/story/zxcvbnm-forest#top"}
	b.ReportAllocs()
	for b.Loop() {
		for _, ref := range refs {
			if _, err := urlnorm.Resolve(base, ref); err != nil {
				b.Fatal(err)
			}
		}
	}
}
