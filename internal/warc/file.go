package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/strata-crawler/strata/archive"
)

// OpenSuffix marks a WARC file still being written. Readers and indexers (pywb, ReplayWeb.page,
// strata's own) take only names ending in ".warc.gz"; a file gets its final name only when it is
// closed whole, or when Seal has cut a crashed writer's torn tail off it.
const OpenSuffix = ".open"

// Ext is the extension of a finished file.
const Ext = ".warc.gz"

// Loc is where a record lies in its file: the gzip member holding it.
type Loc struct {
	File   string // the file's final name, without directory
	Offset int64
	Length int64
}

// Writer appends records to the files of one directory, one gzip member per record, starting a
// new file when the current one has reached max bytes. Each file starts with a warcinfo record.
//
// Records written are durable only after Sync; a crash leaves the file under its ".open" name,
// whose torn tail Seal removes. Write, Sync and Close may be called from several goroutines.
type Writer struct {
	dir, prefix string
	max         int64
	info        func(filename string) (Record, error)

	mu     sync.Mutex
	f      *os.File
	name   string // final name of the open file
	size   int64
	seq    int
	broken error // a write that failed and could not be undone: the file's tail is unknown
	// lines receives the index lines of the open file's records while every record in it came
	// with its line (AppendPage); indexed is false once one did not (Append). They go to disk as
	// they come, so that a file of a million records costs no memory for its index.
	lines   *linesFile
	indexed bool
	// page holds a page's members joined for its one write, kept for the next page: a page's
	// records are about its compressed size, and a new buffer each time was garbage of that size.
	page []byte
}

// maxKeptPage bounds the buffer a Writer keeps between pages, so that one huge page does not hold
// its size for the rest of the run.
const maxKeptPage = 1 << 20

// NewWriter returns a writer of files named <prefix>-<00000>.warc.gz in dir, rotated at max bytes
// (0: never), whose warcinfo record info builds. No file is created before the first record.
func NewWriter(dir, prefix string, max int64, info func(filename string) (Record, error)) *Writer {
	return &Writer{dir: dir, prefix: prefix, max: max, info: info}
}

// Write appends recs, in order, and returns where each went. They may span a rotation, but a
// record is never split. On an error nothing of the failed record is left in the file. Write
// closes the records.
func (w *Writer) Write(recs ...Record) ([]Loc, error) {
	members := make([][]byte, 0, len(recs))
	var err error
	for _, r := range recs {
		if err == nil {
			var m []byte
			m, err = Encode(r)
			members = append(members, m)
		}
		r.Close()
	}
	if err != nil {
		return nil, err
	}
	return w.Append(members...)
}

// Encode serialises r as one gzip member, as Append takes it. Encoding is the costly part of
// writing a record (digests were computed when it was built; this compresses it), so callers do it
// in parallel and leave only Append to the writer.
func Encode(r Record) ([]byte, error) {
	var buf bytes.Buffer
	// The member is a fraction of the record (HTML deflates to a fifth or less): starting near
	// that size spares the buffer most of its growing and copying.
	if n, err := r.WarcHeader().GetInt64(gowarc.ContentLength); err == nil && n > 0 {
		buf.Grow(int(min(n/3, 1<<20)) + 1024)
	}
	zw := getGzip(DefaultGzipLevel) // a new writer allocates its tables: most of a small record's cost
	defer putGzip(DefaultGzipLevel, zw)
	zw.Reset(&buf)
	if _, _, err := gowarc.NewMarshaler().Marshal(zw, r, 0); err != nil {
		return nil, fmt.Errorf("warc: marshal %s record: %w", r.Type(), err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("warc: compress %s record: %w", r.Type(), err)
	}
	return buf.Bytes(), nil
}

// DefaultGzipLevel is the level of the WARC's gzip members unless a Page sets another:
// klauspost/compress's fastest. On real-sized HTML its level 5 (the library's default) made members
// 9.5-16.9 % smaller than level 1 for about twice the CPU; in a crawl of 50 KB pages, level 1 took
// 0.16-0.34 CPU s per 1,000 pages less (10-18 % of the crawl's CPU, three pairs). The WARC is a
// small part of an archive, because each new version's directory keeps the page and its text
// uncompressed: the larger members made a crawl's archive 1.9 % larger (docs/performance.md,
// section 10, "The WARC's gzip level, revisited"). Every WARC reader inflates any level alike: it
// is the same DEFLATE format.
const DefaultGzipLevel = kgzip.BestSpeed

// gzipFree holds klauspost/compress's gzip writers: on real-sized HTML they compress 5-10 times
// faster than compress/gzip's, to within a few per cent of its size (docs/performance.md,
// section 10).
//
// The writers are kept in a small free list rather than a sync.Pool: each holds about 1 MB of
// tables, and a sync.Pool is emptied by every garbage collection, which on a crawl of 50 KB pages
// comes every few pages: a new writer (1 MB allocated and cleared, and the next collection
// brought closer) for about every tenth page (issue 19). The list keeps a few writers for good:
// those the encoders running at once need.
// There is a list per level, made when first used.
var gzipFree [kgzip.BestCompression + 1]struct {
	once sync.Once
	c    chan *kgzip.Writer
}

// gzipKept is how many idle writers gzipFree keeps (about 1 MB each).
const gzipKept = 8

// gzipList is the free list of level's writers; level is 1 to 9.
func gzipList(level int) chan *kgzip.Writer {
	l := &gzipFree[level]
	l.once.Do(func() { l.c = make(chan *kgzip.Writer, gzipKept) })
	return l.c
}

func getGzip(level int) *kgzip.Writer {
	select {
	case zw := <-gzipList(level):
		return zw
	default:
		zw, _ := kgzip.NewWriterLevel(nil, level) // level is checked by the callers
		return zw
	}
}

func putGzip(level int, zw *kgzip.Writer) {
	zw.Reset(io.Discard) // not to keep the last member alive
	select {
	case gzipList(level) <- zw:
	default: // enough are kept: this one goes to the collector
	}
}

// Append appends members made by Encode, in order, and returns where each went.
func (w *Writer) Append(members ...[]byte) ([]Loc, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return nil, w.broken
	}
	locs := make([]Loc, 0, len(members))
	for _, m := range members {
		if err := w.ready(); err != nil {
			return locs, err
		}
		w.unindexed() // its records are indexed by reading them back
		loc, err := w.append(m)
		if err != nil {
			return locs, err
		}
		locs = append(locs, loc)
	}
	return locs, nil
}

