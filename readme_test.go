package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeGoVersion: the README asks for the Go that go.mod's go line requires, so a newcomer
// does not install one the build then refuses (or silently downloads a newer one for).
func TestReadmeGoVersion(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "Go " + string(m[1]) + " or newer"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q (go.mod's go line is %s)", want, m[1])
	}
	if got := regexp.MustCompile(`Go [0-9.]+ or newer`).FindAllString(string(readme), -1); len(got) == 0 {
		t.Error("README.md names no Go version")
	} else {
		for _, g := range got {
			if g != want {
				t.Errorf("README.md says %q; go.mod requires %s", g, m[1])
			}
		}
	}
}

// TestReadmeQuickStart: the quick start is two commands, as promised to a newcomer.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "## Quick start")
	if start < 0 {
		t.Fatal("README.md has no Quick start")
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(s[start:])
	if block == nil || block[1] != "go run . demo\ngo test -race ./...\n" {
		t.Errorf("the quick start's commands are %q; want exactly go run . demo and go test -race ./...", block)
	}
}

// TestDocLinksStayInside: every relative link of the README and docs/ names a file in the
// repository; a clone has nothing outside it.
func TestDocLinksStayInside(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`") // code is not a link
	root, _ := filepath.Abs(".")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(code.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			abs, _ := filepath.Abs(filepath.Join(filepath.Dir(f), target))
			if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links %s, outside the repository", f, m[1])
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links %s, which does not exist", f, m[1])
			}
		}
	}
}
