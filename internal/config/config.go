// Package config loads strata's configuration: defaults, then a TOML file, then STRATA_* environment
// variables, then command-line flags, each overriding the one before.
//
// Every key is declared once, in the schema table below, with its type, default, allowed range and
// meaning. That one table drives loading, validation (an unknown key, a wrong type or an out-of-range
// value is an error naming the file or variable, the key and what is allowed), `strata config check`,
// and the test that keeps config.example.toml complete. This is the only package that imports viper.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/strata-crawler/strata/filter"
)

// ErrInvalid is wrapped by every error about the configuration itself (as opposed to I/O failures),
// so the command line can map it to the usage exit code.
var ErrInvalid = errors.New("invalid configuration")

// MinDelay is the politeness floor for every host that is not loopback. It is not configurable:
// strata promises the sites it visits at least this much time between requests.
const MinDelay = 10 * time.Second

// DefaultUserAgent names strata and a contact placeholder that the user is asked to replace.
const DefaultUserAgent = "strata/0.1 (+https://example.org/replace-with-your-contact-page)"

// EnvPrefix starts every environment variable strata reads: STRATA_POLITENESS_DELAY sets politeness.delay.
const EnvPrefix = "STRATA"

// Config is the effective configuration of one strata invocation.
type Config struct {
	File string // the configuration file read, or "" when none was
	Dir  string // relative paths resolve against this: the file's directory, else the working directory

	Database struct {
		Path string // SQLite database file, absolute after Load
		URL  string // PostgreSQL database (postgres://…) that replaces Path for the run cycle; "" = SQLite
	}
	Archive struct {
		Root     string        // archive root directory, absolute after Load
		Snapshot string        // "none" or "hardlink"
		Text     string        // "main" or "full"
		Keep     time.Duration // versions older than this are pruned (never a page's current one); 0 = forever
		WARC     bool          // write each run's captures as WARC files too
		WARCMax  int64         // bytes at which a run's WARC file is closed and the next begun
		WARCGzip int           // gzip level of the WARC's records, 1 (fastest) to 9 (smallest)
	}
	Seed struct {
		Level int // default level of new seeds: how many link levels below a seed are followed
		FrMax int // default revisit interval of new seeds, in runs
	}
	Crawl struct {
		UserAgent    string
		Workers      int
		PageTimeout  time.Duration
		MaxBytes     int64
		MaxDuration  time.Duration
		AllowPrivate bool
	}
	Politeness struct {
		Delay         time.Duration
		LoopbackDelay time.Duration
		DelayFactor   float64
		DomainKey     string
	}
	Schedule struct {
		StartWindow time.Duration
	}
	Links struct {
		HonourNofollow bool
		ExternalLevel  int
	}
	Hints struct {
		Enabled bool
	}
	Change struct {
		MinDistance int
	}
	Traps struct {
		MaxNewPerDomain  int
		MaxURLsPerDomain int
	}
	Frequency struct {
		Policy    string
		Selective bool
		Limit     int
		Min       int
		Max       int
	}
	Hybrid struct {
		SampleSize, MinHistory, Normal, Slow int
		Step                                 float64
	}
	Optimizer struct {
		Budget    int     // pages per run
		NewShare  float64 // of the budget, for never-fetched URLs
		Objective string  // "staleness" or "weighted"
		Period    int     // scheduling period T, in runs
		MinCrawls int     // per page per period
		MaxCrawls int     // per page per period; 0 = Period
		MinRate   float64 // change-rate buckets span [MinRate, MaxRate] changes per run
		MaxRate   float64
	}
	Log struct {
		Level  string
		Format string
	}
	Notify struct {
		Webhook string        // http(s) URL that gets a JSON summary of each run by POST; "" = none
		Command string        // executable run with the same JSON on standard input; "" = none
		Timeout time.Duration // each hook's limit
		When    string        // "changes" (a run that changed, added or lost a page) or "always"
	}

	// Filter decides which URLs strata crawls: the [filter] table compiled, or filter.Default().
	Filter     filter.Filter
	filter     *filter.Table  // the [filter] table built, nil without one
	filterTree map[string]any // the [filter] table as read, for config check

	// Warnings are one line each about the environment that Load ignored: STRATA_ variables that
	// name no setting, and settings' variables set to an empty value. The command line logs them.
	Warnings []string

	sources map[string]string
}

// filterKey is the one section whose keys are not in the schema: its content is a tree of filters
// that package filter reads and checks.
const filterKey = "filter"

