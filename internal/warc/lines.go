package warc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
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

// FileLines returns the index lines of the final WARC file at path, named filename in them: those
// its writer left beside it when it closed the file whole, or, where there are none or they do not
// describe the file as it is, those IndexFile reads back from it.
func FileLines(path, filename string) ([]Line, error) {
	lines, err := readLinesFile(path)
	if err != nil {
		return IndexFile(path, filename)
	}
	for i := range lines {
		lines[i].Filename = filename
	}
	return lines, nil
}

func readLinesFile(path string) ([]Line, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path + LinesSuffix)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var raw [][]byte
	for sc.Scan() {
		raw = append(raw, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, errors.New("no lines")
	}
	var t linesTrailer
	if err := json.Unmarshal(raw[len(raw)-1], &t); err != nil {
		return nil, err
	}
	if t.WARC != filepath.Base(path) || t.Size != st.Size() {
		return nil, fmt.Errorf("lines of %q (%d bytes), not of %s (%d bytes)", t.WARC, t.Size, filepath.Base(path), st.Size())
	}
	lines := make([]Line, len(raw)-1)
	for i, b := range raw[:len(raw)-1] {
		if err := json.Unmarshal(b, &lines[i]); err != nil {
			return nil, err
		}
	}
	return lines, nil
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
