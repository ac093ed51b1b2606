//go:build unix

package archive

import (
	"io"
	"os"
	"syscall"
)

// writeNew creates name (which must not exist) with data, closed but not synced; on an error
// nothing is left at name. It makes the system calls itself: os.OpenFile offers every file to the
// runtime's poller, which a regular file refuses, at the cost of five fcntl and epoll_ctl calls
// around the one open, for a file that is written once and closed. Here a file costs open, write
// and close.
func writeNew(name string, data []byte, perm os.FileMode) error {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	for len(data) > 0 && err == nil {
		var n int
		n, err = syscall.Write(fd, data)
		switch {
		case err == syscall.EINTR:
			err = nil
		case err == nil && n == 0:
			err = io.ErrShortWrite
		case err == nil:
			data = data[n:]
		}
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		syscall.Unlink(name)
	}
	return err
}

// renameFile renames a file: rename(2) alone. os.Rename first stats the new name to refuse
// replacing a directory, which rename(2) refuses too (EISDIR).
func renameFile(oldname, newname string) error {
	for {
		err := syscall.Rename(oldname, newname)
		if err != syscall.EINTR {
			return err
		}
	}
}
