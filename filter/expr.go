package filter

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// MaxExprLength caps the length of a custom expression, in bytes.
const MaxExprLength = 4096

// ExprEnv is what a custom expression sees: these variables and expr's pure built-in functions. See
// https://expr-lang.org/docs/language-definition for the language; a filter expression must be
// boolean, e.g.
//
//	host endsWith ".edu" and not (path matches "^/calendar/")
//	domain in ["example.edu", "example.org"] and depth <= 6 and len(params) <= 3
//	seed or (level >= 1 and ext in ["", "html", "htm", "php"])
//	any(segments, {# matches "^(print|printable)$"})
type ExprEnv struct {
	URL    string `expr:"url"`    // the whole normalised URL: "https://www.example.edu:8443/a/b.html?x=1"
	Scheme string `expr:"scheme"` // "http" or "https"
	Host   string `expr:"host"`   // host name without port, punycode, lower case: "www.example.edu"; IPv6 without brackets
	Domain string `expr:"domain"` // registrable domain (see RegistrableDomain): "example.edu", "example.co.uk"
	Port   int    `expr:"port"`   // the port, 80 or 443 when the URL names none: 8443
	Path   string `expr:"path"`   // escaped path, always starting with "/": "/a/b.html"
	Query  string `expr:"query"`  // raw query without "?", "" if none: "x=1"
	// Depth is the number of path segments, as MaxDepth counts them: "/" 0, "/a/b.html" 2.
	Depth int `expr:"depth"`
	// Segments are the escaped path segments, without the trailing empty one: ["a", "b.html"].
	Segments []string `expr:"segments"`
	Ext      string   `expr:"ext"` // file extension, lower case, no dot; "" if none: "html"
	// Params maps each decoded query parameter name to its first decoded value: {"x": "1"}. A missing
	// name gives "", so params["page"] == "" is true both for "?page=" and for no page parameter.
	Params map[string]string `expr:"params"`
	Level  int               `expr:"level"`  // Input.Level
	Seed   bool              `expr:"seed"`   // Input.Seed: the user added this URL as a seed
	OnSeed bool              `expr:"onseed"` // the URL's registrable domain is one of the seeds' (what seed_domains checks)
}

// disabledBuiltins are expr built-ins an expression may not call: the clock ones (a filter must
// decide the same way every time) and those whose output can be far larger than their input —
// repeat, replace with an empty pattern, and toJSON and toBase64 nested in themselves grow
// geometrically — which expr's memory budget does not count.
var disabledBuiltins = []string{"now", "date", "timezone", "repeat", "replace", "toJSON", "toBase64"}

// exprMemoryBudget bounds what one run may allocate in expr's own accounting (range sizes, the
// results of map, filter, sort and the like): a range of more than this many numbers fails.
const exprMemoryBudget = 100_000

// ExprError is a syntax or type error in a custom expression, at Line:Column (1-based, in runes).
type ExprError struct {
	Line, Column int
	Msg          string
	Expr         string
}

func (e *ExprError) Error() string {
	pos := ""
	if e.Line > 0 {
		pos = strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": "
	}
	if strings.TrimSpace(e.Expr) == "" {
		return pos + oneLine(e.Msg)
	}
	return pos + oneLine(e.Msg) + " in expression " + q(oneLine(e.Expr))
}

// Expr compiles a custom boolean expression (see ExprEnv) into a filter that accepts the URLs for
// which it is true. The expression is compiled once, here: syntax errors, unknown variables and type
// errors (including a non-boolean result) are reported now, as an *ExprError with the position.
//
// Expressions cannot loop forever or do I/O: expr has no loops beyond built-ins over finite lists
// and ranges, has no I/O functions, and the clock and output-multiplying built-ins are disabled
// (see disabledBuiltins). Expressions are capped at MaxExprLength bytes and 1000 syntax nodes,
// calls such as all(list, {…}) may not be nested (their costs would multiply), and a range may
// hold at most 100,000 numbers. What remains is bounded but not always cheap: a deliberately
// perverse expression can still spend time in proportion to its size times the URL's length
// times a range, so put max_length before expr (a table with several keys does).
//
// An expression that fails while running (say int("x")) counts as false: the URL is rejected with
// the error as reason (and so accepted under not).
func Expr(expression string) (Filter, error) {
	if strings.TrimSpace(expression) == "" {
		return nil, &ExprError{Msg: "empty expression", Expr: expression}
	}
	if len(expression) > MaxExprLength {
		return nil, &ExprError{Msg: fmt.Sprintf("expression longer than %d bytes", MaxExprLength), Expr: expression}
	}
	if !utf8.ValidString(expression) {
		return nil, &ExprError{Msg: "expression is not valid UTF-8", Expr: expression}
	}
	opts := []expr.Option{expr.Env(ExprEnv{}), expr.AsBool(), expr.MaxNodes(1000)}
	for _, b := range disabledBuiltins {
		opts = append(opts, expr.DisableBuiltin(b))
	}
	prog, err := expr.Compile(expression, opts...)
	if err != nil {
		return nil, exprError(err, expression)
	}
	tree, err := parser.Parse(expression)
	if err != nil {
		return nil, exprError(err, expression)
	}
	w := &exprWalker{src: expression}
	if err := w.check(tree.Node); err != nil {
		return nil, err
	}
	all := w.uses["$env"] // $env.params and the like reach every variable
	return &exprFilter{
		prog:     prog,
		text:     q(oneLine(expression)),
		params:   all || w.uses["params"],
		segments: all || w.uses["segments"],
		domain:   all || w.uses["domain"],
		onseed:   all || w.uses["onseed"],
	}, nil
}

