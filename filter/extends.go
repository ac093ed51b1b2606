package filter

import (
	"strings"
)

// Base is what a configured [filter] table builds on: its extends key.
type Base string

const (
	// BaseDefault: the table's rules narrow the default rule; a URL must pass both.
	BaseDefault Base = "default"
	// BaseNone: the table's rules alone decide.
	BaseNone Base = "none"
)

// Table is a [filter] table built by FromTable.
type Table struct {
	Filter  Filter
	Extends Base
	// Implied says the table has no extends key, so Extends was chosen for it: BaseNone when the
	// table places the default rule itself (default = true anywhere in it), else BaseDefault.
	Implied bool
}

// FromTable builds the [filter] table of the configuration, tree as FromConfig takes it, with its
// extends key: extends = "default" makes the table's rules narrow the default rule — a URL is
// crawled when the default rule and the rules both accept it — and extends = "none" makes the rules
// decide alone. Without the key, a table that names default = true somewhere has placed the default
// rule itself and extends nothing; any other table extends the default, so that a rule pasted into
// a fresh [filter] table (one that strata traps suggests, say) narrows the crawl rather than
// silently dropping the default's scheme, seed-domain, extension, tracking-parameter, length and
// loop rules. The default rule's reasons then come first, as "[default] …", and the rules' as
// FromConfig gives them.
func FromTable(tree any, path string) (*Table, error) {
	m, ok := asTable(tree)
	if !ok {
		return nil, cfgErr(path, "want a table of filters such as { all = [ … ] }, got %s", describe(tree))
	}
	t := &Table{Extends: BaseDefault, Implied: true}
	rules := make(map[string]any, len(m))
	for k, v := range m {
		if k != "extends" {
			rules[k] = v
			continue
		}
		s, _ := v.(string)
		switch Base(s) {
		case BaseDefault, BaseNone:
			t.Extends, t.Implied = Base(s), false
		default:
			return nil, cfgErr(join(path, k), `want "default" (the rules narrow the default rule) or "none" (the rules alone), got %s`, describe(v))
		}
	}
	if t.Implied && placesDefault(rules) {
		t.Extends = BaseNone
	}
	if len(rules) == 0 {
		if t.Extends == BaseNone {
			return nil, cfgErr(path, `extends = "none" and no rules would accept every URL: give rules such as domain = "example.edu"`)
		}
		t.Filter = Default()
		return t, nil
	}
	f, err := buildTable(rules, path)
	if err != nil {
		return nil, err
	}
	if t.Extends == BaseDefault {
		f = &allFilter{fs: []Filter{Default(), f}}
	}
	t.Filter = f
	return t, nil
}

// placesDefault reports whether a filter tree has default = true anywhere.
func placesDefault(v any) bool {
	if m, ok := asTable(v); ok {
		for k, x := range m {
			if b, ok := x.(bool); ok && k == "default" && b {
				return true
			}
			if placesDefault(x) {
				return true
			}
		}
		return false
	}
	if list, ok := asList(v); ok {
		for _, x := range list {
			if placesDefault(x) {
				return true
			}
		}
	}
	return false
}

// DefaultTOML is the default rule written as a [filter] table's rules, in the order it asks them:
// what default = true stands for.
var DefaultTOML = strings.TrimSpace(`
scheme = ["http", "https"]
seed_domains = true
deny_extensions = true               # the DefaultExtensions: images, audio, video, archives, documents, fonts, …
query = { strip = true }             # the DefaultTrackingParams: utm_*, fbclid, gclid, session ids, …
max_length = 2048
max_repeat = { segment = 3, pair = 2 }`)
