package change

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readText(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtures uses pagetext's eight fixture pages, extracted in both modes
// (testdata/, see gen_fixtures_test.go). The same page on another day (every
// digit of its dates, clocks, counters and "who is online" lines rotated)
// must not be a change, even in Full mode, where the rotating footers and
// sidebars are part of the text: pagetext's own comparison of the texts
// found Full stable on no fixture and Main on 5 of 8. Inserting one word
// ("not") into the first long sentence of the article must be a change,
// although its simhash distance is often 0 to 2.
func TestFixtures(t *testing.T) {
	for _, name := range fixtureNames {
		for _, mode := range []string{"full", "main"} {
			t.Run(name+"."+mode, func(t *testing.T) {
				text := readText(t, name+"."+mode+".txt")
				rot := readText(t, name+"."+mode+".rot.txt")
				d, dr := Summarize(text), Summarize(rot)
				if d.Hash == dr.Hash {
					t.Log("rotation does not reach this text")
				}
				if r := Compare(d, dr, Options{}); r.Changed || r.Magnitude != 0 {
					t.Errorf("rotated digits: %+v", r)
				}

				// Negate the first long sentence of the article.
				i := strings.Index(text, "ARTICLE")
				if i < 0 {
					t.Fatal("no article")
				}
				line := text[i:]
				line = line[:strings.IndexByte(line+"\n", '\n')]
				for _, l := range strings.Split(text[i:], "\n") {
					if len(l) > 120 {
						line = l
						break
					}
				}
				end := strings.Index(line, ". ")
				if end < 0 {
					end = len(line)
				}
				sentence := line[:end]
				edited := strings.Replace(text, sentence, strings.Replace(sentence, " ", " not ", 1), 1)
				r := Compare(d, Summarize(edited), Options{})
				t.Logf("words %d, lines %d, shingles %d; one word inserted: %+v (exact %.3f)",
					len(strings.Fields(text)), d.Lines, d.Shingles, r, exactMagnitude(text, edited))
				if !r.Changed || r.Magnitude <= 0 || r.Magnitude > 0.1 {
					t.Errorf("edited %q: %+v", sentence, r)
				}
			})
		}
	}
}
