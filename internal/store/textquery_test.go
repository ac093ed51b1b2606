package store_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/store"
)

func TestParseTextMatch(t *testing.T) {
	tests := []struct {
		in   string
		want string // the match in FTS5's syntax; "" for an error
	}{
		{"tram", `("tram")`},
		{"tram station", `("tram") AND ("station")`},
		{"honey OR depot station", `("honey" OR "depot") AND ("station")`},
		{"a OR b OR c", `("a" OR "b" OR "c")`},
		{"OR tram", `("tram")`},                   // nothing before OR to join
		{"tram OR", `("tram")`},                   // nor after it
		{"station -bus", `("station") NOT "bus"`}, // -word leaves one out
		{"tram* -", `("tram"*)`},                  // a lone - is nothing
		{`"the ferry" boat`, `("the ferry") AND ("boat")`},
		{`"the ferry`, `("the ferry")`}, // an unclosed quote runs to the end
		{`say "x""y"`, `("say") AND ("x") AND ("y")`},
		{`"-tram" "tram*"`, `("-tram") AND ("tram*")`}, // quoted: no operators
		{`AND NOT NEAR`, `("AND") AND ("NOT") AND ("NEAR")`},
		{`a"b`, `("a""b")`},
		{"café ÉTÉ", `("café") AND ("ÉTÉ")`},
		{"0\x00tram\tx", `("0") AND ("tram") AND ("x")`}, // control characters separate
		{"\xffab", "(\"\uFFFDab\")"},                     // broken UTF-8 is replaced
		{"-zebra", ""},
		{"*** ...", ""},
		{"   ", ""},
	}
	for _, tt := range tests {
		m, err := store.ParseTextMatch(tt.in)
		switch {
		case tt.want == "" && !errors.Is(err, store.ErrBadQuery):
			t.Errorf("ParseTextMatch(%q) = %s, %v; want an error wrapping ErrBadQuery", tt.in, m, err)
		case tt.want == "":
			if !strings.Contains(err.Error(), "no word to look for") {
				t.Errorf("ParseTextMatch(%q) error %q does not say what is wrong", tt.in, err)
			}
		case err != nil || m.String() != tt.want:
			t.Errorf("ParseTextMatch(%q) = %s, %v; want %s", tt.in, m, err, tt.want)
		}
	}
}

// FuzzParseTextMatch checks that whatever a person types, the match is an error that says so or a
// query SQLite's FTS5 takes without a syntax error.
func FuzzParseTextMatch(f *testing.F) {
	for _, s := range []string{"tram", `"a b" OR c* -d`, `NEAR(a b) AND ^x`, `a:b "c""d" {e} (f)`, "-", "OR OR", "\x00*"} {
		f.Add(s)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(title, text, tokenize = 'unicode61 remove_diacritics 2')`); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := store.ParseTextMatch(in)
		if err != nil {
			if !errors.Is(err, store.ErrBadQuery) {
				t.Fatalf("ParseTextMatch(%q): %v, which is not ErrBadQuery", in, err)
			}
			return
		}
		if len(m.All) == 0 {
			t.Fatalf("ParseTextMatch(%q) = %+v: no group", in, m)
		}
		rows, err := db.Query(`SELECT rowid FROM t WHERE t MATCH ?`, m.String())
		if err != nil {
			t.Fatalf("FTS5 refused %s (from %q): %v", m, in, err)
		}
		rows.Close()
	})
}
