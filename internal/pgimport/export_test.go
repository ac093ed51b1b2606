package pgimport

import "time"

// ImportLock is the advisory lock key of a copy, for tests that hold it; SetLockWait shortens how
// long a copy waits for it.
const ImportLock = importLock

func SetLockWait(d time.Duration) (restore func()) {
	old := lockWait
	lockWait = d
	return func() { lockWait = old }
}
