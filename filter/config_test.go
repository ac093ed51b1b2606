package filter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

var exampleNames = []string{"university", "news", "ac_uk"}

// decodeTOML decodes a document the way the configuration loader does and returns its [filter] value.
func decodeTOML(t testing.TB, doc string) any {
	t.Helper()
	var m map[string]any
	if err := toml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("TOML does not parse: %v\n%s", err, doc)
	}
	return m["filter"]
}

func loadExample(t testing.TB, name string) Filter {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := FromConfig(decodeTOML(t, string(b)), "filter")
	if err != nil {
		t.Fatalf("%s.toml: %v", name, err)
	}
	return f
}

func TestExamples(t *testing.T) {
	type row struct {
		url    string
		level  int
		accept bool
		reason string // substring
		to     string // rewritten URL
	}
	univ := DomainSet("www.example.edu")
	news := DomainSet("www.bbc.co.uk", "www.theguardian.com", "www.lemonde.fr", "www.spiegel.de")
	acuk := DomainSet("www.ox.ac.uk", "www.cam.ac.uk")
	tables := map[string]struct {
		seeds map[string]bool
		rows  []row
	}{
		"university": {univ, []row{
			{url: "https://www.example.edu/", accept: true},
			{url: "https://cs.example.edu/people/index.html", accept: true},
			{url: "https://www.example.edu/news/2024/story?id=7&utm_source=feed", accept: true, to: "https://www.example.edu/news/2024/story?id=7"},
			{url: "https://www.example.edu/calendar/2024/05/01", reason: `all[2] [traps] not: any[0] path_glob "/calendar/**" matched`},
			{url: "https://www.example.edu/events/seminar/day/2024-05-01", reason: "[traps]"},
			{url: "https://www.example.edu/events/seminar/", accept: true},
			{url: "https://www.example.edu/search/?q=physics", reason: "[traps]"},
			{url: "https://www.example.edu/news?month=5&year=2024", reason: `any[1] url_regex`},
			{url: "https://www.example.edu/news/article/print/", reason: "[print and login views]"},
			{url: "https://www.example.edu/news/article?print=1", reason: "[print and login views]"},
			{url: "https://www.example.edu/news/article?print=10", accept: true},
			{url: "https://www.example.edu/login/?next=/", reason: "[print and login views]"},
			{url: "https://www.example.edu/brochure.pdf", reason: `[default] all[2] deny_extensions: ".pdf" denied`},
			{url: "https://www.example.com/", reason: "seed_domains"},
			{url: "https://www.example.edu/a/b/c/d/e/f/g/h/i", reason: "all[4] max_depth 8: depth 9"},
			{url: "ftp://www.example.edu/"}, // refused by urlnorm already; see below
		}},
		"news": {news, []row{
			{url: "https://www.bbc.co.uk/news/world-12345", accept: true},
			{url: "https://www.theguardian.com/world/2024/may/01/story?CMP=share&utm_source=x", accept: true, to: "https://www.theguardian.com/world/2024/may/01/story?CMP=share"},
			{url: "https://www.lemonde.fr/agenda/2024/05/", reason: `not: any[0] [calendar] path_glob`},
			{url: "https://www.spiegel.de/kultur/calendar", reason: "[calendar]"},
			{url: "https://www.bbc.co.uk/news/events/", reason: "[calendar]"},
			{url: "https://www.bbc.co.uk/news/world-12345/print", reason: `[print view] any[0] path_glob`},
			{url: "https://www.bbc.co.uk/news/world-12345?print", reason: "[print view] any[1] url_regex"},
			{url: "https://www.bbc.co.uk/news/world-12345?printable=yes&a=b", reason: "[print view]"},
			{url: "https://www.bbc.co.uk/news/world-12345?printer=hp", accept: true},
			{url: "https://www.lemonde.fr/article.html?view=print", reason: `[print view] any[2] expr`},
			{url: "https://www.lemonde.fr/article.html?view=full", accept: true},
			{url: "https://www.bbc.co.uk/search?q=a&page=2&sort=date&filter=uk", reason: "query: 4 parameters (max_params 3)"},
			{url: "https://www.bbc.com/news", reason: "seed_domains"},
			{url: "https://www.bbc.co.uk/images/x.jpg", reason: "deny_extensions"},
		}},
		"ac_uk": {acuk, []row{
			{url: "https://www.ox.ac.uk/research", accept: true},
			{url: "http://www.ed.ac.uk/informatics/people", accept: true},
			{url: "https://www.ucl.ac.uk/theses/2024/thesis.pdf", accept: true},
			{url: "https://www.ucl.ac.uk/photo.jpg", reason: `all[6] deny_extensions: ".jpg" denied`},
			{url: "https://www.ox.ac.uk/page?utm_source=x&id=1", accept: true, to: "https://www.ox.ac.uk/page?id=1"},
			{url: "https://www.ox.ac.uk/page?SID=123", reason: `all[2] query: parameter "SID" rejected`},
			{url: "https://www.ox.ac.uk/shop/cart;jsessionid=1A2B", reason: `query: path parameter "jsessionid" rejected`},
			{url: "https://www.ox.ac.uk/index.php?PHPSESSID=abc&page=2", reason: "rejected"},
			{url: "https://www.ox.ac.uk/a/b/c/d/e.html", accept: true},
			{url: "https://www.ox.ac.uk/a/b/c/d/e/f.html", reason: "max_depth 5: depth 6"},
			{url: "https://www.ox.ac.uk/a/a/a", reason: `max_repeat: segment "a" occurs 3 times (max 2)`},
			{url: "https://www.ox.ac.uk/" + strings.Repeat("x", 1010), reason: "max_length 1024"},
			{url: "https://www.ox.co.uk/", reason: `all[1] suffix "ac.uk" did not match host "www.ox.co.uk"`},
			{url: "https://ac.uk.example.com/", reason: "suffix"},
			{url: "https://webmail.ox.ac.uk/", reason: `all[7] [no webmail or VLE] expr "not (host startsWith`},
			{url: "https://moodle.cam.ac.uk/course", reason: "[no webmail or VLE]"},
			{url: "https://www.ox.ac.uk/?a=1&b=2&c=3&d=4&e=5", reason: "query: 5 parameters (max_params 4)"},
		}},
	}
	for _, name := range exampleNames {
		f := loadExample(t, name)
		tab := tables[name]
		for _, r := range tab.rows {
			u, err := urlnorm.Parse(r.url)
			if err != nil {
				if r.accept {
					t.Errorf("%s: %s: %v", name, r.url, err)
				}
				continue
			}
			d := f.Decide(Input{URL: u, Level: r.level, SeedDomains: tab.seeds})
			if d.Accept != r.accept || !strings.Contains(d.Reason, r.reason) {
				t.Errorf("%s: %s: accept=%v reason=%q; want accept=%v, reason containing %q", name, r.url, d.Accept, d.Reason, r.accept, r.reason)
			}
			got := ""
			if d.URL != nil {
				got = d.URL.String()
			}
			if got != r.to {
				t.Errorf("%s: %s: rewritten to %q, want %q", name, r.url, got, r.to)
			}
		}
	}
}

