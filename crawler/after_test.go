package crawler_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/internal/store"
)

// TestOpenAfterSendsNothing checks that the cycle strata recalc and strata links open has no
// network: its crawl and sitemap refuse, whatever transport the setup names, while recalc and links
// run.
func TestOpenAfterSendsNothing(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "strata.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AddSeeds(ctx, []store.NewSeed{{URL: "http://127.0.0.1:9/", Host: "127.0.0.1:9", FrMax: 1}}); err != nil {
		t.Fatal(err)
	}
	setup := crawler.Setup{Net: crawler.Network{UserAgent: "strata-test", Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("a request was sent: %s", r.URL)
		return nil, errors.New("no network here")
	})}}
	c, err := crawler.OpenAfter(db, nil, setup)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	run, err := db.BeginRun(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Crawl(ctx, crawler.Run{ID: run, Start: start}); !errors.Is(err, crawler.ErrNoNetwork) {
		t.Errorf("Crawl = %+v, %v; want ErrNoNetwork", st, err)
	}
	if p, err := c.Sitemap(ctx, "http://127.0.0.1:9/sitemap.xml"); !errors.Is(err, crawler.ErrNoNetwork) {
		t.Errorf("Sitemap = %+v, %v; want ErrNoNetwork", p, err)
	}
	rs, ls, err := c.After(ctx, run)
	if err != nil {
		t.Fatalf("After: %v", err)
	}
	if rs.Pages != 0 || ls.Pages != 0 {
		t.Errorf("After a run that fetched nothing: recalc %+v, links %+v; want no page", rs, ls)
	}
	if due, _, err := db.Countdown(ctx); err != nil || due != 1 {
		t.Errorf("Countdown = %d, %v; want the seed still due, never crawled", due, err)
	}
}
