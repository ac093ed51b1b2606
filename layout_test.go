package main

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/strata-crawler/strata"

// pkgInfo is what the layout tests need to know of a package.
type pkgInfo struct {
	doc     bool
	imports map[string]bool
}

// packages parses the non-test Go files of every package in the module.
func packages(t *testing.T) map[string]*pkgInfo {
	t.Helper()
	pkgs := map[string]*pkgInfo{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		p := pkgs[dir]
		if p == nil {
			p = &pkgInfo{imports: map[string]bool{}}
			pkgs[dir] = p
		}
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			p.doc = true
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			p.imports[ip] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestEveryPackageHasADocComment keeps the first sentence of every package's doc naming its job.
func TestEveryPackageHasADocComment(t *testing.T) {
	for dir, p := range packages(t) {
		if !p.doc {
			t.Errorf("package %s has no doc comment", dir)
		}
	}
}

// TestImportRules keeps the data flow readable from the tree: the card's packages are leaves that do
// not know the conductor or each other, only the run cycle, the command line and the simulator
// (which runs the conductor's own cycle) wire the conductor, and only the configuration package
// knows viper.
func TestImportRules(t *testing.T) {
	leaves := map[string]bool{"archive": true, "filter": true, "frequency": true, "linkextract": true}
	for dir, p := range packages(t) {
		for ip := range p.imports {
			switch {
			case ip == "github.com/spf13/viper" && dir != "internal/config":
				t.Errorf("%s imports viper; only internal/config may", dir)
			case ip == module+"/crawler" && dir != "internal/cli" && dir != "internal/runcycle" && dir != "internal/simulate" && dir != "internal/store/storetest":
				// storetest reads the crawler's role interfaces, the contract its suite checks.
				t.Errorf("%s imports the crawler; only internal/runcycle, internal/cli and internal/simulate wire it", dir)
			case ip == module+"/internal/cli" && dir != ".":
				t.Errorf("%s imports the command line", dir)
			case leaves[dir] && strings.HasPrefix(ip, module+"/"):
				other := strings.TrimPrefix(ip, module+"/")
				if leaves[other] {
					t.Errorf("%s imports %s: the card's packages do not import each other", dir, other)
				}
			}
		}
	}
	if _, err := os.Stat("crawler"); err != nil {
		t.Fatal("run from the module root")
	}
}

// TestSyscallsExistOnEveryTarget keeps the Windows and macOS builds (and go vet of their tests,
// which CI runs) from breaking on a Unix-only syscall: every syscall.Name used in a file that
// builds for windows/amd64 or darwin/arm64 — its build constraints and file name decide — must
// exist in that platform's syscall package. getrusage, rlimits and Stat_t belong behind a unix
// build constraint with a portable fallback.
func TestSyscallsExistOnEveryTarget(t *testing.T) {
	for _, target := range []struct{ goos, goarch string }{{"windows", "amd64"}, {"darwin", "arm64"}} {
		ctxt := build.Default
		ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = target.goos, target.goarch, false
		// The source importer reads the standard library with build.Default's platform.
		saved := build.Default
		build.Default = ctxt
		sys, err := importer.ForCompiler(token.NewFileSet(), "source", nil).Import("syscall")
		build.Default = saved
		if err != nil {
			t.Fatalf("syscall for %s: %v", target.goos, err)
		}
		err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") {
				return nil
			}
			if ok, err := ctxt.MatchFile(filepath.Dir(path), d.Name()); err != nil || !ok {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			name := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"syscall"` {
					name = "syscall"
					if imp.Name != nil {
						name = imp.Name.Name
					}
				}
			}
			if name == "" {
				return nil
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && sys.Scope().Lookup(sel.Sel.Name) == nil {
						t.Errorf("%s uses syscall.%s, which %s/%s does not have: put it behind a build constraint",
							path, sel.Sel.Name, target.goos, target.goarch)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
