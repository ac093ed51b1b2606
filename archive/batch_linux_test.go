package archive

import (
	"strings"
	"syscall"
	"testing"
)

// A failed sync fails the whole batch and leaves nothing of it; a kernel without syncfs gets the
// fsyncs instead.
func TestCommitSyncFailure(t *testing.T) {
	tests := []struct {
		name   string
		errno  syscall.Errno
		failAt int // the syncfs call that fails, 1-based
		ok     bool
	}{
		{"content sync fails", syscall.EIO, 1, false},
		{"rename sync fails", syscall.EIO, 2, false},
		{"page.json sync fails", syscall.ENOSPC, 3, false},
		{"no syncfs: fsyncs instead", syscall.ENOSYS, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := syncFS
			t.Cleanup(func() { syncFS = orig })
			calls := 0
			syncFS = func(fd int) error {
				calls++
				if calls == tt.failAt || (tt.errno == syscall.ENOSYS) {
					return tt.errno
				}
				return orig(fd)
			}
			d, _ := Open(t.TempDir())
			batch := stageAll(t, d, "https://a.example/", "https://a.example/b")
			for i, err := range d.Commit(batch) {
				if tt.ok != (err == nil) {
					t.Errorf("version %d: error %v", i, err)
				}
				if err != nil && !strings.Contains(err.Error(), tt.errno.Error()) {
					t.Errorf("version %d: error %q does not name the cause", i, err)
				}
			}
			for _, p := range listTree(t, d.Root()) {
				if !tt.ok && !strings.HasSuffix(p, "/") {
					t.Errorf("file left by a failed commit: %s", p)
				}
			}
			if tt.ok && !complete(t, d, batch[1].Path(), "https://a.example/b") {
				t.Error("version incomplete after the fallback commit")
			}
		})
	}
}
