package pagetext

import (
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/charmap"
)

// toUTF8 returns src as valid UTF-8. Valid UTF-8 is returned unchanged (the
// normal case: fetch hands over text already decoded). Otherwise the
// encoding is determined as a browser would without HTTP headers (BOM, then
// <meta charset> in the first 1024 bytes, else windows-1252): a non-UTF-8
// encoding decodes the whole page; UTF-8 (declared, or mostly valid) keeps
// every valid sequence and reads each stray byte as windows-1252, which
// recovers the usual latin-1 remnant ("caf\xe9" becomes "café") where a plain
// decoder would give U+FFFD.
func toUTF8(src []byte) []byte {
	if utf8.Valid(src) {
		return src
	}
	enc, name, _ := charset.DetermineEncoding(src, "text/html")
	if name != "utf-8" && name != "windows-1252" {
		if out, err := enc.NewDecoder().Bytes(src); err == nil && utf8.Valid(out) {
			return out
		}
	}
	// Mixed UTF-8 and single bytes: keep the UTF-8, map the rest.
	out := make([]byte, 0, len(src)+len(src)/8)
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			out = utf8.AppendRune(out, charmap.Windows1252.DecodeByte(src[i]))
			i++
			continue
		}
		out = append(out, src[i:i+size]...)
		i += size
	}
	return out
}
