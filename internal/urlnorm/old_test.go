package urlnorm

// This file keeps Normalize and Resolve as they were before issue 19 took allocations out of
// them, as oldNormalize and oldResolve, to check that they give the same URLs and errors.
import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile maps and validates internationalised host names the way browsers do for lookups.
var oldIdnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.StrictDomainName(false), // hosts such as "my_host" exist in the wild; the fetcher decides if they resolve
)

// Normalize returns the canonical form of the absolute http or https URL raw, or an error wrapping
// ErrInvalid that names the problem. Leading and trailing white space and embedded tabs and newlines are
// ignored, as browsers do. URLs with user information are refused: credentials do not belong in a
// crawl table, and "http://trusted.example@evil.example/" is a classic way to mislead.
func oldNormalize(raw string) (string, error) {
	u, err := oldParse(raw)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// Parse is Normalize returning the parsed canonical URL. The result's String method yields exactly
// what Normalize returns.
func oldParse(raw string) (*url.URL, error) {
	if len(raw) > MaxLength {
		return nil, oldInvalid(oldTruncate(raw), fmt.Sprintf("longer than %d bytes", MaxLength))
	}
	s := oldClean(raw)
	if s == "" {
		return nil, oldInvalid(raw, "empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, oldInvalid(raw, err.Error())
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "":
		return nil, oldInvalid(raw, "not absolute (no scheme)")
	case scheme != "http" && scheme != "https":
		return nil, oldInvalid(raw, fmt.Sprintf("scheme %q not supported (http and https only)", scheme))
	case u.Opaque != "":
		return nil, oldInvalid(raw, "no host (missing \"//\" after the scheme)")
	case u.User != nil:
		return nil, oldInvalid(raw, "user information (user:password@) not allowed")
	}
	host, err := oldCanonicalHost(u.Hostname())
	if err != nil {
		return nil, oldInvalid(raw, err.Error())
	}
	port, err := oldCanonicalPort(scheme, u.Port())
	if err != nil {
		return nil, oldInvalid(raw, err.Error())
	}
	if port != "" {
		host = oldJoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	path := oldResolveDots(oldNormalizeEscapes(u.EscapedPath(), oldPathAllowed))
	query := ""
	if u.RawQuery != "" {
		query = oldNormalizeEscapes(u.RawQuery, oldQueryAllowed)
	}
	out := &url.URL{Scheme: scheme, Host: host, RawQuery: query, ForceQuery: u.ForceQuery && query == ""}
	if err := oldSetPath(out, path); err != nil {
		return nil, oldInvalid(raw, err.Error())
	}
	// Encoding can triple a URL's length; checking the result keeps Normalize idempotent.
	if n := len(out.String()); n > MaxLength {
		return nil, oldInvalid(raw, fmt.Sprintf("longer than %d bytes once encoded", MaxLength))
	}
	return out, nil
}

// clean drops what browsers drop before parsing — surrounding C0 controls and spaces, and every tab,
// line feed and carriage return inside the string — and escapes a "%" that starts no valid escape, which
// browsers also tolerate but url.Parse refuses.
func oldClean(raw string) string {
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
		if s[i] == '%' && !(i+2 < len(s) && oldIshex(s[i+1]) && oldIshex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func oldCanonicalHost(host string) (string, error) {
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
	ascii, err := oldIdnaProfile.ToASCII(host)
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
	if again, err := oldIdnaProfile.ToASCII(ascii); err != nil || again != ascii {
		return "", fmt.Errorf("bad host name %q: not a stable IDNA name", host)
	}
	return ascii, nil
}

func oldCanonicalPort(scheme, port string) (string, error) {
	if port == "" {
		return "", nil
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

func oldJoinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// EscapePath writes a path (or part of one) with the escaping Normalize gives paths, so that a pattern
// written by a person compares equal with the paths of normalised URLs.
func oldEscapePath(s string) string { return oldNormalizeEscapes(s, oldPathAllowed) }

// pathAllowed reports whether c may appear unencoded in a path: RFC 3986 pchar plus "/".
func oldPathAllowed(c byte) bool {
	return oldUnreserved(c) || oldSubDelim(c) || c == ':' || c == '@' || c == '/'
}

// queryAllowed reports whether c may appear unencoded in a query.
func oldQueryAllowed(c byte) bool { return oldPathAllowed(c) || c == '?' }

func oldUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func oldSubDelim(c byte) bool {
	return strings.IndexByte("!$&'()*+,;=", c) >= 0
}

// normalizeEscapes rewrites an escaped string so that each byte has exactly one spelling: escapes of
// unreserved bytes are decoded, other escapes use upper-case hex, a "%" that starts no valid escape
// becomes "%25", and bytes outside allowed are encoded.
func oldNormalizeEscapes(s string, allowed func(byte) bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && oldIshex(s[i+1]) && oldIshex(s[i+2]) {
			v := oldUnhex(s[i+1])<<4 | oldUnhex(s[i+2])
			i += 2
			if oldUnreserved(v) {
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

func oldIshex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func oldUnhex(c byte) byte {
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
func oldResolveDots(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
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
func oldSetPath(u *url.URL, escaped string) error {
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

func oldInvalid(raw, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalid, oldTruncate(raw), why)
}

// truncate keeps error messages one readable line even for hostile multi-kilobyte URLs.
func oldTruncate(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// Resolve resolves ref — an href or a Location header as written — against base the way browsers do,
// and returns the canonical form of the result. Before parsing it forgives what browsers forgive:
// surrounding spaces and control characters, embedded tabs and newlines, backslashes before the query
// (Windows-authored pages rely on them), a "%" that starts no valid escape, and a relative path whose
// first segment holds a colon ("2024:report.html"), which url.Parse would read as a scheme.
func oldResolve(base *url.URL, ref string) (*url.URL, error) {
	r := oldCleanRef(ref)
	switch {
	case oldHasHTTPScheme(r):
		return oldParse(r) // already absolute: one parse instead of two
	case strings.HasPrefix(r, "//"):
		// A network-path reference. url.Parse reads a bare "//" as the page itself; browsers and
		// RFC 3986 see a URL without a host.
		return oldParse(base.Scheme + ":" + r)
	}
	u, err := base.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrInvalid, oldTruncate(ref), err)
	}
	return oldParse(u.String())
}

func oldCleanRef(s string) string {
	s = oldClean(s)
	end := strings.IndexAny(s, "?#")
	if end < 0 {
		end = len(s)
	}
	if strings.IndexByte(s[:end], '\\') >= 0 {
		s = strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
	}
	if colon := strings.IndexByte(s, ':'); colon >= 0 && !oldValidScheme(s[:colon]) &&
		strings.IndexAny(s[:colon], "/?#") < 0 {
		s = "./" + s
	}
	return s
}

// validScheme reports whether s is an RFC 3986 scheme: a letter, then letters, digits, "+", "-", ".".
func oldValidScheme(s string) bool {
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

func oldHasHTTPScheme(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "http:") ||
		len(s) >= 6 && strings.EqualFold(s[:6], "https:")
}
