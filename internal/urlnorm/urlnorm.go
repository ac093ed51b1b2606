// Package urlnorm turns URLs into the one canonical form strata stores, compares and fetches.
//
// Every URL that enters strata — a seed, a link, a redirect target — goes through Normalize, so two
// spellings of the same resource share one row in the store and one directory in the archive. The rules
// follow RFC 3986 §6.2.2 (syntax-based normalisation) plus the scheme-based steps of §6.2.3 for http and
// https, in the conservative subset that never changes which resource a server returns:
//
//   - scheme and host are lower-cased; internationalised host names become punycode (UTS #46);
//     a trailing dot on the host is dropped; IPv6 literals are written in their canonical form;
//   - the default port (80 for http, 443 for https) and an empty port are dropped;
//   - the fragment and user information are removed or refused (see Normalize);
//   - percent-encoding is normalised: escapes of unreserved characters are decoded, the others are
//     written with upper-case hex, and bytes that may not appear raw are encoded;
//   - "." and ".." path segments are resolved, including their percent-encoded spellings, so a path
//     can never climb above the root;
//   - an empty path becomes "/".
//
// Query parameters keep their order: sorting them is a common trick, but some servers give order
// meaning, and the URL filters decide separately which parameters to strip. An empty query is kept
// too ("/a?" is not "/a"): RFC 3986 §6.2.3 does not license dropping an empty component's delimiter,
// and the URL strata requests and matches against robots.txt must be the one the site wrote — a
// robots.txt may disallow "/a?" and allow "/a".
package urlnorm

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrInvalid is wrapped by every error Normalize returns, so callers can tell a bad URL from other failures.
var ErrInvalid = errors.New("invalid URL")

// MaxLength is the longest URL, in bytes, that Normalize accepts. Longer strings are refused before
// parsing; the URL filters usually reject far shorter ones (2,048 bytes by default).
const MaxLength = 16 << 10

// idnaProfile maps and validates internationalised host names the way browsers do for lookups.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.StrictDomainName(false), // hosts such as "my_host" exist in the wild; the fetcher decides if they resolve
)

// Normalize returns the canonical form of the absolute http or https URL raw, or an error wrapping
// ErrInvalid that names the problem. Leading and trailing white space and embedded tabs and newlines are
// ignored, as browsers do. URLs with user information are refused: credentials do not belong in a
// crawl table, and "http://trusted.example@evil.example/" is a classic way to mislead.
func Normalize(raw string) (string, error) {
	_, s, err := parse(raw)
	return s, err
}

// Parse is Normalize returning the parsed canonical URL. The result's String method yields exactly
// what Normalize returns.
func Parse(raw string) (*url.URL, error) {
	u, _, err := parse(raw)
	return u, err
}

// parse is Parse that returns the canonical URL's string too, which it computes anyway.
func parse(raw string) (*url.URL, string, error) {
	if len(raw) > MaxLength {
		return nil, "", invalid(truncate(raw), fmt.Sprintf("longer than %d bytes", MaxLength))
	}
	s := clean(raw)
	if s == "" {
		return nil, "", invalid(raw, "empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", invalid(raw, err.Error())
	}
	return canonical(raw, u)
}

// canonical returns the canonical form of u, which url.Parse read from raw.
func canonical(raw string, u *url.URL) (*url.URL, string, error) {
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "":
		return nil, "", invalid(raw, "not absolute (no scheme)")
	case scheme != "http" && scheme != "https":
		return nil, "", invalid(raw, fmt.Sprintf("scheme %q not supported (http and https only)", scheme))
	case u.Opaque != "":
		return nil, "", invalid(raw, "no host (missing \"//\" after the scheme)")
	case u.User != nil:
		return nil, "", invalid(raw, "user information (user:password@) not allowed")
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return nil, "", invalid(raw, err.Error())
	}
	port, err := canonicalPort(scheme, u.Port())
	if err != nil {
		return nil, "", invalid(raw, err.Error())
	}
	if port != "" {
		if hostPortIs(u.Host, host, port) {
			host = u.Host // written canonically already: no need to build it again
		} else {
			host = joinHostPort(host, port)
		}
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	path := resolveDots(normalizeEscapes(u.EscapedPath(), pathAllowed))
	query := ""
	if u.RawQuery != "" {
		query = normalizeEscapes(u.RawQuery, queryAllowed)
	}
	out := &url.URL{Scheme: scheme, Host: host, RawQuery: query, ForceQuery: u.ForceQuery && query == ""}
	if err := setPath(out, path); err != nil {
		return nil, "", invalid(raw, err.Error())
	}
	// Encoding can triple a URL's length; checking the result keeps Normalize idempotent.
	str := out.String()
	if len(str) > MaxLength {
		return nil, "", invalid(raw, fmt.Sprintf("longer than %d bytes once encoded", MaxLength))
	}
	return out, str, nil
}

// clean drops what browsers drop before parsing — surrounding C0 controls and spaces, and every tab,
// line feed and carriage return inside the string — and escapes a "%" that starts no valid escape, which
// browsers also tolerate but url.Parse refuses.
func clean(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hostSlot is one entry of hostCache: a host as written and its canonical form.
type hostSlot struct{ in, out string }

// hostCache remembers recent successes of canonicalHost, which is pure: the links of a page go to a
// handful of hosts, and IDNA mapping (twice) costs more than the rest of resolving a link.
// It is direct-mapped by a hash of the host, so it stays small whatever the crawl.
var (
	hostCache     [256]atomic.Pointer[hostSlot]
	hostCacheSeed = maphash.MakeSeed()
)

// maxCachedHost is the longest host cached: names are at most 253 bytes, and a longer host
// (percent-encoded, say) is rare enough to map each time.
const maxCachedHost = 256

func canonicalHost(host string) (string, error) {
	if len(host) > maxCachedHost {
		return mapHost(host)
	}
	slot := &hostCache[maphash.String(hostCacheSeed, host)%uint64(len(hostCache))]
	if e := slot.Load(); e != nil && e.in == host {
		return e.out, nil
	}
	out, err := mapHost(host)
	if err == nil {
		slot.Store(&hostSlot{in: strings.Clone(host), out: out})
	}
	return out, err
}

// mapHost is canonicalHost without the cache.
func mapHost(host string) (string, error) {
	if host == "" {
		return "", errors.New("no host")
	}
	if strings.Contains(host, ":") || strings.HasPrefix(host, "[") {
		addr, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil || !addr.Is6() {
			return "", fmt.Errorf("bad IPv6 address %q", host)
		}
		if addr.Zone() != "" {
			return "", fmt.Errorf("IPv6 zone in host %q not allowed", host)
		}
		return addr.String(), nil
	}
	if h, err := url.PathUnescape(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	if !utf8.ValidString(host) {
		return "", fmt.Errorf("bad host name %q: not UTF-8", host)
	}
	ascii, err := idnaProfile.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("bad host name %q: %v", host, err)
	}
	// IDNA mapping can turn other full stops (such as "。") into a trailing ".".
	ascii = strings.TrimSuffix(strings.ToLower(ascii), ".")
	if ascii == "" {
		return "", errors.New("no host")
	}
	for i := 0; i < len(ascii); i++ {
		c := ascii[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", fmt.Errorf("bad host name %q: character %q not allowed", host, c)
		}
	}
	if strings.Contains(ascii, "..") || strings.HasPrefix(ascii, ".") || strings.HasSuffix(ascii, ".") {
		return "", fmt.Errorf("bad host name %q: empty label", host)
	}
	// A canonical host must map to itself, or Normalize would not be idempotent; the IDNA
	// library accepts some inputs whose punycode it then refuses to decode.
	if again, err := idnaProfile.ToASCII(ascii); err != nil || again != ascii {
		return "", fmt.Errorf("bad host name %q: not a stable IDNA name", host)
	}
	return ascii, nil
}

func canonicalPort(scheme, port string) (string, error) {
	if port == "" {
		return "", nil
	}
	if n, ok := plainPort(port); ok {
		if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
			return "", nil
		}
		return port, nil // what strconv.Itoa would write
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("bad port %q (1-65535)", port)
	}
	if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
		return "", nil
	}
	return strconv.Itoa(n), nil // drops leading zeros
}

