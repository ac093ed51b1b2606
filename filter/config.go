package filter

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

// ErrInvalid is wrapped by every error FromConfig returns.
var ErrInvalid = errors.New("invalid filter configuration")

// ConfigError is an error in the filter configuration: Path is the key path of the offending value
// (such as "filter.all[2].url_regex") and Msg says what is wrong, on one line.
type ConfigError struct {
	Path string
	Msg  string
}

func (e *ConfigError) Error() string { return e.Path + ": " + e.Msg }

// Unwrap lets errors.Is(err, ErrInvalid) recognise configuration errors.
func (e *ConfigError) Unwrap() error { return ErrInvalid }

func cfgErr(path, format string, args ...any) error {
	return &ConfigError{Path: path, Msg: oneLine(fmt.Sprintf(format, args...))}
}

// kinds lists the filter keys of a configuration table, in the order in which the filters of a
// table with several keys are asked: rewriting first (so later filters see the stripped URL), then
// cheap checks, then patterns, expressions and nested combinations.
var kinds = []string{
	"default", "query", "scheme", "host", "domain", "suffix", "seed_domains", "prefix",
	"max_length", "max_depth", "max_repeat", "level", "deny_extensions",
	"path_glob", "path_regex", "url_regex", "expr", "all", "any", "not",
}

var kindOrder = func() map[string]int {
	m := map[string]int{}
	for i, k := range kinds {
		m[k] = i
	}
	return m
}()

// hints answers keys people are likely to try.
var hints = map[string]string{
	"extends":    `extends is a key of the [filter] table itself, not of a filter inside it`,
	"regex":      `use url_regex (whole URL) or path_regex (path only)`,
	"regexp":     `use url_regex (whole URL) or path_regex (path only)`,
	"glob":       `use path_glob`,
	"and":        `use all = [ … ]`,
	"or":         `use any = [ … ]`,
	"none":       `use not = { any = [ … ] }`,
	"ext":        `use deny_extensions`,
	"extension":  `use deny_extensions`,
	"extensions": `use deny_extensions`,
	"strip":      `write query = { strip = [ … ] }`,
	"max_params": `write query = { max_params = N }`,
	"depth":      `use max_depth, or an expr on depth`,
	"min_level":  `write level = { min = N }`,
	"max_level":  `write level = { max = N }`,
	"seed":       `use seed_domains = true, or an expr on seed`,
	"expression": `use expr`,
	"url":        `use prefix or url_regex`,
	"path":       `use path_glob or path_regex`,
}

// FromConfig builds a Filter from the decoded [filter] table of the configuration: tree is what
// go-toml (or viper) produces — map[string]any, []any, string, int64, float64, bool — and path is the
// key path of tree, used in error messages ("filter"). A nil tree (no [filter] table) gives Default.
// Errors are *ConfigError values wrapping ErrInvalid.
//
// The syntax: a filter is a table with one filter key, or several (then all of them must accept, in
// a fixed order: query first, then cheap checks, patterns, expr, and all/any/not last), and an
// optional name = "…" that labels its reasons. The filter keys:
//
//	default = true                          the filter used when none is configured (see Default)
//	scheme = ["http", "https"]              the scheme is one of these
//	host = "www.example.edu"                the host is exactly one of these (string or array)
//	domain = "example.edu"                  the host is one of these domains or a subdomain; no public suffixes
//	suffix = "ac.uk"                        the host ends with one of these, public suffixes allowed
//	seed_domains = true                     the registrable domain is one of the seeds'
//	prefix = "https://example.edu/news/"    the URL starts with one of these ("//host/…" for both schemes)
//	path_glob = "/calendar/**"              the path matches one of these globs (* within a segment, ** across)
//	path_regex = '^/(19|20)\d\d/'           the path contains a match of one of these RE2 patterns
//	url_regex = '[?&]print=1'               the whole URL contains a match of one of these RE2 patterns
//	deny_extensions = true                  reject the default list of non-text extensions; or an array of
//	                                        extensions; or { defaults = true, add = […], except = […] }
//	query = { strip = true, reject = […], max_params = 5 }   strip (true = the default tracking and
//	                                        session list) or reject parameters, limit their number
//	max_length = 2048                       at most this many bytes
//	max_depth = 6                           at most this many path segments
//	max_repeat = 3                          no segment and no pair of segments more than 3 times;
//	                                        or { segment = 3, pair = 2 }
//	level = { min = 0, max = 3 }            Input.Level within these bounds (either may be left out)
//	expr = 'host endsWith ".edu"'           a boolean expression (see ExprEnv)
//	all = [ {…}, {…} ]                      every filter accepts
//	any = [ {…}, {…} ]                      at least one filter accepts
//	not = {…}                               the filter rejects
func FromConfig(tree any, path string) (Filter, error) {
	if tree == nil {
		return Default(), nil
	}
	m, ok := asTable(tree)
	if !ok {
		return nil, cfgErr(path, "want a table of filters such as { all = [ … ] }, got %s", describe(tree))
	}
	return buildTable(m, path)
}

