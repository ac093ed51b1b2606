package cli

import (
	"strings"
	"testing"

	"github.com/strata-crawler/strata/archive"
	"github.com/strata-crawler/strata/internal/store"
)

// TestHistoryTrivialAfterFirst: a version stored without a change after the first one (new
// bytes, same words; or the same page moved between main and whole text) reads "new bytes, same
// words", not "new", which only the first stored version is (package outcome).
func TestHistoryTrivialAfterFirst(t *testing.T) {
	hist := []store.HistoryEntry{
		{RunID: 1, Status: 200, Stored: "v1", Current: "v1", First: true, TextMode: "fallback"},
		{RunID: 2, Status: 200, Stored: "v2", Current: "v2", TextMode: "main"},
	}
	arch, err := archive.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := printHistory(&b, arch, "https://a.example/", hist, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 4 || !strings.Contains(lines[2], "  new  ") || !strings.Contains(lines[3], "new bytes, same words") {
		t.Errorf("history:\n%s\nwant the first version \"new\" and the second \"new bytes, same words\"", b.String())
	}
	b.Reset()
	if err := printHistory(&b, arch, "https://a.example/", hist, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"text_mode": "fallback"`) && !strings.Contains(b.String(), `"text_mode":"fallback"`) {
		t.Errorf("history --json has no text_mode:\n%s", b.String())
	}
}