func exprError(err error, expression string) error {
	e := &ExprError{Line: 1, Column: 1, Msg: err.Error(), Expr: expression}
	var fe *file.Error
	if errors.As(err, &fe) {
		e.Msg = fe.Message
		if fe.Line > 0 { // errors about the whole expression (such as its type) have no position
			e.Line, e.Column = fe.Line, fe.Column+1
		}
	}
	for _, b := range disabledBuiltins {
		if e.Msg == "unknown name "+b {
			e.Msg += " (clock and string-multiplying built-ins are disabled in filters)"
		}
	}
	return e
}

// exprWalker records which variables an expression uses (so Decide computes only those) and
// refuses nested closures such as all(segments, {any(segments, {…})}), whose cost multiplies.
type exprWalker struct {
	src   string
	uses  map[string]bool
	preds []*ast.PredicateNode
}

// Visit is called by ast.Walk for every node.
func (w *exprWalker) Visit(n *ast.Node) {
	switch n := (*n).(type) {
	case *ast.IdentifierNode:
		w.uses[n.Value] = true
	case *ast.PredicateNode:
		w.preds = append(w.preds, n)
	}
}

func (w *exprWalker) check(root ast.Node) error {
	w.uses = map[string]bool{}
	ast.Walk(&root, w)
	for _, p := range w.preds {
		inner := &exprWalker{uses: map[string]bool{}}
		ast.Walk(&p.Node, inner)
		if len(inner.preds) > 0 {
			at := inner.preds[0]
			fe := (&file.Error{Location: at.Location(), Message: "nested closures are not allowed (their cost multiplies)"}).Bind(file.NewSource(w.src))
			return &ExprError{Line: fe.Line, Column: fe.Column + 1, Msg: fe.Message, Expr: w.src}
		}
	}
	return nil
}

type exprFilter struct {
	prog                             *vm.Program
	text                             string // quoted one-line expression, for reasons
	params, segments, domain, onseed bool
}

func (f *exprFilter) Decide(in Input) Decision {
	if in.URL == nil {
		return noURL
	}
	env := f.env(in)
	machine := vm.VM{MemoryBudget: exprMemoryBudget}
	out, err := machine.Run(f.prog, env)
	if err != nil {
		msg := err.Error()
		var fe *file.Error
		if errors.As(err, &fe) {
			msg = fe.Message
		}
		return reject("expr " + f.text + ": error: " + q(oneLine(msg)))
	}
	if b, ok := out.(bool); ok && b {
		return accept("expr " + f.text + " is true")
	}
	return reject("expr " + f.text + " is false")
}

// env fills the variables of in.URL; the costlier ones only when the expression uses them.
func (f *exprFilter) env(in Input) ExprEnv {
	u := in.URL
	e := ExprEnv{
		URL:    u.String(),
		Scheme: u.Scheme,
		Host:   hostname(u),
		Path:   u.EscapedPath(),
		Query:  u.RawQuery,
		Depth:  Depth(u),
		Ext:    strings.ToLower(extension(u.EscapedPath())),
		Level:  in.Level,
		Seed:   in.Seed,
	}
	e.Port = 80
	if u.Scheme == "https" {
		e.Port = 443
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			e.Port = n
		}
	}
	if f.domain || f.onseed {
		e.Domain = RegistrableDomain(e.Host)
		e.OnSeed = in.SeedDomains[e.Domain]
	}
	if f.segments {
		p := strings.TrimSuffix(strings.TrimPrefix(e.Path, "/"), "/")
		e.Segments = []string{}
		if p != "" {
			e.Segments = strings.Split(p, "/")
		}
	}
	if f.params {
		e.Params = queryParams(u.RawQuery)
	}
	return e
}

// queryParams maps each decoded parameter name to its first decoded value; parts that do not
// decode are taken as written.
func queryParams(raw string) map[string]string {
	m := map[string]string{}
	for rest := raw; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if d, err := url.QueryUnescape(k); err == nil {
			k = d
		}
		if d, err := url.QueryUnescape(v); err == nil {
			v = d
		}
		if _, seen := m[k]; !seen {
			m[k] = v
		}
	}
	return m
}
