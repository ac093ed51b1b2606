package pgstore

import "time"

// SetWorkerClock replaces w's clock, for tests of lease expiry without waiting.
func SetWorkerClock(w *Worker, now func() time.Time) { w.now = now }
