package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LinesSuffix names the file of index lines a Writer leaves beside a WARC file it closed whole
// ("<name>.warc.gz.lines"), so that the seal indexes the file without reading every record back.
// The seal removes it once the run's index holds its lines; a file without one is read back.
const LinesSuffix = ".lines"

// linesHeader is the first line of a lines file: the WARC file it indexes, as it was when closed.
type linesHeader struct {
	WARC string `json:"warc"`
	Size int64  `json:"size"`
}

// writeLinesFile writes the lines of the final WARC file at warcPath beside it, whole or not at
// all (a temporary name, synced, renamed). A failure only costs the seal a read of the file, so it
// is not an error: what was written is removed.
func writeLinesFile(warcPath string, lines []Line) {
	st, err := os.Stat(warcPath)
	if err != nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(linesHeader{WARC: filepath.Base(warcPath), Size: st.Size()})
	for _, l := range lines {
		l.Filename = ""
		enc.Encode(l)
	}
	tmp := warcPath + LinesSuffix + OpenSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, warcPath+LinesSuffix)
	}
	if err != nil {
		os.Remove(tmp)
		return
	}
	syncDir(filepath.Dir(warcPath))
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
	if !sc.Scan() {
		return nil, errors.New("no header")
	}
	var h linesHeader
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
		return nil, err
	}
	if h.WARC != filepath.Base(path) || h.Size != st.Size() {
		return nil, fmt.Errorf("lines of %s (%d bytes), not of %s (%d bytes)", h.WARC, h.Size, filepath.Base(path), st.Size())
	}
	var lines []Line
	for sc.Scan() {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, err
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
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
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("warc: sync directory %s: %w", dir, err)
		}
	}
	return nil
}
