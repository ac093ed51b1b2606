package warc

import (
	"crypto/sha1"
	"encoding/base32"
	"fmt"
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
}

// Encoded is a page's records, serialised for Writer.Append.
type Encoded struct {
	Members [][]byte
	// Lines are the members' index lines, nil for a record the index leaves out; their
	// offsets, lengths and file names are filled in by Writer.AppendPage.
	Lines []*Line
	ID    string // the response or revisit record's WARC-Record-ID
	Type  string // "response" or "revisit"
}

// EncodePage builds and serialises p's records: its response (or revisit), its request when the
// request head is known, and a metadata record of strata's facts when there are any.
func EncodePage(p Page) (Encoded, error) {
	var main Record
	var err error
	e := Encoded{Type: "response"}
	switch {
	case p.NotModified:
		ref := Ref{URL: p.URL}
		if p.Prior != nil {
			ref = *p.Prior
		}
		main, err = Revisit(p.Exchange, ProfileNotModified, ref)
		e.Type = "revisit"
	case p.Prior != nil && p.Truncated == "" && p.PriorDigest == PayloadDigest(p.Body):
		main, err = Revisit(p.Exchange, ProfileIdentical, *p.Prior)
		e.Type = "revisit"
	default:
		main, err = Response(p.Exchange)
	}
	if err != nil {
		return Encoded{}, err
	}
	e.ID = main.ID()
	recs := []Record{main}
	if len(p.Request) > 0 {
		req, err := Request(p.Exchange, e.ID)
		if err != nil {
			closeAll(recs)
			return Encoded{}, err
		}
		recs = append(recs, req)
	}
	if len(p.Facts) > 0 {
		meta, err := Metadata(p.URL, p.Date, e.ID, p.Facts)
		if err != nil {
			closeAll(recs)
			return Encoded{}, err
		}
		recs = append(recs, meta)
	}
	for _, r := range recs {
		if err == nil && indexed(r.WarcRecord) {
			var l Line
			if l, err = recordLine(r.WarcRecord, 0, 0); err == nil {
				e.Lines = append(e.Lines, &l)
			}
		} else if err == nil {
			e.Lines = append(e.Lines, nil)
		}
		if err == nil {
			var m []byte
			m, err = Encode(r)
			e.Members = append(e.Members, m)
		}
		r.Close()
	}
	if err != nil {
		return Encoded{}, fmt.Errorf("warc: %s: %w", p.URL, err)
	}
	return e, nil
}

func closeAll(recs []Record) {
	for _, r := range recs {
		r.Close()
	}
}

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