func TestFromConfigNil(t *testing.T) {
	f, err := FromConfig(nil, "filter")
	if err != nil || f != Default() {
		t.Errorf("FromConfig(nil) = %v, %v; want Default()", f, err)
	}
}

func TestFromConfigForms(t *testing.T) {
	// Forms the loader may hand over besides go-toml's: Go ints, []map[string]any, []string.
	tree := map[string]any{
		"all": []map[string]any{
			{"max_depth": 3},
			{"host": []string{"a.example"}},
			{"max_length": float64(100)},
			{"level": map[string]any{"max": uint8(2)}},
		},
	}
	f, err := FromConfig(tree, "filter")
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Decide(Input{URL: mustParse(t, "http://a.example/x"), Level: 1}); !d.Accept {
		t.Error(d.Reason)
	}
	if d := f.Decide(Input{URL: mustParse(t, "http://a.example/x"), Level: 3}); d.Accept || d.Reason != "all[3] level 3 outside ≤ 2" {
		t.Error(d.Reason)
	}

	// A table with several filter keys asks them in the fixed order, query first.
	f, err = FromConfig(decodeTOML(t, `
[filter]
max_length = 25
url_regex = '^http://a\.example/p$'
query = { strip = true }
name = "flat"
`), "filter")
	if err != nil {
		t.Fatal(err)
	}
	d := f.Decide(Input{URL: mustParse(t, "http://a.example/p?utm_term=abcdefgh")})
	if !d.Accept || d.URL == nil || d.URL.String() != "http://a.example/p" || d.Reason != `[flat] all: 3 accepted (query: stripped "utm_term")` {
		t.Errorf("flat table: %+v", d)
	}
	d = f.Decide(Input{URL: mustParse(t, "http://a.example/q")})
	if d.Accept || d.Reason != `[flat] url_regex "^http://a\\.example/p$" did not match URL "http://a.example/q"` {
		t.Errorf("flat table: %+v", d)
	}

	// deny_extensions forms and query = { strip = true }.
	for _, c := range []struct {
		doc, url string
		accept   bool
	}{
		{`deny_extensions = true`, "http://a.example/x.pdf", false},
		{`deny_extensions = ["pdf", ".DOCX"]`, "http://a.example/x.docx", false},
		{`deny_extensions = ["pdf"]`, "http://a.example/x.jpg", true},
		{`deny_extensions = { except = ["pdf"] }`, "http://a.example/x.pdf", true},
		{`deny_extensions = { except = ["pdf"] }`, "http://a.example/x.jpg", false},
		{`deny_extensions = { add = ["rss"] }`, "http://a.example/feed.rss", false},
		{`deny_extensions = { defaults = false, add = ["rss"] }`, "http://a.example/x.jpg", true},
		{`max_repeat = 2`, "http://a.example/a/b/a/b/a/b", false},
		{`max_repeat = { segment = 5 }`, "http://a.example/a/b/a/b/a/b", true},
		{`max_repeat = { pair = 2 }`, "http://a.example/a/b/a/b/a/b", false},
		{`level = { min = 1 }`, "http://a.example/", false},
		{`query = { reject = true }`, "http://a.example/?fbclid=1", false},
		{`prefix = "//a.example/"`, "https://a.example/x", true},
		{`not = { all = [ { host = "a.example" }, { path_glob = "/x" } ] }`, "https://a.example/x", false},
		{`not = { all = [ { host = "a.example" }, { path_glob = "/x" } ] }`, "https://a.example/y", true},
		{"expr = '''\n  host == \"a.example\"\n  and depth == 1\n'''", "https://a.example/y", true},
	} {
		f, err := FromConfig(decodeTOML(t, "[filter]\n"+c.doc), "filter")
		if err != nil {
			t.Errorf("%s: %v", c.doc, err)
			continue
		}
		if d := f.Decide(Input{URL: mustParse(t, c.url)}); d.Accept != c.accept {
			t.Errorf("%s on %s: accept=%v (%s)", c.doc, c.url, d.Accept, d.Reason)
		}
	}
}

func TestFromConfigErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		// unknown filter names, with suggestions
		{`regex = "x"`, `filter.regex: unknown filter "regex" (use url_regex (whole URL) or path_regex (path only))`},
		{`all = [ { domian = "example.edu" } ]`, `filter.all[0].domian: unknown filter "domian" (did you mean "domain"?)`},
		{`Domain = "example.edu"`, `filter.Domain: unknown filter "Domain" (keys are lower case: "domain")`},
		{`all = [ { seed_domains = true }, { any = [ { frobnicate = 1 } ] } ]`, `filter.all[1].any[0].frobnicate: unknown filter "frobnicate" (known filters: default, query,`},
		{`query = { strip = true, maxparams = 3 }`, `filter.query.maxparams: unknown key "maxparams" (allowed: strip, reject, max_params)`},
		// wrong types
		{`max_length = "2048"`, `filter.max_length: want a whole number, got string "2048"`},
		{`max_depth = 2.5`, `filter.max_depth: want a whole number, got float 2.5`},
		{`seed_domains = "yes"`, `filter.seed_domains: want true, got string "yes"`},
		{`seed_domains = false`, `filter.seed_domains: false is not allowed: leave it out to allow other domains`},
		{`domain = 3`, `filter.domain: want a string or an array of strings, got integer 3`},
		{`domain = ["a.example", 3]`, `filter.domain[1]: want a string, got integer 3`},
		{`all = { domain = "a.example" }`, `filter.all: want an array of filter tables`},
		{`all = [ "seed_domains" ]`, `filter.all[0]: want a filter table such as { domain = "example.edu" }, got string "seed_domains"`},
		{`not = [ { host = "a.example" } ]`, `filter.not: not takes one filter table; to negate several write not = { any = [ … ] }`},
		{`expr = true`, `filter.expr: want an expression string`},
		{`level = 3`, `filter.level: want a table such as { min = 0, max = 3 }, got integer 3`},
		{`max_repeat = "3"`, `filter.max_repeat: want a number of times or a table`},
		{`deny_extensions = false`, `filter.deny_extensions: want true (the default list)`},
		{`name = 5
max_depth = 3`, `filter.name: want a non-empty string naming this filter, got integer 5`},
		{`when = 2024-05-01T00:00:00Z`, `filter.when: unknown filter "when"`},
		{`max_depth = 2024-05-01T00:00:00Z`, `filter.max_depth: want a whole number, got date-time 2024-05-01T00:00:00Z`},
		// empty things and out-of-range values
		{`all = []`, `filter.all: empty all: give at least one filter (an empty all would accept every URL)`},
		{`any = []`, `filter.any: empty any: give at least one filter (an empty any would reject every URL)`},
		{`all = [ {} ]`, `filter.all[0]: empty table: give a filter such as domain = "example.edu" or all = [ … ]`},
		{`all = [ { name = "x" } ]`, `filter.all[0]: table named "x" has no filter`},
		{`host = []`, `filter.host: empty array: give at least one value`},
		{`max_length = 0`, `filter.max_length: 0 is out of range (1 to 16384 bytes)`},
		{`max_depth = -1`, `filter.max_depth: -1 is out of range (0 to 10000 path segments)`},
		{`level = { min = 3, max = 1 }`, `filter.level: min 3 is above max 1`},
		{`level = {}`, `filter.level: give min = N, max = N or both`},
		{`query = { max_params = 0 }`, `filter.query.max_params: 0 is not allowed; to refuse every query write reject = ["*"]`},
		{`query = { strip = ["utm_*", "a b"] }`, `filter.query.strip[1]: strip: "a b" is not a parameter name`},
		{`query = {}`, `filter.query: query rules are empty`},
		{`deny_extensions = { defaults = false }`, `filter.deny_extensions: no extensions left to deny`},
		{`deny_extensions = ["pdf", "x/y"]`, `filter.deny_extensions[1]: "x/y" is not a file extension`},
		// values the filters refuse
		{`all = [ { any = [ { host = "a.example" }, { url_regex = "a(b" } ] } ]`, `filter.all[0].any[1].url_regex: url_regex "a(b": missing closing ) in "a(b"`},
		{`path_regex = ['^/ok$', '[z-a]']`, `filter.path_regex[1]: path_regex "[z-a]": invalid character class range in "z-a"`},
		{`all = [ { domain = "co.uk" } ]`, `filter.all[0].domain: domain "co.uk" is a public suffix, so it would match every site registered under it; name a registrable domain (such as "example.co.uk"), or write suffix = "co.uk" if you mean all of them`},
		{`domain = ["example.edu", "ac.uk"]`, `filter.domain[1]: domain "ac.uk" is a public suffix`},
		{`scheme = "ftp"`, `filter.scheme: scheme "ftp" not supported: strata crawls http and https only`},
		{`path_glob = "calendar/**"`, `filter.path_glob: path_glob "calendar/**" must start with "/" or "**"`},
		{`prefix = "example.edu/news"`, `filter.prefix: prefix "example.edu/news" is not an absolute http(s) URL`},
		// expressions: position line:column and the expression
		{`expr = 'host endsWith ".edu" and'`, `filter.expr: 1:24: unexpected token EOF in expression "host endsWith \".edu\" and"`},
		{"all = [ { seed_domains = true }, { expr = '''\nhost == \"a\" and\n  level > \"x\"''' } ]", `filter.all[1].expr: 2:9: invalid operation: > (mismatched types int and string) in expression "host == \"a\" and level > \"x\""`},
		{`expr = 'hots == "a.example"'`, `filter.expr: 1:1: unknown name hots in expression "hots == \"a.example\""`},
		{`expr = 'depth + 1'`, `filter.expr: 1:1: expected bool, but got int in expression "depth + 1"`},
		{`expr = 'now() > now()'`, `filter.expr: 1:1: unknown name now (clock and string-multiplying built-ins are disabled in filters)`},
		{`expr = 'all(segments, {any(segments, {# == "a"})})'`, `filter.expr: 1:30: nested closures are not allowed (their cost multiplies)`},
		{`expr = ''`, `filter.expr: empty expression`},
	} {
		tree := decodeTOML(t, "[filter]\n"+c.doc)
		f, err := FromConfig(tree, "filter")
		if err == nil {
			t.Errorf("%s: no error (filter %T)", c.doc, f)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\n\tgot  %s\n\twant %s", c.doc, err, c.want)
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("%s: error is not one line: %q", c.doc, err)
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %T does not wrap ErrInvalid as a *ConfigError", c.doc, err)
		}
	}

	// Not a table at all.
	if _, err := FromConfig([]any{map[string]any{"host": "a.example"}}, "filter"); err == nil ||
		err.Error() != "filter: want a table of filters such as { all = [ … ] }, got array" {
		t.Errorf("array at the top: %v", err)
	}
	// A long expression is refused.
	if _, err := FromConfig(map[string]any{"expr": "true or " + strings.Repeat("true or ", MaxExprLength/8) + "true"}, "f"); err == nil ||
		!strings.Contains(err.Error(), "longer than 4096 bytes") {
		t.Errorf("long expression: %v", err)
	}
}