// AppendPage appends the members of e, all in one file, and writes their index lines beside it,
// so that the seal indexes the file from them instead of reading every record back, which was a
// tenth of a crawl's CPU (docs/performance.md, section 10). It returns where the first member
// went. On an error nothing of e is left in the file.
func (w *Writer) AppendPage(e Encoded) (Loc, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return Loc{}, w.broken
	}
	if len(e.Members) == 0 {
		return Loc{}, nil
	}
	if err := w.ready(); err != nil {
		return Loc{}, err
	}
	var all []byte
	if len(e.Members) == 1 {
		all = e.Members[0]
	} else {
		all = w.page[:0]
		for _, m := range e.Members {
			all = append(all, m...)
		}
		if cap(all) <= maxKeptPage {
			w.page = all
		}
	}
	loc, err := w.append(all)
	if err != nil {
		return Loc{}, err
	}
	if !w.indexed {
		return loc, nil
	}
	if w.lines == nil {
		if w.lines, err = createLines(filepath.Join(w.dir, w.name+LinesSuffix+OpenSuffix)); err != nil {
			w.unindexed()
			return loc, nil
		}
	}
	off := loc.Offset
	for i, m := range e.Members {
		if i < len(e.Lines) && e.Lines[i] != nil {
			l := *e.Lines[i]
			l.Offset, l.Length = off, int64(len(m))
			if err := w.lines.add(l); err != nil {
				w.unindexed()
				break
			}
		}
		off += int64(len(m))
	}
	return loc, nil
}

// unindexed gives up the open file's lines: the seal reads the file back.
func (w *Writer) unindexed() {
	w.indexed = false
	if w.lines != nil {
		w.lines.abandon()
		w.lines = nil
	}
}

// ready makes a file ready for the next record: the current one closed when it is full, a new one
// opened when there is none.
func (w *Writer) ready() error {
	if w.f != nil && w.max > 0 && w.size >= w.max {
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	if w.f == nil {
		return w.openFile()
	}
	return nil
}

// append writes one gzip member at the end of the open file.
func (w *Writer) append(member []byte) (Loc, error) {
	loc := Loc{File: w.name, Offset: w.size, Length: int64(len(member))}
	if _, err := w.f.Write(member); err != nil {
		// A part of the member may be in the file: cut it off, or no later record may follow.
		if terr := w.f.Truncate(w.size); terr != nil {
			w.broken = fmt.Errorf("warc: %s: write failed (%v) and its tail could not be removed: %w", w.name, err, terr)
			return Loc{}, w.broken
		}
		if _, serr := w.f.Seek(w.size, io.SeekStart); serr != nil {
			w.broken = fmt.Errorf("warc: %s: %w", w.name, serr)
			return Loc{}, w.broken
		}
		return Loc{}, fmt.Errorf("warc: write %s: %w", filepath.Join(w.dir, w.name), err)
	}
	w.size += loc.Length
	return loc, nil
}

func (w *Writer) openFile() error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("warc: mkdir %s: %w", w.dir, err)
	}
	if w.seq == 0 {
		w.seq = nextSeq(w.dir, w.prefix)
	}
	name := fmt.Sprintf("%s-%05d%s", w.prefix, w.seq, Ext)
	f, err := os.OpenFile(filepath.Join(w.dir, name+OpenSuffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("warc: create %s: %w", name, err)
	}
	if err := archive.SyncDir(w.dir); err != nil {
		f.Close()
		return fmt.Errorf("warc: sync directory %s: %w", w.dir, err)
	}
	w.f, w.name, w.size = f, name, 0
	w.indexed = true
	w.seq++
	if w.info == nil {
		return nil
	}
	info, err := w.info(name)
	if err == nil {
		var m []byte
		m, err = Encode(info)
		info.Close()
		if err == nil {
			_, err = w.append(m)
		}
	}
	if err != nil {
		w.f.Close()
		os.Remove(filepath.Join(w.dir, name+OpenSuffix))
		w.f = nil
		return err
	}
	return nil
}

