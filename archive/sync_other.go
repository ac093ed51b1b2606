//go:build !linux

package archive

// syncFiles makes a commit step durable with an fsync per file and directory: other systems have
// no portable call that flushes a whole file system and waits for it.
func (d *Dir) syncFiles(batch []*Pending, what syncWhat) error {
	return syncEach(batch, what)
}
