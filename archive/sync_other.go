//go:build !linux

package archive

// batchSync makes a commit's steps durable with an fsync per file and directory: other systems
// have no portable call that flushes a whole file system and waits for it.
type batchSync struct{ batch []*Pending }

func (d *Dir) newBatchSync(batch []*Pending) *batchSync { return &batchSync{batch: batch} }

func (s *batchSync) files(what syncWhat) error { return syncEach(s.batch, what) }

func (s *batchSync) close() {}
