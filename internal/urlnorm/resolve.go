package urlnorm

import (
	"fmt"
	"net/url"
	"strings"
)

// Resolve resolves ref — an href or a Location header as written — against base the way browsers do,
// and returns the canonical form of the result. Before parsing it forgives what browsers forgive:
// surrounding spaces and control characters, embedded tabs and newlines, backslashes before the query
// (Windows-authored pages rely on them), a "%" that starts no valid escape, and a relative path whose
// first segment holds a colon ("2024:report.html"), which url.Parse would read as a scheme.
func Resolve(base *url.URL, ref string) (*url.URL, error) {
	u, _, err := resolve(base, ref)
	return u, err
}

// ResolveString is Resolve returning the canonical URL as a string, for callers that need only
// that: it saves writing the URL out again.
func ResolveString(base *url.URL, ref string) (string, error) {
	_, s, err := resolve(base, ref)
	return s, err
}

func resolve(base *url.URL, ref string) (*url.URL, string, error) {
	r := cleanRef(ref)
	switch {
	case hasHTTPScheme(r):
		return parse(r) // already absolute: one parse instead of two
	case strings.HasPrefix(r, "//"):
		// A network-path reference. url.Parse reads a bare "//" as the page itself; browsers and
		// RFC 3986 see a URL without a host.
		return parse(base.Scheme + ":" + r)
	}
	u, err := base.Parse(r)
	if err != nil {
		return nil, "", fmt.Errorf("%w %q: %v", ErrInvalid, truncate(ref), err)
	}
	return parse(u.String())
}

func cleanRef(s string) string {
	s = clean(s)
	end := strings.IndexAny(s, "?#")
	if end < 0 {
		end = len(s)
	}
	if strings.IndexByte(s[:end], '\\') >= 0 {
		s = strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
	}
	if colon := strings.IndexByte(s, ':'); colon >= 0 && !validScheme(s[:colon]) &&
		strings.IndexAny(s[:colon], "/?#") < 0 {
		s = "./" + s
	}
	return s
}

// validScheme reports whether s is an RFC 3986 scheme: a letter, then letters, digits, "+", "-", ".".
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

func hasHTTPScheme(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "http:") ||
		len(s) >= 6 && strings.EqualFold(s[:6], "https:")
}
