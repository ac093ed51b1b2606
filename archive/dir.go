package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"

	"strings"
	"time"
)

// The files of one page version. page.json is written last: a version directory holding it is
// complete, one without it is the remains of a crash that Repair removes.
const (
	HTMLFile     = "page.html" // the bytes as served (decompressed) of an HTML page
	RawFile      = "page.raw"  // the bytes as served of a text page that is not HTML
	TextFile     = "page.txt"  // the extracted text
	MetaFile     = "page.json" // Meta
	ManifestFile = "manifest.jsonl"
)

// Dir is an archive root: one directory per run, one per page version below it.
type Dir struct {
	root string
}

// Open returns the archive at root, creating the directory if needed.
func Open(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("archive %s: %w", root, err)
	}
	return &Dir{root: root}, nil
}

// ReadOnly returns the archive at root for a command that only reads it, without creating root: a
// missing root reads as an archive whose every version is missing.
func ReadOnly(root string) *Dir { return &Dir{root: root} }

// Root returns the archive's root directory.
func (d *Dir) Root() string { return d.root }

// Abs returns the absolute path of rel, a path as Write returns it. It refuses paths that would leave
// the root, so a hand-edited database cannot make strata read outside the archive.
func (d *Dir) Abs(rel string) (string, error) {
	clean := path.Clean("/" + filepath.ToSlash(rel))
	if clean == "/" || strings.Contains(rel, "\x00") || clean[1:] != filepath.ToSlash(rel) {
		return "", fmt.Errorf("archive: path %q is not a clean path inside the archive", rel)
	}
	return filepath.Join(d.root, filepath.FromSlash(clean[1:])), nil
}

