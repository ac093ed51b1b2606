// Package warc writes strata's captures as WARC 1.1 (ISO 28500:2017) and reads them back: the
// records of one fetch (request, response or revisit, metadata), files of gzip members rotated at
// a size and made whole after a crash, and their CDXJ index as pywb and warcio write it.
//
// The records of a crawled page (EncodePage) are written by this package itself, byte for byte as
// github.com/nlnwa/gowarc/v3 writes them (see encode.go); the others — warcinfo, and the resource
// and metadata records of an export — are built, digested and serialised by gowarc, which also
// reads every file back. This package decides what goes into the records and owns the files, whose
// crash safety is strata's own (see File).
package warc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// The revisit profiles of WARC 1.1.
const (
	ProfileIdentical   = gowarc.ProfileIdenticalPayloadDigestV1_1
	ProfileNotModified = gowarc.ProfileServerNotModifiedV1_1
)

// Header fields strata adds to a response head whose payload it stores decoded: the values the
// server sent, under a name no reader acts on, so nothing the server said is lost.
const (
	origContentEncoding = "X-Strata-Orig-Content-Encoding"
	origContentLength   = "X-Strata-Orig-Content-Length"
	origTransfer        = "X-Strata-Orig-Transfer-Encoding"
)

// options are the record options every record is built with: SHA-1 digests in base32, the form
// pywb, warcio and the CDX world compare, and every spec violation an error, so that strata never
// writes a record a validating reader would refuse.
func options() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithVersion(gowarc.V1_1),
		gowarc.WithDefaultDigestAlgorithm("sha1"),
		gowarc.WithAddMissingDigest(true),
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
		gowarc.WithSpecViolationPolicy(gowarc.ErrFail),
		gowarc.WithBlockErrorPolicy(gowarc.ErrFail),
		gowarc.WithRecordIdFunc(recordID),
	}
}

// recordID makes the records' IDs; a test that compares records made two ways sets both to one
// sequence.
var recordID = newRecordID

// newRecordID is a random (version 4) UUID URN. gowarc's default reads the uuid package's pool
// setting, which its own constructors write unsynchronised (see newOptionsMu).
func newRecordID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return "urn:uuid:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// Exchange is one HTTP exchange as strata captured it.
type Exchange struct {
	URL      string    // the URL requested
	Date     time.Time // when the request was sent
	IP       string    // the address it went to; "" if unknown
	Request  []byte    // the request head as sent; nil if not kept
	Response []byte    // the response head as received
	// Body is the payload as strata kept it: decoded from any Content-Encoding, cut at the body
	// cap, empty when it was not read (a 304, a type strata does not keep).
	Body []byte
	// Truncated is the WARC-Truncated reason when Body is not the whole payload: "length" (cut
	// at crawl.max_bytes) or "unspecified" (not read, as for types strata does not keep).
	Truncated string
}

// Record is a built record and the facts about it the caller keeps.
type Record struct {
	gowarc.WarcRecord
}

// ID returns the record's WARC-Record-ID, "<urn:uuid:…>".
func (r Record) ID() string { return "<" + r.RecordId() + ">" }

// PayloadDigest returns the record's WARC-Payload-Digest ("sha1:…"), "" if it has none.
func (r Record) PayloadDigest() string { return r.WarcHeader().Get(gowarc.WarcPayloadDigest) }

// DateField returns the record's WARC-Date as written.
func (r Record) DateField() string { return r.WarcHeader().Get(gowarc.WarcDate) }

// newOptionsMu serialises gowarc's constructors: each one calls uuid.EnableRandPool, which sets a
// package variable without synchronisation, so two workers building records at once race (go test
// -race found it). Only the constructor is serialised; building and encoding run in parallel.
var newOptionsMu sync.Mutex

// OpenReader opens the WARC file at path for reading with ReadOptions; use it rather than
// gowarc.NewWarcFileReader in strata (see newOptionsMu).
func OpenReader(path string) (*gowarc.WarcFileReader, error) {
	newOptionsMu.Lock()
	defer newOptionsMu.Unlock()
	return gowarc.NewWarcFileReader(path, 0, ReadOptions()...)
}

func build(rt gowarc.RecordType, fields [][2]string, date time.Time, block []byte) (Record, error) {
	newOptionsMu.Lock()
	rb := gowarc.NewRecordBuilder(rt, options()...)
	newOptionsMu.Unlock()
	rb.AddWarcHeaderTime(gowarc.WarcDate, date.UTC())
	for _, f := range fields {
		if f[1] != "" {
			rb.AddWarcHeader(f[0], f[1])
		}
	}
	if _, err := rb.Write(block); err != nil {
		rb.Close()
		return Record{}, fmt.Errorf("warc: build %s record: %w", rt, err)
	}
	rec, _, err := rb.Build()
	if err != nil {
		return Record{}, fmt.Errorf("warc: build %s record: %w", rt, err)
	}
	return Record{rec}, nil
}

