package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-crawler/strata/archive"
)

// LinesSuffix names the file of index lines a Writer leaves beside a WARC file it closed whole
// ("<name>.warc.gz.lines"; "<name>.warc.gz.lines.open" while the file is written), so that the
// seal indexes the file without reading every record back. The seal removes it once the run's
// index holds its lines; a file without one is read back.
const LinesSuffix = ".lines"

// linesTrailer is the last line of a lines file: the WARC file it indexes, as it was when closed.
// A lines file without it was not finished.
type linesTrailer struct {
	WARC string `json:"warc"`
	Size int64  `json:"size"`
}

// linesFile is the lines file of a WARC file being written, under a temporary name until finish.
type linesFile struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	enc  *json.Encoder
}

func createLines(path string) (*linesFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriter(f)
	return &linesFile{path: path, f: f, bw: bw, enc: json.NewEncoder(bw)}, nil
}

// add writes l, a line of a record of the file (its Filename is set when the lines are read).
func (lf *linesFile) add(l Line) error {
	l.Filename = ""
	return lf.enc.Encode(l)
}

// finish ends the lines of the final WARC file at warcPath, size bytes long, and gives them their
// name beside it, whole or not at all (synced, renamed, the directory synced). On an error what
// was written is removed.
func (lf *linesFile) finish(warcPath string, size int64) error {
	err := lf.enc.Encode(linesTrailer{WARC: filepath.Base(warcPath), Size: size})
	if err == nil {
		err = lf.bw.Flush()
	}
	if err == nil {
		err = lf.f.Sync()
	}
	if cerr := lf.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lf.path, warcPath+LinesSuffix)
	}
	if err == nil {
		err = archive.SyncDir(filepath.Dir(warcPath))
	}
	if err != nil {
		os.Remove(lf.path)
		return fmt.Errorf("warc: index lines of %s: %w", warcPath, err)
	}
	return nil
}

// abandon removes the unfinished lines.
func (lf *linesFile) abandon() {
	lf.f.Close()
	os.Remove(lf.path)
}

// FileLines calls fn with each index line of the final WARC file at path, named filename in them:
// those its writer left beside it when it closed the file whole, or, where there are none or they
// do not describe the file as it is, those IndexFile reads back from it. The lines are read one at
// a time, so a file of any size costs the memory of one line. A kept line that does not decode,
// though its trailer vouched for the lines, is a *BadLinesError: fn has had the lines before it.
func FileLines(path, filename string, fn func(Line) error) error {
	f, end, err := openLines(path)
	if err != nil {
		return IndexFile(path, filename, fn)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, end))
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return &BadLinesError{Path: path + LinesSuffix, Line: n, Err: err}
		}
		l.Filename = filename
		if err := fn(l); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &BadLinesError{Path: path + LinesSuffix, Err: err}
	}
	return nil
}

// BadLinesError is a lines file whose trailer describes its WARC file but whose lines do not all
// read: damaged after it was written. Reading the WARC file back (IndexFile) gives its lines.
type BadLinesError struct {
	Path string
	Line int // 0 when the file could not be read
	Err  error
}

func (e *BadLinesError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("warc: index lines %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("warc: index lines %s: line %d: %v", e.Path, e.Line, e.Err)
}

func (e *BadLinesError) Unwrap() error { return e.Err }

// maxLine bounds a line of a lines file or an index, which holds its URL twice (the SURT key and
// the url field): far above the URL filter's default max_length of 2,048 bytes.
const maxLine = 16 << 20

// openLines opens the lines file of the WARC file at path when its trailer (its last line)
// describes that file as it is, and returns it with the length of the lines before the trailer.
func openLines(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path + LinesSuffix)
	if err != nil {
		return nil, 0, err
	}
	t, end, err := readTrailer(f)
	if err == nil && (t.WARC != filepath.Base(path) || t.Size != st.Size()) {
		err = fmt.Errorf("lines of %q (%d bytes), not of %s (%d bytes)", t.WARC, t.Size, filepath.Base(path), st.Size())
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, end, nil
}

// readTrailer reads the last line of the lines file f, which must end in a newline, and returns
// it decoded with its offset.
func readTrailer(f *os.File) (linesTrailer, int64, error) {
	var t linesTrailer
	st, err := f.Stat()
	if err != nil {
		return t, 0, err
	}
	// A trailer is a file name and a size: far shorter than this.
	tail := make([]byte, min(st.Size(), 4<<10))
	if _, err := f.ReadAt(tail, st.Size()-int64(len(tail))); err != nil {
		return t, 0, err
	}
	body, ok := bytes.CutSuffix(tail, []byte("\n"))
	if !ok {
		return t, 0, errors.New("no trailer: the lines end without a newline")
	}
	i := bytes.LastIndexByte(body, '\n') + 1
	if i == 0 && int64(len(tail)) < st.Size() {
		return t, 0, errors.New("no trailer: the last line is too long")
	}
	if err := json.Unmarshal(body[i:], &t); err != nil || t.WARC == "" {
		return t, 0, fmt.Errorf("no trailer: %q", body[i:])
	}
	return t, st.Size() - int64(len(tail)) + int64(i), nil
}

// RemoveLines removes the lines files in dir, and any a writer left half written, once the run's
// index holds their lines.
func RemoveLines(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("warc: %s: %w", dir, err)
	}
	removed := false
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, LinesSuffix) || strings.HasSuffix(n, LinesSuffix+OpenSuffix) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("warc: remove %s: %w", n, err)
			}
			removed = true
		}
	}
	if removed {
		if err := archive.SyncDir(dir); err != nil {
			return fmt.Errorf("warc: sync directory %s: %w", dir, err)
		}
	}
	return nil
}
