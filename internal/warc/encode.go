package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"hash"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
)

// The records of a page are written here field by field, not through gowarc's record builder,
// which copies the block into a buffer of its own, parses it, validates every header field (a
// WHATWG parse of the target URI, a URL parse of each record ID) and digests the payload a second
// time: 7 % of a crawl's CPU for records whose every field strata itself made (docs/performance.md,
// section 10, "After warc19"). The bytes are the ones gowarc writes, field for field and in its
// order (TestEncodePageMatchesGowarc builds both for many pages and compares them), so the
// readers, the index and the revisits see no difference. The checks that can fail on what a
// server sent are kept: the response head must parse as net/http parses it, the request head too,
// the target URI must parse (once a page, not once a record) and the IP address must be one.

// emptyDigest is the payload digest of a request without a body, which gowarc gives every request
// record.
var emptyDigest = PayloadDigest(nil)

// header is a WARC record's header fields in the order gowarc writes them.
type header struct {
	b bytes.Buffer
}

func (h *header) add(name, value string) {
	h.b.WriteString(name)
	h.b.WriteString(": ")
	h.b.WriteString(value)
	h.b.WriteString("\r\n")
}

// recordHead starts the header of a record of type rt as gowarc's builder starts it: the version
// line, WARC-Type, WARC-Date, then the given fields in order (those with a value).
func recordHead(rt string, date time.Time, fields ...[2]string) *header {
	h := &header{}
	h.b.Grow(512)
	h.b.WriteString("WARC/1.1\r\n")
	h.add("WARC-Type", rt)
	h.add("WARC-Date", date.UTC().Format(time.RFC3339Nano))
	for _, f := range fields {
		if f[1] != "" {
			h.add(f[0], f[1])
		}
	}
	return h
}

// digestOf is "sha1:" and the base32 SHA-1 of the parts, in order.
func digestOf(parts ...[]byte) string {
	d := sha1.New()
	for _, p := range parts {
		d.Write(p)
	}
	return formatDigest(d)
}

func formatDigest(d hash.Hash) string {
	var sum [sha1.Size]byte
	return "sha1:" + base32.StdEncoding.EncodeToString(d.Sum(sum[:0]))
}

// member compresses one record — its header, the line that ends it, the block's parts and the two
// line ends after the block — as one gzip member.
func member(level int, h *header, block ...[]byte) ([]byte, error) {
	n := 0
	for _, p := range block {
		n += len(p)
	}
	var buf bytes.Buffer
	// A member is a fraction of its record (HTML deflates to a fifth or less): starting near that
	// size spares the buffer most of its growing and copying.
	buf.Grow(min(n/3, 1<<20) + 1024)
	zw := getGzip(level)
	defer putGzip(level, zw)
	zw.Reset(&buf)
	zw.Write(h.b.Bytes())
	zw.Write(crlf)
	for _, p := range block {
		zw.Write(p)
	}
	zw.Write(crlfcrlf)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// httpHead splits an HTTP message into its head — up to and including the first line shorter
// than three bytes, as gowarc's block parser cuts it — and the payload after it.
func httpHead(msg []byte) (head, payload []byte, ok bool) {
	for i := 0; i < len(msg); {
		j := bytes.IndexByte(msg[i:], '\n')
		if j < 0 {
			return msg, nil, false
		}
		line := j + 1
		i += line
		if line < 3 {
			return msg[:i], msg[i:], true
		}
	}
	return msg, nil, false
}

// encodePage is EncodePage with the record IDs drawn from newID.
func encodePage(p Page, newID func() (string, error)) (Encoded, error) {
	e, err := encodeRecords(p, newID)
	if err != nil {
		return Encoded{}, fmt.Errorf("warc: %s: %w", p.URL, err)
	}
	return e, nil
}

func encodeRecords(p Page, newID func() (string, error)) (Encoded, error) {
	x := p.Exchange
	level := p.GzipLevel
	if level == 0 {
		level = DefaultGzipLevel
	}
	if level < kgzip.BestSpeed || level > kgzip.BestCompression {
		return Encoded{}, fmt.Errorf("gzip level %d: want 1 (fastest) to 9 (smallest)", level)
	}
	if x.IP != "" && net.ParseIP(x.IP) == nil {
		return Encoded{}, fmt.Errorf("WARC-IP-Address: illegal ip address: %s", x.IP)
	}
	// The one check of the URL gowarc made for each record; it refuses what is not a URL at all
	// (strata's own URLs always pass).
	if x.URL != "" {
		if err := checkTarget(x.URL); err != nil {
			return Encoded{}, fmt.Errorf("WARC-Target-URI %q: %w", x.URL, err)
		}
	}
	head, body, err := responseParts(x)
	if err != nil {
		return Encoded{}, err
	}
	status, mime, err := parseResponseHead(head)
	if err != nil {
		return Encoded{}, fmt.Errorf("build response record: error in http response block: %w", err)
	}
	payloadDigest := p.PayloadDigest
	if payloadDigest == "" {
		payloadDigest = PayloadDigest(body)
	}
	id, err := newID()
	if err != nil {
		return Encoded{}, fmt.Errorf("build response record: %w", err)
	}
	id = "<" + id + ">"
	date := x.Date.UTC()
	line := Line{Key: SURT(x.URL), Timestamp: date.Format("20060102150405"), URL: x.URL}

	var main []byte
	e := Encoded{ID: id, Type: "response", PayloadDigest: payloadDigest}
	switch {
	case p.NotModified, p.Prior != nil && x.Truncated == "" && p.PriorDigest == payloadDigest:
		// The revisit gowarc makes of the full response record: its fields, WARC-Type changed
		// in place, the profile and the reference after them, WARC-Truncated set, the block the
		// HTTP head alone.
		profile, ref := ProfileIdentical, Ref{}
		if p.NotModified {
			profile, ref = ProfileNotModified, Ref{URL: x.URL}
		}
		if p.Prior != nil {
			ref = *p.Prior
		}
		h := recordHead("revisit", date,
			[2]string{"WARC-Target-URI", x.URL},
			[2]string{"Content-Type", "application/http;msgtype=response"},
			[2]string{"WARC-IP-Address", x.IP},
			[2]string{"WARC-Truncated", x.Truncated})
		h.add("WARC-Record-ID", id)
		h.add("Content-Length", strconv.Itoa(len(head)))
		h.add("WARC-Block-Digest", digestOf(head))
		if !p.NotModified { // a 304 has no payload to digest
			h.add("WARC-Payload-Digest", payloadDigest)
			line.Digest = strings.TrimPrefix(payloadDigest, "sha1:")
		}
		h.add("WARC-Profile", profile)
		if refID := strings.Trim(ref.ID, "<>"); refID != "" {
			h.add("WARC-Refers-To", "<"+refID+">")
		}
		if ref.URL != "" {
			h.add("WARC-Refers-To-Target-URI", ref.URL)
		}
		h.add("WARC-Refers-To-Date", ref.Date.UTC().Format(time.RFC3339Nano))
		if x.Truncated == "" {
			h.add("WARC-Truncated", "length")
		} else {
			setTruncatedLength(h)
		}
		line.Mime, line.Status = "warc/revisit", statusOf(head)
		e.Type = "revisit"
		if main, err = member(level, h, head); err != nil {
			return Encoded{}, fmt.Errorf("compress revisit record: %w", err)
		}
	default:
		h := recordHead("response", date,
			[2]string{"WARC-Target-URI", x.URL},
			[2]string{"Content-Type", "application/http;msgtype=response"},
			[2]string{"WARC-IP-Address", x.IP},
			[2]string{"WARC-Truncated", x.Truncated})
		h.add("WARC-Record-ID", id)
		h.add("Content-Length", strconv.Itoa(len(head)+len(body)))
		h.add("WARC-Block-Digest", digestOf(head, body))
		h.add("WARC-Payload-Digest", payloadDigest)
		line.Mime, line.Status = mime, strconv.Itoa(status)
		line.Digest = strings.TrimPrefix(payloadDigest, "sha1:")
		if main, err = member(level, h, head, body); err != nil {
			return Encoded{}, fmt.Errorf("compress response record: %w", err)
		}
	}
	e.Members = append(e.Members, main)
	e.Lines = append(e.Lines, &line)

	if len(x.Request) > 0 {
		m, err := requestMember(level, x, id, newID)
		if err != nil {
			return Encoded{}, err
		}
		e.Members = append(e.Members, m)
		e.Lines = append(e.Lines, nil)
	}
	if len(p.Facts) > 0 {
		m, err := metadataMember(level, x.URL, date, id, p.Facts, newID)
		if err != nil {
			return Encoded{}, err
		}
		e.Members = append(e.Members, m)
		e.Lines = append(e.Lines, nil) // warc-fields metadata is not indexed
	}
	return e, nil
}

// setTruncatedLength sets the WARC-Truncated field already in h to "length", in its place.
func setTruncatedLength(h *header) {
	b := h.b.Bytes()
	i := bytes.Index(b, []byte("\r\nWARC-Truncated: "))
	if i < 0 {
		return
	}
	start := i + len("\r\nWARC-Truncated: ")
	end := start + bytes.Index(b[start:], crlf)
	var nb bytes.Buffer
	nb.Grow(len(b) + 8)
	nb.Write(b[:start])
	nb.WriteString("length")
	nb.Write(b[end:])
	h.b = nb
}

// responseParts is responseBlock's head and payload, without copying the payload.
func responseParts(x Exchange) (head, body []byte, err error) {
	block, err := responseBlockHead(x)
	if err != nil {
		return nil, nil, err
	}
	head, rest, ok := httpHead(block)
	if !ok || len(rest) != 0 {
		return nil, nil, fmt.Errorf("warc: response of %s: head does not end with an empty line", x.URL)
	}
	return head, x.Body, nil
}

// parseResponseHead reads the status code and media type of a response head as gowarc's block
// parser (net/http) reads them, failing where it fails.
func parseResponseHead(head []byte) (status int, mime string, err error) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
	if err != nil {
		return 0, "", err
	}
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return resp.StatusCode, strings.TrimSpace(mt), nil
}

