package store

// snapshotRoots is the SQL set of the snapshot seeds' ids: every active page whose root_id is in it
// is fetched in every run (migrations/0019_outcomes_snapshot.sql). The seeds are found through
// urls_seed, so the set costs a few rows to build.
const snapshotRoots = `(SELECT id FROM urls WHERE is_seed = 1 AND snapshot = 1)`

// snapshotDue is the SQL condition for an active page that the countdown makes due because its
// seed asks for a snapshot every run: not while its host is being backed off as unreachable, which
// is politeness, not scheduling.
const snapshotDue = `state = 'active' AND root_id IN ` + snapshotRoots + `
	AND host NOT IN (SELECT host FROM politeness WHERE unreachable > 0)`
