//go:build race

package simulate

// raceEnabled says the race detector is on. The policy tests below run whole simulations, seven
// times slower under it (about 160 s against 22 s), and test no concurrency that TestRunInvariants
// does not run under it too: they skip, and .ci/run runs them without -race.
const raceEnabled = true