// Source reports where the effective value of key came from: "default", "file", "env STRATA_…" or
// "flag --…".
func (c *Config) Source(key string) string {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return "default"
}

// field declares one configuration key. ptr returns a pointer into Config of one of the types
// *string, *int, *int64, *float64, *bool or *time.Duration; the type decides how values are parsed.
type field struct {
	key      string
	def      any
	min, max float64 // inclusive range for numbers and durations (in seconds); both 0 means unbounded
	enum     []string
	path     bool               // a file system path resolved against Config.Dir
	check    func(string) error // further checks of a string value
	doc      string
	ptr      func(*Config) any
}

var schema = []field{
	{key: "database.path", def: "strata.db", path: true,
		doc: "SQLite database holding the URL table, fetch records, links, runs and hosts.",
		ptr: func(c *Config) any { return &c.Database.Path }},
	{key: "database.url", def: "", check: databaseURL,
		doc: `PostgreSQL database (postgres://USER@HOST/DB) to keep the history in instead of database.path, for strata run, crawl, fetch, recalc, links, index and seed add, and read by status, history, explain, serve, show, diff, export, plan, seed list and traps; prune and archive.keep work on it too, but not for fleet workers (strata run --worker). Copy an existing history over with strata migrate-db. "" = SQLite.`,
		ptr: func(c *Config) any { return &c.Database.URL }},
	{key: "archive.root", def: "archive", path: true,
		doc: "Directory under which each run writes its dated directory of page versions.",
		ptr: func(c *Config) any { return &c.Archive.Root }},
	{key: "archive.snapshot", def: "none", enum: []string{"none", "hardlink"},
		doc: `"hardlink" links every unchanged page into each run's directory, so each run is a complete browsable snapshot (costs directory entries, not disk space).`,
		ptr: func(c *Config) any { return &c.Archive.Snapshot }},
	{key: "archive.text", def: "main", enum: []string{"main", "full"},
		doc: `Text kept in page.txt and compared between versions: "full" (all visible text) or "main" (the main content, without navigation and boilerplate).`,
		ptr: func(c *Config) any { return &c.Archive.Text }},
	{key: "archive.keep", def: time.Duration(0), min: 0, max: 100 * 365 * 24 * 3600,
		doc: `Remove stored versions older than this after each completed crawl (e.g. "8760h" for a year); a page's current version is always kept. 0s = keep everything.`,
		ptr: func(c *Config) any { return &c.Archive.Keep }},
	{key: "archive.warc", def: true,
		doc: `Also write every fetch of a crawl as WARC 1.1 (request, response or revisit, and a metadata record of strata's facts) in <run>/_warc/, with a CDXJ index, for warcio, pywb and ReplayWeb.page; the dated text directories are written either way. On by default, because only a crawl-time WARC holds the bytes of fetches whose text did not change (the text directories keep new and changed versions only) and WARC is what archiving tools read; measured on 10 days of the demo web (105 fetches) it added 0.25 s of CPU (0.40-0.49 s without, 0.67-0.69 s with) and 238 KB (174 KB of gzipped WARC, 64 KB of CDXJ) to a 494 KB archive (docs/performance.md, section 9). Turn it off to save that; "strata export warc" can still write WARC afterwards from the text archive and the HTTP heads strata always keeps, but only for versions it stored.`,
		ptr: func(c *Config) any { return &c.Archive.WARC }},
	{key: "archive.warc_max_size", def: int64(1_000_000_000), min: 1 << 20, max: 1 << 40,
		doc: "Size in bytes at which a run's WARC file is closed and the next one begun (a record is never split).",
		ptr: func(c *Config) any { return &c.Archive.WARCMax }},
	{key: "archive.warc_gzip_level", def: 1, min: 1, max: 9,
		doc: `gzip level of the WARC's records, 1 (fastest) to 9 (smallest). Level 1 saves about 0.2 CPU s per 1,000 pages against level 5 and makes the WARC 11-15 % larger, which is about 2 % of an archive whose text directories are kept (docs/performance.md, section 10). Raise it when the WARC is most of what you keep, e.g. with archive.keep pruning old text directories, which leaves the WARC files.`,
		ptr: func(c *Config) any { return &c.Archive.WARCGzip }},
	{key: "seed.level", def: 2, min: 0, max: 100,
		doc: "Default level of a new seed: links are followed this many levels below it.",
		ptr: func(c *Config) any { return &c.Seed.Level }},
	{key: "seed.fr_max", def: 1, min: 1, max: 365,
		doc: "Default revisit interval of a new seed, in runs (1 = every run). Adapted per page later.",
		ptr: func(c *Config) any { return &c.Seed.FrMax }},
	{key: "crawl.user_agent", def: DefaultUserAgent, check: headerValue,
		doc: "User-Agent sent with every request. Replace the contact URL so site owners can reach you.",
		ptr: func(c *Config) any { return &c.Crawl.UserAgent }},
	{key: "crawl.workers", def: 32, min: 1, max: 1024,
		doc: "Domains crawled at once. Each domain still sees at most one request at a time. On the real network a worker mostly waits for the site; on a small machine crawling a few hundred sites, 16 can be faster (docs/performance.md, section 6).",
		ptr: func(c *Config) any { return &c.Crawl.Workers }},
	{key: "crawl.page_timeout", def: 30 * time.Second, min: 1, max: 600,
		doc: "Time limit for one page: connect, headers and body together (cuts slow-drip traps).",
		ptr: func(c *Config) any { return &c.Crawl.PageTimeout }},
	{key: "crawl.max_bytes", def: int64(1 << 20), min: 1024, max: 1 << 30,
		doc: "Largest body kept per page, in bytes after decompression (stops compression bombs).",
		ptr: func(c *Config) any { return &c.Crawl.MaxBytes }},
	{key: "crawl.max_duration", def: time.Duration(0), min: 0, max: 7 * 24 * 3600,
		doc: "Stop the crawl stage gracefully after this long; unreached URLs stay due. 0s = no limit.",
		ptr: func(c *Config) any { return &c.Crawl.MaxDuration }},
	{key: "crawl.allow_private", def: false,
		doc: "Allow links and redirects to private, loopback and link-local addresses. Seeded hosts are always allowed.",
		ptr: func(c *Config) any { return &c.Crawl.AllowPrivate }},
	{key: "politeness.delay", def: MinDelay, min: MinDelay.Seconds(), max: 24 * 3600,
		doc: "Least time between the end of one response and the next request to the same domain. Cannot be below 10s.",
		ptr: func(c *Config) any { return &c.Politeness.Delay }},
	{key: "politeness.loopback_delay", def: 100 * time.Millisecond, min: 0, max: 24 * 3600,
		doc: "The same gap for hosts whose addresses are all loopback (tests, demos). Never applies to other hosts.",
		ptr: func(c *Config) any { return &c.Politeness.LoopbackDelay }},
	{key: "politeness.delay_factor", def: 5.0, min: 1, max: 100,
		doc: "The gap is also at least this many times the domain's last response time (slow servers get more room), up to 30s from this rule.",
		ptr: func(c *Config) any { return &c.Politeness.DelayFactor }},
	{key: "politeness.domain_key", def: "registrable", enum: []string{"registrable", "host"},
		doc: `What counts as one domain for politeness: "registrable" (example.co.uk and its subdomains) or "host".`,
		ptr: func(c *Config) any { return &c.Politeness.DomainKey }},
	{key: "frequency.policy", def: "bouras", enum: []string{"bouras", "optimal", "nutch", "hybrid", "uniform"},
		doc: "How revisit intervals are recalculated after each crawl: \"bouras\" (Bouras et al., 3.2), \"uniform\" (every page every run; under optimizer.budget, the pages that waited longest first: round robin), \"optimal\" (WebFountain's change-rate buckets with Wolf et al.'s allocation under optimizer.budget), \"nutch\" (Nutch's AdaptiveFetchSchedule: ×1.4 when unchanged, ×0.8 when changed, within frequency.min and max) or \"hybrid\" (Ghodsi et al.: pages with little history sampled per site, the others in a Normal or a Slow queue; see [hybrid]).",
		ptr: func(c *Config) any { return &c.Frequency.Policy }},
	{key: "frequency.selective", def: true,
		doc: "Bouras et al.'s selective incremental rule (3.3) with the bouras policy: a due hub that did not change has the pages below it skipped for the run unless enough of its children changed. The other policies schedule every page by its own interval and ignore it.",
		ptr: func(c *Config) any { return &c.Frequency.Selective }},
	{key: "frequency.limit", def: 10, min: 2, max: 1000,
		doc: "How many of a page's last fetches the frequency and selective rules look at.",
		ptr: func(c *Config) any { return &c.Frequency.Limit }},
	{key: "frequency.min", def: 1, min: 1, max: 365,
		doc: "Shortest revisit interval, in runs.",
		ptr: func(c *Config) any { return &c.Frequency.Min }},
	{key: "frequency.max", def: 30, min: 1, max: 3650,
		doc: "Longest revisit interval, in runs.",
		ptr: func(c *Config) any { return &c.Frequency.Max }},
	{key: "optimizer.budget", def: 0, min: 0, max: 1_000_000_000,
		doc: "Pages fetched per run at most, whatever the policy (0 = no cap); what is left stays due, and the due URLs are then taken in order of Xu et al.'s cost of staleness. The optimal policy plans for this many per run and needs it. With run --worker it is the run's, shared by the fleet: the first worker's value holds.",
		ptr: func(c *Config) any { return &c.Optimizer.Budget }},
	{key: "optimizer.new_share", def: 1.0, min: 0, max: 1,
		doc: "Under a budget: how much of it never-fetched URLs may take before known pages are served (WebFountain's two queues). A page not in the archive is certainly stale, so by default new pages come first; their domains take turns and none takes more than its fair share of the run, so a domain that grows without end (a link farm) cannot take the others' budget. A lower share keeps the rest for recrawls; budget left after the recrawls still goes to new pages.",
		ptr: func(c *Config) any { return &c.Optimizer.NewShare }},
	{key: "optimizer.objective", def: "staleness", enum: []string{"staleness", "weighted"},
		doc: `What the optimal policy minimises: "staleness" (every page counts the same) or "weighted" (pages weigh by their seed's priority and their in-links, Wolf et al.'s weights).`,
		ptr: func(c *Config) any { return &c.Optimizer.Objective }},
	{key: "optimizer.period", def: 30, min: 1, max: 3650,
		doc: "The scheduling period T, in runs: the allocation gives every page a number of crawls per period.",
		ptr: func(c *Config) any { return &c.Optimizer.Period }},
	{key: "optimizer.min_crawls", def: 1, min: 0, max: 3650,
		doc: "Crawls per period every page gets at least (WebFountain's compromise: nothing is starved).",
		ptr: func(c *Config) any { return &c.Optimizer.MinCrawls }},
	{key: "optimizer.max_crawls", def: 0, min: 0, max: 3650,
		doc: "Crawls per period a page gets at most; 0 = optimizer.period (every run).",
		ptr: func(c *Config) any { return &c.Optimizer.MaxCrawls }},
	{key: "optimizer.min_rate", def: 0.001, min: 1e-9, max: 1e6,
		doc: "Lowest change rate (changes per run) the 256 change-rate buckets distinguish.",
		ptr: func(c *Config) any { return &c.Optimizer.MinRate }},
	{key: "optimizer.max_rate", def: 10.0, min: 1e-9, max: 1e6,
		doc: "Highest change rate the buckets distinguish.",
		ptr: func(c *Config) any { return &c.Optimizer.MaxRate }},
	{key: "hybrid.sample_size", def: 10, min: 1, max: 100000,
		doc: "With frequency.policy = \"hybrid\": pages per sampling batch; every site gets one batch a run, more while its sampled pages change.",
		ptr: func(c *Config) any { return &c.Hybrid.SampleSize }},
	{key: "hybrid.step", def: 0.02, min: 0, max: 1,
		doc: "How much ρ0 rises each run: sampling gives way to the change-frequency queues as the archive's history grows.",
		ptr: func(c *Config) any { return &c.Hybrid.Step }},
	{key: "hybrid.min_history", def: 4, min: 1, max: 1000,
		doc: "Successful fetches after which a page leaves sampling for the Normal or the Slow queue.",
		ptr: func(c *Config) any { return &c.Hybrid.MinHistory }},
	{key: "hybrid.normal", def: 15, min: 1, max: 3650,
		doc: "Revisit interval, in runs, of the Normal queue (pages estimated to change at least once in √(normal·slow) runs).",
		ptr: func(c *Config) any { return &c.Hybrid.Normal }},
	{key: "hybrid.slow", def: 30, min: 1, max: 3650,
		doc: "Revisit interval, in runs, of the Slow queue.",
		ptr: func(c *Config) any { return &c.Hybrid.Slow }},
	{key: "links.honour_nofollow", def: true,
		doc: "Honour rel=nofollow (and sponsored, ugc) on links and <meta name=robots content=nofollow> on pages.",
		ptr: func(c *Config) any { return &c.Links.HonourNofollow }},
	{key: "links.external_level", def: 0, min: 0, max: 100,
		doc: "Level given to external links that the URL filter admits (with the default filter, none are).",
		ptr: func(c *Config) any { return &c.Links.ExternalLevel }},
	{key: "hints.enabled", def: true,
		doc: "Read the sitemaps robots.txt declares (or /sitemap.xml) and the feeds pages link, once per run per site: a lastmod newer than strata's last fetch makes a page due now, a trusted site's \"unchanged\" spares a fetch, and listed pages strata did not know join the crawl (Xu et al.).",
		ptr: func(c *Config) any { return &c.Hints.Enabled }},
	{key: "change.min_distance", def: 0, min: 0, max: 64,
		doc: "Simhash distance below which two versions count as the same; 0 compares their words exactly (numbers, dates and times always set aside). Measured: at 3, two in three one-sentence edits of a 3,000-word article go unnoticed.",
		ptr: func(c *Config) any { return &c.Change.MinDistance }},
	{key: "traps.max_new_per_domain", def: 5000, min: 1, max: 10_000_000,
		doc: "New URLs a domain may add to the table in one run; past it, strata stops admitting its new URLs until the next run and records the event.",
		ptr: func(c *Config) any { return &c.Traps.MaxNewPerDomain }},
	{key: "traps.max_urls_per_domain", def: 100_000, min: 1, max: 1_000_000_000,
		doc: "URLs a domain may have in the table at all.",
		ptr: func(c *Config) any { return &c.Traps.MaxURLsPerDomain }},
	{key: "schedule.start_window", def: time.Duration(0), min: 0, max: 24 * 3600,
		doc: "With --cron, wait an offset inside this window that changes daily, so sites never see strata at one fixed time. 0s = off.",
		ptr: func(c *Config) any { return &c.Schedule.StartWindow }},
	{key: "notify.webhook", def: "",
		doc: `After each run, POST a JSON summary of it (counts, and its changed, new and gone pages) to this http:// or https:// URL; no redirect is followed and no proxy used: strata contacts nothing else. "" = none.`,
		ptr: func(c *Config) any { return &c.Notify.Webhook }},
	{key: "notify.command", def: "",
		doc: `After each run, run this executable (no shell, no arguments; relative to the configuration file's directory) with the same JSON on standard input and STRATA_RUN, STRATA_CHANGED, STRATA_NEW and STRATA_GONE in its environment. "" = none.`,
		ptr: func(c *Config) any { return &c.Notify.Command }},
	{key: "notify.timeout", def: 10 * time.Second, min: 1, max: 300,
		doc: "How long each hook may take; past it the request is abandoned or the command killed. A failing or slow hook is logged and never fails the run.",
		ptr: func(c *Config) any { return &c.Notify.Timeout }},
	{key: "notify.when", def: "changes", enum: []string{"changes", "always"},
		doc: `"changes": only after a run in which a page changed, appeared or went; "always": after every run.`,
		ptr: func(c *Config) any { return &c.Notify.When }},
	{key: "log.level", def: "info", enum: []string{"debug", "info", "warn", "error"},
		doc: "Least severe log level written to standard error.",
		ptr: func(c *Config) any { return &c.Log.Level }},
	{key: "log.format", def: "text", enum: []string{"text", "json"},
		doc: "Log line format: text (key=value) or json.",
		ptr: func(c *Config) any { return &c.Log.Format }},
}

