package warc

import (
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// TestPlainURLParses holds the fast path to its promise: every URL it takes, the WHATWG parse
// takes too, and the URLs strata writes are taken.
func TestPlainURLParses(t *testing.T) {
	for _, tc := range []struct {
		url   string
		plain bool
	}{
		{"http://127.0.1.1:42925/a/b?c=d#e", true},
		{"https://example.com/", true},
		{"https://www.example-site.co.uk/path/to%20x?q=1&r=%zz", true},
		{"http://a.b1/", true},
		{"http://example.com", true},
		{"http://example.com:65535/", true},
		{"http://example.com:65536/", false}, // the parse refuses it
		{"http://1.2.3.999/", false},         // the parse refuses it
		{"http://1.2.3.4.5/", false},         // a number last: the IPv4 parser decides
		{"http://example.com./", false},
		{"http://Example.com/", false},
		{"http://xn--nxasmq6b.com/", false},
		{"http://-a.com/", false},
		{"http://user@example.com/", false},
		{"http://example.com/a b", false},
		{"http://example.com/\\x", false},
		{"http://example.com/é", false},
		{"ftp://example.com/", false},
		{"http://", false},
		{"http://:80/", false},
		{"http://[::1]/", false},
		{"http://example.com:080/", false},
		{"http://example.com:/", false},
	} {
		if got := plainURL(tc.url); got != tc.plain {
			t.Errorf("plainURL(%q) = %v, want %v", tc.url, got, tc.plain)
		}
		if tc.plain {
			if _, err := whatwg.NewParser().Parse(tc.url); err != nil {
				t.Errorf("plainURL takes %q, which the parse refuses: %v", tc.url, err)
			}
		}
	}
	if err := checkTarget("http://1.2.3.999/"); err == nil {
		t.Errorf("checkTarget takes http://1.2.3.999/")
	}
}

func FuzzPlainURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/a?b#c", "https://a.b.c/", "http://1.2.3.999/", "http://a-b.c:65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if !plainURL(u) {
			return
		}
		if _, err := whatwg.NewParser().Parse(u); err != nil {
			t.Fatalf("plainURL takes %q, which the parse refuses: %v", u, err)
		}
	})
}
