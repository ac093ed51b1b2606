package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// listTree returns every path under root, relative and sorted, with "/" after directories.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func noTemp(t *testing.T, root string) {
	t.Helper()
	for _, p := range listTree(t, root) {
		if strings.HasPrefix(filepath.Base(strings.TrimSuffix(p, "/")), tempPrefix) {
			t.Errorf("temporary file left behind: %s", p)
		}
	}
}

func TestWriteFileCreatesParents(t *testing.T) {
	root := t.TempDir()
	name := filepath.Join(root, "run", "host", "d1", "page.html")
	data := []byte("<html>hello</html>")
	if err := WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	want := []string{"run/", "run/host/", "run/host/d1/", "run/host/d1/page.html"}
	if got := listTree(t, root); !slices.Equal(got, want) {
		t.Errorf("tree = %q, want %q", got, want)
	}

	// The umask applies as it does for os.WriteFile and os.Mkdir.
	ref := filepath.Join(root, "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ref+"dir", 0o755); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(name)
	rfi, _ := os.Stat(ref)
	if fi.Mode() != rfi.Mode() {
		t.Errorf("file mode %v, os.WriteFile gives %v", fi.Mode(), rfi.Mode())
	}
	di, _ := os.Stat(filepath.Dir(name))
	rdi, _ := os.Stat(ref + "dir")
	if di.Mode() != rdi.Mode() {
		t.Errorf("directory mode %v, os.Mkdir gives %v", di.Mode(), rdi.Mode())
	}
}

func TestWriteFileOverwrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "page.txt")
	// 0o600 rather than read-only: Windows refuses to rename onto a read-only file.
	if err := os.WriteFile(name, []byte("old content, longer than the new"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, data := range [][]byte{[]byte("new"), nil, []byte("third")} {
		if err := WriteFile(name, data, 0o644); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		got, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("write %d: ReadFile = %q, %v", i, got, err)
		}
	}
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(name)
	if rfi, _ := os.Stat(ref); fi.Mode() != rfi.Mode() {
		t.Errorf("mode %v, want the new perm as os.WriteFile applies it: %v", fi.Mode(), rfi.Mode())
	}
	if got := listTree(t, dir); !slices.Equal(got, []string{"page.txt"}) {
		t.Errorf("tree = %q", got)
	}
}

func TestWriteFileParentIsFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "host"), []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		filepath.Join(dir, "host", "page.html"),
		filepath.Join(dir, "host", "d1", "d2", "page.html"),
	} {
		err := WriteFile(name, []byte("x"), 0o644)
		if err == nil {
			t.Fatalf("WriteFile(%s) succeeded", name)
		}
		if !strings.HasPrefix(err.Error(), "archive: mkdir ") || strings.Count(err.Error(), dir) != 1 {
			t.Errorf("error %q", err)
		}
		if runtime.GOOS != "windows" && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("error %q is not ENOTDIR", err)
		}
	}
	if got := listTree(t, dir); !slices.Equal(got, []string{"host"}) {
		t.Errorf("tree = %q", got)
	}
}

// Renaming onto a non-empty directory fails for root too, after the temporary file exists: the
// failure path that must clean up.
func TestWriteFileRenameFails(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "page.html")
	if err := os.MkdirAll(filepath.Join(name, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(name, []byte("x"), 0o644)
	if err == nil {
		t.Fatal("WriteFile onto a directory succeeded")
	}
	if want := "archive: rename to " + name + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want prefix %q", err, want)
	}
	if got := listTree(t, dir); !slices.Equal(got, []string{"page.html/", "page.html/child/"}) {
		t.Errorf("tree = %q", got)
	}
}

func TestWriteFileReadOnlyDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("directory permissions do not stop file creation on Windows")
	}
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; TestWriteFileParentIsFile and TestWriteFileRenameFails force failures instead")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "page.html"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })

	for _, name := range []string{"page.html", "page.txt", "sub/page.html"} {
		err := WriteFile(filepath.Join(ro, name), []byte("new"), 0o644)
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s: error %v, want permission denied", name, err)
		}
	}
	if got := listTree(t, ro); !slices.Equal(got, []string{"page.html"}) {
		t.Errorf("tree = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(ro, "page.html")); string(b) != "old" {
		t.Errorf("old file now holds %q", b)
	}
}

// Write and sync failures cannot be provoked portably (no full disk, no failing fsync), so they
// are injected.
func TestWriteFileInjectedFailures(t *testing.T) {
	fail := func(errno syscall.Errno) func(*os.File) error {
		return func(f *os.File) error { return &fs.PathError{Op: "op", Path: f.Name(), Err: errno} }
	}
	tests := []struct {
		name  string
		setup func()
		want  string
	}{
		{"write", func() { writeTemp = func(f *os.File, _ []byte) error { return fail(syscall.ENOSPC)(f) } },
			"archive: write %s: no space left on device"},
		{"sync", func() { syncFile = fail(syscall.EIO) }, "archive: sync %s: input/output error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, s := writeTemp, syncFile
			t.Cleanup(func() { writeTemp, syncFile = w, s })
			tt.setup()

			dir := t.TempDir()
			existing := filepath.Join(dir, "page.html")
			if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{existing, filepath.Join(dir, "page.txt")} {
				err := WriteFile(name, []byte("new"), 0o644)
				if want := fmt.Sprintf(tt.want, name); err == nil || err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			}
			if !errors.Is(func() error { _, e := os.Stat(filepath.Join(dir, "page.txt")); return e }(), fs.ErrNotExist) {
				t.Error("page.txt exists after a failed write")
			}
			if b, _ := os.ReadFile(existing); string(b) != "old" {
				t.Errorf("existing file now holds %q", b)
			}
			if got := listTree(t, dir); !slices.Equal(got, []string{"page.html"}) {
				t.Errorf("tree = %q", got)
			}
		})
	}
}