// Meta is the content of page.json: what a researcher needs to know about a version without the
// database.
type Meta struct {
	URL          string    `json:"url"`
	FinalURL     string    `json:"final_url,omitempty"`
	FetchedAt    time.Time `json:"fetched_at"`
	Status       int       `json:"status"`
	ContentType  string    `json:"content_type"`
	Charset      string    `json:"charset,omitempty"`
	Size         int64     `json:"size"`
	Truncated    bool      `json:"truncated,omitempty"`
	ContentHash  string    `json:"content_hash"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	RunID        int64     `json:"run_id"`
	Level        int       `json:"level"`
	Title        string    `json:"title,omitempty"`
	RawFile      string    `json:"raw_file"`           // page.html or page.raw
	Replaces     string    `json:"replaces,omitempty"` // archive path of the previous version
	// TextMode is how page.txt was extracted from HTML: "main" (the main content), "full"
	// (archive.text = "full") or "fallback" (Main found no main content: the whole text).
	TextMode string `json:"text_mode,omitempty"`
	// Links are the links of an HTML version as the crawl read them, in document order, one per
	// URL: present (an empty list for a page without links) on every HTML version written since
	// they were kept, absent (nil) on others. The links stage reads them here instead of parsing
	// the page again.
	Links []Link `json:"links,omitzero"`
	// NoFollow is the page's own robots directive (meta robots "nofollow" or "none"): it asks that
	// none of its links be followed.
	NoFollow bool `json:"nofollow,omitempty"`
}

// Link is one link of a version: its canonical absolute URL, and whether its rel said nofollow
// (or sponsored, ugc).
type Link struct {
	URL      string `json:"url"`
	NoFollow bool   `json:"nofollow,omitempty"`
}

// Version is one page version to store.
type Version struct {
	Meta
	Body []byte // as served, decompressed
	Text string // extracted text
}

// Write stores v in the directory of the run that started at runStart and returns the version's
// directory relative to the root: Stage and Commit for one version. Each file is written atomically
// and durably, page.json last, so the directory either holds a complete version or, after a crash,
// pieces that Repair removes; on an error nothing new is left behind.
func (d *Dir) Write(runStart time.Time, v Version) (string, error) {
	p, err := d.Stage(runStart, v)
	if err != nil {
		return "", err
	}
	if err := d.Commit([]*Pending{p})[0]; err != nil {
		return "", err
	}
	return p.Path(), nil
}

// IsHTML reports whether a media type is stored as page.html (and read for links and main content):
// text/html and application/xhtml+xml. Other kept text is stored as page.raw.
func IsHTML(contentType string) bool {
	return contentType == "text/html" || contentType == "application/xhtml+xml"
}

// ReadMeta reads the page.json of the version at rel.
func (d *Dir) ReadMeta(rel string) (*Meta, error) {
	dir, err := d.Abs(rel)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, fmt.Errorf("archive: version %s: %w", rel, err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("archive: version %s: page.json: %w", rel, err)
	}
	return &m, nil
}

// Check reports whether every file of the version at rel is present; the error wraps
// fs.ErrNotExist when one is missing (removed by hand, say).
func (d *Dir) Check(rel string) error {
	m, err := d.ReadMeta(rel)
	if err != nil {
		return err
	}
	dir, _ := d.Abs(rel)
	for _, name := range []string{m.RawFile, TextFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("archive: version %s: %w", rel, err)
		}
	}
	return nil
}

// ReadText returns the extracted text of the version at rel.
func (d *Dir) ReadText(rel string) (string, error) {
	return d.readFile(rel, TextFile)
}

// ReadRaw returns the bytes as served of the version at rel.
func (d *Dir) ReadRaw(rel string) ([]byte, error) {
	m, err := d.ReadMeta(rel)
	if err != nil {
		return nil, err
	}
	s, err := d.readFile(rel, m.RawFile)
	return []byte(s), err
}

func (d *Dir) readFile(rel, name string) (string, error) {
	dir, err := d.Abs(rel)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("archive: version %s: %w", rel, err)
	}
	return string(b), nil
}

// ManifestEntry is one line of a run's manifest.jsonl.
type ManifestEntry struct {
	URL     string `json:"url"`
	Outcome string `json:"outcome"`        // internal/outcome's kind: new, changed, unchanged, not_modified, not_found, redirect, error; http_<status> for another status
	Path    string `json:"path,omitempty"` // the page's current version, relative to the root
}

// WriteManifest writes the manifest of the run that started at runStart, replacing any earlier one:
// entries calls add with each line in turn, and the lines are written as they come, so a run of
// any size costs the memory of one. An error from entries or add leaves the old manifest, if any.
func (d *Dir) WriteManifest(runStart time.Time, entries func(add func(ManifestEntry) error) error) error {
	return WriteFileFrom(filepath.Join(d.root, RunDir(runStart), ManifestFile), 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		return entries(func(e ManifestEntry) error { return enc.Encode(e) })
	})
}

// Snapshot hard-links the files of the version at from into the run directory of runStart, so that
// the run directory shows the page although it did not change. It returns the link's path.
func (d *Dir) Snapshot(runStart time.Time, pageURL, from string) (string, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return "", fmt.Errorf("archive: snapshot %s: %w", pageURL, err)
	}
	src, err := d.Abs(from)
	if err != nil {
		return "", err
	}
	rel := path.Join(RunDir(runStart), PagePath(u))
	if rel == from {
		return rel, nil
	}
	dst := filepath.Join(d.root, filepath.FromSlash(rel))
	if err := mkdirAllSync(dst); err != nil {
		return "", err
	}
	// page.json last, as in Write, so an interrupted snapshot is removed by Repair like any other.
	for _, name := range []string{HTMLFile, RawFile, TextFile, MetaFile} {
		err := os.Link(filepath.Join(src, name), filepath.Join(dst, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
			return "", opError("link", filepath.Join(dst, name), err)
		}
	}
	return rel, SyncDir(dst)
}

// Remove deletes the files of the version at rel, then the directories it leaves empty up to its
// run directory. Files hard-linked into later runs by Snapshot live on there.
func (d *Dir) Remove(rel string) error {
	dir, err := d.Abs(rel)
	if err != nil {
		return err
	}
	for _, name := range []string{MetaFile, HTMLFile, RawFile, TextFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("archive: remove %s: %w", rel, err)
		}
	}
	for p := dir; len(p) > len(d.root); p = filepath.Dir(p) {
		if os.Remove(p) != nil {
			break // not empty: a page below or beside it
		}
	}
	return nil
}

// Repair makes a run directory whose run was cut off, or whose writes failed, consistent: it
// removes temporary files, versions without page.json (a crash between their files) and versions
// that known says the database does not record (a crash between the files and the database
// commit, or a commit that failed), then the directories left empty. It returns how many versions
// it removed.
//
// The walk is depth first and removes a directory's orphans once its subdirectories are done, so
// its memory is that of one path from the run directory down, however many versions the run holds.
func (d *Dir) Repair(runStart time.Time, known func(rel string) bool) (int, error) {
	removed := 0
	var repair func(dir string) error
	repair = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return opError("repair", dir, err)
		}
		version, meta := false, false
		for _, e := range entries {
			name := e.Name()
			switch {
			case e.IsDir():
				if err := repair(filepath.Join(dir, name)); err != nil {
					return err
				}
			case strings.HasPrefix(name, tempPrefix) && e.Type().IsRegular():
				if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return opError("remove", filepath.Join(dir, name), err)
				}
			case name == HTMLFile || name == RawFile || name == TextFile || name == MetaFile:
				version, meta = true, meta || name == MetaFile
			}
		}
		if version {
			rel, _ := filepath.Rel(d.root, dir)
			if !meta || !known(filepath.ToSlash(rel)) {
				for _, name := range []string{MetaFile, HTMLFile, RawFile, TextFile} {
					if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return opError("repair: remove", filepath.Join(dir, name), err)
					}
				}
				removed++
			}
		}
		os.Remove(dir) // fails, harmlessly, when not empty
		return nil
	}
	err := repair(filepath.Join(d.root, RunDir(runStart)))
	return removed, err
}