// nextSeq is one past the highest sequence number of prefix's files in dir, so that a writer never
// reuses the name of a file left by an earlier one.
func nextSeq(dir, prefix string) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), OpenSuffix)
		if !strings.HasPrefix(name, prefix+"-") || !strings.HasSuffix(name, Ext) {
			continue
		}
		if s, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, prefix+"-"), Ext)); err == nil && s >= n {
			n = s + 1
		}
	}
	return max(n, 1)
}

// Sync makes every record written so far durable.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.broken
	}
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", w.name, err)
	}
	return nil
}

// Close finishes the open file: synced, renamed to its final name, the rename made durable.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.broken
	}
	if w.broken != nil {
		w.f.Close()
		w.f = nil
		w.unindexed()
		return w.broken // left under its open name for Seal
	}
	return w.closeFile()
}

func (w *Writer) closeFile() error {
	f, lines := w.f, w.lines
	w.f, w.lines = nil, nil
	if lines != nil && !w.indexed {
		lines.abandon()
		lines = nil
	}
	defer func() {
		if lines != nil { // not finished: the file was not closed whole
			lines.abandon()
		}
	}()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("warc: close %s: %w", w.name, err)
	}
	final := filepath.Join(w.dir, w.name)
	if err := os.Rename(final+OpenSuffix, final); err != nil {
		return fmt.Errorf("warc: rename %s: %w", final, err)
	}
	if err := archive.SyncDir(w.dir); err != nil {
		return fmt.Errorf("warc: sync directory %s: %w", w.dir, err)
	}
	if lines != nil {
		lines.finish(final, w.size) // a failure only costs the seal a read of the file
		lines = nil
	}
	return nil
}

// Seal makes the files in dir that a writer left open final: each is cut after its last whole
// record — a gzip member that decompresses with the right checksum and holds one complete WARC
// record — synced and renamed, so that no reader ever sees a torn record. A file with no whole
// record is removed. It returns the final names of the files in dir, sorted. A missing dir holds
// no files.
func Seal(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("warc: seal %s: %w", dir, err)
	}
	var names []string
	changed := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case !e.Type().IsRegular():
		case strings.HasSuffix(name, Ext+OpenSuffix):
			p := filepath.Join(dir, name)
			good, err := wholePrefix(p)
			if err != nil {
				return nil, err
			}
			changed = true
			if good == 0 {
				if err := os.Remove(p); err != nil {
					return nil, fmt.Errorf("warc: seal: remove %s: %w", p, err)
				}
				continue
			}
			if err := cutAndSync(p, good); err != nil {
				return nil, err
			}
			final := strings.TrimSuffix(name, OpenSuffix)
			if err := os.Rename(p, filepath.Join(dir, final)); err != nil {
				return nil, fmt.Errorf("warc: seal: rename %s: %w", p, err)
			}
			names = append(names, final)
		case strings.HasSuffix(name, Ext):
			names = append(names, name)
		}
	}
	if changed {
		if err := archive.SyncDir(dir); err != nil {
			return nil, fmt.Errorf("warc: seal: sync directory %s: %w", dir, err)
		}
	}
	sort.Strings(names)
	return names, nil
}

func cutAndSync(p string, size int64) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("warc: seal %s: %w", p, err)
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("warc: seal %s: %w", p, err)
	}
	return nil
}

// wholePrefix returns the length of the longest prefix of the file at p made of whole records.
func wholePrefix(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, fmt.Errorf("warc: seal %s: %w", p, err)
	}
	defer f.Close()
	cr := &countReader{r: f}
	br := bufio.NewReader(cr)
	var good int64
	var zr *gzip.Reader
	for {
		if _, err := br.Peek(1); err != nil {
			return good, nil // the end of the file
		}
		if zr == nil {
			zr, err = gzip.NewReader(br)
		} else {
			err = zr.Reset(br)
		}
		if err != nil {
			return good, nil
		}
		zr.Multistream(false)
		rec, err := io.ReadAll(zr) // checks the member's CRC and length at its end
		if err != nil || !wholeRecord(rec) {
			return good, nil
		}
		good = cr.n - int64(br.Buffered())
	}
}

// wholeRecord reports whether b is exactly one WARC record: a version line, header fields with a
// Content-Length, that many bytes of block, and the two line ends that close it.
func wholeRecord(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("WARC/1.")) {
		return false
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		return false
	}
	length := int64(-1)
	for _, l := range strings.Split(string(b[:end]), "\r\n")[1:] {
		name, value, _ := strings.Cut(l, ":")
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil {
				return false
			}
			length = n
		}
	}
	return length >= 0 && int64(len(b)) == int64(end)+4+length+4 && bytes.HasSuffix(b, []byte("\r\n\r\n"))
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