func buildTable(m map[string]any, path string) (Filter, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the alphabetically first unknown key, deterministically
	name := ""
	var filterKeys []string
	for _, k := range keys {
		if k == "name" {
			s, ok := m[k].(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, cfgErr(path+".name", "want a non-empty string naming this filter, got %s", describe(m[k]))
			}
			name = s
			continue
		}
		if _, ok := kindOrder[k]; !ok {
			return nil, cfgErr(join(path, k), "unknown filter %q%s", k, suggest(k))
		}
		filterKeys = append(filterKeys, k)
	}
	if len(filterKeys) == 0 {
		if name != "" {
			return nil, cfgErr(path, "table named %q has no filter: add one such as domain = \"example.edu\"", name)
		}
		return nil, cfgErr(path, "empty table: give a filter such as domain = \"example.edu\" or all = [ … ]")
	}
	sort.Slice(filterKeys, func(i, j int) bool { return kindOrder[filterKeys[i]] < kindOrder[filterKeys[j]] })
	fs := make([]Filter, 0, len(filterKeys))
	for _, k := range filterKeys {
		f, err := buildKind(k, m[k], join(path, k))
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	f := fs[0]
	if len(fs) > 1 {
		f = &allFilter{fs: fs}
	}
	if name != "" {
		f = Named(name, f)
	}
	return f, nil
}

func buildKind(kind string, v any, path string) (Filter, error) {
	switch kind {
	case "default":
		if err := wantTrue(v, path, "leave it out to not use the default filter"); err != nil {
			return nil, err
		}
		return Default(), nil
	case "seed_domains":
		if err := wantTrue(v, path, "leave it out to allow other domains"); err != nil {
			return nil, err
		}
		return SeedDomains(), nil
	case "scheme":
		return stringsFilter(v, path, Scheme)
	case "host":
		return stringsFilter(v, path, Host)
	case "domain":
		return stringsFilter(v, path, Domain)
	case "suffix":
		return stringsFilter(v, path, Suffix)
	case "prefix":
		return stringsFilter(v, path, Prefix)
	case "path_glob":
		return stringsFilter(v, path, PathGlob)
	case "path_regex":
		return stringsFilter(v, path, PathRegex)
	case "url_regex":
		return stringsFilter(v, path, URLRegex)
	case "max_length":
		n, err := intIn(v, path, 1, urlnorm.MaxLength, "bytes")
		if err != nil {
			return nil, err
		}
		return MaxLength(n), nil
	case "max_depth":
		n, err := intIn(v, path, 0, 10000, "path segments")
		if err != nil {
			return nil, err
		}
		return MaxDepth(n), nil
	case "max_repeat":
		return buildMaxRepeat(v, path)
	case "level":
		return buildLevel(v, path)
	case "deny_extensions":
		return buildExtensions(v, path)
	case "query":
		return buildQuery(v, path)
	case "expr":
		s, ok := v.(string)
		if !ok {
			return nil, cfgErr(path, "want an expression string such as 'host endsWith \".edu\"', got %s", describe(v))
		}
		f, err := Expr(s)
		if err != nil {
			return nil, cfgErr(path, "%s", err.Error())
		}
		return f, nil
	case "all", "any":
		list, ok := asList(v)
		if !ok {
			return nil, cfgErr(path, "want an array of filter tables such as [ { domain = \"example.edu\" }, … ], got %s", describe(v))
		}
		if len(list) == 0 {
			return nil, cfgErr(path, "empty %s: give at least one filter (an empty %s would %s every URL)",
				kind, kind, map[string]string{"all": "accept", "any": "reject"}[kind])
		}
		fs := make([]Filter, 0, len(list))
		for i, e := range list {
			p := path + "[" + strconv.Itoa(i) + "]"
			m, ok := asTable(e)
			if !ok {
				return nil, cfgErr(p, "want a filter table such as { domain = \"example.edu\" }, got %s", describe(e))
			}
			f, err := buildTable(m, p)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		if kind == "all" {
			return All(fs...), nil
		}
		return Any(fs...), nil
	case "not":
		if _, isList := asList(v); isList {
			return nil, cfgErr(path, "not takes one filter table; to negate several write not = { any = [ … ] } (none of them) or not = { all = [ … ] }")
		}
		m, ok := asTable(v)
		if !ok {
			return nil, cfgErr(path, "want a filter table such as { path_glob = \"/calendar/**\" }, got %s", describe(v))
		}
		f, err := buildTable(m, path)
		if err != nil {
			return nil, err
		}
		return Not(f), nil
	}
	return nil, cfgErr(path, "unknown filter %q", kind) // unreachable: keys are checked first
}

// stringsFilter builds a filter from a string or an array of strings, checking each element on its
// own first so that an error names the element's index.
func stringsFilter(v any, path string, build func(...string) (Filter, error)) (Filter, error) {
	list, isList, err := stringList(v, path)
	if err != nil {
		return nil, err
	}
	if isList {
		for i, s := range list {
			if _, err := build(s); err != nil {
				return nil, cfgErr(path+"["+strconv.Itoa(i)+"]", "%v", err)
			}
		}
	}
	f, err := build(list...)
	if err != nil {
		return nil, cfgErr(path, "%v", err)
	}
	return f, nil
}

func buildMaxRepeat(v any, path string) (Filter, error) {
	if m, ok := asTable(v); ok {
		if err := onlyKeys(m, path, "segment", "pair"); err != nil {
			return nil, err
		}
		seg, pair := 0, 0
		var err error
		if x, ok := m["segment"]; ok {
			if seg, err = intIn(x, path+".segment", 1, 10000, "times"); err != nil {
				return nil, err
			}
		}
		if x, ok := m["pair"]; ok {
			if pair, err = intIn(x, path+".pair", 1, 10000, "times"); err != nil {
				return nil, err
			}
		}
		if seg == 0 && pair == 0 {
			return nil, cfgErr(path, "give segment = N, pair = N or both")
		}
		return MaxRepeat(seg, pair), nil
	}
	if _, ok := toInt(v); !ok {
		return nil, cfgErr(path, "want a number of times or a table { segment = 3, pair = 2 }, got %s", describe(v))
	}
	n, err := intIn(v, path, 1, 10000, "times")
	if err != nil {
		return nil, err
	}
	return MaxRepeat(n, n), nil
}

func buildLevel(v any, path string) (Filter, error) {
	m, ok := asTable(v)
	if !ok {
		return nil, cfgErr(path, "want a table such as { min = 0, max = 3 }, got %s", describe(v))
	}
	if err := onlyKeys(m, path, "min", "max"); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, cfgErr(path, "give min = N, max = N or both")
	}
	lo, hi := math.MinInt, math.MaxInt
	var err error
	if x, ok := m["min"]; ok {
		if lo, err = intIn(x, path+".min", -1000000, 1000000, ""); err != nil {
			return nil, err
		}
	}
	if x, ok := m["max"]; ok {
		if hi, err = intIn(x, path+".max", -1000000, 1000000, ""); err != nil {
			return nil, err
		}
	}
	if lo > hi {
		return nil, cfgErr(path, "min %d is above max %d", lo, hi)
	}
	return LevelRange(lo, hi), nil
}

func buildExtensions(v any, path string) (Filter, error) {
	if b, ok := v.(bool); ok {
		if !b {
			return nil, cfgErr(path, "want true (the default list), an array of extensions or { defaults = true, add = [ … ], except = [ … ] }; leave it out to allow every extension")
		}
		return DenyExtensions(defaultExtensions...), nil
	}
	if m, ok := asTable(v); ok {
		if err := onlyKeys(m, path, "defaults", "add", "except"); err != nil {
			return nil, err
		}
		useDefaults := true
		if x, ok := m["defaults"]; ok {
			b, isBool := x.(bool)
			if !isBool {
				return nil, cfgErr(path+".defaults", "want true or false, got %s", describe(x))
			}
			useDefaults = b
		}
		set := map[string]bool{}
		var order []string
		add := func(e string) {
			e = normExt(e)
			if !set[e] {
				order = append(order, e)
			}
			set[e] = true
		}
		if useDefaults {
			for _, e := range defaultExtensions {
				add(e)
			}
		}
		if x, ok := m["add"]; ok {
			list, _, err := stringList(x, path+".add")
			if err != nil {
				return nil, err
			}
			for i, e := range list {
				if err := checkExt(e); err != nil {
					return nil, cfgErr(path+".add["+strconv.Itoa(i)+"]", "%v", err)
				}
				add(e)
			}
		}
		if x, ok := m["except"]; ok {
			list, _, err := stringList(x, path+".except")
			if err != nil {
				return nil, err
			}
			for _, e := range list {
				delete(set, normExt(e))
			}
		}
		var exts []string
		for _, e := range order {
			if set[e] {
				exts = append(exts, e)
			}
		}
		if len(exts) == 0 {
			return nil, cfgErr(path, "no extensions left to deny; leave deny_extensions out instead")
		}
		return DenyExtensions(exts...), nil
	}
	list, _, err := stringList(v, path)
	if err != nil {
		return nil, cfgErr(path, "want true (the default list), an array of extensions or { defaults = true, add = [ … ], except = [ … ] }, got %s", describe(v))
	}
	for i, e := range list {
		if err := checkExt(e); err != nil {
			return nil, cfgErr(path+"["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	return DenyExtensions(list...), nil
}

func normExt(e string) string { return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), ".")) }

func checkExt(e string) error {
	n := normExt(e)
	if n == "" || strings.ContainsAny(n, "/.?#;* ") {
		return fmt.Errorf("%q is not a file extension (write \"pdf\" or \".pdf\")", e)
	}
	return nil
}

func buildQuery(v any, path string) (Filter, error) {
	m, ok := asTable(v)
	if !ok {
		return nil, cfgErr(path, "want a table such as { strip = true, max_params = 5 }, got %s", describe(v))
	}
	if err := onlyKeys(m, path, "strip", "reject", "max_params"); err != nil {
		return nil, err
	}
	var r QueryRules
	names := func(key string) ([]string, error) {
		x, ok := m[key]
		if !ok {
			return nil, nil
		}
		p := path + "." + key
		if b, isBool := x.(bool); isBool {
			if !b {
				return nil, cfgErr(p, "want true (the default tracking and session parameters) or an array of names; leave it out for none")
			}
			return DefaultTrackingParams(), nil
		}
		list, isList, err := stringList(x, p)
		if err != nil {
			return nil, cfgErr(p, "want true (the default tracking and session parameters) or an array of names such as [\"utm_*\", \"sessionid\"], got %s", describe(x))
		}
		for i, s := range list {
			if _, err := newNameMatcher(key, []string{s}); err != nil {
				if isList {
					p += "[" + strconv.Itoa(i) + "]"
				}
				return nil, cfgErr(p, "%v", err)
			}
		}
		return list, nil
	}
	var err error
	if r.Strip, err = names("strip"); err != nil {
		return nil, err
	}
	if r.Reject, err = names("reject"); err != nil {
		return nil, err
	}
	if x, ok := m["max_params"]; ok {
		if r.MaxParams, err = intIn(x, path+".max_params", 1, 10000, "parameters"); err != nil {
			if n, isInt := toInt(x); isInt && n == 0 {
				return nil, cfgErr(path+".max_params", "0 is not allowed; to refuse every query write reject = [\"*\"]")
			}
			return nil, err
		}
	}
	f, err := Query(r)
	if err != nil {
		return nil, cfgErr(path, "%v", err)
	}
	return f, nil
}

// --- value helpers ---

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func asTable(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []map[string]any:
		out := make([]any, len(l))
		for i, m := range l {
			out[i] = m
		}
		return out, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// stringList accepts a string or a non-empty array of strings; isList reports which it was.
func stringList(v any, path string) (list []string, isList bool, err error) {
	if s, ok := v.(string); ok {
		return []string{s}, false, nil
	}
	l, ok := asList(v)
	if !ok {
		return nil, false, cfgErr(path, "want a string or an array of strings, got %s", describe(v))
	}
	if len(l) == 0 {
		return nil, true, cfgErr(path, "empty array: give at least one value")
	}
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, true, cfgErr(path+"["+strconv.Itoa(i)+"]", "want a string, got %s", describe(e))
		}
		list = append(list, s)
	}
	return list, true, nil
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int16:
		return int64(n), true
	case int8:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case uint:
		if uint64(n) <= math.MaxInt64 {
			return int64(n), true
		}
	case uint32:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint8:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

func intIn(v any, path string, lo, hi int, unit string) (int, error) {
	n, ok := toInt(v)
	if !ok {
		return 0, cfgErr(path, "want a whole number, got %s", describe(v))
	}
	if n < int64(lo) || n > int64(hi) {
		u := ""
		if unit != "" {
			u = " " + unit
		}
		return 0, cfgErr(path, "%d is out of range (%d to %d%s)", n, lo, hi, u)
	}
	return int(n), nil
}

func wantTrue(v any, path, ifFalse string) error {
	b, ok := v.(bool)
	switch {
	case !ok:
		return cfgErr(path, "want true, got %s", describe(v))
	case !b:
		return cfgErr(path, "false is not allowed: %s", ifFalse)
	}
	return nil
}

func onlyKeys(m map[string]any, path string, allowed ...string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			return cfgErr(join(path, k), "unknown key %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// describe names a decoded TOML value's type (and short value) for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return "string " + q(x)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case float64, float32:
		return fmt.Sprintf("float %v", x)
	case time.Time:
		return "date-time " + x.Format(time.RFC3339)
	case map[string]any:
		return "table"
	}
	if n, ok := toInt(v); ok {
		return "integer " + strconv.FormatInt(n, 10)
	}
	if _, ok := asList(v); ok {
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// suggest proposes the filter key the user probably meant.
func suggest(k string) string {
	if h, ok := hints[k]; ok {
		return " (" + h + ")"
	}
	lk := strings.ToLower(k)
	if _, ok := kindOrder[lk]; ok && lk != k {
		return fmt.Sprintf(" (keys are lower case: %q)", lk)
	}
	best, bestD := "", 3
	for _, c := range append([]string{"name"}, kinds...) {
		if d := editDistance(lk, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return " (known filters: " + strings.Join(kinds, ", ") + ")"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
