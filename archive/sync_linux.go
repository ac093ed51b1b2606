package archive

import (
	"errors"

	"golang.org/x/sys/unix"
)

// syncFS flushes the file system holding the open file fd; a seam for tests.
var syncFS = unix.Syncfs

// batchSync makes the steps of one commit durable with one syncfs(2) of the archive's file system
// each, whatever the batch's size: one call instead of an fsync per file and directory. It flushes
// other writers' data on that file system too, which costs them nothing and this step only what
// they had pending. A kernel without syncfs (before Linux 2.6.39, or a sandbox that refuses it)
// gets the fsyncs. The root is opened once for the commit's three steps.
type batchSync struct {
	root  string
	batch []*Pending
	fd    int // the root, open; -1 until the first step
}

func (d *Dir) newBatchSync(batch []*Pending) *batchSync {
	return &batchSync{root: d.root, batch: batch, fd: -1}
}

// files makes a commit step durable.
func (s *batchSync) files(what syncWhat) error {
	if s.fd < 0 {
		fd, err := unix.Open(s.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		s.fd = fd
	}
	err := syncFS(s.fd)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return syncEach(s.batch, what)
	}
	return err
}

func (s *batchSync) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}
