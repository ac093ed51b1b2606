package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for strata: with STRATA_TEST_MAIN=1 it runs main instead of
// the tests, so the subprocess tests below exercise the real exit codes and standard error.
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func strata(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

func TestProcessExitCodes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		stderrIs string // exact, "" means empty
	}{
		{"seed add", []string{"seed", "add", "https://example.org/"}, 0, ""},
		{"bad URL", []string{"seed", "add", "gopher://example.org/"},
			2, "strata: seed add: argument 1: invalid URL \"gopher://example.org/\": scheme \"gopher\" not supported (http and https only)\n"},
		{"missing config", []string{"--config", "nope.toml", "status"},
			2, "strata: invalid configuration: " + filepath.Join(dir, "nope.toml") + ": no such file: file does not exist\n"},
		{"status", []string{"status"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := strata(t, dir, tt.args...)
			if code != tt.code || stderr != tt.stderrIs {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, tt.code, tt.stderrIs)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "strata.db")); err != nil {
		t.Errorf("without a config file the database should default to ./strata.db: %v", err)
	}
}