// plainPort returns the value of port if it is written canonically: 1 to 5 digits without a
// leading zero, at most 65535.
func plainPort(port string) (int, bool) {
	if len(port) == 0 || len(port) > 5 || port[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + int(c-'0')
	}
	return n, n <= 65535
}

// hostPortIs reports whether hostport is joinHostPort(host, port).
func hostPortIs(hostport, host, port string) bool {
	return !strings.Contains(host, ":") && len(hostport) == len(host)+1+len(port) &&
		strings.HasPrefix(hostport, host) && hostport[len(host)] == ':' && strings.HasSuffix(hostport, port)
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// EscapePath writes a path (or part of one) with the escaping Normalize gives paths, so that a pattern
// written by a person compares equal with the paths of normalised URLs.
func EscapePath(s string) string { return normalizeEscapes(s, pathAllowed) }

// pathAllowed reports whether c may appear unencoded in a path: RFC 3986 pchar plus "/".
func pathAllowed(c byte) bool {
	return unreserved(c) || subDelim(c) || c == ':' || c == '@' || c == '/'
}

// queryAllowed reports whether c may appear unencoded in a query.
func queryAllowed(c byte) bool { return pathAllowed(c) || c == '?' }

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func subDelim(c byte) bool {
	return strings.IndexByte("!$&'()*+,;=", c) >= 0
}

const upperHex = "0123456789ABCDEF"

// normalizeEscapes rewrites an escaped string so that each byte has exactly one spelling: escapes of
// unreserved bytes are decoded, other escapes use upper-case hex, a "%" that starts no valid escape
// becomes "%25", and bytes outside allowed are encoded.
func normalizeEscapes(s string, allowed func(byte) bool) string {
	if canonicalEscapes(s, allowed) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if unreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[v>>4])
				b.WriteByte(upperHex[v&15])
			}
			continue
		}
		if c != '%' && allowed(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}

// canonicalEscapes reports whether normalizeEscapes would return s as it is: s has no "%" and
// only allowed bytes, as most paths and queries.
func canonicalEscapes(s string, allowed func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || !allowed(c) {
			return false
		}
	}
	return true
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// resolveDots removes "." and ".." segments (RFC 3986 §5.2.4) from an escaped path whose escapes are
// already normalised, so "%2E" has become ".". The result starts with "/" and never climbs above it.
func resolveDots(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	if !strings.Contains(p, "/.") {
		return p // every segment follows a "/": none is "." or ".."
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

// setPath stores an escaped path in u so that u.String() writes it back byte for byte.
func setPath(u *url.URL, escaped string) error {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return fmt.Errorf("bad path escape: %v", err)
	}
	u.Path = p
	u.RawPath = escaped
	if u.EscapedPath() != escaped {
		// url.URL only honours RawPath when it is a valid encoding of Path; ours always is, so this
		// would be a bug in normalizeEscapes rather than bad input.
		return fmt.Errorf("internal: path %q does not round-trip", escaped)
	}
	return nil
}

func invalid(raw, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalid, truncate(raw), why)
}

// truncate keeps error messages one readable line even for hostile multi-kilobyte URLs.
func truncate(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
