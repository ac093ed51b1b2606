package archive

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// tempPrefix starts every temporary file. PagePath never yields a name starting with '.', so
// CleanTemp cannot mistake an archived directory for one.
const tempPrefix = ".strata-tmp-"

// Seams for tests that need a step to fail; the file system offers no portable way to make fsync
// or a write fail on demand.
var (
	writeTemp = func(f *os.File, data []byte) error { _, err := f.Write(data); return err }
	syncFile  = (*os.File).Sync
)

// WriteFile writes data to name atomically and durably: a temporary file in the same directory
// (name prefix ".strata-tmp-"), write, Sync, Close, Rename, then fsync the directory. On any error the
// temporary file is removed and nothing is left at name that was not there before. Parent directories are
// created (0o755) and the new directory entries fsynced.
//
// Readers therefore see either the old file or the complete new one, and after a crash the new
// one is either absent or whole. The file gets perm (less the umask) even when it replaces a file
// with other permissions. The one error after which name has changed is from the final
// directory sync ("archive: sync directory of <name>: ..."): the new file is in place, but its
// survival of a power cut is not assured.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return writeAtomic(name, perm, func(f *os.File) error { return writeTemp(f, data) })
}

// WriteFileFrom is WriteFile for content too large to hold in memory: write streams it to w, and
// name gets it atomically and durably once write returns nil. When write fails, nothing changes
// at name and its error is returned, wrapped.
func WriteFileFrom(name string, perm os.FileMode, write func(w io.Writer) error) error {
	return writeAtomic(name, perm, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

func writeAtomic(name string, perm os.FileMode, write func(*os.File) error) error {
	dir := filepath.Dir(name)
	if err := mkdirAllSync(dir); err != nil {
		return err
	}
	tmp, f, err := createTemp(dir, perm)
	if err != nil {
		return opError("create temporary file in", dir, err)
	}
	fail := func(op string, err error) error {
		f.Close()
		os.Remove(tmp)
		return opError(op, name, err)
	}
	if err := write(f); err != nil {
		return fail("write", err)
	}
	if err := syncFile(f); err != nil {
		return fail("sync", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return opError("close", name, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return opError("rename to", name, err)
	}
	if err := SyncDir(dir); err != nil {
		return opError("sync directory of", name, err)
	}
	return nil
}

// CreateTemp creates a scratch file in dir, named as WriteFile names its temporary files, so that
// Repair and CleanTemp remove it should its writer die before removing it itself.
func CreateTemp(dir string) (*os.File, error) {
	_, f, err := createTemp(dir, 0o600)
	if err != nil {
		return nil, opError("create temporary file in", dir, err)
	}
	return f, nil
}

// createTemp is os.CreateTemp but with perm passed to open, so that the umask applies as it
// would for os.WriteFile; chmod after the fact would ignore it.
func createTemp(dir string, perm os.FileMode) (string, *os.File, error) {
	var err error
	for range 16 {
		tmp := filepath.Join(dir, tempName())
		var f *os.File
		f, err = os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return tmp, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return "", nil, err
}

// tempName returns a new random name for a temporary file.
func tempName() string {
	var r [8]byte
	rand.Read(r[:])
	return tempPrefix + hex.EncodeToString(r[:])
}

// mkdirAllSync is os.MkdirAll that also fsyncs the parent of every directory it creates: without
// that, a crash can lose the new directory and with it a file already reported as durable.
func mkdirAllSync(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return opError("mkdir", dir, syscall.ENOTDIR)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return opError("mkdir", dir, err)
	}
	parent := filepath.Dir(dir)
	if parent == dir { // a missing volume root; nothing to create
		return opError("mkdir", dir, err)
	}
	if err := mkdirAllSync(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		// Another writer may have created it meanwhile; that writer syncs the parent.
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return nil
		}
		return opError("mkdir", dir, err)
	}
	if err := SyncDir(parent); err != nil {
		return opError("sync directory", parent, err)
	}
	return nil
}

// SyncDir makes the entries of dir durable: a file created, renamed or removed in it survives a
// crash once SyncDir returns. Windows cannot open a directory for flushing and commits renames
// through the journal, and some file systems (certain FUSE and network ones) refuse fsync on a
// directory; as in SQLite, such a refusal is not treated as a failure, since there is nothing
// better to do. The WARC writer, whose files live in the archive, uses it too.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}

// opError formats "archive: <op> <path>: <cause>". The cause loses its own *PathError wrapper,
// whose path would be the temporary file's and only repeat or confuse, but keeps the errno, so
// errors.Is(err, fs.ErrPermission) and the like still work.
func opError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Errorf("archive: %s %s: %w", op, path, err)
}

// CleanTemp removes stray temporary files (left by a crash) under root, returning how many it removed.
//
// Run it before any writer starts: it cannot tell a crashed writer's file from a live one's, and
// removing a live one makes that WriteFile fail (safely). A missing root holds nothing to clean
// and is not an error. Unreadable directories do not stop the walk; their errors are returned
// together at the end.
func CleanTemp(root string) (int, error) {
	n := 0
	var errs []error
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			errs = append(errs, opError("clean", p, err))
			return nil // WalkDir skips the directory it could not read
		}
		// Only regular files: WriteFile makes nothing else, and a directory or link named like
		// one is somebody else's.
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), tempPrefix) {
			return nil
		}
		switch err := os.Remove(p); {
		case err == nil:
			n++
		case !errors.Is(err, fs.ErrNotExist): // gone already is what we wanted
			errs = append(errs, opError("remove", p, err))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, opError("clean", root, err))
	}
	return n, errors.Join(errs...)
}
