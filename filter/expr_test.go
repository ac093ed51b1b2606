package filter

import (
	"strings"
	"testing"
	"time"
)

func TestExprVariables(t *testing.T) {
	const u = "https://www.Example.co.uk:8443/News/a%20b/Story.HTML?id=7&tag=x&tag=y&q=a%26b+c#frag"
	for _, c := range []struct {
		expr   string
		accept bool
	}{
		{`url == "https://www.example.co.uk:8443/News/a%20b/Story.HTML?id=7&tag=x&tag=y&q=a%26b+c"`, true},
		{`scheme == "https"`, true},
		{`host == "www.example.co.uk"`, true},
		{`domain == "example.co.uk"`, true},
		{`port == 8443`, true},
		{`path == "/News/a%20b/Story.HTML"`, true},
		{`query == "id=7&tag=x&tag=y&q=a%26b+c"`, true},
		{`depth == 3`, true},
		{`segments == ["News", "a%20b", "Story.HTML"]`, true},
		{`ext == "html"`, true},
		{`params["id"] == "7" and params.tag == "x" and params.q == "a&b c" and params.missing == ""`, true},
		{`len(params) == 3`, true},
		{`level == 2`, true},
		{`not seed`, true},
		{`onseed`, true},
		{`host endsWith ".co.uk" and not (path matches "^/calendar/")`, true},
		{`"News" in segments and any(segments, {# endsWith ".HTML"})`, true},
		{`lower(path) contains "/news/"`, true},
		{`int(params.id) > 5`, true},
		{`$env.params.id == "7" and $env["domain"] == "example.co.uk" and len($env.segments) == 3 and $env.onseed`, true},
		{`host endsWith ".edu"`, false},
	} {
		f, err := Expr(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		d := f.Decide(Input{URL: mustParse(t, u), Level: 2, SeedDomains: seeds})
		if d.Accept != c.accept {
			t.Errorf("%s: accept=%v (%s)", c.expr, d.Accept, d.Reason)
		}
	}

	// Defaults of port, ext, segments for a bare URL.
	f := must(Expr(`port == 80 and ext == "" and segments == [] and depth == 0 and len(params) == 0 and query == "" and seed and not onseed and domain == "localhost"`))
	if d := f.Decide(Input{URL: mustParse(t, "http://localhost/"), Seed: true}); !d.Accept {
		t.Error(d.Reason)
	}
	f = must(Expr(`host == "::1" and domain == "::1" and port == 443`))
	if d := f.Decide(Input{URL: mustParse(t, "https://[::1]/")}); !d.Accept {
		t.Error(d.Reason)
	}
}

func TestExprReasonsAndRuntimeErrors(t *testing.T) {
	f := must(Expr("host endsWith \".edu\"\n  and depth <= 2"))
	u := mustParse(t, "https://www.example.edu/a/b/c")
	d := f.Decide(Input{URL: u})
	if d.Accept || d.Reason != `expr "host endsWith \".edu\" and depth <= 2" is false` {
		t.Errorf("%+v", d)
	}
	f = must(Expr(`int(params.page) < 100`))
	d = f.Decide(Input{URL: mustParse(t, "https://a.example/?page=x")})
	if d.Accept || !strings.HasPrefix(d.Reason, `expr "int(params.page) < 100": error: `) || strings.Contains(d.Reason, "\n") {
		t.Errorf("runtime error: %+v", d)
	}
	// Deterministic: the same input gives the same decision.
	for i := 0; i < 3; i++ {
		if d2 := f.Decide(Input{URL: mustParse(t, "https://a.example/?page=x")}); d2 != d {
			t.Errorf("not deterministic: %+v vs %+v", d2, d)
		}
	}
}

func TestExprCompileErrors(t *testing.T) {
	for _, c := range []struct {
		expr, want string
		line, col  int
	}{
		{`host ==`, `1:7: unexpected token EOF`, 1, 7},
		{"host == \"a\" and\nlevel > \"x\"", `2:7: invalid operation: > (mismatched types int and string)`, 2, 7},
		{`level + 1`, `1:1: expected bool, but got int`, 1, 1},
		{`params`, `1:1: expected bool, but got map[string]string`, 1, 1},
		{`host.foo == 1`, `1:6: type string has no field foo`, 1, 6},
		{`repeat(url, 1000) != ""`, `1:1: unknown name repeat`, 1, 1},
		{`replace(url, "", url) != ""`, `1:1: unknown name replace (clock and string-multiplying built-ins are disabled in filters)`, 1, 1},
		{`date("2024-01-01") != nil`, `1:1: unknown name date`, 1, 1},
		{`any(segments, {all(segments, {# == "x"})})`, `1:30: nested closures are not allowed`, 1, 30},
		{`filter(map(segments, {#}), {# == "x"}) == []`, ``, 0, 0}, // sequential closures are fine
	} {
		_, err := Expr(c.expr)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.expr, err)
			}
			continue
		}
		ee, ok := err.(*ExprError)
		if !ok || !strings.HasPrefix(err.Error(), c.want) || ee.Line != c.line || ee.Column != c.col {
			t.Errorf("%s: err = %v (%T), want %q at %d:%d", c.expr, err, err, c.want, c.line, c.col)
		}
	}
}

// TestExprBounded: hostile expressions end quickly, by compile-time refusal or the VM's memory budget.
func TestExprBounded(t *testing.T) {
	long := mustParse(t, "https://a.example/"+strings.Repeat("ab/", DefaultMaxLength/3))
	for _, e := range []string{
		`len(map(1..1000000000, #)) > 0`,
		`all(1..999999, {# > 0})`,
		`all(1..99999, {# > 0})`,
		`all(1..99999, {not (url contains "zzz")})`,
		`toJSON(toJSON(toJSON(segments))) != ""`,
		`count(split(url, ""), {# == "a"}) >= 0`,
		`len(toJSON(split(url, ""))) > 0`,
		`len(join(split(url, ""), url)) > 0`,
		`sum(map(1..500, {len(split(url, ""))})) > 0`,
	} {
		f, err := Expr(e)
		if err != nil {
			t.Logf("%s: refused: %v", e, err)
			continue
		}
		start := time.Now()
		d := f.Decide(Input{URL: long})
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s took %v", e, el)
		}
		t.Logf("%s: %v %.80s (%v)", e, d.Accept, d.Reason, time.Since(start))
	}
}
