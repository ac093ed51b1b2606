package robots

import (
	"strings"
)

// rule is one Allow or Disallow line, compiled for matching.
type rule struct {
	// pattern is the normalised rule without a final '$'; '*' in it is a wildcard, and runs of
	// '*' are collapsed to one, since they match the same.
	pattern string
	// anchored records a final '$': the pattern must match the whole path, not a prefix of it.
	anchored bool
	allow    bool
	// length ranks the rule (RFC 9309 §2.2.2: the most specific match is the one with the most
	// octets): the octets of the normalised rule as written, wildcards and '$' included.
	length int
}

// newRule compiles the non-empty value of an Allow (allow is true) or Disallow line.
func newRule(value string, allow bool) rule {
	// RFC 9309 patterns start with '/'; "*" and "*.gif$" (used in its own §5.1 example) start
	// with a wildcard. Anything else is read as a path whose leading slash was forgotten.
	if value[0] != '/' && value[0] != '*' {
		value = "/" + value
	}
	anchored := strings.HasSuffix(value, "$")
	if anchored {
		value = value[:len(value)-1]
	}
	pattern := normalise(value, true)
	length := len(pattern)
	if anchored {
		length++
	}
	for strings.Contains(pattern, "**") {
		pattern = strings.ReplaceAll(pattern, "**", "*")
	}
	return rule{pattern: pattern, anchored: anchored, allow: allow, length: length}
}

// rankBefore orders a group's rules so that the first one matching a path is the one RFC 9309
// says decides: longest first and, at equal length, Allow before Disallow.
func rankBefore(a, b rule) int {
	switch {
	case a.length != b.length:
		return b.length - a.length
	case a.allow == b.allow:
		return 0
	case a.allow:
		return -1
	default:
		return 1
	}
}

// matches reports whether the rule matches the normalised path, starting at the path's first
// octet. The pattern is split at its '*'s: the first piece must be a prefix of the path, each
// later piece is taken at its leftmost occurrence after the previous one (which leaves the most
// room for the rest, so it finds a match whenever there is one), and with '$' the last piece must
// end the path. Each step only moves forward, so the cost is about O(len(path) + len(pattern)),
// with no backtracking for a hostile pattern to exploit.
func (r *rule) matches(path string) bool {
	return globMatch(r.pattern, r.anchored, path)
}

// globMatch is rule.matches for a bare pattern; see there.
func globMatch(pattern string, anchored bool, s string) bool {
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		if anchored {
			return s == pattern
		}
		return strings.HasPrefix(s, pattern)
	}
	if !strings.HasPrefix(s, pattern[:star]) {
		return false
	}
	s, pattern = s[star:], pattern[star+1:]
	for {
		star = strings.IndexByte(pattern, '*')
		if star < 0 {
			if anchored {
				return strings.HasSuffix(s, pattern)
			}
			return strings.Contains(s, pattern)
		}
		piece := pattern[:star]
		i := strings.Index(s, piece)
		if i < 0 {
			return false
		}
		s, pattern = s[i+len(piece):], pattern[star+1:]
	}
}

// preparePath turns the pathQuery given to Allowed into the normalised form rules match against.
func preparePath(pathQuery string) string {
	if i := strings.IndexByte(pathQuery, '#'); i >= 0 {
		pathQuery = pathQuery[:i] // a fragment never reaches the server
	}
	if pathQuery == "" || pathQuery[0] != '/' {
		pathQuery = "/" + pathQuery
	}
	return normalise(pathQuery, false)
}

// normalise puts a rule (isRule) or a URL path with optional query into the one form in which
// RFC 9309 §2.2.2 compares them, so that spellings of the same URL match the same rules:
//
//   - an escape of an unreserved character is decoded ("%7E" becomes "~", "%41" becomes "A");
//   - any other escape gets upper-case hex ("%2f" becomes "%2F"), and a '%' that starts no
//     escape becomes "%25";
//   - non-ASCII octets, controls, space and the characters RFC 3986 never allows raw
//     (`"#<>[\]^{|}` and the backquote) are percent-encoded, so UTF-8 in a rule matches
//     its percent-encoded form in a URL;
//   - '$' is encoded, and so is '*' in a path, because in a rule they are the only special
//     characters, and RFC 9309 §2.2.3 says a rule matches them literally as "%24" and "%2A";
//   - after the first '?', the characters ':', '/', '?' and '@', which have no meaning inside a
//     query, are encoded, as in the table of RFC 9309 §2.2.2.
//
// It returns s itself when nothing changes, which is the common case, so most calls allocate
// nothing.
func normalise(s string, isRule bool) string {
	var out []byte // nil until the first change
	inQuery := false
	for i := 0; i < len(s); {
		c := s[i]
		var rep string // the replacement for s[i:i+n], or "" to keep it
		n := 1
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				n = 3
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if isUnreserved(v) {
					rep = string(rune(v))
				} else if isLowerHex(s[i+1]) || isLowerHex(s[i+2]) {
					rep = "%" + hexByte(v)
				}
			} else {
				rep = "%25"
			}
		case c == '*':
			if !isRule {
				rep = "%2A"
			}
		case c == '?':
			if inQuery {
				rep = "%3F"
			}
			inQuery = true
		case inQuery && (c == ':' || c == '/' || c == '@'):
			rep = "%" + hexByte(c)
		case mustEscape(c):
			rep = "%" + hexByte(c)
		}
		if rep == "" {
			if out != nil {
				out = append(out, s[i:i+n]...)
			}
		} else {
			if out == nil {
				out = make([]byte, 0, len(s)+16)
				out = append(out, s[:i]...)
			}
			out = append(out, rep...)
		}
		i += n
	}
	if out == nil {
		return s
	}
	return string(out)
}

// mustEscape reports whether c may never appear raw in a normalised rule or path. '$' is here
// because newRule has already taken off the one '$' that means "end of path".
func mustEscape(c byte) bool {
	if c <= ' ' || c >= 0x7F {
		return true
	}
	switch c {
	case '"', '#', '$', '<', '>', '[', '\\', ']', '^', '`', '{', '|', '}':
		return true
	}
	return false
}

// isUnreserved reports whether c is an RFC 3986 unreserved character, whose escapes are
// equivalent to the character itself.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	default:
		return c - '0'
	}
}

// hexByte returns the two upper-case hex digits of c.
func hexByte(c byte) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[c>>4], digits[c&0xF]})
}
