package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unsafe"
)

// Pending is a version whose files are written under temporary names beside their final ones, not
// yet in place and not yet durable. [Dir.Commit] puts many of them in place together.
//
// Writing a version durably on its own costs several fsyncs (each file, its directory, the
// directories created for it); a crawler writing hundreds of pages a second spends most of its time
// waiting for them. Staged versions share the syncs instead: a batch of any size costs three.
type Pending struct {
	rel     string   // the version's directory, relative to the root
	dir     string   // the same, absolute
	content []staged // page.html or page.raw, and page.txt
	meta    staged   // page.json, put in place last
	dirs    []string // the directories from dir up to the root, for the portable sync
	placed  []string // the final names the commit has renamed files to so far
}

type staged struct{ tmp, final string }

// Path returns the version's directory relative to the archive root, as Write returns it.
func (p *Pending) Path() string { return p.rel }

// Stage writes v's files to temporary names in its version directory, creating the directories it
// needs. Nothing is in place or durable until [Dir.Commit]; [Pending.Discard] removes what Stage
// wrote. On an error nothing of the version is left behind.
func (d *Dir) Stage(runStart time.Time, v Version) (*Pending, error) {
	rel, err := VersionPath(runStart, v.URL)
	if err != nil {
		return nil, err
	}
	p := &Pending{rel: rel, dir: filepath.Join(d.root, filepath.FromSlash(rel))}
	raw := HTMLFile
	if !IsHTML(v.ContentType) {
		raw = RawFile
	}
	v.Meta.RawFile = raw
	meta, err := json.MarshalIndent(v.Meta, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", v.URL, err)
	}
	if err := mkdirAll(p.dir); err != nil {
		return nil, err
	}
	for dir := p.dir; len(dir) >= len(d.root); dir = filepath.Dir(dir) {
		p.dirs = append(p.dirs, dir)
		if dir == filepath.Dir(dir) {
			break
		}
	}
	files := []struct {
		name string
		data []byte
	}{
		{raw, v.Body},
		{TextFile, stringBytes(v.Text)}, // read only: a copy would cost an allocation of the text's size
		{MetaFile, append(meta, '\n')},
	}
	for i, f := range files {
		tmp, err := writeTempIn(p.dir, f.data, 0o644)
		if err != nil {
			p.Discard()
			return nil, opError("write", filepath.Join(p.dir, f.name), err)
		}
		s := staged{tmp: tmp, final: filepath.Join(p.dir, f.name)}
		if i == len(files)-1 {
			p.meta = s
		} else {
			p.content = append(p.content, s)
		}
	}
	return p, nil
}

// Discard removes the temporary files of a version that will not be committed.
func (p *Pending) Discard() {
	for _, s := range p.content {
		os.Remove(s.tmp)
	}
	if p.meta.tmp != "" {
		os.Remove(p.meta.tmp)
	}
}

// undo removes whatever of p the commit put in place, and its temporary files.
func (p *Pending) undo() {
	p.Discard()
	for _, name := range p.placed {
		os.Remove(name)
	}
	p.placed = nil
}

// Commit puts the staged versions in place, durably, and returns one error per version (nil for
// those now in place). The order is that of Write for every version at once: the files' content
// is synced before any of them takes its final name, so a name never shows a partial file after a
// crash; the content files are in place and synced before page.json, so a version directory
// holding page.json is complete. A failed sync fails every version of the batch, since it cannot
// say whose data was lost; a failed rename fails only its version. Whatever failed is removed.
func (d *Dir) Commit(batch []*Pending) []error {
	errs := make([]error, len(batch))
	failAll := func(op string, err error) []error {
		for i, p := range batch {
			if errs[i] == nil {
				p.undo()
				errs[i] = opError(op, p.dir, err)
			}
		}
		return errs
	}
	if len(batch) == 0 {
		return errs
	}
	sync := d.newBatchSync(batch)
	defer sync.close()
	if err := sync.files(contentTemps); err != nil {
		return failAll("sync", err)
	}
	rename := func(i int, s staged) bool {
		if err := renameFile(s.tmp, s.final); err != nil {
			batch[i].undo()
			errs[i] = opError("rename to", s.final, err)
			return false
		}
		batch[i].placed = append(batch[i].placed, s.final)
		return true
	}
	for i, p := range batch {
		for _, s := range p.content {
			if !rename(i, s) {
				break
			}
		}
	}
	if err := sync.files(versionDirs); err != nil {
		return failAll("sync directory", err)
	}
	for i, p := range batch {
		if errs[i] == nil {
			rename(i, p.meta)
		}
	}
	if err := sync.files(versionDirs); err != nil {
		return failAll("sync directory", err)
	}
	return errs
}

// What a commit step makes durable.
type syncWhat int

const (
	contentTemps syncWhat = iota // the temporary files' content, and the directories leading to them
	versionDirs                  // the version directories' entries (the renames)
)

// syncEach is the portable form of a commit step's sync: an fsync per file and per directory.
func syncEach(batch []*Pending, what syncWhat) error {
	seen := map[string]bool{}
	syncDirOnce := func(dir string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		return SyncDir(dir)
	}
	for _, p := range batch {
		switch what {
		case contentTemps:
			for _, s := range append(p.content[:len(p.content):len(p.content)], p.meta) {
				if err := syncPath(s.tmp); err != nil {
					return err
				}
			}
			for _, dir := range p.dirs[1:] { // a directory created for the version needs its parent's entry
				if err := syncDirOnce(dir); err != nil {
					return err
				}
			}
		case versionDirs:
			if err := syncDirOnce(p.dir); err != nil {
				return err
			}
		}
	}
	return nil
}

func syncPath(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = syncFile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTempIn writes data to a new temporary file in dir and returns its name; the file is closed
// but not synced. On an error nothing is left behind.
func writeTempIn(dir string, data []byte, perm os.FileMode) (string, error) {
	var tmp string
	var err error
	for range 16 { // a name taken (by a crashed run's file, say): another
		tmp = filepath.Join(dir, tempName())
		err = writeNew(tmp, data, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	return tmp, nil
}

// mkdirAll is os.MkdirAll with the archive's error form; the new entries are made durable by the
// commit's sync. It tries the directory itself first: a version's directory is nearly always new
// below an existing parent, which costs one mkdir instead of MkdirAll's stat of the directory,
// stat of its parent and mkdir. An existing directory costs one mkdir too (EEXIST); a file in its
// place makes the first file written into it fail with ENOTDIR.
func mkdirAll(dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil || errors.Is(err, fs.ErrExist):
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return opError("mkdir", dir, err)
	}
	parent := filepath.Dir(dir)
	if parent == dir { // a missing volume root; nothing to create
		return opError("mkdir", dir, err)
	}
	if err := mkdirAll(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return opError("mkdir", dir, err)
	}
	return nil
}

// stringBytes returns the bytes of s without a copy, for a call that only reads them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
