package crawler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/store"
)

// memAccount is a fleet's budget account in memory, for the budget's side of it; its leases are
// not used here.
type memAccount struct {
	mu   sync.Mutex
	acct store.Account
}

func (m *memAccount) Take(context.Context, string, string, store.HostGap, time.Duration) (store.Lease, error) {
	return store.Lease{Held: true}, nil
}
func (m *memAccount) Release(context.Context, string, store.HostGap) error { return nil }
func (m *memAccount) OpenBudget(_ context.Context, _ int64, total, newCap int) (store.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acct.Total == 0 {
		m.acct.Total, m.acct.NewCap = total, newCap
	}
	return m.acct, nil
}
func (m *memAccount) Spend(_ context.Context, _ int64, isNew bool, n int) (int, store.Account, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := min(n, m.acct.Left())
	if isNew {
		m.acct.NewTaken += g
	} else {
		m.acct.KnownTaken += g
	}
	return g, m.acct, nil
}
func (m *memAccount) GiveBack(_ context.Context, _ int64, newBack, knownBack int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acct.NewTaken -= newBack
	m.acct.KnownTaken -= knownBack
	return nil
}

// TestFleetBudgetBlocks: processes drawing on one account take the run's budget between them and
// no more; one killed with a block reserved (no give-back) costs the run at most that block; the
// new/known split each sees is the fleet's; what the survivors give back leaves the account at
// what they fetched.
func TestFleetBudgetBlocks(t *testing.T) {
	for _, total := range []int{5, 40, 1000} {
		ctx := t.Context()
		fleet := &memAccount{}
		workers := make([]*budget, 3)
		for i := range workers {
			workers[i] = newBudget(total, 0.25)
			if err := workers[i].share(ctx, fleet, 1); err != nil {
				t.Fatal(err)
			}
		}
		// Worker 0 takes one fetch, so it holds a block, and is killed: it never gives back.
		if ok, err := workers[0].take(ctx, false); !ok || err != nil {
			t.Fatalf("total %d: first take = %v, %v", total, ok, err)
		}
		killed := workers[0].unused() + 1
		if killed > maxBlock {
			t.Fatalf("total %d: a block of %d, above maxBlock %d", total, killed, maxBlock)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		fetched := 1
		for i, b := range workers[1:] {
			wg.Go(func() {
				for k := 0; ; k++ {
					ok, err := b.take(ctx, (k+i)%3 == 0)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return
					}
					mu.Lock()
					fetched++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if fetched > total || fetched < total-(killed-1) {
			t.Errorf("total %d: the fleet fetched %d; want at most %d and at least %d (a killed worker's block of %d lost)",
				total, fetched, total, total-(killed-1), killed)
		}
		for _, b := range workers[1:] {
			if _, spent := b.prefer(); !spent {
				t.Errorf("total %d: a survivor does not see the budget spent", total)
			}
			if err := b.giveBack(ctx); err != nil {
				t.Fatal(err)
			}
		}
		a := fleet.acct
		if got := a.NewTaken + a.KnownTaken; got != fetched-1+killed {
			t.Errorf("total %d: the account holds %d after the give-backs, want the %d fetched and the killed worker's %d unused",
				total, got, fetched, killed-1)
		}
	}
}

// TestFleetBudgetShare: a process's preference between new and known URLs follows what the fleet
// took, not only what it took itself.
func TestFleetBudgetShare(t *testing.T) {
	ctx := t.Context()
	fleet := &memAccount{}
	a, b := newBudget(20, 0.25), newBudget(20, 0.25)
	for _, w := range []*budget{a, b} {
		if err := w.share(ctx, fleet, 1); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 { // the new URLs' whole share, taken by a
		if ok, err := a.take(ctx, true); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if err := b.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if kind, spent := b.prefer(); kind != store.DueKnown || spent {
		t.Errorf("b after a took the new URLs' share: prefer = %v, %v; want known", kind, spent)
	}
	if left, newLeft := b.left(); left != 15 || newLeft != 0 {
		t.Errorf("b's left = %d, %d new; want 15, 0", left, newLeft)
	}
}
