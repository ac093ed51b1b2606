package runcycle

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/crashpoint"
	"github.com/strata-crawler/strata/internal/warc"
)

// sealWARC makes the WARC files of the run that started at start final and indexes them: files a
// killed writer left open are cut after their last whole record and renamed, the run's CDXJ index
// is written beside them (from the lines the writer kept for each file it closed, reading back
// only the others), and the archive's merged index is rebuilt. Each file is written whole
// or not at all, so a seal cut off is simply done again. A run without WARC files has nothing to do.
func sealWARC(arch *archive.Dir, start time.Time) error {
	dir := arch.WARCPath(start)
	names, err := warc.Seal(dir)
	if err != nil || len(names) == 0 {
		return err
	}
	crashpoint.Hit("warc-sealed")
	err = archive.WriteFileFrom(filepath.Join(dir, archive.IndexFile), 0o644, func(w io.Writer) error {
		return warc.WriteIndex(w, dir, names)
	})
	if err != nil {
		return err
	}
	if err := mergeIndexes(arch); err != nil {
		return err
	}
	return warc.RemoveLines(dir) // the run's index holds them now
}

// mergeIndexes rebuilds the archive's merged CDXJ index from every run's, naming each WARC file by
// its path from the archive root, so one index finds any capture by URL and time.
func mergeIndexes(arch *archive.Dir) error {
	entries, err := os.ReadDir(arch.Root())
	if err != nil {
		return err
	}
	var srcs []warc.Source
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(arch.Root(), e.Name(), archive.WARCDir, archive.IndexFile)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		srcs = append(srcs, warc.Source{Path: p, Prefix: path.Join(e.Name(), archive.WARCDir) + "/"})
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path })
	return archive.WriteFileFrom(filepath.Join(arch.Root(), archive.IndexFile), 0o644, func(w io.Writer) error {
		return warc.Merge(w, srcs)
	})
}