// Keys returns every configuration key in schema order.
func Keys() []string {
	keys := make([]string, len(schema))
	for i, f := range schema {
		keys[i] = f.key
	}
	return keys
}

// FlagBinding ties a command-line flag to the key it overrides.
type FlagBinding struct {
	Key  string
	Flag *pflag.Flag
}

// Options say where Load looks.
type Options struct {
	File   string        // --config; "" means $STRATA_CONFIG, else ./strata.toml if it exists, else none
	Flags  []FlagBinding // flags that override keys when the user set them
	Getenv func(string) string
	// Environ lists the environment as NAME=value, to find STRATA_ variables that name no setting;
	// it defaults to os.Environ when Getenv is nil too, and to none otherwise.
	Environ func() []string
	WorkDir string // defaults to the process's working directory
}

// Load builds the effective configuration. Errors about the configuration wrap ErrInvalid and are one
// line naming the file (or variable or flag), the key and the allowed values.
func Load(opts Options) (*Config, error) {
	getenv, environ := opts.Getenv, opts.Environ
	if getenv == nil {
		getenv = os.Getenv
		if environ == nil {
			environ = os.Environ
		}
	}
	wd := opts.WorkDir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("config: working directory: %w", err)
		}
	}
	file, explicit := opts.File, true
	if file == "" {
		file = getenv(EnvPrefix + "_CONFIG")
	}
	if file == "" {
		explicit = false
		if _, err := os.Stat(filepath.Join(wd, "strata.toml")); err == nil {
			file = filepath.Join(wd, "strata.toml")
		}
	}
	if file != "" && !filepath.IsAbs(file) {
		file = filepath.Join(wd, file)
	}

	cfg := &Config{Dir: wd, sources: map[string]string{}}
	if environ != nil {
		cfg.Warnings = envWarnings(environ())
	}
	v := viper.New()
	v.SetConfigType("toml")
	for _, f := range schema {
		v.SetDefault(f.key, f.def)
	}
	if file != "" {
		if err := readFile(v, file); err != nil {
			if !explicit && errors.Is(err, os.ErrNotExist) {
				file = ""
			} else {
				return nil, err
			}
		}
	}
	if file != "" {
		cfg.File, cfg.Dir = file, filepath.Dir(file)
		if err := checkUnknown(v, file); err != nil {
			return nil, err
		}
	}

	for _, f := range schema {
		val, src := v.Get(f.key), "default"
		if file != "" && v.InConfig(f.key) {
			src = "file"
		}
		env := envName(f.key)
		if s, ok := lookupEnv(getenv, env); ok {
			val, src = s, "env "+env
		}
		for _, b := range opts.Flags {
			if b.Key == f.key && b.Flag != nil && b.Flag.Changed {
				val, src = b.Flag.Value.String(), "flag --"+b.Flag.Name
			}
		}
		if err := f.set(cfg, val); err != nil {
			where := cfg.File
			if src != "file" {
				where = src
			}
			return nil, fmt.Errorf("%w: %s: %s: %v", ErrInvalid, where, f.key, err)
		}
		if src != "default" {
			cfg.sources[f.key] = src
		}
		if f.path {
			p := f.ptr(cfg).(*string)
			if *p == "" {
				return nil, fmt.Errorf("%w: %s: %s: must not be empty", ErrInvalid, describe(cfg, f.key), f.key)
			}
			if !filepath.IsAbs(*p) {
				*p = filepath.Join(cfg.Dir, *p)
			}
		}
	}
	if cfg.Frequency.Min > cfg.Frequency.Max {
		return nil, fmt.Errorf("%w: %s: frequency.min (%d) is above frequency.max (%d)", ErrInvalid,
			describe(cfg, "frequency.min"), cfg.Frequency.Min, cfg.Frequency.Max)
	}
	if cfg.Frequency.Policy == "optimal" && cfg.Optimizer.Budget <= 0 {
		return nil, fmt.Errorf("%w: %s: optimizer.budget: frequency.policy = \"optimal\" needs a budget of pages per run (1 or more)",
			ErrInvalid, describe(cfg, "optimizer.budget"))
	}
	if cfg.Optimizer.MinRate >= cfg.Optimizer.MaxRate {
		return nil, fmt.Errorf("%w: %s: optimizer.min_rate (%g) must be below optimizer.max_rate (%g)", ErrInvalid,
			describe(cfg, "optimizer.min_rate"), cfg.Optimizer.MinRate, cfg.Optimizer.MaxRate)
	}
	if cfg.Hybrid.Slow < cfg.Hybrid.Normal {
		return nil, fmt.Errorf("%w: %s: hybrid.slow (%d) must be at least hybrid.normal (%d)", ErrInvalid,
			describe(cfg, "hybrid.slow"), cfg.Hybrid.Slow, cfg.Hybrid.Normal)
	}
	if err := checkNotify(cfg); err != nil {
		return nil, err
	}
	cfg.Filter = filter.Default()
	if file != "" && v.InConfig(filterKey) {
		tree := v.Get(filterKey)
		t, err := filter.FromTable(tree, filterKey)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, cfg.File, err)
		}
		cfg.Filter, cfg.filter = t.Filter, t
		cfg.filterTree, _ = tree.(map[string]any)
		cfg.sources[filterKey] = "file"
		if t.Implied && t.Extends == filter.BaseDefault {
			// A change of meaning for a table written before extends existed, and a question a
			// pasted rule leaves open: said once per command until the file answers it.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf(`[filter] in %s has no extends key and no default = true: `+
				`its rules narrow the default rule (extends = "default"); write extends = "default" to keep that, `+
				`or extends = "none" for its rules alone (strata config check shows the effective filter)`, cfg.File))
		}
	}
	return cfg, nil
}

