package store

import (
	"fmt"
	"strings"
	"unicode"
)

// TextMatch is what a full-text search looks for, independent of any index's query language: a
// version matches when each group of All has a term it holds, and no term of Not. Each backend
// writes it in its own syntax (FTS5 here, tsquery in pgstore), so no backend parses another's.
type TextMatch struct {
	All [][]SearchTerm // ANDed groups of ORed terms; never empty in a match ParseTextMatch made
	Not []SearchTerm
}

// SearchTerm is a word or a phrase, split into words as the index split the text; with Prefix, a
// word that starts with Text.
type SearchTerm struct {
	Text   string
	Prefix bool
}

// ParseTextMatch reads what a person types into a search box: words and "quoted phrases" must all
// match, OR between two of them makes either do, -word leaves out the versions with it, and word*
// matches words starting with word. Operators and punctuation of any index's language are only
// text here, so a parsed match is never a syntax error in a backend. A search with no word to look
// for is an error wrapping ErrBadQuery.
func ParseTextMatch(in string) (TextMatch, error) {
	var m TextMatch
	orNext := false
	// A control character is a separator, as a space is: FTS5 ends a quoted string at a NUL, and
	// PostgreSQL refuses NULs and broken UTF-8 in a text argument.
	typed := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(in, "\uFFFD"))
	for _, t := range splitTerms(typed) {
		if t.text == "OR" && !t.quoted {
			orNext = len(m.All) > 0
			continue
		}
		neg := !t.quoted && strings.HasPrefix(t.text, "-") && len(t.text) > 1
		word := t.text
		if neg {
			word = word[1:]
		}
		prefix := !t.quoted && strings.HasSuffix(word, "*") && len(word) > 1
		if prefix {
			word = strings.TrimRight(word, "*")
		}
		if !strings.ContainsFunc(word, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
			continue // nothing an index holds
		}
		st := SearchTerm{Text: word, Prefix: prefix}
		switch {
		case neg:
			m.Not = append(m.Not, st)
		case orNext:
			m.All[len(m.All)-1] = append(m.All[len(m.All)-1], st)
		default:
			m.All = append(m.All, []SearchTerm{st})
		}
		orNext = false
	}
	if len(m.All) == 0 {
		return TextMatch{}, fmt.Errorf("%w: the search %q has no word to look for", ErrBadQuery, in)
	}
	return m, nil
}

type queryTerm struct {
	text   string
	quoted bool
}

// splitTerms splits a query into white-space separated words and "quoted phrases"; an unclosed
// quote runs to the end.
func splitTerms(s string) []queryTerm {
	var out []queryTerm
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			return out
		}
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return append(out, queryTerm{s[1:], true})
			}
			out = append(out, queryTerm{s[1 : 1+end], true})
			s = s[2+end:]
			continue
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		if end < 0 {
			end = len(s)
		}
		out = append(out, queryTerm{s[:end], false})
		s = s[end:]
	}
}

// String writes m in FTS5's query syntax, which is also how messages name a search: every term
// quoted, so that FTS5's operators and punctuation in it are only words.
func (m TextMatch) String() string {
	var b strings.Builder
	for i, group := range m.All {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteByte('(')
		for j, t := range group {
			if j > 0 {
				b.WriteString(" OR ")
			}
			writeFTS5Term(&b, t)
		}
		b.WriteByte(')')
	}
	for _, t := range m.Not {
		b.WriteString(" NOT ")
		writeFTS5Term(&b, t)
	}
	return b.String()
}

func writeFTS5Term(b *strings.Builder, t SearchTerm) {
	b.WriteString(`"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`)
	if t.Prefix {
		b.WriteByte('*')
	}
}
