package pagetext

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.full.txt and *.main.txt")

// TestGolden extracts every fixture in both modes and compares with
// testdata/<name>.<mode>.txt. The golden file holds the body; its first line
// says the mode actually used, so that a silent fallback shows in a diff.
func TestGolden(t *testing.T) {
	for _, name := range fixtureNames {
		page := readFixture(t, name)
		for _, mode := range []Mode{Full, Main} {
			t.Run(name+"/"+string(mode), func(t *testing.T) {
				txt, err := Extract(page, "https://example.org/"+name, mode)
				if err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, txt.Body)
				got := "mode: " + string(txt.Mode) + "\ntitle: " + txt.Title + "\n\n" + txt.Body + "\n"
				path := filepath.Join("testdata", name+"."+string(mode)+".txt")
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from %s (run with -update and review the diff):\n%s", name, path, firstDiff(string(want), got))
				}
			})
		}
	}
}
