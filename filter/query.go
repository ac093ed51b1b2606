package filter

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// QueryRules configures Query.
type QueryRules struct {
	// Strip lists parameter names removed from the URL, which is then accepted in its rewritten
	// form. Reject lists parameter names whose presence rejects the URL; it is checked first, so a
	// name in both is rejected. Names are case-insensitive and compared after percent-decoding; "*"
	// matches any run of characters ("utm_*"). Both apply to the query and to ";name=value" path
	// parameters, where servlet containers put session ids ("/cart;jsessionid=0A1B").
	Strip, Reject []string
	// MaxParams rejects URLs with more query parameters than this after stripping; 0 means no
	// limit (use Reject: []string{"*"} to refuse every query).
	MaxParams int
}

// DefaultTrackingParams returns the parameter names the default filter strips: campaign and click
// trackers (utm_*, fbclid, gclid, …) and session ids (sessionid, phpsessid, jsessionid, sid, …),
// which make one page look like endlessly many.
func DefaultTrackingParams() []string {
	return append([]string(nil), defaultTrackingParams...)
}

var defaultTrackingParams = []string{
	"utm_*", "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid",
	"mc_cid", "mc_eid", "_ga", "_gl",
	"sessionid", "session_id", "phpsessid", "jsessionid", "sid", "cfid", "cftoken",
}

// Query applies query-parameter rules (see QueryRules): it strips, rejects, or limits the number of
// parameters. When it strips, the Decision carries the rewritten URL; the order and spelling of the
// remaining parameters are kept.
func Query(r QueryRules) (Filter, error) {
	if r.MaxParams < 0 {
		return nil, fmt.Errorf("max_params %d is negative", r.MaxParams)
	}
	f := &queryFilter{max: r.MaxParams}
	var err error
	if f.strip, err = newNameMatcher("strip", r.Strip); err != nil {
		return nil, err
	}
	if f.reject, err = newNameMatcher("reject", r.Reject); err != nil {
		return nil, err
	}
	if f.strip.empty() && f.reject.empty() && f.max == 0 {
		return nil, errors.New("query rules are empty: give strip, reject or max_params")
	}
	return f, nil
}

type queryFilter struct {
	strip, reject nameMatcher
	max           int
}

// nameMatcher matches parameter names against exact names and "*" wildcard patterns.
type nameMatcher struct {
	exact map[string]bool
	globs []string
}

func newNameMatcher(kind string, patterns []string) (nameMatcher, error) {
	m := nameMatcher{exact: map[string]bool{}}
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "":
			return m, fmt.Errorf("empty parameter name in %s", kind)
		case strings.ContainsAny(p, "&=#?;/ \t"):
			return m, fmt.Errorf("%s: %q is not a parameter name (give names only, such as \"sessionid\" or \"utm_*\")", kind, p)
		case strings.Contains(p, "*"):
			m.globs = append(m.globs, p)
		default:
			m.exact[p] = true
		}
	}
	return m, nil
}

func (m nameMatcher) empty() bool { return len(m.exact) == 0 && len(m.globs) == 0 }

func (m nameMatcher) match(name string) bool {
	if m.empty() {
		return false
	}
	name = strings.ToLower(name)
	if m.exact[name] {
		return true
	}
	for _, g := range m.globs {
		if wildcard(g, name) {
			return true
		}
	}
	return false
}

// wildcard reports whether s matches pattern, in which "*" matches any run of bytes.
func wildcard(pattern, s string) bool {
	// Iterative matching with one backtrack point: linear in practice, never exponential.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// paramName returns the decoded name of one "name=value" part.
func paramName(part string) string {
	name, _, _ := strings.Cut(part, "=")
	if strings.ContainsAny(name, "%+") {
		if d, err := url.QueryUnescape(name); err == nil {
			return d
		}
	}
	return name
}

func (f *queryFilter) Decide(in Input) Decision {
	u := in.URL
	if u == nil {
		return noURL
	}
	path := u.EscapedPath()
	hasPathParams := strings.IndexByte(path, ';') >= 0 && !(f.strip.empty() && f.reject.empty())
	if u.RawQuery == "" && !hasPathParams {
		return accept("query: none")
	}
	var stripped []string
	kept := 0
	for rest := u.RawQuery; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" {
			continue
		}
		name := paramName(part)
		if f.reject.match(name) {
			return reject("query: parameter " + q(name) + " rejected")
		}
		if f.strip.match(name) {
			stripped = append(stripped, name)
			continue
		}
		kept++
	}
	newPath := path
	if hasPathParams {
		var rejected string
		var pathStripped []string
		newPath, pathStripped, rejected = f.pathParams(path)
		if rejected != "" {
			return reject("query: path parameter " + q(rejected) + " rejected")
		}
		stripped = append(stripped, pathStripped...)
	}
	if f.max > 0 && kept > f.max {
		return reject("query: " + strconv.Itoa(kept) + " parameters (max_params " + strconv.Itoa(f.max) + ")")
	}
	if len(stripped) == 0 {
		return accept("query: " + strconv.Itoa(kept) + " parameters, none stripped")
	}
	nu := *u
	nu.RawQuery = f.keptQuery(u.RawQuery)
	nu.ForceQuery = false
	if newPath != path {
		if p, err := url.PathUnescape(newPath); err == nil {
			nu.Path, nu.RawPath = p, newPath
		}
	}
	return Decision{Accept: true, Reason: "query: stripped " + qlist(stripped), URL: &nu}
}

// keptQuery is raw without the stripped parameters and empty parts.
func (f *queryFilter) keptQuery(raw string) string {
	var b strings.Builder
	for rest := raw; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" || f.strip.match(paramName(part)) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(part)
	}
	return b.String()
}

// pathParams applies the rules to ";name=value" parameters of the path's segments, returning the
// path without the stripped ones, their names, or the name of the first rejected one.
func (f *queryFilter) pathParams(p string) (string, []string, string) {
	var b strings.Builder
	var stripped []string
	for start := 0; start <= len(p); {
		end := strings.IndexByte(p[start:], '/')
		if end < 0 {
			end = len(p)
		} else {
			end += start
		}
		seg := p[start:end]
		i := strings.IndexByte(seg, ';')
		if i < 0 {
			b.WriteString(seg)
		} else {
			b.WriteString(seg[:i])
			for _, param := range strings.Split(seg[i+1:], ";") {
				if strings.IndexByte(param, '=') > 0 {
					name := paramName(param)
					if f.reject.match(name) {
						return "", nil, name
					}
					if f.strip.match(name) {
						stripped = append(stripped, name)
						continue
					}
				}
				b.WriteByte(';')
				b.WriteString(param)
			}
		}
		if end < len(p) {
			b.WriteByte('/')
		}
		start = end + 1
	}
	return b.String(), stripped, ""
}
