package filter

import (
	"strings"
	"testing"
)

// TestFromTable: a rule pasted into a fresh [filter] table narrows the default rule instead of
// replacing it; extends says so explicitly, or turns the default off.
func TestFromTable(t *testing.T) {
	pasted := `all = [ { not = { all = [ { host = "www.example.edu" }, { path_glob = "/calendar/**" } ] } } ]`
	seeds := DomainSet("www.example.edu")
	tests := []struct {
		name    string
		doc     string
		extends Base
		implied bool
		decide  map[string]bool // URL → accepted
		reason  map[string]string
	}{
		{"a pasted suggestion keeps the default", pasted, BaseDefault, true, map[string]bool{
			"https://www.example.edu/news":          true,
			"https://www.example.edu/calendar/2026": false,
			"https://elsewhere.example/":            false, // the default's seed domains
			"https://www.example.edu/logo.png":      false, // the default's extensions
		}, map[string]string{"https://elsewhere.example/": "[default] ", "https://www.example.edu/calendar/2026": "all[0] not"}},
		{"extends default, written", `extends = "default"` + "\n" + pasted, BaseDefault, false, map[string]bool{
			"https://elsewhere.example/": false, "https://www.example.edu/calendar/2026": false,
		}, nil},
		{"extends none", `extends = "none"` + "\n" + pasted, BaseNone, false, map[string]bool{
			"https://elsewhere.example/": true, "https://www.example.edu/logo.png": true, "https://www.example.edu/calendar/2026": false,
		}, nil},
		{"the table places the default itself", `all = [ { default = true }, { not = { path_glob = "/calendar/**" } } ]`, BaseNone, true, map[string]bool{
			"https://elsewhere.example/": false, "https://www.example.edu/calendar/x": false, "https://www.example.edu/x": true,
		}, nil},
		{"extends alone is the default", `extends = "default"`, BaseDefault, false, map[string]bool{
			"https://elsewhere.example/": false, "https://www.example.edu/x": true,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb, err := FromTable(decodeTOML(t, "[filter]\n"+tt.doc), "filter")
			if err != nil {
				t.Fatal(err)
			}
			if tb.Extends != tt.extends || tb.Implied != tt.implied {
				t.Errorf("extends %q (implied %v), want %q (implied %v)", tb.Extends, tb.Implied, tt.extends, tt.implied)
			}
			for u, want := range tt.decide {
				d := tb.Filter.Decide(Input{URL: mustParse(t, u), Level: 1, SeedDomains: seeds})
				if d.Accept != want {
					t.Errorf("%s: accept %v (%s), want %v", u, d.Accept, d.Reason, want)
				}
				if r, ok := tt.reason[u]; ok && !strings.HasPrefix(d.Reason, r) {
					t.Errorf("%s: reason %q, want it to start with %q", u, d.Reason, r)
				}
			}
		})
	}
}

func TestFromTableErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`extends = "defaults"`, `filter.extends: want "default" (the rules narrow the default rule) or "none" (the rules alone), got string "defaults"`},
		{`extends = true`, `filter.extends: want "default"`},
		{`extends = "none"`, `filter: extends = "none" and no rules would accept every URL`},
		{`all = [ { extends = "default" } ]`, `filter.all[0].extends: unknown filter "extends" (extends is a key of the [filter] table itself`},
	} {
		_, err := FromTable(decodeTOML(t, "[filter]\n"+c.doc), "filter")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.doc, err, c.want)
		}
	}
}

// TestDefaultTOML: the default rule as config check prints it decides as the default does.
func TestDefaultTOML(t *testing.T) {
	f, err := FromConfig(decodeTOML(t, "[filter]\n"+DefaultTOML), "filter")
	if err != nil {
		t.Fatal(err)
	}
	seeds := DomainSet("example.edu")
	for _, u := range []string{
		"https://www.example.edu/a?utm_source=x&id=2", "https://other.example/",
		"https://www.example.edu/a.pdf", "https://www.example.edu/" + strings.Repeat("x", 2100),
		"https://www.example.edu/a/b/a/b/a/b", "https://www.example.edu/a/a/a/a", "https://example.edu/news?sessionid=1",
	} {
		in := Input{URL: mustParse(t, u), Level: 1, SeedDomains: seeds}
		got, want := f.Decide(in), Default().Decide(in)
		if got.Accept != want.Accept || (got.URL == nil) != (want.URL == nil) || got.URL != nil && got.URL.String() != want.URL.String() {
			t.Errorf("%s: DefaultTOML says %v %v, the default %v %v", u, got.Accept, got.URL, want.Accept, want.URL)
		}
	}
}
