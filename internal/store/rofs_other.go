//go:build !unix

package store

// isReadOnlyFS reports whether err is the system's "read-only file system"; other systems report a
// read-only medium as a permission error, which the caller checks as well.
func isReadOnlyFS(error) bool { return false }