// Warcinfo builds the record that opens a file: who wrote it and how.
func Warcinfo(filename string, date time.Time, info [][2]string) (Record, error) {
	var b bytes.Buffer
	for _, f := range info {
		writeField(&b, f[0], f[1])
	}
	return build(gowarc.Warcinfo, [][2]string{
		{gowarc.WarcFilename, filename},
		{gowarc.ContentType, gowarc.ApplicationWarcFields},
	}, date, b.Bytes())
}

// Ref names the earlier capture a revisit refers to.
type Ref struct {
	ID   string    // its WARC-Record-ID, "" if not known
	URL  string    // its WARC-Target-URI
	Date time.Time // its WARC-Date
}

// Resource builds a resource record: a body whose HTTP head was never kept (versions archived
// before strata kept heads), with the content type recorded then.
func Resource(url string, date time.Time, contentType string, body []byte) (Record, error) {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	r, err := build(gowarc.Resource, [][2]string{
		{gowarc.WarcTargetURI, url},
		{gowarc.ContentType, contentType},
	}, date, body)
	if err != nil {
		return Record{}, err
	}
	// For a resource the block is the payload; saying so lets indexes and deduplication see it.
	r.WarcHeader().Set(gowarc.WarcPayloadDigest, r.WarcHeader().Get(gowarc.WarcBlockDigest))
	return r, nil
}

// Metadata builds a metadata record about the capture concurrentTo of url: warc-fields, one line
// per fact, in the order given.
func Metadata(url string, date time.Time, concurrentTo string, facts [][2]string) (Record, error) {
	var b bytes.Buffer
	for _, f := range facts {
		writeField(&b, f[0], f[1])
	}
	return build(gowarc.Metadata, [][2]string{
		{gowarc.WarcTargetURI, url},
		{gowarc.ContentType, gowarc.ApplicationWarcFields},
		{gowarc.WarcConcurrentTo, concurrentTo},
	}, date, b.Bytes())
}

// fieldBreaks keeps a field's value on its line. It is built once: building it for every field
// cost more than the rest of the metadata record (docs/performance.md, section 10), and it
// allocates only for a value it changes.
var fieldBreaks = strings.NewReplacer("\r", " ", "\n", " ")

func writeField(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(fieldBreaks.Replace(value))
	b.WriteString("\r\n")
}

// responseBlockHead is the head of a response record's block, which the payload as strata keeps
// it follows. The head is the one received, but where the stored payload is not the bytes that
// crossed the wire — decoded from a Content-Encoding, cut at the cap, or not read — the fields that
// describe the wire's bytes would make a reader misread the payload (gunzip plain text, wait for
// bytes that are not there): they are renamed X-Strata-Orig-…, and Content-Length gives the stored
// length.
func responseBlockHead(x Exchange) ([]byte, error) {
	head := x.Response
	if len(head) == 0 {
		return nil, fmt.Errorf("warc: response of %s: no response head", x.URL)
	}
	end := bytes.Index(head, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, fmt.Errorf("warc: response of %s: head does not end with an empty line", x.URL)
	}
	lines := strings.Split(string(head[:end]), "\r\n")
	var b bytes.Buffer
	b.Grow(end + 128)
	b.WriteString(lines[0] + "\r\n")
	encoded, length := false, ""
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, ":")
		switch http.CanonicalHeaderKey(strings.TrimSpace(name)) {
		case "Content-Encoding":
			if v := strings.TrimSpace(value); v != "" && !strings.EqualFold(v, "identity") {
				encoded = true
			}
		case "Content-Length":
			length = strings.TrimSpace(value)
		}
	}
	rewrite := encoded || x.Truncated != "" || (length != "" && length != strconv.Itoa(len(x.Body)))
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, ":")
		switch key := http.CanonicalHeaderKey(strings.TrimSpace(name)); {
		case key == "Transfer-Encoding": // net/http has removed the chunking
			b.WriteString(origTransfer + ":" + value + "\r\n")
		case rewrite && key == "Content-Encoding":
			b.WriteString(origContentEncoding + ":" + value + "\r\n")
		case rewrite && key == "Content-Length":
			b.WriteString(origContentLength + ":" + value + "\r\n")
		default:
			b.WriteString(l + "\r\n")
		}
	}
	if rewrite || (length == "" && !isNoBodyStatus(lines[0]) && len(x.Body) > 0) {
		b.WriteString("Content-Length: " + strconv.Itoa(len(x.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes(), nil
}

// isNoBodyStatus reports a status line whose response never has a body (1xx, 204, 304).
func isNoBodyStatus(statusLine string) bool {
	_, rest, _ := strings.Cut(statusLine, " ")
	code, _, _ := strings.Cut(rest, " ")
	return strings.HasPrefix(code, "1") || code == "204" || code == "304"
}
