package cli

import (
	"bytes"
	"unicode/utf8"
)

// terminalSafe returns text with everything that could drive a terminal made visible: an archived
// page is the site's bytes, and an escape sequence in a text/plain page would otherwise set the
// window title, clear the screen or rewrite what was printed before it. Tabs and newlines are kept,
// and a carriage return before a newline is dropped (a Windows line end). The other C0 controls and
// DEL become their Unicode control pictures (ESC shows as ␛, a lone carriage return as ␍), and C1
// controls and bytes that are not UTF-8 — which some terminals read as C1 — become U+FFFD. Text
// without any of these is returned as it is.
func terminalSafe(text []byte) []byte {
	clean := true
	for _, c := range text {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean && !bytes.Contains(text, []byte("\r")) {
		return text
	}
	var b bytes.Buffer
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '\r' && i+1 < len(text) && text[i+1] == '\n':
		case r == '\t', r == '\n':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // the control pictures: U+2400 NUL … U+241F US
		case r == 0x7f:
			b.WriteRune(0x2421) // ␡
		case r >= 0x80 && r < 0xa0:
			b.WriteRune(utf8.RuneError)
		default:
			b.Write(text[i : i+n])
		}
		i += n
	}
	return b.Bytes()
}
