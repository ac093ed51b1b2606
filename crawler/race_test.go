//go:build race

package crawler_test

// raceEnabled says the race detector is on: tests that would take minutes under it scale down.
const raceEnabled = true
