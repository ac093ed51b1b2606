package config

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/strata-crawler/strata/filter"
)

// WriteTOML writes the effective configuration as TOML that strata can read back, with a comment on
// every key saying where its value came from.
func (c *Config) WriteTOML(w io.Writer) error {
	section := ""
	var b strings.Builder
	if c.File != "" {
		fmt.Fprintf(&b, "# effective configuration; file %s\n", c.File)
	} else {
		b.WriteString("# effective configuration; no file (defaults, environment and flags)\n")
	}
	for _, f := range schema {
		sec, name, _ := strings.Cut(f.key, ".")
		if sec != section {
			fmt.Fprintf(&b, "\n[%s]\n", sec)
			section = sec
		}
		fmt.Fprintf(&b, "%-16s = %-40s # %s\n", name, formatValue(f.ptr(c)), c.Source(f.key))
	}
	if err := c.writeFilter(&b); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFilter writes the effective [filter]: what the file's table extends and why, its rules, and
// the default rule spelled out wherever it applies.
func (c *Config) writeFilter(b *strings.Builder) error {
	b.WriteString("\n[filter]\n")
	extends := filter.BaseDefault
	switch t := c.filter; {
	case t == nil:
		fmt.Fprintf(b, "%-16s = %-40s # default: no [filter] table\n", "default", "true")
	default:
		extends = t.Extends
		why := "file"
		if t.Implied && extends == filter.BaseNone {
			why = "implied: the table places default = true itself"
		} else if t.Implied {
			why = "implied: the table names neither extends nor default = true"
		}
		fmt.Fprintf(b, "%-16s = %-40s # %s\n", "extends", strconv.Quote(string(extends)), why)
		rules := make(map[string]any, len(c.filterTree))
		for k, v := range c.filterTree {
			if k != "extends" {
				rules[k] = v
			}
		}
		if len(rules) > 0 {
			var enc bytes.Buffer
			e := toml.NewEncoder(&enc)
			e.SetTablesInline(true)
			if err := e.Encode(rules); err != nil {
				return fmt.Errorf("config check: write the [filter] table: %w", err)
			}
			b.WriteString(enc.String())
		}
	}
	if extends == filter.BaseDefault {
		b.WriteString("# A URL is crawled when the default rule accepts it")
		if c.filter != nil {
			b.WriteString(" and so do the rules above")
		}
		b.WriteString(". The default rule (default = true) is, in this order:\n")
		for _, line := range strings.Split(filter.DefaultTOML, "\n") {
			fmt.Fprintf(b, "#   %s\n", line)
		}
	}
	return nil
}

// WriteExample writes a commented configuration file with every key at its default value: the text
// of config.example.toml, which a test keeps in step with the schema.
func WriteExample(w io.Writer) error {
	var def Config
	for _, f := range schema {
		if err := f.set(&def, f.def); err != nil {
			return fmt.Errorf("config: default of %s: %w", f.key, err)
		}
	}
	var b strings.Builder
	b.WriteString(exampleHeader)
	section := ""
	for _, f := range schema {
		sec, name, _ := strings.Cut(f.key, ".")
		if sec != section {
			fmt.Fprintf(&b, "\n[%s]\n", sec)
			section = sec
		}
		fmt.Fprintf(&b, "# %s\n", f.doc)
		if f.enum != nil {
			fmt.Fprintf(&b, "# One of %s.\n", strings.Join(quoteAll(f.enum), ", "))
		} else if f.min != 0 || f.max != 0 {
			fmt.Fprintf(&b, "# Allowed: %s.\n", f.rangeText())
		}
		fmt.Fprintf(&b, "%s = %s\n", name, formatValue(f.ptr(&def)))
	}
	b.WriteString(filterExamples)
	_, err := io.WriteString(w, b.String())
	return err
}

// filterExamples documents the [filter] table with three realistic configurations, commented out.
// A test un-comments each block and loads it, so the examples cannot rot.
const filterExamples = `
# [filter]: which URLs strata crawls (Bouras et al., section 4). Without a [filter] table the
# default rule applies: http(s) only, the seeds' registrable domains only, no images, documents,
# media, archives, scripts or fonts, tracking and session parameters stripped, at most 2,048 bytes,
# no looping paths. A [filter] table's rules narrow the default rule (extends = "default": a URL is
# crawled when both accept it) or replace it (extends = "none"); without extends, a table that
# names default = true somewhere has placed the default rule itself, and any other table extends it
# (with a warning until the key is written). strata config check prints the effective filter.
# A filter is a table with one filter key (or several, which must all accept);
# all = [...], any = [...] and not = {...} nest to any depth; name = "..." labels a filter in
# strata filter test's reasons. Keys: scheme, host, domain, suffix, seed_domains, prefix,
# path_glob, path_regex, url_regex, deny_extensions, query = { strip, reject, max_params },
# max_length, max_depth, max_repeat, level = { min, max }, default = true, and expr = '...'
# (an expression over url, scheme, host, domain, port, path, query, ext, depth, segments,
# params, level, seed, onseed). Try a configuration with: strata filter test URL...
#
# Example 1: one university's site, without its calendars, search, print and login pages.
#[filter]
#extends = "default"
#all = [
#  { domain = "example.edu" },
#  { name = "traps", not = { any = [
#      { path_glob = ["/calendar/**", "/events/*/day/**", "/search/**"] },
#      { url_regex = '[?&](month|year|date)=' },
#  ] } },
#  { name = "print and login views", not = { any = [
#      { path_glob = ["/**/print/**", "/login/**", "/cas/**"] },
#      { url_regex = '[?&](print|printable)=(1|true|yes)(&|$)' },
#  ] } },
#  { max_depth = 8 },
#]
#
# Example 2: a set of news sites without their event calendars and print views (several keys in
# one table must all accept).
#[filter]
#extends = "default"
#domain = ["bbc.co.uk", "theguardian.com", "lemonde.fr", "spiegel.de"]
#query = { max_params = 3 }
#not = { any = [
#  { name = "calendar", path_glob = ["/**/calendar/**", "/**/events/**", "/**/agenda/**"] },
#  { name = "print view", any = [
#      { path_glob = ["/**/print", "/**/print/**"] },
#      { url_regex = '[?&](print|printable)(=[^&]*)?(&|$)' },
#      { expr = 'params["view"] == "print" or params["output"] == "print"' },
#  ] },
#] }
#
# Example 3: the whole UK academic web (ac.uk is a public suffix, hence suffix, not domain),
# shallow, without session ids or calendar exports (.ics), leaving webmail and learning platforms
# alone. It goes beyond the seeds' domains, so it replaces the default rule.
#[filter]
#extends = "none"
#all = [
#  { scheme = ["http", "https"] },
#  { suffix = "ac.uk" },
#  { query = { strip = ["utm_*", "fbclid", "gclid"], max_params = 4, reject = [
#      "sid", "sessionid", "session_id", "phpsessid", "jsessionid", "cfid", "cftoken",
#  ] } },
#  { max_length = 1024 },
#  { max_depth = 5 },
#  { max_repeat = { segment = 2, pair = 2 } },
#  { deny_extensions = { defaults = true, add = ["ics"] } },
#  { name = "no webmail or VLE", expr = 'not (host startsWith "webmail." or host startsWith "moodle.")' },
#]
`

const exampleHeader = `# strata configuration: every key with its default value.
#
# Precedence, highest first: command-line flags, STRATA_* environment variables (STRATA_CRAWL_WORKERS
# sets crawl.workers), this file, the defaults shown here. Durations are Go durations ("10s", "4h").
# Relative paths resolve against the directory of this file, so a cron job started anywhere finds them.
# Check a file with: strata --config FILE config check
`

func formatValue(p any) string {
	switch v := p.(type) {
	case *string:
		return strconv.Quote(*v)
	case *int:
		return strconv.Itoa(*v)
	case *int64:
		return strconv.FormatInt(*v, 10)
	case *float64:
		s := strconv.FormatFloat(*v, 'f', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0" // keep it a TOML float
		}
		return s
	case *bool:
		return strconv.FormatBool(*v)
	case *time.Duration:
		return strconv.Quote(fmtDuration(*v))
	}
	return fmt.Sprintf("%v", p)
}

// fmtDuration writes "4h" rather than time.Duration's "4h0m0s".
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// UserAgentIsPlaceholder reports whether the user agent still carries the example contact URL.
func (c *Config) UserAgentIsPlaceholder() bool {
	return strings.Contains(c.Crawl.UserAgent, "example.org/replace-with-your-contact-page")
}
