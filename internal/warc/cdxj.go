package warc

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// CDXJ lines are what pywb and warcio's cdx-index write: "<SURT key> <14-digit timestamp> <JSON>",
// the JSON's fields in the order url, mime, status, digest, length, offset, filename, numbers as
// strings. The same records are indexed as warcio indexes them by default: response, revisit, and
// resource and metadata records that are not warc-fields; request, warcinfo and strata's
// warc-fields metadata are not. So a CI test can compare strata's index with warcio's line for line.

// Line is one CDXJ line.
type Line struct {
	Key       string // SURT form of the URL
	Timestamp string // yyyyMMddhhmmss
	URL       string
	Mime      string
	Status    string
	Digest    string // the payload digest without its "sha1:" prefix
	Length    int64
	Offset    int64
	Filename  string
}

// String is the line as written, without its newline.
func (l Line) String() string {
	var b bytes.Buffer
	b.WriteString(l.Key + " " + l.Timestamp + " ")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as JSON.stringify
	type fields struct {
		URL      string `json:"url"`
		Mime     string `json:"mime,omitempty"`
		Status   string `json:"status,omitempty"`
		Digest   string `json:"digest,omitempty"`
		Length   string `json:"length"`
		Offset   string `json:"offset"`
		Filename string `json:"filename"`
	}
	enc.Encode(fields{l.URL, l.Mime, l.Status, l.Digest, strconv.FormatInt(l.Length, 10), strconv.FormatInt(l.Offset, 10), l.Filename})
	return strings.TrimSuffix(b.String(), "\n")
}

// IndexFile reads every record of the WARC file at path, validating each (digests included), and
// calls fn with the CDXJ line of each indexed one, with filename as its file name. A record that
// does not validate is an error: strata indexes only what it can vouch for.
func IndexFile(path, filename string, fn func(Line) error) error {
	r, err := OpenReader(path)
	if err != nil {
		return fmt.Errorf("warc: index %s: %w", path, err)
	}
	defer r.Close()
	for rec, err := range r.Records() {
		if err != nil {
			return fmt.Errorf("warc: index %s: record at %d: %w", path, rec.Offset, err)
		}
		l, ok, err := lineOf(rec)
		rec.Close()
		if err != nil {
			return fmt.Errorf("warc: index %s: record at %d: %w", path, rec.Offset, err)
		}
		if ok {
			l.Filename = filename
			if err := fn(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadOptions are the options strata reads its WARC files with: every syntax error, spec violation
// and digest mismatch fails the read.
func ReadOptions() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
		gowarc.WithSpecViolationPolicy(gowarc.ErrFail),
		gowarc.WithBlockErrorPolicy(gowarc.ErrFail),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail),
	}
}

func lineOf(rec gowarc.Record) (Line, bool, error) {
	wr := rec.WarcRecord
	if !indexed(wr) {
		return Line{}, false, nil
	}
	// The block must be read for its digest to be checked.
	if _, err := wr.ValidateDigest(); err != nil {
		return Line{}, false, err
	}
	l, err := recordLine(wr, rec.Offset, rec.Size)
	return l, err == nil, err
}

// indexed reports whether wr is a record the index has a line for.
func indexed(wr gowarc.WarcRecord) bool {
	switch wr.Type() {
	case gowarc.Response, gowarc.Revisit:
		return true
	case gowarc.Resource, gowarc.Metadata:
		return !strings.HasPrefix(wr.WarcHeader().Get(gowarc.ContentType), gowarc.ApplicationWarcFields)
	}
	return false
}

// recordLine is the index line of wr, an indexed record, at offset in its file, length bytes long.
func recordLine(wr gowarc.WarcRecord, offset, length int64) (Line, error) {
	h := wr.WarcHeader()
	ct := h.Get(gowarc.ContentType)
	date, err := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcDate))
	if err != nil {
		return Line{}, fmt.Errorf("WARC-Date %q: %w", h.Get(gowarc.WarcDate), err)
	}
	uri := h.Get(gowarc.WarcTargetURI)
	l := Line{Key: SURT(uri), Timestamp: date.UTC().Format("20060102150405"), URL: uri,
		Length: length, Offset: offset}
	if d := h.Get(gowarc.WarcPayloadDigest); d != "" {
		_, l.Digest, _ = strings.Cut(d, ":")
	}
	switch wr.Type() {
	case gowarc.Revisit:
		l.Mime = "warc/revisit"
	case gowarc.Response:
	default:
		l.Mime = ct
	}
	if hb, ok := wr.Block().(gowarc.HttpResponseBlock); ok {
		l.Status = strconv.Itoa(hb.HttpStatusCode())
		if wr.Type() == gowarc.Response {
			mt, _, _ := strings.Cut(hb.HttpHeader().Get("Content-Type"), ";")
			l.Mime = strings.TrimSpace(mt)
		}
	} else if pb, ok := wr.Block().(gowarc.ProtocolHeaderBlock); ok && wr.Type() == gowarc.Revisit {
		l.Status = statusOf(pb.ProtocolHeaderBytes())
	}
	return l, nil
}

