package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/strata-crawler/strata/crawler"
	"github.com/strata-crawler/strata/filter"
	"github.com/strata-crawler/strata/internal/urlnorm"
)

func newFilterCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "filter", Short: "Check URLs against the configured URL filter", Args: noArgs}
	var file string
	var level int
	test := &cobra.Command{
		Use:   "test URL... [--file FILE] [--level N]",
		Short: "Print accept or reject for each URL, with the chain of filters that decided",
		Long: `Print accept or reject for each URL and the reason: which filter decided, inside which
all/any/not. The seed domains come from the database, as in a crawl. Exits 0 whatever the
decisions; an unparsable URL is reported as rejected by the normaliser.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := urlArgs(cmd, "filter test", args, file)
			if err != nil {
				return err
			}
			if err := a.setup(); err != nil {
				return err
			}
			seedDomains := map[string]bool{}
			db, closeDB, err := a.openKnown(cmd.Context())
			if err != nil {
				return err
			}
			if db != nil {
				hosts, err := db.SeedHosts(cmd.Context())
				closeDB()
				if err != nil {
					return err
				}
				seedDomains = crawler.SeedDomains(hosts) // the same seed domains a crawl uses
			}
			for _, s := range in {
				u, err := urlnorm.Parse(s.raw)
				if err != nil {
					fmt.Fprintf(a.stdout, "reject  %s\n        %v\n", s.raw, err)
					continue
				}
				d := a.cfg.Filter.Decide(filter.Input{URL: u, Level: level, SeedDomains: seedDomains})
				verdict := "reject"
				if d.Accept {
					verdict = "accept"
				}
				fmt.Fprintf(a.stdout, "%s  %s\n", verdict, u)
				if d.URL != nil && d.URL.String() != u.String() {
					fmt.Fprintf(a.stdout, "        crawled as %s\n", d.URL)
				}
				fmt.Fprintf(a.stdout, "        %s\n", d.Reason)
			}
			return nil
		},
	}
	test.Flags().StringVar(&file, "file", "", "read URLs from FILE, one per line ('-' for standard input)")
	test.Flags().IntVar(&level, "level", 0, "the level the URLs would have")
	cmd.AddCommand(test)
	return cmd
}
