package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-crawler/strata/internal/cli"
	"github.com/strata-crawler/strata/internal/store"
	"github.com/strata-crawler/strata/internal/testweb"
)

// TestHelp: help is a command like any other, for strata and for each command; a topic that names
// nothing is the usage error a typo of the command itself is.
func TestHelp(t *testing.T) {
	tests := []struct {
		args    []string
		code    int
		stdout  string // contained in stdout
		stderr  string // contained in the one line of stderr; "" means empty
		noStdio bool
	}{
		{[]string{"help"}, 0, "Available Commands:", "", false},
		{[]string{"help", "run"}, 0, "strata run [--cron] [--max-duration D]", "", false},
		{[]string{"help", "seed", "add"}, 0, "--level", "", false},
		{[]string{"run", "--help"}, 0, "strata run [--cron] [--max-duration D]", "", false},
		{[]string{"help", "frob"}, cli.ExitUsage, "", `unknown command "frob" for "strata"`, true},
		{[]string{"help", "seed", "frob"}, cli.ExitUsage, "", `unknown command "frob" for "strata seed"`, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			e := newEnv(t, "")
			out, errs, code := e.run(tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || (tt.noStdio && out != "") {
				t.Errorf("exit %d, stdout %q; want exit %d and %q in stdout", code, out, tt.code, tt.stdout)
			}
			if (tt.stderr == "") != (errs == "") || !strings.Contains(errs, tt.stderr) || strings.Count(errs, "\n") > 1 {
				t.Errorf("stderr %q; want one line with %q", errs, tt.stderr)
			}
		})
	}
}

// TestUnknownSubcommand: a typo under a group (or of a group) exits 2 with one line that names it
// and the nearest command, or the group's commands when none is near; it never prints help and
// "succeeds".
func TestUnknownSubcommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"seed", "frob"}, `unknown command "frob" for "strata seed" (its commands: add, list, remove)`},
		{[]string{"seed", "ad", "https://a.example/"}, `unknown command "ad" for "strata seed"; did you mean add?`},
		{[]string{"config", "chek"}, `unknown command "chek" for "strata config"; did you mean check?`},
		{[]string{"export", "pdf"}, `unknown command "pdf" for "strata export" (its commands: jsonl, wacz, warc)`},
		{[]string{"export", "jsnol"}, `did you mean jsonl?`},
		{[]string{"filter", "tset", "https://a.example/"}, `unknown command "tset" for "strata filter"; did you mean test?`},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "strata completion" (its commands: bash, fish, powershell, zsh)`},
		{[]string{"stauts"}, `unknown command "stauts" for "strata"; did you mean status?`},
		{[]string{"hepl"}, `did you mean help?`},
		{[]string{"--log-level", "warn", "seed", "lsit"}, `did you mean list?`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			e := newEnv(t, "")
			out, errs, code := e.run(tt.args...)
			if code != cli.ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 2 and nothing on stdout", code, out)
			}
			if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tt.want) {
				t.Errorf("stderr %q; want one line with %q", errs, tt.want)
			}
		})
	}
	// A group on its own still shows its commands.
	e := newEnv(t, "")
	if out, errs, code := e.run("seed"); code != 0 || !strings.Contains(out, "Available Commands:") || errs != "" {
		t.Errorf("strata seed: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestVersion: strata version and strata --version print the same line: the release, the module
// version and VCS revision of the build, the schema and the Go version.
func TestVersion(t *testing.T) {
	e := newEnv(t, "")
	out := e.mustRun("version")
	want := "strata " + cli.Version + " (module "
	if !strings.HasPrefix(out, want) || !strings.Contains(out, ", revision ") ||
		!strings.Contains(out, "schema "+strconv.Itoa(store.SchemaVersion())) || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version printed %q", out)
	}
	if flag := e.mustRun("--version"); flag != out {
		t.Errorf("--version printed %q, version %q", flag, out)
	}
}

// TestCompletion: cobra's completion scripts for the four shells, and the completion they call back.
func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash": "__start_strata", "zsh": "#compdef strata", "fish": "complete -c strata", "powershell": "Register-ArgumentCompleter",
	} {
		e := newEnv(t, "")
		if out := e.mustRun("completion", shell); !strings.Contains(out, marker) {
			t.Errorf("completion %s lacks %q:\n%.300s", shell, marker, out)
		}
	}
	e := newEnv(t, "")
	if out := e.mustRun("__complete", "se"); !strings.Contains(out, "seed\t") || !strings.Contains(out, "serve\t") {
		t.Errorf("__complete se:\n%s", out)
	}
	if out := e.mustRun("__complete", "seed", ""); !strings.Contains(out, "add\t") {
		t.Errorf("__complete seed '':\n%s", out)
	}
}

// TestMan: strata man DIR writes a man page per command.
func TestMan(t *testing.T) {
	e := newEnv(t, "")
	dir := filepath.Join(t.TempDir(), "man1")
	out := e.mustRun("man", dir)
	if !strings.Contains(out, "man pages into "+dir) {
		t.Errorf("man printed %q", out)
	}
	for _, name := range []string{"strata.1", "strata-run.1", "strata-seed-add.1", "strata-completion-bash.1"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Contains(b, []byte(`.TH "STRATA"`)) {
			t.Errorf("%s: %v\n%.200s", name, err, b)
		}
	}
	if _, errs, code := e.run("man"); code != cli.ExitUsage || !strings.Contains(errs, "want exactly one directory") {
		t.Errorf("man without a directory: exit %d, %q", code, errs)
	}
}

// TestNoColor: a diff on a terminal is coloured unless NO_COLOR is set (no-color.org); --color
// always, which the user typed, still colours it.
func TestNoColor(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	e := newEnv(t, loopbackConfig)
	page := s.URL("/p")
	s.Page("/p", "<p>one</p>")
	e.mustRun("seed", "add", "--level", "0", page)
	e.mustRun("crawl")
	s.Page("/p", "<p>two</p>")
	e.mustRun("crawl")
	cli.PretendTerminal(t, true)
	for _, tt := range []struct {
		noColor string
		args    []string
		colour  bool
	}{
		{"", nil, true},
		{"1", nil, false},
		{"1", []string{"--color", "always"}, true},
		{"", []string{"--color", "never"}, false},
	} {
		t.Setenv("NO_COLOR", tt.noColor)
		out := e.mustRun(append([]string{"diff", page}, tt.args...)...)
		if got := strings.Contains(out, "\x1b["); got != tt.colour {
			t.Errorf("NO_COLOR=%q diff %v: coloured %v, want %v\n%q", tt.noColor, tt.args, got, tt.colour, out)
		}
	}
}
