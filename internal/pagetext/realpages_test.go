package pagetext

// Text quality on real pages: the corpus in testdata/realpages (Debian
// documentation packages, with reference extractions made by
// testdata/realpages/reference.py from each layout's own main-content
// markup; see its README.md and docs/text-extraction.md). Main's text is
// scored against each reference by token precision, recall and F1.
//
//	go test ./internal/pagetext/ -run TestRealPages -v -realpages   # the table in docs/text-extraction.md

import (
	"bufio"
	"cmp"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var realReport = flag.Bool("realpages", false, "print the per-page and per-layout scores of the real-page corpus")

// The bounds on the real-page corpus: the mean token F1 of Main against the
// references, and the share of pages where Main falls back to Full (a page
// of the corpus has main content by construction). Issue 19's target is a
// mean F1 of 0.85; Main reaches 0.967 (docs/text-extraction.md), and the
// bound sits just below that so that a change that loses quality fails
// here, not only one that loses most of it.
const (
	realMinMeanF1   = 0.95
	realMaxFallback = 0.05
)

// realPage is one page of the corpus (a row of corpus.tsv).
type realPage struct {
	name, layout, pkg, version, license string
}

func readCorpus(tb testing.TB) []realPage {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "realpages", "corpus.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var pages []realPage
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		cols := strings.Split(sc.Text(), "\t")
		if first {
			continue
		}
		if len(cols) < 5 {
			tb.Fatalf("corpus.tsv: bad row %q", sc.Text())
		}
		pages = append(pages, realPage{cols[0], cols[1], cols[2], cols[3], cols[4]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(pages) == 0 {
		tb.Fatal("corpus.tsv lists no page")
	}
	return pages
}

// tokens splits a text into its words for scoring: maximal runs of letters,
// marks and digits, lower-cased. Punctuation, white space and layout do not
// count; two words glued together ("Aarray") are one wrong token.
func tokens(s string) map[string]int {
	out := map[string]int{}
	for w := range strings.FieldsFuncSeq(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	}) {
		out[strings.ToLower(w)]++
	}
	return out
}

// score is token precision, recall and F1 of got against want, counting
// each token as often as it occurs in both (bag of words).
type score struct{ p, r, f1 float64 }

func scoreTokens(got, want map[string]int) score {
	common, ng, nw := 0, 0, 0
	for w, n := range got {
		ng += n
		common += min(n, want[w])
	}
	for _, n := range want {
		nw += n
	}
	if ng == 0 || nw == 0 {
		return score{}
	}
	p, r := float64(common)/float64(ng), float64(common)/float64(nw)
	if common == 0 {
		return score{p: p, r: r}
	}
	return score{p, r, 2 * p * r / (p + r)}
}

// realResult is the score of one page.
type realResult struct {
	page     realPage
	main     score
	full     score
	fallback bool
}

func scoreRealPages(tb testing.TB) []realResult {
	tb.Helper()
	var out []realResult
	for _, pg := range readCorpus(tb) {
		html, err := os.ReadFile(filepath.Join("testdata", "realpages", pg.name+".html"))
		if err != nil {
			tb.Fatal(err)
		}
		ref, err := os.ReadFile(filepath.Join("testdata", "realpages", pg.name+".ref.txt"))
		if err != nil {
			tb.Fatal(err)
		}
		want := tokens(string(ref))
		m, err := Extract(html, "", Main)
		if err != nil {
			tb.Fatal(err)
		}
		f, err := Extract(html, "", Full)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, realResult{page: pg, main: scoreTokens(tokens(m.Body), want),
			full: scoreTokens(tokens(f.Body), want), fallback: m.Mode != Main})
	}
	return out
}

func mean(rs []realResult, pick func(realResult) score) score {
	var s score
	for _, r := range rs {
		x := pick(r)
		s.p += x.p
		s.r += x.r
		s.f1 += x.f1
	}
	n := float64(len(rs))
	return score{s.p / n, s.r / n, s.f1 / n}
}

func TestRealPages(t *testing.T) {
	rs := scoreRealPages(t)
	byLayout := map[string][]realResult{}
	fallbacks := 0
	for _, r := range rs {
		byLayout[r.page.layout] = append(byLayout[r.page.layout], r)
		if r.fallback {
			fallbacks++
		}
	}
	mainOf := func(r realResult) score { return r.main }
	fullOf := func(r realResult) score { return r.full }
	all := mean(rs, mainOf)
	if *realReport {
		slices.SortStableFunc(rs, func(a, b realResult) int { return cmp.Compare(a.main.f1, b.main.f1) })
		t.Logf("%-58s %-14s %5s %5s %5s %s", "page", "layout", "P", "R", "F1", "mode")
		for _, r := range rs {
			mode := "main"
			if r.fallback {
				mode = "full (fallback)"
			}
			t.Logf("%-58s %-14s %.3f %.3f %.3f %s", r.page.name, r.page.layout, r.main.p, r.main.r, r.main.f1, mode)
		}
		t.Logf("| layout | pages | fallback | main P | main R | main F1 | full P | full R | full F1 |")
		for _, l := range slices.Sorted(maps.Keys(byLayout)) {
			g := byLayout[l]
			fb := 0
			for _, r := range g {
				if r.fallback {
					fb++
				}
			}
			m, f := mean(g, mainOf), mean(g, fullOf)
			t.Logf("| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |", l, len(g), fb, m.p, m.r, m.f1, f.p, f.r, f.f1)
		}
		f := mean(rs, fullOf)
		t.Logf("| all | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |", len(rs), fallbacks, all.p, all.r, all.f1, f.p, f.r, f.f1)
	}
	if all.f1 < realMinMeanF1 {
		t.Errorf("mean token F1 of Main on %d real pages = %.3f (precision %.3f, recall %.3f), want >= %.2f",
			len(rs), all.f1, all.p, all.r, realMinMeanF1)
	}
	if share := float64(fallbacks) / float64(len(rs)); share > realMaxFallback {
		t.Errorf("Main fell back to Full on %d of %d real pages (%.0f%%), want at most %.0f%%",
			fallbacks, len(rs), 100*share, 100*realMaxFallback)
	}
}
