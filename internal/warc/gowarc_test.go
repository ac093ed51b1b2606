package warc

import (
	"fmt"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// The records of a page as gowarc builds them: what EncodePage wrote before it wrote them itself,
// kept as the oracle its bytes are compared with (TestEncodePageMatchesGowarc) and that the record
// tests read back.

// Request builds the request record of x; concurrentTo is the record ID of its response.
func Request(x Exchange, concurrentTo string) (Record, error) {
	return build(gowarc.Request, [][2]string{
		{gowarc.WarcTargetURI, x.URL},
		{gowarc.ContentType, "application/http;msgtype=request"},
		{gowarc.WarcIPAddress, x.IP},
		{gowarc.WarcConcurrentTo, concurrentTo},
	}, x.Date, x.Request)
}

// Response builds the response record of x.
func Response(x Exchange) (Record, error) {
	block, err := responseBlock(x)
	if err != nil {
		return Record{}, err
	}
	return build(gowarc.Response, [][2]string{
		{gowarc.WarcTargetURI, x.URL},
		{gowarc.ContentType, "application/http;msgtype=response"},
		{gowarc.WarcIPAddress, x.IP},
		{gowarc.WarcTruncated, x.Truncated},
	}, x.Date, block)
}

// Revisit builds a revisit record of x against the earlier capture ref: profile ProfileIdentical
// when x's payload has the digest of ref's (the payload is left out), ProfileNotModified for a
// 304. The record keeps x's HTTP head.
func Revisit(x Exchange, profile string, ref Ref) (Record, error) {
	full, err := Response(x)
	if err != nil {
		return Record{}, err
	}
	defer full.Close()
	rv, err := full.ToRevisitRecord(&gowarc.RevisitRef{
		Profile:        profile,
		TargetRecordId: strings.Trim(ref.ID, "<>"),
		TargetUri:      ref.URL,
		TargetDate:     ref.Date.UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return Record{}, fmt.Errorf("warc: revisit of %s: %w", x.URL, err)
	}
	if profile == ProfileNotModified {
		rv.WarcHeader().Delete(gowarc.WarcPayloadDigest) // a 304 has no payload to digest
	}
	return Record{rv}, nil
}

// responseBlock is the response head followed by the payload as strata keeps it.
func responseBlock(x Exchange) ([]byte, error) {
	head, err := responseBlockHead(x)
	if err != nil {
		return nil, err
	}
	return append(head, x.Body...), nil
}
