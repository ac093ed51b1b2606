package archive

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var batchRun = time.Date(2026, 11, 22, 3, 15, 0, 0, time.UTC)

func batchVersion(u string) Version {
	return Version{
		Meta: Meta{URL: u, FetchedAt: batchRun, Status: 200, ContentType: "text/html", ContentHash: "h", RunID: 1},
		Body: []byte("<p>" + u + "</p>"), Text: u,
	}
}

func stageAll(t *testing.T, d *Dir, urls ...string) []*Pending {
	t.Helper()
	var out []*Pending
	for _, u := range urls {
		p, err := d.Stage(batchRun, batchVersion(u))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// complete reports whether the version at rel is whole and holds the page of u.
func complete(t *testing.T, d *Dir, rel, u string) bool {
	t.Helper()
	if err := d.Check(rel); err != nil {
		return false
	}
	text, err := d.ReadText(rel)
	return err == nil && text == u
}

func TestCommitBatch(t *testing.T) {
	d, _ := Open(t.TempDir())
	urls := []string{"https://a.example/", "https://a.example/x/y", "https://b.example/z?q=1", "https://c.example/"}
	batch := stageAll(t, d, urls...)
	for _, p := range batch {
		if _, err := os.Stat(filepath.Join(p.dir, MetaFile)); err == nil {
			t.Fatalf("%s: page.json in place before the commit", p.Path())
		}
	}
	for i, err := range d.Commit(batch) {
		if err != nil {
			t.Errorf("%s: %v", urls[i], err)
		}
	}
	for i, p := range batch {
		if !complete(t, d, p.Path(), urls[i]) {
			t.Errorf("%s: version %s incomplete after the commit", urls[i], p.Path())
		}
	}
	noTemp(t, d.Root())
	if errs := d.Commit(nil); len(errs) != 0 {
		t.Errorf("empty commit: %v", errs)
	}
}

func TestDiscardLeavesNoFiles(t *testing.T) {
	d, _ := Open(t.TempDir())
	for _, p := range stageAll(t, d, "https://a.example/p", "https://a.example/q") {
		p.Discard()
	}
	for _, p := range listTree(t, d.Root()) {
		if !strings.HasSuffix(p, "/") {
			t.Errorf("file left after Discard: %s", p)
		}
	}
}

// A rename that fails fails its own version only.
func TestCommitRenameFailureIsPerVersion(t *testing.T) {
	d, _ := Open(t.TempDir())
	batch := stageAll(t, d, "https://a.example/ok", "https://a.example/bad", "https://a.example/fine")
	// A directory where page.txt should go: the rename onto it fails, for that version alone.
	if err := os.Mkdir(filepath.Join(batch[1].dir, TextFile), 0o755); err != nil {
		t.Fatal(err)
	}
	errs := d.Commit(batch)
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("the good versions failed: %v, %v", errs[0], errs[2])
	}
	if errs[1] == nil || !strings.HasPrefix(errs[1].Error(), "archive: rename to ") {
		t.Errorf("bad version: error %v, want a rename error", errs[1])
	}
	if !complete(t, d, batch[0].Path(), "https://a.example/ok") || !complete(t, d, batch[2].Path(), "https://a.example/fine") {
		t.Error("a good version is incomplete")
	}
	var left []string
	entries, _ := os.ReadDir(batch[1].dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{TextFile}) { // only the obstacle
		t.Errorf("failed version left %q", left)
	}
	noTemp(t, d.Root())
}

// The portable sync (an fsync per file and directory) commits as syncfs does.
func TestCommitPortableSync(t *testing.T) {
	d, _ := Open(t.TempDir())
	batch := stageAll(t, d, "https://a.example/", "https://b.example/deep/er/page")
	for _, what := range []syncWhat{contentTemps, versionDirs} {
		if err := syncEach(batch, what); err != nil {
			t.Fatal(err)
		}
	}
	for i, err := range d.Commit(batch) {
		if err != nil {
			t.Errorf("version %d: %v", i, err)
		}
	}
	noTemp(t, d.Root())
}

// Stage makes the directories it needs whatever happened to them since the last version: removed
// (by hand, or by Repair), or a file in the place of one, which fails that version alone.
func TestStageDirectories(t *testing.T) {
	d, _ := Open(t.TempDir())
	for i, err := range d.Commit(stageAll(t, d, "https://a.example/x/1", "https://a.example/x/2")) {
		if err != nil {
			t.Fatalf("version %d: %v", i, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(d.Root(), RunDir(batchRun))); err != nil {
		t.Fatal(err)
	}
	batch := stageAll(t, d, "https://a.example/x/3")
	if errs := d.Commit(batch); errs[0] != nil || !complete(t, d, batch[0].Path(), "https://a.example/x/3") {
		t.Fatalf("version below removed directories: %v", errs[0])
	}

	rel, _ := VersionPath(batchRun, "https://a.example/x/4")
	if err := os.WriteFile(filepath.Join(d.Root(), filepath.FromSlash(rel)), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stage(batchRun, batchVersion("https://a.example/x/4")); err == nil || !strings.HasPrefix(err.Error(), "archive: ") {
		t.Errorf("Stage over a file: error %v", err)
	}
	noTemp(t, d.Root())
}
