package testweb

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the path of a headless-capable Chromium for a test that looks at a web through a
// browser, or skips the test. CI installs Debian's chromium and sets STRATA_BROWSER_TEST=1, so that
// a missing browser fails the test there instead of skipping it.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("STRATA_BROWSER_TEST") == "1" {
		t.Fatal("STRATA_BROWSER_TEST=1 but no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH; set STRATA_BROWSER_TEST=1 to make this a failure")
	return ""
}

// ArtefactDir is where a browser test leaves its screenshots: $STRATA_ARTEFACTS if set (CI keeps
// it), else the test's temporary directory.
func ArtefactDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("STRATA_ARTEFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}
