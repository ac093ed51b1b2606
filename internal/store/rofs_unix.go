//go:build unix

package store

import (
	"errors"
	"syscall"
)

// isReadOnlyFS reports whether err is the system's "read-only file system".
func isReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }
