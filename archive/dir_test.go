package archive_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-crawler/strata/archive"
)

var runStart = time.Date(2026, 11, 22, 3, 15, 0, 0, time.UTC)

func version(u, body, text string) archive.Version {
	return archive.Version{
		Meta: archive.Meta{URL: u, FetchedAt: runStart.Add(time.Minute), Status: 200, ContentType: "text/html",
			Size: int64(len(body)), ContentHash: "abc", RunID: 1, Level: 2},
		Body: []byte(body), Text: text,
	}
}

func TestWriteAndRead(t *testing.T) {
	d, err := archive.Open(filepath.Join(t.TempDir(), "archive"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := d.Write(runStart, version("https://www.mysite.com/d1/d2", "<p>hello</p>", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if rel != "2026-11-22T031500Z/www.mysite.com/d1/d2" {
		t.Errorf("path %q", rel)
	}
	for _, name := range []string{"page.html", "page.txt", "page.json"} {
		if _, err := os.Stat(filepath.Join(d.Root(), rel, name)); err != nil {
			t.Errorf("%s missing: %v", name, err)
		}
	}
	m, err := d.ReadMeta(rel)
	if err != nil || m.URL != "https://www.mysite.com/d1/d2" || m.RawFile != "page.html" || m.Level != 2 {
		t.Errorf("ReadMeta = %+v, %v", m, err)
	}
	if txt, err := d.ReadText(rel); err != nil || txt != "hello" {
		t.Errorf("ReadText = %q, %v", txt, err)
	}
	if raw, err := d.ReadRaw(rel); err != nil || string(raw) != "<p>hello</p>" {
		t.Errorf("ReadRaw = %q, %v", raw, err)
	}
	if err := d.Check(rel); err != nil {
		t.Errorf("Check of a complete version: %v", err)
	}
	// A parent page and a child page live side by side.
	child, err := d.Write(runStart, version("https://www.mysite.com/d1/d2/d3", "<p>child</p>", "child"))
	if err != nil || !strings.HasPrefix(child, rel+"/") {
		t.Errorf("child %q, %v", child, err)
	}
	plain := version("https://www.mysite.com/notes.txt", "plain text", "plain text")
	plain.ContentType = "text/plain"
	if rel, err := d.Write(runStart, plain); err != nil {
		t.Fatal(err)
	} else if m, _ := d.ReadMeta(rel); m.RawFile != "page.raw" {
		t.Errorf("text/plain raw file %q, want page.raw", m.RawFile)
	}
}

// TestMetaLinks: page.json keeps an HTML version's links, an empty list for a page without links,
// and no list at all where the crawl read none.
func TestMetaLinks(t *testing.T) {
	d, err := archive.Open(filepath.Join(t.TempDir(), "archive"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		links    []archive.Link
		nofollow bool
	}{
		{"links", []archive.Link{{URL: "https://a.example/x"}, {URL: "https://b.example/", NoFollow: true}}, true},
		{"a page without links", []archive.Link{}, false},
		{"none read", nil, false},
	}
	for i, tt := range tests {
		v := version(fmt.Sprintf("https://a.example/p%d", i), "<p>x</p>", "x")
		v.Links, v.NoFollow = tt.links, tt.nofollow
		rel, err := d.Write(runStart, v)
		if err != nil {
			t.Fatal(err)
		}
		m, err := d.ReadMeta(rel)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.Links, tt.links) || m.NoFollow != tt.nofollow {
			t.Errorf("%s: read back links %#v, nofollow %v; want %#v, %v", tt.name, m.Links, m.NoFollow, tt.links, tt.nofollow)
		}
	}
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	d, _ := archive.Open(root)
	// The host directory's place is taken by a file: every write below it fails (even as root).
	os.MkdirAll(filepath.Join(root, "2026-11-22T031500Z"), 0o755)
	os.WriteFile(filepath.Join(root, "2026-11-22T031500Z", "blocked.example"), []byte("in the way"), 0o644)
	_, err := d.Write(runStart, version("https://blocked.example/page", "<p>x</p>", "x"))
	if err == nil {
		t.Fatal("Write succeeded")
	}
	if !strings.Contains(err.Error(), "archive:") {
		t.Errorf("error %q does not say it is the archive", err)
	}
	var left []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, _ error) error {
		if !e.IsDir() && !strings.HasSuffix(p, "blocked.example") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("a failed write left files: %v", left)
	}
}

func TestAbsStaysInside(t *testing.T) {
	d, _ := archive.Open(t.TempDir())
	for _, bad := range []string{"", "/", "../x", "a/../../b", "/etc/passwd", "a//b", "./a", "a/./b", "a\x00b"} {
		if p, err := d.Abs(bad); err == nil {
			t.Errorf("Abs(%q) = %q, want an error", bad, p)
		}
	}
	if p, err := d.Abs("2026-11-22T031500Z/a.example"); err != nil || !strings.HasPrefix(p, d.Root()) {
		t.Errorf("Abs of a good path = %q, %v", p, err)
	}
}

func TestManifestAndSnapshot(t *testing.T) {
	d, _ := archive.Open(t.TempDir())
	rel, _ := d.Write(runStart, version("https://a.example/x", "<p>x</p>", "x"))
	next := runStart.Add(24 * time.Hour)
	link, err := d.Snapshot(next, "https://a.example/x", rel)
	if err != nil || link != "2026-11-23T031500Z/a.example/x" {
		t.Fatalf("Snapshot = %q, %v", link, err)
	}
	a, _ := os.Stat(filepath.Join(d.Root(), rel, "page.txt"))
	b, _ := os.Stat(filepath.Join(d.Root(), link, "page.txt"))
	if !os.SameFile(a, b) {
		t.Error("snapshot is not a hard link")
	}
	entry := archive.ManifestEntry{URL: "https://a.example/x", Outcome: "unchanged", Path: rel}
	if err := d.WriteManifest(next, func(add func(archive.ManifestEntry) error) error { return add(entry) }); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(d.Root(), "2026-11-23T031500Z", "manifest.jsonl"))
	if want := `{"url":"https://a.example/x","outcome":"unchanged","path":"` + rel + `"}` + "\n"; string(got) != want {
		t.Errorf("manifest %q, want %q", got, want)
	}
}

func TestRepair(t *testing.T) {
	d, _ := archive.Open(t.TempDir())
	known, _ := d.Write(runStart, version("https://a.example/known", "<p>k</p>", "k"))
	unknown, _ := d.Write(runStart, version("https://a.example/unrecorded", "<p>u</p>", "u"))
	partial, _ := d.Write(runStart, version("https://a.example/deep/partial", "<p>p</p>", "p"))
	os.Remove(filepath.Join(d.Root(), partial, "page.json")) // a crash before page.json
	os.WriteFile(filepath.Join(d.Root(), known, ".strata-tmp-123"), []byte("half"), 0o644)

	if err := d.Check(partial); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check of a version without page.json: %v, want fs.ErrNotExist", err)
	}
	n, err := d.Repair(runStart, func(rel string) bool { return rel == known })
	if err != nil || n != 2 {
		t.Fatalf("Repair = %d, %v; want 2 versions removed", n, err)
	}
	if _, err := d.ReadMeta(known); err != nil {
		t.Errorf("the recorded version was removed: %v", err)
	}
	for _, gone := range []string{unknown, partial, filepath.Dir(partial)} {
		if _, err := os.Stat(filepath.Join(d.Root(), gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived Repair", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(d.Root(), known, ".strata-tmp-123")); !os.IsNotExist(err) {
		t.Error("a temporary file survived Repair")
	}
	if n, err := d.Repair(runStart.Add(time.Hour), func(string) bool { return false }); n != 0 || err != nil {
		t.Errorf("Repair of a run without a directory = %d, %v", n, err)
	}
}

func TestRemove(t *testing.T) {
	d, _ := archive.Open(t.TempDir())
	parent, _ := d.Write(runStart, version("https://a.example/d1", "<p>p</p>", "p"))
	child, _ := d.Write(runStart, version("https://a.example/d1/d2/d3", "<p>c</p>", "c"))
	if err := d.Remove(child); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.Root(), parent, "d2")); !os.IsNotExist(err) {
		t.Errorf("empty directories below the parent page survived: %v", err)
	}
	if err := d.Check(parent); err != nil {
		t.Errorf("removing a child page damaged its parent: %v", err)
	}
	if err := d.Remove("../outside"); err == nil {
		t.Error("Remove accepted a path outside the archive")
	}
}
