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

// openKnown opens the database, read-only, for a check of what strata knows of URLs before anything
// is written (the seeds' domains, a URL's row). It returns a nil store, and no error, when there is
// nothing to know yet: no SQLite file, or a PostgreSQL database strata has not written or whose
// schema the next command that writes upgrades.
func (a *app) openKnown(ctx context.Context) (readStore, func(), error) {
	if !a.postgres() {
		if _, err := os.Stat(a.cfg.Database.Path); err != nil {
			return nil, nil, nil
		}
	}
	db, closeDB, err := a.openReadAny(ctx)
	if errors.Is(err, pgstore.ErrOldSchema) {
		return nil, nil, nil
	}
	return db, closeDB, err
}

// checkFetchable refuses, before anything is written, a fetch of a URL that the run would not
// request: one the URL filter rejects (as the crawl stage will decide it, with the seeds' domains
// and the URL's level if strata knows it), or one strata already holds as blocked by robots.txt or
// filtered. Such a fetch used to end with exit 0, an empty run and nothing fetched.
func (a *app) checkFetchable(ctx context.Context, in []seedArg, urls []store.NewURL) error {
	db, closeDB, err := a.openKnown(ctx)
	if err != nil {
		return err
	}
	seedDomains := map[string]bool{}
	if db != nil {
		defer closeDB()
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