// checkNotify validates the hooks: a webhook must be an absolute http(s) URL, and a relative command
// resolves against the configuration's directory.
func checkNotify(cfg *Config) error {
	if w := cfg.Notify.Webhook; w != "" {
		u, err := url.Parse(w)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: %s: notify.webhook: %q is not an http:// or https:// URL", ErrInvalid, describe(cfg, "notify.webhook"), w)
		}
	}
	if c := cfg.Notify.Command; c != "" && !filepath.IsAbs(c) {
		cfg.Notify.Command = filepath.Join(cfg.Dir, c)
	}
	return nil
}

func describe(c *Config, key string) string {
	if s := c.Source(key); s != "file" && s != "default" {
		return s
	}
	if c.File != "" {
		return c.File
	}
	return "defaults"
}

func readFile(v *viper.Viper, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s: no such file: %w", ErrInvalid, file, os.ErrNotExist)
		}
		return fmt.Errorf("%w: read %s: %v", ErrInvalid, file, err)
	}
	// Editors on Windows start UTF-8 files with a byte-order mark, which TOML parsers refuse.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	// viper's error for a syntax error carries no position; go-toml's does, and viper reads the file
	// with go-toml after this, so the file is parsed here first to report where it goes wrong.
	var probe map[string]any
	var de *toml.DecodeError
	if err := toml.Unmarshal(data, &probe); errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Errorf("%w: %s:%d:%d: not valid TOML: %s", ErrInvalid, file, row, col,
			oneLine(strings.TrimPrefix(de.Error(), "toml: ")))
	}
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("%w: %s: not valid TOML: %s", ErrInvalid, file, oneLine(err.Error()))
	}
	return nil
}

