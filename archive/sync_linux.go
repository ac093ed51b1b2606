package archive

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the file system holding f; a seam for tests.
var syncFS = func(f *os.File) error { return unix.Syncfs(int(f.Fd())) }

// syncFiles makes a commit step durable with one syncfs(2) of the archive's file system, whatever
// the batch's size: one call instead of an fsync per file and directory. It flushes other writers'
// data on that file system too, which costs them nothing and this step only what they had pending.
// A kernel without syncfs (before Linux 2.6.39, or a sandbox that refuses it) gets the fsyncs.
func (d *Dir) syncFiles(batch []*Pending, what syncWhat) error {
	f, err := os.Open(d.root)
	if err != nil {
		return err
	}
	defer f.Close()
	err = syncFS(f)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return syncEach(batch, what)
	}
	return err
}
