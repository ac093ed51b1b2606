package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// Limits on what PagePath returns. 200 leaves room under the 255-byte name limit of ext4, APFS and
// NTFS for anything a tool might append; 2048 keeps a whole tree inside PATH_MAX with a long root.
const (
	maxName  = 200
	maxPath  = 2048
	nameHash = 24 // hex digits (96 bits) naming a cut-short element: it still shares a long prefix
	foldHash = 32 // hex digits (128 bits) standing for a folded tail of arbitrarily many elements
)

// Names that only PagePath itself emits. URL data can never produce a name starting with '_' (the
// first byte of such a name is escaped), so none of these can be mistaken for a host or a segment.
const (
	markIndex  = "_index"  // an empty segment: /d/ (trailing slash) and /a//b
	markQuery  = "_q_"     // prefix of the element holding the query
	markFold   = "_more~h" // prefix of the element standing for everything past the length limit
	markNoHost = "_nohost" // a URL without a host; the normaliser never lets one through
)

// PagePath returns the directory, relative to a run directory and with '/' separators, that holds
// the files of the page at u. It accepts any URL, including ones the normaliser would reject, and
// always returns a clean relative path of safe names; the package documentation gives the encoding.
// Two normalised URLs that differ always get different directories.
//
// The user information of u is ignored: credentials do not belong in file names, and the
// normaliser strips them anyway. So is the fragment, which never reaches the server.
func PagePath(u *url.URL) string {
	if u == nil {
		u = &url.URL{}
	}
	names := []string{hostDir(u)}

	p := u.EscapedPath()
	if u.Opaque != "" {
		p = u.Opaque // "http:a/b" has no host and no Path; keep its data rather than drop it
	}
	p = strings.TrimPrefix(p, "/")
	if p != "" { // "/" is the host directory itself
		for _, seg := range strings.Split(p, "/") {
			names = append(names, segmentName(seg))
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		names = append(names, queryName(u.RawQuery))
	}
	return join(names)
}

// join folds the tail of names into one hashed element when the whole would exceed maxPath, so a
// URL of thousands of segments keeps its leading, browsable, part.
func join(names []string) string {
	total := len(names) - 1
	for _, n := range names {
		total += len(n)
	}
	if total <= maxPath {
		return strings.Join(names, "/")
	}
	budget := maxPath - len(markFold) - foldHash - 1
	used, keep := len(names[0]), 1 // the host directory is at most maxName, always fits
	for keep < len(names) && used+1+len(names[keep]) <= budget {
		used += 1 + len(names[keep])
		keep++
	}
	// The kept names are separated by '/', which no name contains, so the tail is unambiguous.
	fold := markFold + hashHex(strings.Join(names[keep:], "/"), foldHash)
	return strings.Join(append(names[:keep:keep], fold), "/")
}

// hostDir names the directory of one origin: host, then "_<port>" for an explicit port, then
// "_<scheme>" unless the scheme is https. Bouras et al. name the host directory after the host
// alone; that would put http://a/x and https://a/x in one directory, so the scheme is marked.
// https goes unmarked because it is by far the common case. '_' is escaped inside the host, so the
// first '_' always ends it.
func hostDir(u *url.URL) string {
	var extra strings.Builder
	if port := u.Port(); port != "" {
		extra.WriteByte('_')
		if allDigits(port) {
			extra.WriteString(port)
		} else { // only a hand-built URL gets here; keep it safe and distinct from digits
			for i := 0; i < len(port); i++ {
				writeEscape(&extra, port[i])
			}
		}
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "https":
	case "http":
		extra.WriteString("_http")
	default:
		extra.WriteByte('_')
		for i := 0; i < len(scheme); i++ {
			if c := scheme[i]; 'a' <= c && c <= 'z' {
				extra.WriteByte(c)
			} else {
				writeEscape(&extra, c)
			}
		}
	}

	host := u.Hostname()
	if host == "" {
		return finishName(markNoHost, extra.String(), maxName)
	}
	var e nameEncoder
	e.escapeAllUnderscores = true
	for i := 0; i < len(host); i++ {
		e.add(host[i], false)
	}
	return e.name("", extra.String())
}

// segmentName encodes one '/'-separated piece of an escaped path. It decodes %XX so that the name
// shows the byte, but records which of the bytes that may appear either way in a path (sub-delims,
// ':', '@', '[', ']') were escaped: RFC 3986 does not treat /a:b and /a%3Ab as equivalent and the
// normaliser keeps both, so they must not share a directory. Unreserved bytes are not recorded:
// %41 and A are the same URL.
func segmentName(seg string) string {
	if seg == "" {
		return markIndex
	}
	var e nameEncoder
	e.trackEscapes = true
	for i := 0; i < len(seg); i++ {
		if seg[i] == '%' && i+2 < len(seg) && isHex(seg[i+1]) && isHex(seg[i+2]) {
			e.add(unhex(seg[i+1])<<4|unhex(seg[i+2]), true)
			i += 2
			continue
		}
		e.add(seg[i], false)
	}
	return e.name("", "")
}

// queryName encodes the raw query byte for byte, '%' included. Decoding it would merge a=1&b=2 with
// a=1%26b=2, which servers tell apart; the price is "%2520" for an escaped space.
func queryName(raw string) string {
	var e nameEncoder
	e.noLeadingCheck = true // the name starts with markQuery, never with URL data
	for i := 0; i < len(raw); i++ {
		e.add(raw[i], false)
	}
	return e.name(markQuery, "")
}

// nameEncoder turns the bytes of one host, segment or query into a file name. Only a-z 0-9 - . _ =
// + appear literally (the names need no quoting in a POSIX shell and are valid on Windows and
// macOS), '%' starts a lower-case escape and '~' starts the suffix, so a name never contains an
// upper-case letter and is unambiguous on case-insensitive file systems. The lost information is
// kept in the suffix as bit masks, which makes the encoding exactly reversible where a hash of the
// original would only be probably so. The '~' is always followed by a letter, never a digit, so no
// name looks like a Windows 8.3 short name (ABOUT~1), which NTFS may resolve to another entry.
type nameEncoder struct {
	escapeAllUnderscores bool // host directories: '_' separates the port and scheme suffixes
	trackEscapes         bool // path segments: see segmentName
	noLeadingCheck       bool

	body    []byte
	firstOK bool // the first byte was written literally, so it may still need escaping
	upper   bitMask
	escaped bitMask
}

func (e *nameEncoder) add(c byte, wasEscaped bool) {
	if e.trackEscapes && isSubDelim(c) {
		e.escaped.add(wasEscaped)
	}
	if 'A' <= c && c <= 'Z' {
		e.upper.add(true)
		c += 'a' - 'A'
	} else if 'a' <= c && c <= 'z' {
		e.upper.add(false)
	}
	isFirst := len(e.body) == 0
	if isSafe(c) && !(c == '_' && e.escapeAllUnderscores) {
		e.body = append(e.body, c)
		e.firstOK = e.firstOK || isFirst
		return
	}
	e.body = appendEscape(e.body, c)
}

// name finishes the encoding: prefix, body, the "~u…" and "~p…" masks, then extra, cut to maxName.
func (e *nameEncoder) name(prefix, extra string) string {
	body := e.body
	if len(body) > 0 && !e.noLeadingCheck && e.firstOK && reservedStart(string(body)) {
		body = append(appendEscape(nil, body[0]), body[1:]...)
	}
	// Windows drops a trailing dot, so "a." would open "a". A literal last byte is the only way
	// for a name to end in '.': escapes end in a hex digit.
	if n := len(body); n > 0 && body[n-1] == '.' {
		body = append(body[:n-1:n-1], "%2e"...)
	}
	var tags strings.Builder
	if e.upper.any {
		tags.WriteString("~u")
		tags.WriteString(e.upper.hex())
	}
	if e.escaped.any {
		if tags.Len() == 0 {
			tags.WriteByte('~')
		}
		tags.WriteByte('p')
		tags.WriteString(e.escaped.hex())
	}
	return finishName(prefix+string(body), tags.String()+extra, maxName)
}

// finishName appends suffix to body and, when the result is longer than limit, keeps a prefix of
// body and replaces the rest with "~h" and a hash of the whole. No untruncated name contains "~h"
// (a mask suffix starts "~u" or "~p"), so a cut name cannot equal an uncut one.
func finishName(body, suffix string, limit int) string {
	full := body + suffix
	if len(full) <= limit {
		return full
	}
	cut := min(limit-2-nameHash, len(body))
	// Do not split an escape: the prefix must still decode.
	if cut >= 1 && body[cut-1] == '%' {
		cut--
	} else if cut >= 2 && body[cut-2] == '%' {
		cut -= 2
	}
	return body[:cut] + "~h" + hashHex(full, nameHash)
}

// reservedStart reports whether a lower-case name, as written so far, must have its first byte
// escaped. Our own files are page.* and manifest.*, '_' starts our markers, '.' hides a file and
// spells "." and "..", '-' and '+' look like options to most commands, and '=' is expanded by zsh.
// Windows refuses a device name even with an extension: con, con.txt and con.tar.gz.
func reservedStart(name string) bool {
	switch name[0] {
	case '.', '_', '-', '+', '=':
		return true
	}
	if strings.HasPrefix(name, "page.") || strings.HasPrefix(name, "manifest.") {
		return true
	}
	base, _, _ := strings.Cut(name, ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	// COM0 and LPT0 are listed by Microsoft alongside 1-9; escaping them too costs nothing.
	return len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) &&
		'0' <= base[3] && base[3] <= '9'
}

// bitMask records one flag per letter (or per sub-delim) in order; hex renders it as a number with
// the first flag as the least significant bit and no leading zeros, so "About" gives 1 and "FAQ" 7.
type bitMask struct {
	bits []bool
	any  bool
}

func (m *bitMask) add(set bool) {
	m.bits = append(m.bits, set)
	m.any = m.any || set
}

func (m *bitMask) hex() string {
	const digits = "0123456789abcdef"
	var out []byte
	for nib := (len(m.bits) - 1) / 4; nib >= 0; nib-- {
		v := 0
		for b := 3; b >= 0; b-- {
			if i := nib*4 + b; i < len(m.bits) && m.bits[i] {
				v |= 1 << b
			}
		}
		if v != 0 || len(out) > 0 {
			out = append(out, digits[v])
		}
	}
	return string(out)
}

func isSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '=' || c == '+'
}

// isSubDelim reports whether c may appear both literally and escaped in a valid path segment
// (net/url's validEncoded accepts '[' and ']' literally too).
func isSubDelim(c byte) bool {
	return strings.IndexByte("!$&'()*+,;=:@[]", c) >= 0
}

func appendEscape(b []byte, c byte) []byte {
	const digits = "0123456789abcdef"
	return append(b, '%', digits[c>>4], digits[c&15])
}

func writeEscape(b *strings.Builder, c byte) {
	b.Write(appendEscape(nil, c))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func hashHex(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// runDirLayout sorts lexically in time order and has no ':', which Windows and macOS Finder reject.
const runDirLayout = "2006-01-02T150405Z"

// RunDir names the directory of a crawl run that started at start, e.g. 2026-11-22T031500Z (UTC).
// Two runs started within the same second get the same name; callers must not start them.
func RunDir(start time.Time) string {
	return start.UTC().Format(runDirLayout)
}

// VersionPath is the directory, relative to the root, in which the run that started at runStart
// stores (or links) its version of pageURL.
func VersionPath(runStart time.Time, pageURL string) (string, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", pageURL, err)
	}
	return path.Join(RunDir(runStart), PagePath(u)), nil
}
