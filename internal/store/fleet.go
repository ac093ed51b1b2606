package store

import "time"

// Lease is what a worker of a fleet (several strata processes on one PostgreSQL frontier) learns
// when it asks for a politeness domain. SQLite has one process and no leases.
type Lease struct {
	// Held says the asking worker holds the domain now, until it releases it or stops renewing.
	Held bool
	// Until is when the lease of the worker holding the domain expires, when Held is false: the
	// earliest time to ask again.
	Until time.Time
	// Ready is, when Held, the earliest start of the domain's next request fleet-wide: the gap after
	// the last response of any worker, or its Crawl-delay. A Ready not after the time asked means the
	// request is reserved: the domain's next request time has moved on by the gap.
	Ready time.Time
	// Gap is the domain's politeness state as the fleet left it, for the worker's own gate.
	Gap HostGap
	// TookOver names the worker whose lease had expired when this one took the domain, if any:
	// a worker that died or stopped renewing. Its request in flight, if any, is counted as ending
	// at the take-over.
	TookOver string
}

// Account is a run's page budget shared by the workers of a fleet: the run's cap and the share of
// it never-fetched URLs may take first, and what the fleet has reserved of each kind so far.
type Account struct {
	Total, NewCap        int
	NewTaken, KnownTaken int
}

// Left returns the fetches the fleet has not reserved yet.
func (a Account) Left() int { return max(a.Total-a.NewTaken-a.KnownTaken, 0) }
