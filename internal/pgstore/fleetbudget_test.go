package pgstore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/pgtest"
	"github.com/strata-crawler/strata/internal/store"
)

// TestFleetBudget: a run's budget account is opened once, with the first worker's cap; workers
// reserving concurrently never get more than the cap between them; what one gives back is there for
// the others.
func TestFleetBudget(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	a, err := db.Worker("a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Worker("b", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	j, unlock, err := a.JoinRun(ctx, t0, 0, "/a")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if acct, err := a.OpenBudget(ctx, j.Run, 100, 25); err != nil || acct != (store.Account{Total: 100, NewCap: 25}) {
		t.Fatalf("a opens the budget: %+v, %v", acct, err)
	}
	// b was configured otherwise: the run's cap is a's.
	if acct, err := b.OpenBudget(ctx, j.Run, 500, 500); err != nil || acct.Total != 100 || acct.NewCap != 25 {
		t.Fatalf("b opens the budget: %+v, %v; want a's cap", acct, err)
	}

	var mu sync.Mutex
	got := map[bool]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			w := a
			if i%2 == 1 {
				w = b
			}
			for {
				n, _, err := w.Spend(ctx, j.Run, i%4 == 0, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
				mu.Lock()
				got[i%4 == 0] += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if got[true]+got[false] != 100 {
		t.Fatalf("the workers reserved %d new and %d known fetches, want 100 in all", got[true], got[false])
	}
	// a used 2 of its reservations of the kind it holds more of for the other kind, and left 5
	// unused.
	newBack, knownBack := 7, -2
	if got[true] < 7 {
		newBack, knownBack = -2, 7
	}
	if err := a.GiveBack(ctx, j.Run, newBack, knownBack); err != nil {
		t.Fatal(err)
	}
	n, acct, err := b.Spend(ctx, j.Run, false, 8)
	if err != nil || n != 5 || acct.Left() != 0 || acct.NewTaken != got[true]-newBack || acct.KnownTaken != got[false]-knownBack+5 {
		t.Errorf("b's reservation after a gave back = %d, %+v, %v; want the 5 a gave back", n, acct, err)
	}
}

// BenchmarkFleetSpend measures one reservation of the fleet's budget (Worker.Spend), from
// GOMAXPROCS × -cpu goroutines on one run's account: the round trip a block of fetches costs, and
// how the one row all workers lock holds up. ns/op is per reservation, whatever its block.
func BenchmarkFleetSpend(b *testing.B) {
	db, err := pgstore.Open(b.Context(), pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	w, err := db.Worker("bench", 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	j, unlock, err := w.JoinRun(b.Context(), time.Now(), 0, "/bench")
	if err != nil {
		b.Fatal(err)
	}
	unlock()
	if _, err := w.OpenBudget(b.Context(), j.Run, 1<<40, 1<<39); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if n, _, err := w.Spend(b.Context(), j.Run, false, 1); err != nil || n != 1 {
				b.Error(n, err)
				return
			}
		}
	})
}
