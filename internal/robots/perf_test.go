package robots

import (
	"strings"
	"testing"
)

// pathologicalLine is a rule that makes a backtracking matcher explode on a path with one 'a'
// too few: every way of spreading the path's 'a's over the '*'s has to be tried.
var pathologicalLine = "Disallow: /" + strings.Repeat("*a", 60) + "\n"

// pathologicalFile is 20 MiB of pathological wildcard rules for one group.
func pathologicalFile() []byte {
	head := "User-agent: *\n"
	n := (20<<20 - len(head)) / len(pathologicalLine)
	return []byte(head + strings.Repeat(pathologicalLine, n) + "Disallow: /late\n")
}

// pathologicalPath has 59 'a's, one fewer than the rules need, followed by a long tail.
var pathologicalPath = "/" + strings.Repeat("a", 59) + strings.Repeat("b", 10000)

// TestPathologicalWildcards checks what a hostile file can and cannot do, in facts that do not
// depend on the machine: how much of it is read, and that matching gives the right answers.
// The time it takes is measured by BenchmarkPathological instead.
func TestPathologicalWildcards(t *testing.T) {
	body := pathologicalFile()
	r := Parse(body)

	groups := r.agents["*"]
	if len(groups) != 1 {
		t.Fatalf("%d groups for *, want 1", len(groups))
	}
	// Only whole lines within MaxSize are kept.
	wantRules := (MaxSize - len("User-agent: *\n")) / len(pathologicalLine)
	if got := len(groups[0].rules); got != wantRules {
		t.Errorf("%d rules kept, want %d (the lines that fit in MaxSize)", got, wantRules)
	}
	if !r.Allowed("strata", "/late") {
		t.Error("a rule after MaxSize was applied")
	}
	if !r.Allowed("strata", pathologicalPath) {
		t.Error("a path with too few 'a's was disallowed")
	}
	if r.Allowed("strata", "/"+strings.Repeat("a", 60)+strings.Repeat("b", 10000)) {
		t.Error("a path with enough 'a's was allowed")
	}
}

// TestOneHugeLine checks that a file that is one enormous line, cut by MaxSize, keeps nothing
// of it rather than a truncated rule.
func TestOneHugeLine(t *testing.T) {
	body := "User-agent: *\nAllow: /" + strings.Repeat("*a", 10<<20) + "\nDisallow: /\n"
	r := Parse([]byte(body))
	if r.Allowed("strata", "/x") != true {
		t.Error("a rule after MaxSize was applied")
	}
	if got := len(r.agents["*"][0].rules); got != 0 {
		t.Errorf("%d rules kept from a cut-off line, want 0", got)
	}
}

func BenchmarkPathological(b *testing.B) {
	body := pathologicalFile()
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(MaxSize)
		for b.Loop() {
			Parse(body)
		}
	})
	b.Run("Allowed", func(b *testing.B) {
		r := Parse(body)
		for b.Loop() {
			r.Allowed("strata", pathologicalPath)
		}
	})
}

func BenchmarkAllowed(b *testing.B) {
	r := Parse([]byte(rfc9309Example51))
	for _, path := range []string{"/publications/report.html", "/example/page.html?x=1", "/caf%C3%A9/\u30c4"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Allowed("otherbot", path)
			}
		})
	}
}
