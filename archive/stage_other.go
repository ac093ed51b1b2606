//go:build !unix

package archive

import "os"

// writeNew creates name (which must not exist) with data, closed but not synced; on an error
// nothing is left at name.
func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

func renameFile(oldname, newname string) error { return os.Rename(oldname, newname) }