// checkUnknown refuses keys the schema does not declare, so a typo is an error instead of a silently
// ignored setting.
func checkUnknown(v *viper.Viper, file string) error {
	known := map[string]bool{}
	sections := map[string]bool{}
	for _, f := range schema {
		known[f.key] = true
		sections[f.key[:strings.IndexByte(f.key, '.')]] = true
	}
	var unknown []string
	for _, k := range v.AllKeys() {
		if k == filterKey || strings.HasPrefix(k, filterKey+".") {
			continue
		}
		if !known[k] && v.InConfig(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	k := unknown[0]
	hint := ""
	if i := strings.IndexByte(k, '.'); i < 0 {
		if sections[k] {
			hint = fmt.Sprintf(" (%q is a section: write [%s])", k, k)
		}
	} else if !sections[k[:i]] {
		hint = fmt.Sprintf(" (no section [%s]; sections are %s)", k[:i], strings.Join(sortedKeys(sections), ", "))
	} else {
		hint = fmt.Sprintf(" (keys in [%s] are %s)", k[:i], strings.Join(keysIn(k[:i]), ", "))
	}
	return fmt.Errorf("%w: %s: unknown key %s%s", ErrInvalid, file, k, hint)
}

func keysIn(section string) []string {
	var out []string
	for _, f := range schema {
		if strings.HasPrefix(f.key, section+".") {
			out = append(out, strings.TrimPrefix(f.key, section+"."))
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// suiteEnv are the STRATA_ variables (or their prefixes) that strata's own tests and CI read: not
// settings, and not typos of one.
var suiteEnv = []string{"STRATA_TEST_", "STRATA_BENCH_", "STRATA_BROWSER_TEST", "STRATA_ARTEFACTS", "STRATA_REQUIRE_POSTGRES"}

// envWarnings returns a line for each STRATA_ variable in env that Load ignores: one that names no
// setting (with the nearest that does: a typo must not pass for a setting), and a setting's variable
// set to the empty value, which leaves the file's or the default value in force.
func envWarnings(env []string) []string {
	known := []string{EnvPrefix + "_CONFIG"}
	for _, f := range schema {
		known = append(known, envName(f.key))
	}
	var out []string
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") || slices.ContainsFunc(suiteEnv, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		switch {
		case !slices.Contains(known, name):
			out = append(out, fmt.Sprintf("environment variable %s is not a strata setting and is ignored; did you mean %s?", name, nearest(name, known)))
		case value == "":
			out = append(out, fmt.Sprintf("environment variable %s is set but empty, so it is ignored; unset it or give it a value", name))
		}
	}
	sort.Strings(out)
	return out
}

// nearest returns the candidate closest to s in edit distance (the first of equals).
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (variable names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// headerValue refuses what cannot go into an HTTP header: every request would fail before it left
// (net/http refuses the field), so every host would be skipped and the run still end well.
func headerValue(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty: name your crawler and how to reach you")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return fmt.Errorf("%q contains the control character %q (byte %d), which an HTTP header cannot carry", s, c, i+1)
		}
	}
	return nil
}

func envName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	s := getenv(name)
	return s, s != ""
}

// set parses val (from TOML, an environment variable or a flag) into the field, checking type and range.
func (f field) set(c *Config, val any) error {
	switch p := f.ptr(c).(type) {
	case *string:
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("want a string, got %s", typeName(val))
		}
		if f.enum != nil && !contains(f.enum, s) {
			return fmt.Errorf("%q is not one of %s", s, strings.Join(quoteAll(f.enum), ", "))
		}
		if f.check != nil {
			if err := f.check(s); err != nil {
				return err
			}
		}
		*p = s
	case *int:
		n, err := toInt(val)
		if err != nil {
			return err
		}
		if err := f.inRange(float64(n), strconv.FormatInt(n, 10)); err != nil {
			return err
		}
		*p = int(n)
	case *int64:
		n, err := toInt(val)
		if err != nil {
			return err
		}
		if err := f.inRange(float64(n), strconv.FormatInt(n, 10)); err != nil {
			return err
		}
		*p = n
	case *float64:
		x, err := toFloat(val)
		if err != nil {
			return err
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			// NaN fails every comparison, so it would pass the range check below.
			return fmt.Errorf("%v is not a finite number (allowed: %s)", x, f.rangeText())
		}
		if err := f.inRange(x, strconv.FormatFloat(x, 'g', -1, 64)); err != nil {
			return err
		}
		*p = x
	case *bool:
		switch b := val.(type) {
		case bool:
			*p = b
		case string:
			x, err := strconv.ParseBool(b)
			if err != nil {
				return fmt.Errorf("want true or false, got %q", b)
			}
			*p = x
		default:
			return fmt.Errorf("want true or false, got %s", typeName(val))
		}
	case *time.Duration:
		var d time.Duration
		switch x := val.(type) {
		case time.Duration:
			d = x
		case string:
			var err error
			if d, err = time.ParseDuration(x); err != nil {
				return fmt.Errorf("want a duration such as \"10s\" or \"4h\", got %q", x)
			}
		default:
			return fmt.Errorf("want a duration string such as \"10s\" or \"4h\", got %s", typeName(val))
		}
		if err := f.inRange(d.Seconds(), d.String()); err != nil {
			return err
		}
		*p = d
	default:
		return fmt.Errorf("internal: unsupported field type %T", p)
	}
	return nil
}

