package crawler

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/traps"
)

// The trap defences' evidence goes from run to run through the store: each run's guard starts
// from what earlier runs learnt, and what it learns is stored when the stage ends (and, for a unit
// it throttles or lets go, at once). A throttled unit's URLs are held in the store, out of the due
// set, so neither a run without a budget (NextDue) nor a budgeted one (DueCandidates, DueByID) sees
// them; the countdown at the start of each run releases the probes.

// TrapStore keeps the trap defences' evidence and holds. *store.DB implements it.
type TrapStore interface {
	// TrapRules returns every stored rule; SaveTrapRule stores one (by domain and unit) and returns
	// its id; SaveTrapRules stores many, deletes those with ids drop and forgets the rules with no
	// evidence since forgetBefore that hold nothing.
	TrapRules(ctx context.Context) ([]store.TrapRule, error)
	SaveTrapRule(ctx context.Context, r store.TrapRule) (int64, error)
	SaveTrapRules(ctx context.Context, rules []store.TrapRule, drop []int64, forgetBefore int64) error
	// HoldURLs holds under rule the active URLs (seeds aside) under prefixes that match accepts,
	// and says how many it held and how many of them were due; ReleaseTrapRule lets all of a rule's
	// URLs go and returns their hosts and how many of them are due.
	HoldURLs(ctx context.Context, rule int64, prefixes []string, match func(string) bool) (held, wasDue int, err error)
	ReleaseTrapRule(ctx context.Context, rule int64) (hosts []string, due int, err error)
	// URLsPerHost counts the URLs known per host, for the per-domain caps; RecordTrap stores one
	// event of a defence that fired, for strata traps.
	URLsPerHost(ctx context.Context) (map[string]int, error)
	RecordTrap(ctx context.Context, e store.TrapEvent) error
}

var _ TrapStore = (*store.DB)(nil)

// trapGuard returns run's trap guard, loaded with what earlier runs learnt. Before a scheduled run,
// the URLs of throttled units that joined since through a way the guard does not watch (the links
// stage's external links) are held too; it returns how many of them were due.
func (c *Crawler) trapGuard(ctx context.Context, run Run, perDomain map[string]int) (*traps.Guard, int, error) {
	stored, err := c.store.TrapRules(ctx)
	if err != nil {
		return nil, 0, err
	}
	rules := make([]traps.Rule, len(stored))
	for i, r := range stored {
		rules[i] = traps.Rule{ID: r.ID, Domain: r.Domain, Unit: r.Unit, Throttled: r.Throttled, Reason: r.Reason,
			Evidence: traps.Evidence{Judged: r.Judged, Dups: r.Dups, Found: r.Found, SelfFound: r.SelfFound,
				MinLevel: r.MinLevel, MaxLevel: r.MaxLevel, Norms: r.Norms},
			Streak: r.Streak, ProbeEvery: r.ProbeEvery, FirstRun: r.FirstRun, LastRun: r.LastRun, Since: r.SinceRun}
	}
	g := traps.New(c.cfg.Traps, run.ID, perDomain, rules)
	if len(run.Only) > 0 {
		return g, 0, nil // a fetch a person asked for holds nothing back
	}
	due := 0
	for _, r := range g.Throttled() {
		_, n, err := c.holdUnit(ctx, r)
		if err != nil {
			return nil, 0, err
		}
		due += n
	}
	return g, due, nil
}

// holdUnit holds the patterned URLs of a throttled unit whose rule is stored.
func (c *Crawler) holdUnit(ctx context.Context, r traps.Rule) (held, wasDue int, err error) {
	lit := r.Unit
	if i := strings.IndexAny(lit, "N*…?"); i >= 0 {
		lit = lit[:i] // the unit's literal start: its URLs lie under it
	}
	return c.store.HoldURLs(ctx, r.ID, []string{"http://" + lit, "https://" + lit}, func(s string) bool {
		u, err := url.Parse(s)
		return err == nil && traps.Patterned(u) && traps.Unit(u) == r.Unit
	})
}

func storeRule(r traps.Rule) store.TrapRule {
	return store.TrapRule{ID: r.ID, Domain: r.Domain, Unit: r.Unit, Throttled: r.Throttled, Reason: r.Reason,
		Judged: r.Judged, Dups: r.Dups, Found: r.Found, SelfFound: r.SelfFound, MinLevel: r.MinLevel, MaxLevel: r.MaxLevel,
		Norms: r.Norms, Streak: r.Streak, Probes: 1, ProbeEvery: r.ProbeEvery, FirstRun: r.FirstRun, LastRun: r.LastRun,
		SinceRun: r.Since}
}

// judgeTrap gives the guard the text of a page fetched for the first time (norm: the hex hash of
// its normalised text) and carries out what it decides: a unit it throttles has its rule stored and
// its URLs held at once, due ones included; a unit whose probes cleared it has its URLs released.
func (s *stage) judgeTrap(ctx context.Context, d *domain, pu *url.URL, norm string) error {
	n, err := strconv.ParseUint(norm, 16, 64)
	if err != nil {
		return nil // not a hash of ours; nothing to judge
	}
	ch := s.guard.Fetched(d.key, pu, n)
	if err := s.trapEvent(ctx, ch.Event); err != nil {
		return err
	}
	switch {
	case ch.Throttled:
		id, err := s.c.store.SaveTrapRule(ctx, storeRule(ch.Rule))
		if err != nil {
			return err
		}
		s.guard.SetID(ch.Rule.Unit, id)
		ch.Rule.ID = id
		_, wasDue, err := s.c.holdUnit(ctx, ch.Rule)
		if err != nil {
			return err
		}
		s.count(func(st *Stats) { st.Due -= wasDue })
	case ch.Cleared && ch.Rule.ID != 0:
		if _, err := s.c.store.SaveTrapRule(ctx, storeRule(ch.Rule)); err != nil {
			return err
		}
		hosts, due, err := s.c.store.ReleaseTrapRule(ctx, ch.Rule.ID)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			s.sched.addHost(h)
		}
		s.count(func(st *Stats) { st.Due += due })
	}
	return nil
}

// saveTraps stores what the run's guard learnt.
func (s *stage) saveTraps(ctx context.Context) error {
	keep, drop := s.guard.Dirty()
	rules := make([]store.TrapRule, len(keep))
	for i, r := range keep {
		rules[i] = storeRule(r)
	}
	return s.c.store.SaveTrapRules(ctx, rules, drop, s.c.cfg.Traps.ForgetBefore(s.run.ID))
}
