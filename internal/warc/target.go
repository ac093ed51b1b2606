package warc

import (
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// checkTarget refuses a WARC-Target-URI that is not a URL at all, as gowarc's record builder did.
// The WHATWG parse that decides it cost 0.7 % of a crawl (docs/performance.md, section 10, "After
// read19") for URLs strata had already normalised, so a URL of the plain shape strata writes —
// http or https, a lower-case host name or dotted quad, a port in range, printable ASCII after
// it — is taken without it: the parse cannot fail on one. Anything else (an export's URLs, a
// server's Location) still goes through the parse.
func checkTarget(u string) error {
	if plainURL(u) {
		return nil
	}
	_, err := whatwg.NewParser().Parse(u)
	return err
}

// plainURL reports whether u has a shape on which the WHATWG URL parser cannot fail. It may say
// no to a valid URL (the parse then decides); it must never say yes to one the parse refuses
// (TestPlainURLParses, FuzzPlainURL).
func plainURL(u string) bool {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(u, "http://"); !ok {
			return false
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	for i := 0; i < len(tail); i++ {
		if c := tail[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	host, port, hasPort := strings.Cut(authority, ":")
	if hasPort && !plainPort(port) {
		return false
	}
	return plainHost(host)
}

// plainPort is 1 to 5 digits, without a leading zero, at most 65535.
func plainPort(p string) bool { return p != "0" && decimal(p, 5, 65535) }

// decimal is 1 to width digits without a leading zero ("0" alone is one) whose value is at most
// max.
func decimal(s string, width, max int) bool {
	if len(s) == 0 || len(s) > width || len(s) > 1 && s[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n <= max
}

// plainHost is a dotted quad of decimal numbers up to 255 without leading zeros, or labels of
// lower-case letters, digits and inner hyphens, at most 63 bytes each, the last starting with a
// letter (so it is no number for the IPv4 parser to refuse), none starting "xn--" (the IDNA
// decoder checks those).
func plainHost(h string) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	if dottedQuad(h) {
		return true
	}
	labels := strings.Split(h, ".")
	for i, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.HasPrefix(l, "xn--") {
			return false
		}
		for j := 0; j < len(l); j++ {
			c := l[j]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
		if i == len(labels)-1 && !('a' <= l[0] && l[0] <= 'z') {
			return false
		}
	}
	return true
}

func dottedQuad(h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if !decimal(p, 3, 255) {
			return false
		}
	}
	return true
}
