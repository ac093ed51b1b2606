package cli

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/strata-crawler/strata/internal/store"
)

// What every command line tool is expected to do: help as a command, typos refused with the
// nearest command, a version with the build's revision, completions and man pages.

// groupsRefuseTypos makes every command that only groups others (strata itself, seed, config,
// export, filter, completion) refuse an argument that names none of its commands: cobra would
// otherwise print the group's help and exit 0, so `strata export warc` in a script would
// "succeed" having exported nothing. Without arguments a group prints its help.
func groupsRefuseTypos(cmd *cobra.Command) {
	if cmd.HasSubCommands() && cmd.Run == nil && cmd.RunE == nil {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return cmd.Help()
		}
	}
	for _, c := range cmd.Commands() {
		groupsRefuseTypos(c)
	}
}

// unknownCommand is the usage error for typed, which names no command of parent: it suggests the
// nearest when one is close enough to be a typo, and otherwise lists what there is.
func unknownCommand(parent *cobra.Command, typed string) error {
	var names []string
	for _, c := range parent.Commands() {
		// cobra counts its help command as unavailable, to keep it out of the list of commands.
		if c.IsAvailableCommand() || c.Name() == "help" && !c.Hidden {
			names = append(names, c.Name())
		}
	}
	if best := nearestCommand(typed, names); best != "" {
		return usagef("unknown command %q for %q; did you mean %s?", typed, parent.CommandPath(), best)
	}
	return usagef("unknown command %q for %q (its commands: %s)", typed, parent.CommandPath(), strings.Join(names, ", "))
}

// nearestCommand returns the name closest to typed by edit distance, when it is close enough to be a
// typo of it — one letter wrong, missing, extra or two swapped, or two of them in a name of five
// letters or more — or typed (two letters or more) begins it; "" otherwise. Ties go to the first in
// names.
func nearestCommand(typed string, names []string) string {
	typed = strings.ToLower(typed)
	best, bestDist := "", 0
	for _, n := range names {
		if strings.HasPrefix(n, typed) && len(typed) >= 2 {
			return n
		}
		d := editDistance(typed, n)
		if best == "" || d < bestDist {
			best, bestDist = n, d
		}
	}
	if best == "" || bestDist >= len(typed) || bestDist > 2 || bestDist == 2 && len(best) < 5 {
		return ""
	}
	return best
}

// editDistance is the edit distance between a and b in bytes, counting two swapped neighbours as
// one edit (the optimal string alignment distance): "hepl" is one edit from "help".
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// newHelpCmd replaces cobra's help command, which prints "Unknown help topic" and exits 0 for a
// topic that names nothing: here that is the same usage error as the typo itself.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  `Help prints the help of any command: strata help run, strata help seed add.`,
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := root.Find(args)
			if err != nil || cmd == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() && strings.HasPrefix(c.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			cmd := root
			for _, name := range args {
				next := findSub(cmd, name)
				if next == nil {
					return unknownCommand(cmd, name)
				}
				cmd = next
			}
			return cmd.Help()
		},
	}
}

// findSub returns the subcommand of cmd named (or aliased) name, or nil.
func findSub(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// versionLine is what strata version and strata --version print after "strata ": the release
// version, then the module version and VCS revision the Go toolchain stamped into the binary, the
// schema it writes, and the Go version and platform.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return describeBuild(Version, info, store.SchemaVersion(), runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
}

// describeBuild writes versionLine from its parts; info may be nil (a binary built without module
// support).
func describeBuild(version string, info *debug.BuildInfo, schema int, goPlatform string) string {
	module, revision := "unknown", "unknown"
	if info != nil {
		if v := info.Main.Version; v != "" {
			module = v
		}
		var rev, at string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			revision = rev[:min(len(rev), 12)]
			if at != "" {
				revision += " " + at
			}
			if modified {
				revision += " (modified)"
			}
		}
	}
	// A release installed with go install module@version carries its version in the module; a build
	// from a checkout says "(devel)" or a pseudo-version there, and Version says which release it
	// leads to.
	if version == defaultVersion && strings.HasPrefix(module, "v") && !pseudoVersion.MatchString(module) && !strings.Contains(module, "+") {
		version = strings.TrimPrefix(module, "v")
	}
	return fmt.Sprintf("%s (module %s, revision %s, schema %d, %s)", version, module, revision, schema, goPlatform)
}

// pseudoVersion matches the part of a Go pseudo-version (v0.0.0-20261122031500-0ef5d45c1a2b) that
// says it is a commit, not a release.
var pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}`)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print strata's version, the module version and VCS revision it was built from, its schema and Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(a.stdout, "strata %s\n", versionLine())
			return err
		},
	}
}

func newManCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write strata's man pages (strata.1, strata-run.1, …) into DIR",
		Long: `Write one man page per command into DIR, created if missing: strata.1, strata-run.1,
strata-seed-add.1 and so on. Install them with, for example,
  strata man /usr/local/share/man/man1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("man: want exactly one directory, got %d arguments", len(args))
			}
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: %w", err)
			}
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "STRATA", Section: "1", Source: "strata " + Version, Manual: "strata manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man: write the pages into %s: %w", dir, err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				return fmt.Errorf("man: %w", err)
			}
			n := 0
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "strata") && strings.HasSuffix(e.Name(), ".1") {
					n++
				}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %d man pages into %s\n", n, dir)
			return err
		},
	}
}
