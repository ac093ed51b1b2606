package filter

import (
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/urlnorm"
)

var fuzzSeeds = []string{
	"https://www.example.edu/",
	"http://www.example.edu/a/b/a/b/a/b",
	"https://cs.example.edu/x.pdf;jsessionid=1?utm_source=a&x=1&&PHPSESSID=2",
	"https://www.example.co.uk:8080/%7Euser/caf%C3%A9?q=a+b&sid=%41",
	"http://[::1]:8080/a;sid=1;v=2/b?",
	"http://bücher.example./ÄÖ/../x?%zz=1",
	"https://localhost/a//b///c?=&=&a",
	"http://192.0.2.1/" + strings.Repeat("seg/", 40),
	"https://example.com/?" + strings.Repeat("utm_x=1&", 30),
}

// FuzzDecide feeds random URL strings through Default and checks that it does not panic, decides
// the same way twice, gives a one-line reason, and that a rewritten URL is normalised and final.
func FuzzDecide(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, false)
	}
	def := Default()
	f.Fuzz(func(t *testing.T, raw string, seed bool) {
		u, err := urlnorm.Parse(raw)
		if err != nil {
			return
		}
		in := Input{URL: u, Seed: seed, SeedDomains: seeds}
		before := u.String()
		d := def.Decide(in)
		if d2 := def.Decide(in); d2.Accept != d.Accept || d2.Reason != d.Reason || (d.URL == nil) != (d2.URL == nil) {
			t.Fatalf("not deterministic: %+v vs %+v", d, d2)
		}
		if u.String() != before {
			t.Fatalf("Input.URL modified: %q → %q", before, u.String())
		}
		if d.Reason == "" || strings.ContainsAny(d.Reason, "\n\r") {
			t.Fatalf("bad reason %q", d.Reason)
		}
		if d.URL == nil {
			return
		}
		if !d.Accept {
			t.Fatalf("rejected with a rewrite: %+v", d)
		}
		s := d.URL.String()
		if n, err := urlnorm.Normalize(s); err != nil || n != s {
			t.Fatalf("rewrite %q of %q is not normalised: %q, %v", s, before, n, err)
		}
		in.URL = d.URL
		if d3 := def.Decide(in); !d3.Accept || d3.URL != nil {
			t.Fatalf("rewrite %q of %q is not final: %+v", s, before, d3)
		}
	})
}

// fuzzExprs are fixed expressions using every variable, including ones that can fail at run time.
var fuzzExprs = []string{
	`host endsWith ".edu" and not (path matches "^/calendar/")`,
	`domain in ["example.edu", "example.co.uk"] and depth <= 6 and len(params) <= 3 and port in [80, 443]`,
	`seed or onseed or (level >= 1 and ext in ["", "html", "htm", "php"])`,
	`any(segments, {# matches "^(print|printable)$"}) or params["view"] == "print"`,
	`int(params.page) < 100 and len(query) < 200 and scheme == "https" and url startsWith "https://"`,
	`count(split(path, "/"), {# == ""}) > 2 or lower(host) != host`,
}

// FuzzExpr feeds random URLs and inputs to fixed compiled expressions: no panic, deterministic.
func FuzzExpr(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 1, false)
	}
	f.Add("https://a.example/?page=x", 0, true)
	f.Add("https://a.example/print/?page=99999999999999999999", -3, false)
	fs := make([]Filter, len(fuzzExprs))
	for i, e := range fuzzExprs {
		var err error
		if fs[i], err = Expr(e); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, raw string, level int, seed bool) {
		u, err := urlnorm.Parse(raw)
		if err != nil {
			return
		}
		in := Input{URL: u, Level: level, Seed: seed, SeedDomains: seeds}
		for i, flt := range fs {
			d := flt.Decide(in)
			if d2 := flt.Decide(in); d2 != d {
				t.Fatalf("%s: not deterministic: %+v vs %+v", fuzzExprs[i], d, d2)
			}
			if d.Reason == "" || strings.ContainsAny(d.Reason, "\n\r") || d.URL != nil {
				t.Fatalf("%s: bad decision %+v", fuzzExprs[i], d)
			}
		}
	})
}
