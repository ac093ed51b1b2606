package warc

import (
	"crypto/sha1"
	"encoding/base32"
	"time"
)

// PayloadDigest is the WARC-Payload-Digest of a payload: "sha1:" and its SHA-1 in base32, as
// gowarc computes it, so a digest kept in the database matches the record's.
func PayloadDigest(payload []byte) string {
	sum := sha1.Sum(payload)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// Page is one fetch to write as WARC.
type Page struct {
	Exchange
	NotModified bool // a 304: a revisit (server-not-modified) of Prior
	// Prior is the URL's latest response record, nil when it has none in any WARC, and
	// PriorDigest its payload digest: a payload with the same digest is written as a revisit
	// (identical-payload-digest) referring to it.
	Prior       *Ref
	PriorDigest string
	Facts       [][2]string // strata's facts, for the metadata record
	// PayloadDigest is PayloadDigest(Body) when the caller has it already; "" has EncodePage
	// compute it.
	PayloadDigest string
	// GzipLevel compresses the page's members, from 1 (fastest) to 9 (smallest); 0 is
	// DefaultGzipLevel.
	GzipLevel int
}

// Encoded is a page's records, serialised for Writer.Append.
type Encoded struct {
	Members [][]byte
	// Lines are the members' index lines, nil for a record the index leaves out; their
	// offsets, lengths and file names are filled in by Writer.AppendPage.
	Lines []*Line
	ID    string // the response or revisit record's WARC-Record-ID
	Type  string // "response" or "revisit"
	// PayloadDigest is the payload's WARC-Payload-Digest (that of Body, even for a 304's
	// revisit, which does not carry it).
	PayloadDigest string
}

// EncodePage builds and serialises p's records: its response (or revisit), its request when the
// request head is known, and a metadata record of strata's facts when there are any.
func EncodePage(p Page) (Encoded, error) { return encodePage(p, recordID) }

// Info returns the builder of the warcinfo record that opens each file: the software and the
// User-Agent that made the captures.
func Info(software, userAgent string, date time.Time) func(filename string) (Record, error) {
	return func(filename string) (Record, error) {
		fields := [][2]string{
			{"software", software},
			{"format", "WARC File Format 1.1"},
			{"conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		}
		if userAgent != "" {
			fields = append(fields, [2]string{"robots", "obey"}, [2]string{"http-header-user-agent", userAgent})
		}
		return Warcinfo(filename, date, fields)
	}
}
