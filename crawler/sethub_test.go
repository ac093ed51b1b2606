package crawler_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// hubWrites is the store with its SetHub calls noted; with unreported, its due URLs do not report
// their hub state, as a store that does not read it (the ratio left in them happens to equal what
// the rule finds for a hub without evidence, so only HubStored tells).
type hubWrites struct {
	crawler.CycleStore
	unreported bool
	mu         sync.Mutex
	n          int
	last       map[int64][2]float64 // hub → the threshold and ratio last written
}

func (h *hubWrites) NextDue(ctx context.Context, q store.DueQuery) (*store.DueURL, error) {
	u, err := h.CycleStore.NextDue(ctx, q)
	if u != nil && h.unreported {
		u.ChildRatio, u.HubStored = -1, false
	}
	return u, err
}

func (h *hubWrites) DueByID(ctx context.Context, id, run int64) (*store.DueURL, error) {
	u, err := h.CycleStore.DueByID(ctx, id, run)
	if u != nil && h.unreported {
		u.ChildRatio, u.HubStored = -1, false
	}
	return u, err
}

func (h *hubWrites) SetHub(ctx context.Context, hub int64, threshold, childRatio float64) error {
	h.mu.Lock()
	h.n++
	h.last[hub] = [2]float64{threshold, childRatio}
	h.mu.Unlock()
	return h.CycleStore.SetHub(ctx, hub, threshold, childRatio)
}

// TestSelectiveWritesOnlyWhatChanged: a hub whose threshold and child ratio come out as they are
// stored is not written (a first crawl's hubs have no evidence, and each such write took SQLite's
// write lock), and after every run each hub's stored state is the last the rule wrote, or the
// defaults if it never wrote one. A store that does not report the stored state has every hub's
// state written.
func TestSelectiveWritesOnlyWhatChanged(t *testing.T) {
	for _, unreported := range []bool{false, true} {
		t.Run(fmt.Sprintf("unreported=%v", unreported), func(t *testing.T) { selectiveWrites(t, unreported) })
	}
}

func selectiveWrites(t *testing.T, unreported bool) {
	web := testweb.New(t)
	s := web.AddSite(t)
	var kids []string
	for i := range 4 {
		kids = append(kids, fmt.Sprintf("/a/%d", i))
		s.Page(kids[i], fmt.Sprintf("<html><body><p>Page %d, which does not change.</p></body></html>", i))
	}
	s.Page("/", links("home", "/a/"))
	s.Page("/a/", links("hub", kids...))
	c := newDayCycle(t, []store.NewSeed{{URL: s.URL("/"), Host: s.Host(), Level: 2, FrMax: 1}}, nil)
	w := &hubWrites{CycleStore: c.db, unreported: unreported, last: map[int64][2]float64{}}
	c.cyc.Close()
	setup := crawler.SetupOf(c.conf)
	setup.Crawl.Log = slog.New(slog.DiscardHandler)
	setup.Crawl.Now = c.clock.Now
	cyc, err := crawler.Open(t.Context(), w, nil, setup)
	if err != nil {
		t.Fatal(err)
	}
	c.cyc = cyc
	t.Cleanup(cyc.Close)

	raw, err := sql.Open("sqlite", c.db.Path()) // the store's driver
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	c.mustRun()
	switch {
	case !unreported && w.n != 0:
		t.Errorf("the first run wrote %d hub states; its hubs have no evidence, so nothing changed", w.n)
	case unreported && w.n != 2:
		t.Errorf("the first run wrote %d hub states, the store not reporting them; want both hubs'", w.n)
	}
	for run := 2; run <= 5; run++ {
		c.mustRun()
		for _, p := range []string{"/", "/a/"} {
			info, err := c.db.URLInfo(t.Context(), s.URL(p))
			if err != nil {
				t.Fatal(err)
			}
			var threshold, ratio float64
			if err := raw.QueryRow(`SELECT threshold, coalesce(child_ratio, -1) FROM urls WHERE id = ?`, info.ID).
				Scan(&threshold, &ratio); err != nil {
				t.Fatal(err)
			}
			want, ok := w.last[info.ID]
			if !ok {
				want = [2]float64{0.40, -1}
			}
			if got := [2]float64{threshold, ratio}; got != want {
				t.Errorf("run %d: hub %s stored %v, want %v", run, p, got, want)
			}
		}
	}
	if w.n == 0 {
		t.Error("no hub state was ever written: the test's hubs never had evidence")
	}
}
