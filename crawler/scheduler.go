package crawler

import (
	"container/heap"
	"context"
	"strings"
	"sync"
	"time"

	"github.com/strata-crawler/strata/internal/polite"
	"github.com/strata-crawler/strata/internal/robots"
)

// domain is the stage's state for one politeness domain.
type domain struct {
	key   string
	hosts []string // hosts that may still have due URLs, in the order they are worked through
	rank  int      // today's rotation order, to break ties between domains ready at once

	// Owned by the scheduler (under its lock):
	gen      int // counts addHost calls, so a worker can tell whether URLs joined while it looked
	readyAt  time.Time
	index    int // in the heap, -1 when not queued
	active   bool
	finished bool
	dropped  bool

	// Owned by the one worker holding the domain:
	robots map[string]*robotsEntry // by origin
	hints  map[string]*hintQueue   // by origin
	// hintOrigins are origins whose sitemaps and feeds are to be read this run although nothing of
	// theirs may be due.
	hintOrigins []string
	sample      *siteSample     // the hybrid policy's sampler of this run, once asked
	feeds       map[string]bool // feeds its pages linked that are recorded already in this run
	timeouts    int             // consecutive page timeouts
	failures    int             // consecutive 5xx answers
	notBefore   time.Time       // the gate's next time for the host a step last asked about
}

type robotsEntry struct {
	rules   *robots.Rules // nil: unreachable for this run
	private bool          // the host resolves to an address strata may not contact
}

// scheduler hands ready domains to workers, the earliest-ready first.
type scheduler struct {
	gate *polite.Gate

	mu      sync.Mutex
	queue   domainHeap
	domains map[string]*domain
	busy    int
	dropped int
	wake    chan struct{}   // closed (and replaced) whenever the queue or busy count changes
	gone    map[string]bool // hosts given up for the run

	// halt, if set, reports that nothing more can be fetched (the budget is spent): next hands out
	// no more domains. onLate, if set, is told of each domain given up because its next request may
	// not start before the stage's deadline; late counts them.
	halt   func() bool
	onLate func(key string, readyAt time.Time)
	late   int
	// horizon, when above zero, is how far ahead a domain's next request may be for the current
	// round to wait for it: one further off is set aside until the next round, and onPostpone is
	// told, so that its chosen URLs go back to the budget.
	horizon    time.Duration
	onPostpone func(d *domain)
}

func newScheduler(gate *polite.Gate) *scheduler {
	return &scheduler{gate: gate, domains: map[string]*domain{}, wake: make(chan struct{}), gone: map[string]bool{}}
}

// addHosts groups hosts into domains, returning the keys of domains it created.
func (s *scheduler) addHosts(hosts map[string]int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for _, h := range sortedKeys(hosts) {
		d, created := s.domainOf(h)
		if created {
			keys = append(keys, d.key)
		}
		d.hosts = append(d.hosts, h)
	}
	return keys
}

// domainOf returns the domain of host, creating it (last in today's rotation, not queued) if the
// stage has none yet. Call it with s.mu held.
func (s *scheduler) domainOf(host string) (d *domain, created bool) {
	key := s.gate.Key(host)
	if d, ok := s.domains[key]; ok {
		return d, false
	}
	d = &domain{key: key, index: -1, rank: len(s.domains), robots: map[string]*robotsEntry{}, hints: map[string]*hintQueue{},
		feeds: map[string]bool{}}
	s.domains[key] = d
	return d, true
}

// rankAndStart queues the domains in the given order.
func (s *scheduler) rankAndStart(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		d := s.domains[k]
		d.rank = i
		d.readyAt = s.gate.ReadyAt(d.hosts[0])
		heap.Push(&s.queue, d)
	}
	s.signal()
}

// addPicked brings the hosts of a round's chosen URLs into the schedule: a domain new to the stage
// joins last in today's rotation, one that ran out of work is queued again.
func (s *scheduler) addPicked(hosts map[string]int) {
	for _, h := range sortedKeys(hosts) {
		s.addHost(h)
	}
}

// domainFor returns host's domain, creating it if the stage has none yet.
func (s *scheduler) domainFor(host string) *domain {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, _ := s.domainOf(host)
	return d
}

// readyWithin reports whether host's domain may be contacted within d from now.
func (s *scheduler) readyWithin(host string, d time.Duration) bool {
	s.mu.Lock()
	dom, ok := s.domains[s.gate.Key(host)]
	s.mu.Unlock()
	at := s.gate.ReadyAt(host)
	if ok {
		at = later(at, dom.notBefore)
	}
	return time.Until(at) <= d
}

// isDropped reports whether the domain with key was given up for the run.
func (s *scheduler) isDropped(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.domains[key]
	return ok && d.dropped
}

// addHintOrigin brings an origin whose hints are to be read into the schedule, under host's domain.
// Call it before the stage's workers start.
func (s *scheduler) addHintOrigin(host, origin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, _ := s.domainOf(host)
	d.hintOrigins = append(d.hintOrigins, origin)
	if d.index < 0 && !d.active {
		d.readyAt = s.gate.ReadyAt(host)
		heap.Push(&s.queue, d)
		s.signal()
	}
}