// statusOf is the status code of an HTTP response head, "" if it has none.
func statusOf(head []byte) string {
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	if !bytes.HasPrefix(line, []byte("HTTP/")) {
		return ""
	}
	_, rest, _ := strings.Cut(string(line), " ")
	code, _, _ := strings.Cut(rest, " ")
	if _, err := strconv.Atoi(code); err != nil {
		return ""
	}
	return code
}

var wwwPrefix = regexp.MustCompile(`^(https?://)www\d*\.`)

// SURT is the sort-friendly form of u that warcio and pywb key their indexes by:
// "http://www.Example.com:8080/a?b=2&a=1" is "com,example:8080)/a?a=1&b=2". It follows warcio's
// getSurt: lower case, www. dropped, the host's labels reversed, the query's parameters sorted.
func SURT(u string) string {
	if !strings.HasPrefix(u, "http:") && !strings.HasPrefix(u, "https:") {
		return u
	}
	u = wwwPrefix.ReplaceAllString(u, "$1")
	p, err := url.Parse(strings.ToLower(u))
	if err != nil || p.Host == "" {
		return u
	}
	labels := strings.Split(strings.TrimSuffix(p.Hostname(), "."), ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	key := strings.Join(labels, ",")
	if port := p.Port(); port != "" && !(p.Scheme == "http" && port == "80") && !(p.Scheme == "https" && port == "443") {
		key += ":" + port
	}
	path := p.EscapedPath()
	if path == "" {
		path = "/"
	}
	key += ")" + path
	if p.RawQuery != "" {
		params := strings.Split(p.RawQuery, "&")
		sort.Strings(params)
		key += "?" + strings.Join(params, "&")
	}
	return key
}

// Source is a sorted CDXJ file for Merge, and the prefix its lines' file names get in the merged
// index ("" for none): a merged index over several directories names each file by its path.
type Source struct {
	Path, Prefix string
}

// Merge writes to w the lines of the sorted CDXJ files srcs, as one sorted index, reading each a
// line at a time, so a merged index of any size costs the memory of one line per file.
func Merge(w io.Writer, srcs []Source) error {
	var h mergeHeap
	defer func() {
		for _, r := range h {
			r.f.Close()
		}
	}()
	for _, src := range srcs {
		f, err := os.Open(src.Path)
		if err != nil {
			return fmt.Errorf("warc: merge %s: %w", src.Path, err)
		}
		r := &mergeReader{sc: bufio.NewScanner(f), f: f, prefix: src.Prefix}
		r.sc.Buffer(make([]byte, 64<<10), maxLine)
		ok, err := r.next()
		if err != nil {
			f.Close()
			return fmt.Errorf("warc: merge %s: %w", src.Path, err)
		}
		if !ok {
			f.Close()
			continue
		}
		h = append(h, r)
	}
	heap.Init(&h)
	bw := bufio.NewWriter(w)
	for len(h) > 0 {
		r := h[0]
		bw.WriteString(r.line)
		bw.WriteByte('\n')
		ok, err := r.next()
		if err != nil {
			return fmt.Errorf("warc: merge %s: %w", r.f.Name(), err)
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			r.f.Close()
			heap.Pop(&h)
		}
	}
	return bw.Flush()
}

// mergeReader is one of Merge's files, at its current line.
type mergeReader struct {
	sc     *bufio.Scanner
	line   string
	prefix string
	f      *os.File
}

func (r *mergeReader) next() (bool, error) {
	if !r.sc.Scan() {
		return false, r.sc.Err()
	}
	r.line = r.sc.Text()
	if r.prefix != "" {
		// filename is the last field; a quote inside a URL is escaped, so this is the field.
		r.line = strings.Replace(r.line, `"filename":"`, `"filename":"`+r.prefix, 1)
	}
	return true, nil
}

// mergeHeap orders Merge's files by their current lines: a year of daily runs merges hundreds.
type mergeHeap []*mergeReader

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].line < h[j].line }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*mergeReader)) }
func (h *mergeHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
