package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

const (
	// sniffLen is how much http.DetectContentType looks at.
	sniffLen = 512
	// maxEncodings bounds stacked Content-Encodings; real servers use one.
	maxEncodings = 3
	// maxRetryAfter clamps absurd Retry-After values so they cannot
	// overflow a time.Duration; the caller applies its own policy below it.
	maxRetryAfter = 365 * 24 * time.Hour
)

// readResponse fills resp from the final response hr and closes hr.Body.
func (f *fetchState) readResponse(resp *Response, hr *http.Response) error {
	wire := &countingReader{r: hr.Body}
	drain := false
	defer func() {
		if drain {
			// A fully decoded body may still have unread bytes (after a
			// gzip trailer, say); reading them lets the connection be
			// reused. Anything else is closed unread, which drops the
			// connection: cheaper than draining a video or a bomb.
			_, _ = io.CopyN(io.Discard, wire, drainLimit)
		}
		hr.Body.Close()
		resp.Bytes += wire.n
	}()

	resp.Status = hr.StatusCode
	resp.Header = hr.Header
	resp.ETag = hr.Header.Get("ETag")
	resp.LastModified = hr.Header.Get("Last-Modified")
	if d, err := http.ParseTime(hr.Header.Get("Date")); err == nil {
		resp.Date = d
	}
	if hr.StatusCode == http.StatusTooManyRequests || hr.StatusCode == http.StatusServiceUnavailable {
		resp.RetryAfter = parseRetryAfter(hr.Header.Get("Retry-After"), resp.Date, time.Now())
	}
	mediaType, _ := parseContentType(hr.Header.Get("Content-Type"))
	resp.ContentType = mediaType
	if hr.StatusCode == http.StatusNotModified {
		resp.NotModified = true
		return nil
	}
	if mediaType != "" && !isKeptType(mediaType) {
		// Not archived, so not worth a byte of bandwidth.
		return nil
	}

	body, err := decodeContent(hr.Header.Values("Content-Encoding"), wire)
	if err != nil {
		return err
	}
	if mediaType == "" {
		head := make([]byte, sniffLen)
		n, err := io.ReadFull(body, head)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
		head = head[:n]
		mediaType, _ = parseContentType(http.DetectContentType(head))
		resp.ContentType = mediaType
		if !isKeptType(mediaType) {
			return nil
		}
		body = io.MultiReader(bytes.NewReader(head), body)
	}
	resp.Kept = true

	max := f.c.opts.MaxBytes
	limit := max
	if limit < math.MaxInt64 {
		limit++ // one byte more tells a body of exactly max from a longer one
	}
	data, err := readAll(io.LimitReader(body, limit), sizeHint(hr, limit))
	if err != nil {
		return err
	}
	if int64(len(data)) > max {
		data = data[:max]
		resp.Truncated = true
	}
	drain = !resp.Truncated
	resp.Body = data
	resp.Text, resp.Charset = decodeText(data, mediaType, hr.Header.Get("Content-Type"), resp.Truncated)
	return nil
}

// sizeHint is how many bytes the body will take, as far as the response says: its Content-Length
// when it is not encoded (and so is the body's length), at most limit; 0 when unknown.
func sizeHint(hr *http.Response, limit int64) int {
	if hr.ContentLength <= 0 || len(hr.Header.Values("Content-Encoding")) > 0 {
		return 0
	}
	return int(min(hr.ContentLength+1, limit, 16<<20)) // +1: the read that finds the end
}

// readAll is io.ReadAll into a buffer of size bytes to start with: io.ReadAll starts at 512 and
// doubles, allocating and copying twice a body's size on the way.
func readAll(r io.Reader, size int) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // a body longer than it said: grow as io.ReadAll does
		}
	}
}

// countingReader counts bytes read off the wire and remembers the wire's own
// error, so decoding errors can be told apart from network errors.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// decodeError marks a body that could not be decoded (corrupt gzip, brotli,
// deflate): a protocol failure, not a network one.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "decode body: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// decodingReader passes network errors through untouched and marks all
// others as decodeError.
type decodingReader struct {
	r    io.Reader
	wire *countingReader
}

func (d *decodingReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		err = d.wrap(err)
	}
	return n, err
}

func (d *decodingReader) wrap(err error) error {
	if d.wire.err != nil {
		return err
	}
	if err == io.EOF {
		// An empty body where a compressed stream was promised is a cut
		// stream, not a server that hung up before answering.
		err = io.ErrUnexpectedEOF
	}
	return &decodeError{err: err}
}