func TestWriteFileErrorIs(t *testing.T) {
	w := writeTemp
	t.Cleanup(func() { writeTemp = w })
	writeTemp = func(f *os.File, _ []byte) error {
		return &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	err := WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o644)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("errors.Is(%v, ENOSPC) = false", err)
	}
}

// Concurrent writers of one name each replace the file whole; readers never see a mixture.
func TestWriteFileConcurrent(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a", "b", "page.html")
	const writers, rounds = 6, 15
	contents := make([][]byte, writers)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for i := range writers {
		wg.Go(func() {
			for range rounds {
				if err := WriteFile(name, contents[i], 0o644); err != nil {
					errs <- err
				}
				other := filepath.Join(dir, "a", fmt.Sprintf("w%d", i), "page.txt")
				if err := WriteFile(other, contents[i], 0o644); err != nil {
					errs <- err
				}
			}
		})
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	rg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(name)
			if err != nil {
				continue // not created yet
			}
			if len(b) != 64<<10 || bytes.Count(b, b[:1]) != len(b) {
				errs <- fmt.Errorf("reader saw a torn file of %d bytes", len(b))
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	noTemp(t, dir)
}

func TestCleanTemp(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"run/manifest.jsonl":                    "keep",
		"run/host/page.html":                    "keep",
		"run/host/.strata-tmp-0123456789abcdef": "remove",
		"run/host/d1/.strata-tmp-x":             "remove",
		".strata-tmp-top":                       "remove",
		"run/host/.strata-tmp":                  "keep", // no dash: not our prefix
		"run/host/strata-tmp-x":                 "keep",
		"run/host/%2estrata-tmp-x/page.html":    "keep", // what PagePath makes of such a segment
		"run/.strata-tmp-dir/page.html":         "keep", // a directory is not ours
		"run/.strata-tmp-dir/.strata-tmp-y":     "remove",
		"outside":                               "keep",
	}
	for p, what := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(what), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A crashed WriteFile leaves exactly this behind.
	tmp, f, err := createTemp(filepath.Join(root, "run", "host"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	files[filepath.ToSlash(strings.TrimPrefix(tmp, root+string(filepath.Separator)))] = "remove"

	symlinks := runtime.GOOS != "windows"
	if symlinks {
		if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(root, "run", ".strata-tmp-link")); err != nil {
			t.Fatal(err)
		}
	}

	n, err := CleanTemp(filepath.Join(root, "run"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for p, what := range files {
		_, serr := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case what == "keep" && serr != nil:
			t.Errorf("%s removed", p)
		case what == "remove" && strings.HasPrefix(p, "run/") && serr == nil:
			t.Errorf("%s left", p)
		}
		if what == "remove" && strings.HasPrefix(p, "run/") {
			want++
		}
	}
	if n != want {
		t.Errorf("CleanTemp = %d, want %d", n, want)
	}
	if _, err := os.Stat(filepath.Join(root, ".strata-tmp-top")); err != nil {
		t.Error("CleanTemp went above its root")
	}
	if symlinks {
		if _, err := os.Lstat(filepath.Join(root, "run", ".strata-tmp-link")); err != nil {
			t.Error("symbolic link removed")
		}
	}

	if n, err := CleanTemp(filepath.Join(root, "run")); n != 0 || err != nil {
		t.Errorf("second CleanTemp = %d, %v", n, err)
	}
	if n, err := CleanTemp(filepath.Join(root, "missing")); n != 0 || err != nil {
		t.Errorf("CleanTemp(missing) = %d, %v", n, err)
	}
}

func TestCleanTempUnreadableDir(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a directory this process cannot read")
	}
	root := t.TempDir()
	locked := filepath.Join(root, "a")
	for _, p := range []string{"a/.strata-tmp-1", "b/.strata-tmp-2"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })

	n, err := CleanTemp(root)
	if n != 1 || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), locked) {
		t.Errorf("CleanTemp = %d, %v; want 1 and a permission error naming %s", n, err, locked)
	}
}

// WriteFileFrom puts in place what its writer streamed, more than one buffer of it, or, when the
// writer fails part way, leaves the old file and no temporary one.
func TestWriteFileFrom(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 20_000) // several of its buffers
	stop := errors.New("stopped")
	tests := []struct {
		name    string
		write   func(io.Writer) error
		want    string // the file's content afterwards
		wantErr error
	}{
		{"streamed", func(w io.Writer) error {
			for i := 0; i < len(big); i += 1000 {
				if _, err := io.WriteString(w, big[i:i+1000]); err != nil {
					return err
				}
			}
			return nil
		}, big, nil},
		{"failed part way", func(w io.Writer) error {
			io.WriteString(w, big)
			return stop
		}, "old", stop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "index.cdxj")
			if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := WriteFileFrom(name, 0o644, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if b, _ := os.ReadFile(name); string(b) != tt.want {
				t.Errorf("file holds %d bytes, want %d", len(b), len(tt.want))
			}
			if got := listTree(t, dir); !slices.Equal(got, []string{"index.cdxj"}) {
				t.Errorf("tree = %q", got)
			}
		})
	}
}

// A scratch file from CreateTemp is one CleanTemp removes.
func TestCreateTempIsCleaned(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateTemp(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n, err := CleanTemp(dir); n != 1 || err != nil {
		t.Errorf("CleanTemp = %d, %v; want the scratch file removed", n, err)
	}
}
