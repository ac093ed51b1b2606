package archive

import (
	"path/filepath"
	"time"
)

// WARCDir is the directory of a run's WARC files and CDXJ index, inside the run's directory. It
// starts with '_', which PagePath never gives a host, so it cannot be mistaken for a site.
const WARCDir = "_warc"

// IndexFile is the name of a CDXJ index: a run's, in its WARCDir, and the merged one at the root.
const IndexFile = "index.cdxj"

// WARCPath returns the directory of the WARC files of the run that started at runStart.
func (d *Dir) WARCPath(runStart time.Time) string {
	return filepath.Join(d.root, RunDir(runStart), WARCDir)
}