// decodeContent layers decoders for the Content-Encoding values over wire,
// undoing them in reverse order of application.
func decodeContent(values []string, wire *countingReader) (io.Reader, error) {
	var codings []string
	for _, v := range values {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	if len(codings) == 0 {
		return wire, nil
	}
	d := &decodingReader{r: wire, wire: wire}
	if len(codings) > maxEncodings {
		return nil, d.wrap(fmt.Errorf("%d stacked content-encodings", len(codings)))
	}
	var r io.Reader = wire
	for i := len(codings) - 1; i >= 0; i-- {
		switch codings[i] {
		case "gzip", "x-gzip":
			// NewReader reads the header, so a corrupt stream fails here.
			zr, err := gzip.NewReader(r)
			if err != nil {
				return nil, d.wrap(err)
			}
			r = zr
		case "br":
			r = brotli.NewReader(r)
		case "deflate":
			zr, err := newDeflateReader(r)
			if err != nil {
				return nil, d.wrap(err)
			}
			r = zr
		default:
			return nil, d.wrap(fmt.Errorf("unsupported content-encoding %q", codings[i]))
		}
	}
	d.r = r
	return d, nil
}

// newDeflateReader accepts both zlib-wrapped deflate (what RFC 9110 means)
// and raw deflate (what some servers send instead).
func newDeflateReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	h, err := br.Peek(2)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// isKeptType reports whether a media type is text worth archiving.
func isKeptType(mediaType string) bool {
	switch mediaType {
	case "text/html", "application/xhtml+xml", "text/plain":
		return true
	}
	return false
}

// parseContentType returns the lower-case media type and the charset
// parameter of a Content-Type value. Malformed parameters are common, so
// when mime.ParseMediaType refuses the value the media type is still taken
// from before the first ';'.
func parseContentType(v string) (mediaType, charsetLabel string) {
	mt, params, err := mime.ParseMediaType(v)
	if err == nil {
		// ParseMediaType also accepts a bare token (it parses
		// Content-Disposition too); that is no media type.
		if mt = strings.ToLower(mt); !validMediaType(mt) {
			return "", ""
		}
		return mt, params["charset"]
	}
	mt, _, _ = strings.Cut(v, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if !validMediaType(mt) {
		return "", ""
	}
	return mt, ""
}

// validMediaType accepts type/subtype made of token characters.
func validMediaType(mt string) bool {
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" {
		return false
	}
	for _, r := range typ + sub {
		if r >= utf8.RuneSelf || r <= ' ' || strings.ContainsRune(`()<>@,;:\"/[]?=`, r) {
			return false
		}
	}
	return true
}

// decodeText converts body to UTF-8, returning the text and the name of the
// charset used. The BOM wins, then the header's charset, then (HTML only)
// <meta charset> in the first 1024 bytes; an unknown label is ignored.
func decodeText(body []byte, mediaType, contentType string, truncated bool) ([]byte, string) {
	preview := body
	if mediaType == "text/plain" {
		// Plain text has no <meta>; 3 bytes are enough for the BOM check
		// and too few for the prescan to find a tag.
		preview = body[:min(len(body), 3)]
	}
	enc, name, certain := charset.DetermineEncoding(preview, contentType)
	if !certain {
		// Without a BOM or header label the library guesses from the first
		// 1024 bytes only, falling back to windows-1252. Text that is valid
		// UTF-8 with non-ASCII bytes is practically never meant as anything
		// else, and checking the whole body catches an ASCII-only head.
		switch {
		case looksUTF8(body, truncated):
			enc, name = nil, "utf-8"
		case mediaType == "text/plain":
			enc, name = charmap.Windows1252, "windows-1252"
		}
	}
	var text []byte
	// Valid UTF-8 declared as such is its own text: decoding it would only copy it, twice, for
	// every page (3 % of a crawl's CPU on 50 KB pages, issue 19).
	if enc != nil && !(name == "utf-8" && utf8.Valid(body)) {
		t, _, err := transform.Bytes(enc.NewDecoder(), body)
		if err == nil {
			text = t
		}
	}
	if text == nil {
		text = body
	}
	// Decoders replace invalid input already; this also covers the
	// undecoded utf-8 path and a decoder error.
	if !utf8.Valid(text) {
		text = bytes.ToValidUTF8(text, []byte("\uFFFD"))
	}
	text = bytes.TrimPrefix(text, []byte("\uFEFF"))
	return text, name
}

// looksUTF8 reports whether body has non-ASCII bytes and is valid UTF-8,
// ignoring a rune cut off at the end of a truncated body.
func looksUTF8(body []byte, truncated bool) bool {
	if truncated {
		for i := len(body) - 1; i >= 0 && i > len(body)-utf8.UTFMax; i-- {
			if utf8.RuneStart(body[i]) {
				if !utf8.FullRune(body[i:]) {
					body = body[:i]
				}
				break
			}
		}
	}
	ascii := true
	for _, b := range body {
		if b >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	return !ascii && utf8.Valid(body)
}

// parseRetryAfter interprets a Retry-After value: delta-seconds, or an
// HTTP-date measured from the server's Date (so a skewed server clock does
// not matter) or from now when Date is missing. Invalid or past values give 0.
func parseRetryAfter(v string, date, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(maxRetryAfter/time.Second) {
			// Only overflow fails here: all digits.
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	base := now
	if !date.IsZero() {
		base = date
	}
	d := t.Sub(base)
	switch {
	case d <= 0:
		return 0
	case d > maxRetryAfter:
		return maxRetryAfter
	}
	return d
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
