package pagetext

import (
	"testing"
	"unicode/utf8"
)

// FuzzExtract: any bytes give valid UTF-8 text in the promised format, the
// same text twice, and no panic, in both modes.
//
//	go test ./internal/pagetext/ -run '^$' -fuzz FuzzExtract -fuzztime 30s
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"", "<p>x", "<title>t</title><p>a<br><br>b", "<pre>\ta\n  b</pre>", "<table><tr><td>1<td colspan=99999>2",
		"<ul><li>a<ul><li>b</ul></ul>", "<div hidden>x</div><span style=display:none>y</span>z",
		"caf\xe9 \xff\xfe", "<meta charset=shift_jis>\x93\xfa", "\xfe\xff\x00<\x00p", "<svg><title>x</title></svg>",
		"<a>1</a><a>2</a>", "<p>&#0;&#xD800;&#x110000;&nbsp;&amp", "<table><caption>c</caption><tr><td><p>x</p><p>y</p></td></tr></table>",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	// The fixtures are not seeds: minimising a 15 KB input at a few
	// milliseconds per run (Main) stalls the fuzzer for a minute.
	f.Fuzz(func(t *testing.T, page []byte, main bool) {
		mode := Full
		if main {
			mode = Main
		}
		a, err := Extract(page, "https://example.org/", mode)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(a.Title) {
			t.Errorf("title is not valid UTF-8: %q", a.Title)
		}
		checkInvariants(t, a.Body)
		if a.Mode != Full && a.Mode != Main {
			t.Errorf("mode %q", a.Mode)
		}
		b, _ := Extract(page, "https://example.org/", mode)
		if a.Title != b.Title || a.Body != b.Body || a.Mode != b.Mode || a.Alt() != b.Alt() {
			t.Errorf("not deterministic:\n%q\n%q", a.Body, b.Body)
		}
	})
}