func (f field) inRange(x float64, shown string) error {
	if f.min == 0 && f.max == 0 {
		return nil
	}
	if x < f.min || x > f.max {
		return fmt.Errorf("%s is out of range (allowed: %s)", shown, f.rangeText())
	}
	return nil
}

func (f field) rangeText() string {
	if _, ok := f.def.(time.Duration); ok {
		lo := time.Duration(f.min * float64(time.Second))
		hi := time.Duration(f.max * float64(time.Second))
		return fmt.Sprintf("%s to %s", fmtDuration(lo), fmtDuration(hi))
	}
	return fmt.Sprintf("%s to %s", strconv.FormatFloat(f.min, 'f', -1, 64), strconv.FormatFloat(f.max, 'f', -1, 64))
}

func toInt(val any) (int64, error) {
	switch x := val.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("want a whole number, got %v", x)
		}
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("want a whole number, got %q", x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want a whole number, got %s", typeName(val))
}

func toFloat(val any) (float64, error) {
	switch x := val.(type) {
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("want a number, got %q", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("want a number, got %s", typeName(val))
}

func typeName(val any) string {
	switch val.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, float64:
		return fmt.Sprintf("the number %v", val)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", val)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strconv.Quote(s)
	}
	return out
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// databaseURL accepts "" or a postgres:// (postgresql://) URL; pgstore reports what else is wrong
// with it when it connects.
func databaseURL(v string) error {
	if v == "" || strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		return nil
	}
	return fmt.Errorf("want a postgres:// URL, or \"\" for the SQLite database.path")
}
