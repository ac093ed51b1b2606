package urlnorm

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// diffPieces are pieces of URLs and hrefs that exercise every step of Parse and Resolve.
var diffPieces = []string{"http://", "https://", "HTTP://", "//", "/", "./", "../", ".", "..", "%2e", "%2E%2e", "a", "Z",
	"story", "-", "_", "~", "?", "#", "&", "=", "+", ";", ":", "@", "!", "$", "'", "(", "*", ",", "%", "%41", "%7e",
	"%7E", "%zz", "%2F", "%25", "%c3%a9", " ", "\t", "\n", "\\", "é", "ü", "東京", "\x00", "\x7f", "\xff", "[", "]",
	"[::1]", "[2001:DB8::1]", "[fe80::1%25eth0]", "127.0.1.5", "example.com", "Example.COM.", "xn--bcher-kva",
	"xn--zz", "bücher.de", "a..b", "-x", "x-", "ab--cd", "my_host", ":80", ":443", ":8080", ":0", ":00080", ":+80",
	":65536", ":", "user@", "u:p@", "mailto:", "javascript:", "2024:", "。", "ß", "\u200d", "ＡＢ"}

// randomURL joins n random pieces, most often after a scheme and a host.
func randomURL(r *rand.Rand, n int) string {
	var b strings.Builder
	if r.IntN(3) > 0 {
		b.WriteString([]string{"http://", "https://", "HTTP://", "//", "/", ""}[r.IntN(6)])
		b.WriteString([]string{"127.0.1.5", "example.com", "Example.COM.", "bücher.de", "[::1]", "xn--bcher-kva.example", "a"}[r.IntN(7)])
		b.WriteString([]string{"", "", ":80", ":443", ":8080", ":0080", ":+1", ":x"}[r.IntN(8)])
	}
	for range n {
		b.WriteString(diffPieces[r.IntN(len(diffPieces))])
	}
	return b.String()
}

// sameResult reports whether two results of Resolve or Parse agree: the same URL, or errors with
// the same message.
func sameResult(u *url.URL, err error, v *url.URL, verr error) bool {
	if err != nil || verr != nil {
		return err != nil && verr != nil && err.Error() == verr.Error()
	}
	return u.String() == v.String()
}

// TestMatchesOld: Normalize and Resolve give the URLs and errors of the implementation they
// replaced, on random URLs and hrefs against several bases.
func TestMatchesOld(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 1))
	var bases []*url.URL
	for _, s := range []string{"http://127.0.1.5:41627/story/abc-river", "https://example.com/dir/page.html?q=1",
		"http://[::1]:8080/", "https://xn--bcher-kva.example/a/b/c/", "http://example.com"} {
		u, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, u)
	}
	for i := range 20000 {
		raw := randomURL(r, r.IntN(8))
		got, err := Normalize(raw)
		want, werr := oldNormalize(raw)
		if got != want || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("Normalize(%q) = %q, %v; want %q, %v", raw, got, err, want, werr)
		}
		base := bases[i%len(bases)]
		u, err := Resolve(base, raw)
		v, verr := oldResolve(base, raw)
		if !sameResult(u, err, v, verr) {
			t.Fatalf("Resolve(%s, %q) = %v, %v; want %v, %v", base, raw, u, err, v, verr)
		}
		if s, serr := ResolveString(base, raw); (serr == nil) != (err == nil) || err == nil && s != u.String() {
			t.Fatalf("ResolveString(%s, %q) = %q, %v; Resolve gives %v, %v", base, raw, s, serr, u, err)
		}
	}
}

// FuzzMatchesOld: Normalize and Resolve give the old results on any input.
func FuzzMatchesOld(f *testing.F) {
	f.Add("http://127.0.1.5:41627/story/abc", "../x")
	f.Add("https://Example.COM/a/./b/../c?%7e#f", "//bücher.de:443/%2e%2E/x")
	f.Fuzz(func(t *testing.T, raw, ref string) {
		got, err := Normalize(raw)
		want, werr := oldNormalize(raw)
		if got != want || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("Normalize(%q) = %q, %v; want %q, %v", raw, got, err, want, werr)
		}
		if err != nil {
			return
		}
		base, _ := Parse(raw)
		u, err := Resolve(base, ref)
		v, verr := oldResolve(base, ref)
		if !sameResult(u, err, v, verr) {
			t.Fatalf("Resolve(%s, %q) = %v, %v; want %v, %v", base, ref, u, err, v, verr)
		}
	})
}

// BenchmarkResolveOld is BenchmarkResolve for the old implementation, to compare the two under the
// same load.
func BenchmarkResolveOld(b *testing.B) {
	base, _ := url.Parse("http://127.0.1.5:41627/story/abcdefg-river")
	refs := []string{"/story/qwertyu-harbour", "sibling-page", "../up/one?x=1", "https://News.Example.com/2024/05/story",
		"/story/zxcvbnm-forest#top"}
	b.ReportAllocs()
	for b.Loop() {
		for _, ref := range refs {
			if _, err := oldResolve(base, ref); err != nil {
				b.Fatal(err)
			}
		}
	}
}
