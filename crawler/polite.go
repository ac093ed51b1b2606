package crawler

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/strata-crawler/strata/internal/fetch"
	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/store"
)

// PoliteStore keeps what politeness must remember from one process to the next.
type PoliteStore interface {
	// HostGaps returns the hosts' politeness state as earlier processes left it, for those contacted
	// after since, not to be contacted before since, or unreachable lately. SaveHostGaps stores the
	// gate's; a stored time never moves back.
	HostGaps(ctx context.Context, since time.Time) ([]store.HostGap, error)
	SaveHostGaps(ctx context.Context, gs []store.HostGap) error
	// Unreachable counts one more run in a row in which host could not be reached and moves its due
	// URLs 2^(n−1) runs on, at most maxRuns; it returns that wait and how many URLs it moved.
	// Reachable resets the count.
	Unreachable(ctx context.Context, host string, maxRuns int) (runs, moved int, err error)
	Reachable(ctx context.Context, host string) error
}

var _ PoliteStore = (*store.DB)(nil)

// gapSaveInterval is how often a running stage stores what its gate learnt, so that a killed
// process loses at most this much of it. What is lost is bounded anyway: after a crash every domain
// counts as contacted when the next process starts, with its stored Crawl-delay.
const gapSaveInterval = 5 * time.Second

// restoreGaps gives the gate what earlier processes left — the end of each domain's last response,
// the earliest start of its next request, its Crawl-delay — so that a run started right after
// another keeps every gap that one promised. hosts are the hosts due now; after a crash they, and
// every host remembered, count as contacted just now. It returns the hosts that could not be reached
// lately, whose count a response resets.
func (c *Crawler) restoreGaps(ctx context.Context, hosts map[string]int) (map[string]bool, error) {
	now := time.Now()
	gaps, err := c.store.HostGaps(ctx, now.Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	unreachable := map[string]bool{}
	known := map[string]bool{}
	for _, g := range gaps {
		st := polite.State{Host: g.Host, LastEnd: g.LastEnd, Next: g.Next, CrawlDelay: g.CrawlDelay}
		// A last response in the future means the clock went back (or was faked): the gap counts
		// from now rather than blocking the domain until then.
		if shift := st.LastEnd.Sub(now); shift > 0 {
			st.LastEnd = now
			if !st.Next.IsZero() {
				st.Next = st.Next.Add(-shift)
			}
		}
		if c.cfg.AfterCrash {
			// Requests the crashed run had in flight are unknown.
			st.LastEnd = now
		}
		c.gate.Restore(st)
		known[g.Host] = true
		if g.Unreachable > 0 {
			unreachable[g.Host] = true
		}
	}
	if c.cfg.AfterCrash {
		for h := range hosts {
			if !known[h] {
				c.gate.Seen(h, now)
			}
		}
	}
	return unreachable, nil
}

// saveGaps stores what the gate learnt since it was last asked.
func (c *Crawler) saveGaps(ctx context.Context) error {
	states := c.gate.Changed()
	if len(states) == 0 {
		return nil
	}
	gs := make([]store.HostGap, len(states))
	for i, s := range states {
		gs[i] = store.HostGap{Host: s.Host, LastEnd: s.LastEnd, Next: s.Next, CrawlDelay: s.CrawlDelay}
	}
	return c.store.SaveHostGaps(ctx, gs)
}

// keepGaps stores the gate's state every gapSaveInterval while the stage runs, and stop stores the
// rest and returns the first error of any save. The saves outlive ctx's cancellation: what a
// stopped stage's last requests promised matters most to the next run.
func (c *Crawler) keepGaps(ctx context.Context) (stop func() error) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	var first error
	save := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := c.saveGaps(sctx); err != nil && first == nil {
			first = err
		}
	}
	wg.Go(func() {
		t := time.NewTicker(gapSaveInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				save()
			}
		}
	})
	return func() error {
		close(quit)
		wg.Wait()
		save()
		return first
	}
}

// notReady reports whether a request to host must wait at the gate, and if so hands the domain back
// to the scheduler until it may start: a request must not spend its page timeout waiting there, and
// a Crawl-delay far longer than that is honoured however long it is. It is asked before each
// request of a step, and again once the robots.txt in force (whose Crawl-delay may move the
// domain's next request) is known.
func (s *stage) notReady(ctx context.Context, d *domain, host string) bool {
	at := s.c.gate.Ready(ctx, host)
	if !time.Now().Before(at) {
		return false
	}
	d.notBefore = at
	return true
}

// unreachableKind reports whether a fetch failed because its host could not be reached at all.
func unreachableKind(err error) bool {
	var fe *fetch.Error
	if !errors.As(err, &fe) {
		return false
	}
	switch fe.Kind {
	case fetch.DNS, fetch.Refused, fetch.TLS:
		return true
	}
	return false
}

// backOff gives host up for the rest of the run and makes its due URLs wait 1, 2, 4… runs (at most
// MaxFrMax) by how many runs in a row it could not be reached: a refused port linked from a page is
// an error like any other, not a URL to try again every run. It returns the wait, in runs.
func (s *stage) backOff(ctx context.Context, d *domain, host, why string) (int, error) {
	s.sched.dropHost(d, host)
	runs, moved, err := s.c.store.Unreachable(ctx, host, s.c.cfg.MaxFrMax)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.unreachable[host] = true
	s.mu.Unlock()
	s.c.cfg.Log.Warn("host unreachable; given up for this run, its URLs wait", "host", host, "runs", runs, "urls", moved, "why", why)
	return runs, nil
}

// reachable records that host answered, when it had not lately.
func (s *stage) reachable(ctx context.Context, host string) error {
	s.mu.Lock()
	was := s.unreachable[host]
	delete(s.unreachable, host)
	s.mu.Unlock()
	if !was {
		return nil
	}
	return s.c.store.Reachable(ctx, host)
}

// settleAfter is the shortest wait for a domain's next request after which settle asks whether
// the domain has anything left: a shorter one costs the end of a run less than the query costs the
// crawl (one per page), and the next step finds out anyway.
const settleAfter = time.Second

// settle is asked after a step that leaves d with work perhaps left but its next request not due
// for settleAfter or more: when none of its hosts has a due URL, d is finished now rather than
// after its gap — a run must not wait out a gap (a Crawl-delay, a slow page's, a backoff) only to
// find it has nothing left to do.
func (s *stage) settle(ctx context.Context, d *domain) error {
	hosts, gen := s.sched.hosts(d)
	if len(hosts) == 0 || time.Until(later(s.c.gate.ReadyAt(hosts[0]), d.notBefore)) < settleAfter {
		return nil
	}
	_, err := s.c.store.NextDue(ctx, store.DueQuery{Hosts: hosts, Run: s.run.ID, Only: s.run.Only})
	if errors.Is(err, store.ErrNotFound) {
		s.sched.exhausted(d, gen) // unless URLs joined meanwhile; the scheduler queues d again if any do
		return nil
	}
	return err
}