func requestMember(level int, x Exchange, concurrentTo string, newID func() (string, error)) ([]byte, error) {
	head, payload, _ := httpHead(x.Request)
	if _, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head))); err != nil {
		return nil, fmt.Errorf("build request record: error in http request block: %w", err)
	}
	id, err := newID()
	if err != nil {
		return nil, fmt.Errorf("build request record: %w", err)
	}
	h := recordHead("request", x.Date,
		[2]string{"WARC-Target-URI", x.URL},
		[2]string{"Content-Type", "application/http;msgtype=request"},
		[2]string{"WARC-IP-Address", x.IP},
		[2]string{"WARC-Concurrent-To", concurrentTo})
	h.add("WARC-Record-ID", "<"+id+">")
	h.add("Content-Length", strconv.Itoa(len(x.Request)))
	h.add("WARC-Block-Digest", digestOf(x.Request))
	pd := emptyDigest
	if len(payload) > 0 {
		pd = digestOf(payload)
	}
	h.add("WARC-Payload-Digest", pd)
	m, err := member(level, h, x.Request)
	if err != nil {
		return nil, fmt.Errorf("compress request record: %w", err)
	}
	return m, nil
}

func metadataMember(level int, url string, date time.Time, concurrentTo string, facts [][2]string, newID func() (string, error)) ([]byte, error) {
	var b bytes.Buffer
	for _, f := range facts {
		writeField(&b, f[0], f[1])
	}
	id, err := newID()
	if err != nil {
		return nil, fmt.Errorf("build metadata record: %w", err)
	}
	h := recordHead("metadata", date,
		[2]string{"WARC-Target-URI", url},
		[2]string{"Content-Type", "application/warc-fields"},
		[2]string{"WARC-Concurrent-To", concurrentTo})
	h.add("WARC-Record-ID", "<"+id+">")
	h.add("Content-Length", strconv.Itoa(b.Len()))
	h.add("WARC-Block-Digest", digestOf(b.Bytes()))
	m, err := member(level, h, b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("compress metadata record: %w", err)
	}
	return m, nil
}
