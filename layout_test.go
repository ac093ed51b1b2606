package main

import (
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
// not know the conductor or each other, only the command line and the simulator (which runs the
// conductor's own cycle) wire the conductor, and only the configuration package knows viper.
func TestImportRules(t *testing.T) {
	leaves := map[string]bool{"archive": true, "filter": true, "frequency": true, "linkextract": true}
	for dir, p := range packages(t) {
		for ip := range p.imports {
			switch {
			case ip == "github.com/spf13/viper" && dir != "internal/config":
				t.Errorf("%s imports viper; only internal/config may", dir)
			case ip == module+"/crawler" && dir != "internal/cli" && dir != "internal/simulate":
				t.Errorf("%s imports the crawler; only internal/cli and internal/simulate wire it", dir)
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
