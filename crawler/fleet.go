package crawler

import (
	"context"
	"sync"
	"time"

	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/store"
)

// Fleet shares the frontier with other strata processes, on this machine or others: each
// politeness domain is leased to one of them at a time. The PostgreSQL store's workers implement
// it (pgstore.Worker); a SQLite crawl has none.
type Fleet interface {
	// Take asks for domain on behalf of host, giving the fleet what this process's gate knows of it
	// (mine) and the gap a request to host is followed by. When the lease is Held and Ready is not
	// after now, the request is reserved: the domain's next request time has moved on fleet-wide.
	// Otherwise the domain is to be asked for again at Until (held elsewhere) or Ready.
	Take(ctx context.Context, domain, host string, mine store.HostGap, gap time.Duration) (store.Lease, error)
	// Release gives domain back, with this process's gate's state of it.
	Release(ctx context.Context, domain string, mine store.HostGap) error

	// The run's page budget is the fleet's: its workers draw on one account.

	// OpenBudget returns run's account, opening it with total and newCap unless a worker of the
	// run has: the first worker's cap is the run's. It is idempotent; called again it reads the
	// account as it stands.
	OpenBudget(ctx context.Context, run int64, total, newCap int) (store.Account, error)
	// Spend reserves up to n of run's fetches for URLs of one kind and returns how many it got (0:
	// the run's budget is spent) and the account after. No two calls, from any worker, get the
	// same fetch.
	Spend(ctx context.Context, run int64, isNew bool, n int) (int, store.Account, error)
	// GiveBack returns what a worker reserved and did not use, by kind; one of the two may be
	// negative when reservations for one kind went to the other.
	GiveBack(ctx context.Context, run int64, newBack, knownBack int) error
}

// leases is a stage's side of the fleet: the domains it holds. A domain's lock is held across the
// database call that takes it and the one that gives it back, so that a release decided when the
// domain finished cannot land after a worker of this process took it again.
type leases struct {
	fleet Fleet
	locks sync.Map // domain key → *sync.Mutex

	mu   sync.Mutex
	held map[string]string // domain key → host last asked for
}

func (l *leases) lock(key string) *sync.Mutex {
	m, _ := l.locks.LoadOrStore(key, &sync.Mutex{})
	return m.(*sync.Mutex)
}

func gapOf(s polite.State) store.HostGap {
	return store.HostGap{Host: s.Host, LastEnd: s.LastEnd, Next: s.Next, CrawlDelay: s.CrawlDelay}
}

// lease takes d's lease before a step. It reports wait when the step must not run now — another
// worker holds the domain, or the fleet's gap has not passed — and sets d.notBefore to when to ask
// again. Without a fleet every domain is this process's.
func (s *stage) lease(ctx context.Context, d *domain) (wait bool, err error) {
	l := s.leases
	if l == nil {
		return false, nil
	}
	host := ""
	if hosts, _ := s.sched.hosts(d); len(hosts) > 0 {
		host = hosts[0]
	} else if len(d.hintOrigins) > 0 {
		host = hostOf(d.hintOrigins[0])
	} else {
		return false, nil
	}
	m := l.lock(d.key)
	m.Lock()
	defer m.Unlock()
	gate := s.c.gate
	lease, err := l.fleet.Take(ctx, d.key, host, gapOf(gate.State(host)), gate.Gap(ctx, host, 0))
	if err != nil {
		return false, err
	}
	if !lease.Held {
		d.notBefore = lease.Until
		return true, nil
	}
	l.mu.Lock()
	l.held[d.key] = host
	l.mu.Unlock()
	if lease.TookOver != "" {
		s.c.cfg.Log.Info("domain taken over from a worker whose lease expired", "domain", d.key, "worker", lease.TookOver)
	}
	g := lease.Gap
	gate.Restore(polite.State{Host: host, LastEnd: g.LastEnd, Next: g.Next, CrawlDelay: g.CrawlDelay})
	if lease.Ready.After(time.Now()) {
		d.notBefore = lease.Ready
		return true, nil
	}
	return false, nil
}

// handBack hands d back to the scheduler after a step and, when it has nothing left, its lease
// back to the fleet, so that another worker that finds URLs for it may take it.
func (s *stage) handBack(ctx context.Context, d *domain, more bool) error {
	s.sched.done(d, more)
	l := s.leases
	if l == nil {
		return nil
	}
	m := l.lock(d.key)
	m.Lock()
	defer m.Unlock()
	if !s.sched.idle(d) {
		return nil // queued again, or taken by another of this process's workers
	}
	return s.release(ctx, d.key)
}

// release gives key's lease back if this stage holds it. Call it with key's lock held.
func (s *stage) release(ctx context.Context, key string) error {
	l := s.leases
	l.mu.Lock()
	host, ok := l.held[key]
	delete(l.held, key)
	l.mu.Unlock()
	if !ok {
		return nil
	}
	return l.fleet.Release(ctx, key, gapOf(s.c.gate.State(host)))
}

// releaseAll gives back every lease the stage still holds, when it ends.
func (s *stage) releaseAll(ctx context.Context) error {
	l := s.leases
	if l == nil {
		return nil
	}
	l.mu.Lock()
	keys := make([]string, 0, len(l.held))
	for k := range l.held {
		keys = append(keys, k)
	}
	l.mu.Unlock()
	var first error
	for _, k := range keys {
		m := l.lock(k)
		m.Lock()
		if err := s.release(ctx, k); err != nil && first == nil {
			first = err
		}
		m.Unlock()
	}
	return first
}

// idle reports whether d is neither queued nor being worked on.
func (s *scheduler) idle(d *domain) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !d.active && d.index < 0
}
