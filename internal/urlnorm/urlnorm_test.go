package urlnorm_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"already canonical", "https://example.com/a/b?x=1", "https://example.com/a/b?x=1"},
		{"scheme and host case", "HTTPS://Example.COM/Path", "https://example.com/Path"},
		{"empty path", "http://example.com", "http://example.com/"},
		{"default http port", "http://example.com:80/x", "http://example.com/x"},
		{"default https port", "https://example.com:443/x", "https://example.com/x"},
		{"other port kept", "http://example.com:8080/x", "http://example.com:8080/x"},
		{"leading zeros in port", "http://example.com:08080/", "http://example.com:8080/"},
		{"empty port", "http://example.com:/x", "http://example.com/x"},
		{"https port on http kept", "http://example.com:443/", "http://example.com:443/"},
		{"fragment dropped", "https://example.com/a#top", "https://example.com/a"},
		{"empty query kept", "https://example.com/a?", "https://example.com/a?"},
		{"empty query kept before a fragment", "https://example.com/a?#top", "https://example.com/a?"},
		{"empty query on the root", "https://example.com?", "https://example.com/?"},
		{"query order kept", "https://example.com/?b=2&a=1", "https://example.com/?b=2&a=1"},
		{"dot segments", "https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"dot dot above root", "https://example.com/../../etc/passwd", "https://example.com/etc/passwd"},
		{"encoded dots", "https://example.com/a/%2e%2E/b", "https://example.com/b"},
		{"trailing dot segment", "https://example.com/a/b/.", "https://example.com/a/b/"},
		{"trailing dotdot segment", "https://example.com/a/b/..", "https://example.com/a/"},
		{"unreserved decoded", "https://example.com/%7Euser/%41%2d", "https://example.com/~user/A-"},
		{"hex upper-cased", "https://example.com/a%2fb", "https://example.com/a%2Fb"},
		{"encoded slash kept", "https://example.com/a%2Fb/c", "https://example.com/a%2Fb/c"},
		{"space encoded", "https://example.com/a b", "https://example.com/a%20b"},
		{"non-ascii path encoded", "https://example.com/café", "https://example.com/caf%C3%A9"},
		{"stray percent", "https://example.com/100%/x%zz", "https://example.com/100%25/x%25zz"},
		{"query escapes", "https://example.com/?q=a%2bb&r=%7e", "https://example.com/?q=a%2Bb&r=~"},
		{"query space", "https://example.com/?q=a b", "https://example.com/?q=a%20b"},
		{"idn host", "https://Bücher.example/", "https://xn--bcher-kva.example/"},
		{"punycode host kept", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"},
		{"trailing host dot", "https://example.com./", "https://example.com/"},
		{"ipv4", "http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
		{"ipv6 canonical", "http://[2001:DB8:0:0::1]/", "http://[2001:db8::1]/"},
		{"ipv6 with port", "http://[::1]:8080/", "http://[::1]:8080/"},
		{"surrounding space", "  https://example.com/x \n", "https://example.com/x"},
		{"embedded newline", "https://exa\nmple.com/x\t", "https://example.com/x"},
		{"underscore host", "https://my_host.example/", "https://my_host.example/"},
		{"double slash kept", "https://example.com//a//b", "https://example.com//a//b"},
		{"sub-delims kept", "https://example.com/a;b=c,d!$'()*+@:", "https://example.com/a;b=c,d!$'()*+@:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := urlnorm.Normalize(tt.in)
			if err != nil {
				t.Fatalf("Normalize(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := urlnorm.Normalize(got)
			if err != nil || again != got {
				t.Errorf("not idempotent: Normalize(%q) = %q, %v", got, again, err)
			}
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	tests := []struct {
		name, in, wantMsg string
	}{
		{"empty", "   ", "empty"},
		{"relative", "/a/b", "not absolute"},
		{"ftp", "ftp://example.com/", `scheme "ftp" not supported`},
		{"javascript", "javascript:alert(1)", `scheme "javascript" not supported`},
		{"mailto", "mailto:a@example.com", `scheme "mailto" not supported`},
		{"opaque", "http:example.com", "no host"},
		{"no host", "http:///path", "no host"},
		{"userinfo", "https://user:pw@example.com/", "user information"},
		{"bad port", "http://example.com:99999/", "bad port"},
		{"non-numeric port", "http://example.com:abc/", "invalid port"},
		{"bad ipv6", "http://[zz::1]/", "invalid host"},
		{"ipv6 zone", "http://[fe80::1%25eth0]/", "zone"},
		{"control byte", "http://example.com/a\x00b", "invalid control character"},
		{"bad host char", "http://exa mple.com/", "invalid character"},
		{"empty label", "http://a..b/", "bad host name"},
		{"too long", "https://example.com/" + strings.Repeat("a", urlnorm.MaxLength), "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := urlnorm.Normalize(tt.in)
			if err == nil {
				t.Fatalf("Normalize(%q) = %q, want error", tt.in, got)
			}
			if !errors.Is(err, urlnorm.ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 400 {
				t.Errorf("error is not one short line: %q", err)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a/b?x=1#f", "HTTP://EXAMPLE.com:80/%7e/../a b", "http://[::1]:8080/",
		"https://Bücher.example/ä?ö=ü", "http://a/%2e%2E/%2F/%zz", "http://a/./../.", "https://x.test/?a=%41&b",
		"https://x.test/another/path?", "http://x.test/a??#f",
	} {
		f.Add(s)
	}
	short := func(s string) string {
		if len(s) > 80 {
			return s[:80] + "…"
		}
		return s
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := urlnorm.Normalize(in)
		if err != nil {
			if !errors.Is(err, urlnorm.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		again, err := urlnorm.Normalize(got)
		if err != nil {
			t.Fatalf("Normalize(%q) = %q, which does not normalise again: %v", short(in), short(got), err)
		}
		if again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", short(in), short(got), short(again))
		}
		if !strings.HasPrefix(got, "http://") && !strings.HasPrefix(got, "https://") {
			t.Fatalf("Normalize(%q) = %q: not http(s)", short(in), short(got))
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("Normalize(%q) = %q, which url.Parse refuses: %v", short(in), short(got), err)
		}
		// The query as written: an empty one is not dropped.
		if in, err := url.Parse(in); err == nil && (in.ForceQuery || in.RawQuery != "") && !u.ForceQuery && u.RawQuery == "" {
			t.Fatalf("Normalize(%q) = %q: the query was dropped", short(in.String()), short(got))
		}
		p := u.EscapedPath()
		if u.Fragment != "" || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") ||
			strings.Contains(p, "/./") || strings.HasSuffix(p, "/.") || !strings.HasPrefix(p, "/") {
			t.Fatalf("Normalize(%q) = %q: fragment or dot segment left", short(in), short(got))
		}
	})
}
