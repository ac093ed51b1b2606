package pgstore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
)

// TestLeases: a domain is one worker's at a time; its next request time is checked and advanced
// with the lease, so a second worker that takes the domain keeps the first one's gap; an expired
// lease is taken over, counting the dead holder's request as ending then; a release frees the
// domain at once. The clock is a variable: no test waits.
func TestLeases(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	worker := func(name string) *pgstore.Worker {
		w, err := db.Worker(name, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pgstore.SetWorkerClock(w, clock)
		return w
	}
	a, b := worker("a"), worker("b")
	const gap = time.Second
	take := func(w *pgstore.Worker, mine store.HostGap) store.Lease {
		t.Helper()
		l, err := w.Take(ctx, "site.test", "site.test", mine, gap)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	if l := take(a, store.HostGap{}); !l.Held || !l.Ready.Equal(t0) {
		t.Fatalf("a's first take = %+v; want held, ready now", l)
	}
	if l := take(b, store.HostGap{}); l.Held || !l.Until.Equal(t0.Add(10*time.Second)) {
		t.Errorf("b's take of a's domain = %+v; want busy until a's lease expires", l)
	}
	// a's request took 300 ms; its gate says the next may start a gap after its end.
	end := t0.Add(300 * time.Millisecond)
	now = t0.Add(500 * time.Millisecond)
	if l := take(a, store.HostGap{LastEnd: end, Next: end.Add(gap)}); !l.Held || !l.Ready.Equal(end.Add(gap)) {
		t.Errorf("a's take inside its gap = %+v; want held, ready at %v", l, end.Add(gap))
	}
	if err := a.Release(ctx, "site.test", store.HostGap{LastEnd: end, Next: end.Add(gap)}); err != nil {
		t.Fatal(err)
	}
	// Released: b takes it at once, but a's gap holds for b too.
	if l := take(b, store.HostGap{}); !l.Held || !l.Ready.Equal(end.Add(gap)) {
		t.Errorf("b's take after a's release = %+v; want held, ready at a's gap %v", l, end.Add(gap))
	}
	now = end.Add(gap)
	if l := take(b, store.HostGap{}); !l.Held || !l.Ready.Equal(now) {
		t.Errorf("b's take after the gap = %+v; want held and reserved", l)
	}
	// The reservation moved the next request time on, whatever b's gate says when it lets go.
	reserved := now
	if err := b.Release(ctx, "site.test", store.HostGap{}); err != nil {
		t.Fatal(err)
	}
	if l := take(a, store.HostGap{}); !l.Held || !l.Ready.Equal(reserved.Add(gap)) {
		t.Errorf("a's take after b's reserved request = %+v; want ready at %v", l, reserved.Add(gap))
	}
	// a dies holding it: once its lease has expired, b takes it over, and a's request in flight
	// counts as ending now.
	now = reserved.Add(10*time.Second + time.Millisecond)
	if l := take(b, store.HostGap{}); !l.Held || l.TookOver != "a" || !l.Ready.Equal(now.Add(gap)) {
		t.Errorf("b's take of a's expired lease = %+v; want taken over from a, ready a gap after now", l)
	}

	if _, err := db.Worker("c", time.Second); err == nil {
		t.Error("a lease under the minimum was accepted")
	}
}

// TestJoinRun: the first worker begins a run, the second joins it; the run's crawl stage has
// ended fleet-wide when both are done, or when the one not done has been silent for a lease; then
// one worker wins the election for recalc and links. A worker that finds no live run begins a new
// one and marks the silent one interrupted.
func TestJoinRun(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "http://a.test/", Host: "a.test", FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC)
	now := t0
	worker := func(name string) *pgstore.Worker {
		w, err := db.Worker(name, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pgstore.SetWorkerClock(w, func() time.Time { return now })
		return w
	}
	a, b := worker("a"), worker("b")
	ja, unlock, err := a.JoinRun(ctx, t0, 0, "/a")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	jb, unlock, err := b.JoinRun(ctx, t0.Add(time.Second), 0, "/b")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if ja.Joined || !jb.Joined || jb.Run != ja.Run || !jb.Start.Equal(t0) {
		t.Fatalf("a %+v, b %+v; want b to join a's run", ja, jb)
	}
	if roots, err := db.RunRoots(ctx, ja.Run); err != nil || !slices.Equal(roots, []string{"/a", "/b"}) {
		t.Errorf("RunRoots = %v, %v; want both workers' roots", roots, err)
	}
	if roots, err := db.RunRoots(ctx, ja.Run+100); err != nil || len(roots) != 0 {
		t.Errorf("RunRoots(a run no worker joined) = %v, %v; want none", roots, err)
	}
	if err := a.Done(ctx, ja.Run); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Working(ctx, ja.Run); err != nil || n != 1 {
		t.Errorf("working after a is done = %d, %v; want b", n, err)
	}
	now = t0.Add(11 * time.Second) // b has been silent for longer than a lease
	if n, err := a.Working(ctx, ja.Run); err != nil || n != 0 {
		t.Errorf("working once b is silent = %d, %v; want 0", n, err)
	}
	release, ok, err := a.After(ctx, ja.Run)
	if err != nil || !ok {
		t.Fatalf("a's election = %v, %v; want won", ok, err)
	}
	if _, ok2, err := b.After(ctx, ja.Run); err != nil || ok2 {
		t.Errorf("b's election while a holds it = %v, %v; want lost", ok2, err)
	}
	release()

	// Nobody finished the run: the next worker begins a new one and marks it interrupted.
	c := worker("c")
	jc, unlock, err := c.JoinRun(ctx, now, 0, "/c")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if jc.Joined || jc.Run == ja.Run || len(jc.Crashed) != 1 || jc.Crashed[0].ID != ja.Run {
		t.Errorf("c = %+v; want a new run, run %d marked interrupted", jc, ja.Run)
	}
}
