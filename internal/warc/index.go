package warc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/strata-crawler/strata/archive"
)

// sortBudget bounds the bytes of index lines WriteIndex holds at once. A run's index has a line a
// page of about 300 bytes: held whole, with their decoded form, the lines of a run of 350,000
// pages took 260 MB at the end of the run, more than the crawl itself.
const sortBudget = 16 << 20

// WriteIndex writes to w the CDXJ index of the final WARC files in dir named names, sorted as
// CDXJ files are, by the bytes of the line. It reads each file's lines as FileLines does and sorts
// them in bounded memory: beyond sortBudget bytes it writes them out sorted, to scratch files in
// dir that it merges and removes (archive.CreateTemp names them, so a seal killed midway leaves
// nothing that Repair keeps). Nothing is written to w before every line has been read.
func WriteIndex(w io.Writer, dir string, names []string) error {
	return writeIndex(w, dir, names, sortBudget)
}

func writeIndex(w io.Writer, dir string, names []string, budget int) error {
	readBack := map[string]bool{} // files whose kept lines were found damaged
	for {
		s := &lineSorter{dir: dir, budget: budget}
		err := s.addFiles(names, readBack)
		var bad *BadLinesError
		if errors.As(err, &bad) && !readBack[bad.Path] {
			// Its lines up to the damage are in the sorter already: start again, reading
			// that file back from its records.
			s.close()
			readBack[bad.Path] = true
			continue
		}
		if err == nil {
			err = s.write(w)
		}
		if cerr := s.close(); err == nil {
			err = cerr
		}
		return err
	}
}

// lineSorter sorts CDXJ lines in at most about budget bytes of memory.
type lineSorter struct {
	dir    string
	budget int
	lines  []string
	size   int
	runs   []string // scratch files, each a sorted run of lines
}

// addFiles adds the lines of the WARC files names in the sorter's directory: those kept beside
// each, or those of its records for the files in readBack (by their lines files' paths).
func (s *lineSorter) addFiles(names []string, readBack map[string]bool) error {
	for _, n := range names {
		p := filepath.Join(s.dir, n)
		var err error
		if readBack[p+LinesSuffix] {
			err = IndexFile(p, n, s.add)
		} else {
			err = FileLines(p, n, s.add)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *lineSorter) add(l Line) error {
	line := l.String()
	s.lines = append(s.lines, line)
	s.size += len(line) + 16 // and its string header
	if s.size < s.budget {
		return nil
	}
	return s.spill()
}

// spill writes the lines held, sorted, to a new scratch file.
func (s *lineSorter) spill() error {
	slices.Sort(s.lines)
	f, err := archive.CreateTemp(s.dir)
	if err != nil {
		return fmt.Errorf("warc: sort the index: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	err = writeLines(f, s.lines)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("warc: sort the index: write %s: %w", f.Name(), err)
	}
	clear(s.lines) // for the collector: the backing array is reused
	s.lines, s.size = s.lines[:0], 0
	return nil
}

// write writes every line added, sorted, to w.
func (s *lineSorter) write(w io.Writer) error {
	if len(s.runs) == 0 {
		slices.Sort(s.lines)
		return writeLines(w, s.lines)
	}
	if len(s.lines) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	srcs := make([]Source, len(s.runs))
	for i, r := range s.runs {
		srcs[i] = Source{Path: r}
	}
	return Merge(w, srcs)
}

// writeLines writes lines to w, each ended by a newline.
func writeLines(w io.Writer, lines []string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// close removes the scratch files.
func (s *lineSorter) close() error {
	var errs []error
	for _, r := range s.runs {
		if err := os.Remove(r); err != nil {
			errs = append(errs, fmt.Errorf("warc: remove the index's scratch file: %w", err))
		}
	}
	s.runs, s.lines = nil, nil
	return errors.Join(errs...)
}
