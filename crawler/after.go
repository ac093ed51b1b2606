package crawler

import (
	"errors"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/polite"
)

// ErrNoNetwork is returned by Crawl and Sitemap on a cycle that OpenAfter wired: it has no client.
var ErrNoNetwork = errors.New("the cycle was opened for recalc and links alone: it sends no request")

// OpenAfter wires a cycle for the stages that follow a crawl, run on their own (strata recalc,
// strata links). They read the database and the archive and send no request, so it builds no fetch
// client and no transport; its gate only names the politeness domains, as Open's does. Recalc,
// Links and After behave as on a cycle from Open; Crawl and Sitemap return ErrNoNetwork.
func OpenAfter(db CycleStore, arch *archive.Dir, s Setup) (*Cycle, error) {
	if _, err := s.Policy.PerPage(); err != nil {
		return nil, err
	}
	gate := polite.New(polite.Options{ByHost: s.Net.ByHost})
	c := New(db, nil, nil, gate, s.crawlConfig(arch))
	return &Cycle{db: db, arch: arch, crawler: c, policy: s.Policy, links: s.Links, log: c.cfg.Log, close: func() {},
		allowed: &hostSet{}}, nil
}

// crawlConfig is the crawl stage's configuration s describes, but for the provider hints' fetcher,
// which needs the client.
func (s Setup) crawlConfig(arch *archive.Dir) Config {
	n, cfg := s.Net, s.Crawl
	cfg.UserAgent, cfg.PageTimeout = n.UserAgent, n.PageTimeout
	if arch != nil {
		cfg.Archive = arch
		if s.WARC {
			cfg.WARC = &WARCOptions{Dir: arch.WARCPath, MaxSize: s.WARCMax, GzipLevel: s.WARCGzip, Software: s.Software}
		}
	}
	if cfg.Text == nil {
		cfg.Text = textExtractor(s.Text, cfg.Log)
	}
	cfg.Hybrid = s.Policy.hybrid()
	cfg.Uniform = s.Policy.Name == "uniform"
	cfg.Weighted = s.Policy.Weighted
	cfg.SelectiveOff = !s.Policy.Selective || (s.Policy.Name != "" && s.Policy.Name != "bouras")
	return cfg
}