// addHost brings a host with new due URLs into the schedule: its domain is queued again if it had run
// out of work.
func (s *scheduler) addHost(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, _ := s.domainOf(host)
	if d.dropped || s.gone[host] {
		return
	}
	if !contains(d.hosts, host) {
		d.hosts = append(d.hosts, host)
	}
	d.gen++
	if !d.active && d.index < 0 {
		d.finished = false
		d.readyAt = s.gate.ReadyAt(host)
		heap.Push(&s.queue, d)
		s.signal()
	}
}

func (s *scheduler) signal() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// next blocks until a domain is ready and returns it, or returns nil when no work is left (nothing
// queued and nothing in flight that could add more, or halt says nothing more can be fetched).
// A domain that may not be contacted before ctx's deadline is given up for the run rather than
// waited for: its URLs stay due.
func (s *scheduler) next(ctx context.Context) (*domain, error) {
	deadline, hasDeadline := ctx.Deadline()
	for {
		// Checked first, not only while waiting: with domains always ready, a stop (max duration, a
		// signal) would otherwise go unnoticed until the work ran out.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.mu.Lock()
		if (len(s.queue) == 0 && s.busy == 0) || (s.halt != nil && s.halt()) {
			s.mu.Unlock()
			return nil, nil
		}
		if hasDeadline && len(s.queue) > 0 && s.queue[0].readyAt.After(deadline) {
			d := heap.Pop(&s.queue).(*domain)
			d.dropped = true
			s.dropped++
			s.late++
			s.signal() // the queue changed: workers waiting for it to empty look again
			s.mu.Unlock()
			if s.onLate != nil {
				s.onLate(d.key, d.readyAt)
			}
			continue
		}
		if s.horizon > 0 && len(s.queue) > 0 && time.Until(s.queue[0].readyAt) > s.horizon {
			d := heap.Pop(&s.queue).(*domain)
			d.finished = true
			s.signal()
			s.mu.Unlock()
			if s.onPostpone != nil {
				s.onPostpone(d)
			}
			continue
		}
		wait := time.Duration(-1)
		if len(s.queue) > 0 {
			d := s.queue[0]
			if until := time.Until(d.readyAt); until > 0 {
				wait = until
			} else {
				heap.Pop(&s.queue)
				d.active = true
				s.busy++
				s.mu.Unlock()
				return d, nil
			}
		}
		wake := s.wake
		s.mu.Unlock()

		var t *time.Timer
		var timer <-chan time.Time
		if wait >= 0 {
			t = time.NewTimer(wait)
			timer = t.C
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// hosts returns the hosts of d still being worked on, and the domain's generation.
func (s *scheduler) hosts(d *domain) ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), d.hosts...), d.gen
}

// exhausted records that d had no due URL left when the worker looked at generation gen — unless
// URLs joined since, in which case it reports false and the worker looks again.
func (s *scheduler) exhausted(d *domain, gen int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.gen != gen {
		return false
	}
	d.hosts = nil
	return true
}

// dropHost stops working on one host of d for the rest of the run; its URLs stay due.
func (s *scheduler) dropHost(d *domain, host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.hosts = remove(d.hosts, host)
	if !s.gone[host] {
		s.gone[host] = true
		s.dropped++
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func remove(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// done hands a domain back after a step; more says whether it has work left.
func (s *scheduler) done(d *domain, more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.active = false
	s.busy--
	switch {
	case d.dropped:
	case more && len(d.hosts) > 0:
		// The gate knows when the domain may be contacted again: after the gap that followed the
		// response of this step (or a deferral), or when the step found it not ready yet.
		d.readyAt = later(s.gate.ReadyAt(d.hosts[0]), d.notBefore)
		heap.Push(&s.queue, d)
	case more && len(d.hintOrigins) > 0:
		d.readyAt = later(s.gate.ReadyAt(hostOf(d.hintOrigins[0])), d.notBefore)
		heap.Push(&s.queue, d)
	default:
		d.finished = true
	}
	s.signal()
}

// drop gives a domain up for the rest of the run; its URLs stay due for the next run. Called by the
// worker holding the domain.
func (s *scheduler) drop(d *domain) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !d.dropped {
		d.dropped = true
		s.dropped++
	}
}

func (s *scheduler) activeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

// lateCount is how many domains were given up because the stage would end before their next request.
func (s *scheduler) lateCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.late
}

func (s *scheduler) droppedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// domainHeap orders domains by when they are ready, then by today's rotation.
type domainHeap []*domain

func (h domainHeap) Len() int { return len(h) }
func (h domainHeap) Less(i, j int) bool {
	if !h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].readyAt.Before(h[j].readyAt)
	}
	return h[i].rank < h[j].rank
}
func (h domainHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *domainHeap) Push(x any) {
	d := x.(*domain)
	d.index = len(*h)
	*h = append(*h, d)
}
func (h *domainHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = nil
	d.index = -1
	*h = old[:len(old)-1]
	return d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// hostOf returns the host[:port] of an origin, scheme://host[:port].
func hostOf(origin string) string {
	if _, h, ok := strings.Cut(origin, "://"); ok {
		return h
	}
	return origin
}
