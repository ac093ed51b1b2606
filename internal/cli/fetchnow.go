package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/internal/pgstore"
	"github.com/strata-crawler/strata/internal/store"
)

// checkFetchable refuses, before anything is written, a fetch of a URL that the run would not
// request: one the URL filter rejects (as the crawl stage will decide it, with the seeds' domains
// and the URL's level if strata knows it), or one strata already holds as blocked by robots.txt or
// filtered. Such a fetch used to end with exit 0, an empty run and nothing fetched.
//
// A database that does not exist yet, or a PostgreSQL one whose schema the run will create or
// upgrade, knows no URL: then only the filter decides.
func (a *app) checkFetchable(ctx context.Context, in []seedArg, urls []store.NewURL) error {
	var db readStore
	seedDomains := map[string]bool{}
	known := a.postgres()
	if !known {
		_, err := os.Stat(a.cfg.Database.Path)
		known = err == nil
	}
	if known {
		d, closeDB, err := a.openReadAny(ctx)
		switch {
		case errors.Is(err, pgstore.ErrOldSchema): // the run creates or upgrades it; no URL to read yet
		case err != nil:
			return err
		default:
			defer closeDB()
			db = d
		}
	}
	if db != nil {
		hosts, err := db.SeedHosts(ctx)
		if err != nil {
			return err
		}
		seedDomains = crawler.SeedDomains(hosts)
	}
	for i, nu := range urls {
		u, err := url.Parse(nu.URL)
		if err != nil {
			return fmt.Errorf("fetch: %s: %w", in[i].where, err)
		}
		level, seed := 0, false
		if db != nil {
			info, err := db.URLInfo(ctx, nu.URL)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			case info.State == "blocked":
				return usagef("fetch: %s: robots.txt forbids %s (strata explain %s tells more); nothing was fetched", in[i].where, nu.URL, nu.URL)
			case info.State == "filtered":
				return usagef("fetch: %s: %s was refused before: the URL filter, or not text, or a private address (strata explain %s tells more); nothing was fetched",
					in[i].where, nu.URL, nu.URL)
			default:
				level, seed = info.Level, info.IsSeed
			}
		}
		if d := a.cfg.Filter.Decide(filter.Input{URL: u, Level: level, SeedDomains: seedDomains, Seed: seed}); !d.Accept {
			return usagef("fetch: %s: the URL filter rejects %s: %s (strata filter test %s shows the chain); nothing was fetched",
				in[i].where, nu.URL, d.Reason, nu.URL)
		}
	}
	return nil
}
