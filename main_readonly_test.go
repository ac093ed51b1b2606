//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-crawler/strata/internal/testweb"
)

// unprivileged runs the strata under test as a user the file modes apply to: this process if it is
// not root, or, as root (whom modes do not stop), a copy of the test binary run as nobody.
type unprivileged struct {
	bin  string
	cred *syscall.Credential
}

const nobody = 65534

func newUnprivileged(t *testing.T) *unprivileged {
	t.Helper()
	if os.Geteuid() != 0 {
		return &unprivileged{bin: os.Args[0]}
	}
	// The test binary sits in a directory only root may enter: copy it where nobody can run it.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "strata.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	u := &unprivileged{bin: bin, cred: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if _, _, code := u.strata(t, dir, "version"); code != 0 {
		t.Skip("running as root, and cannot run a process as nobody (uid 65534) here, so file modes cannot be tested")
	}
	return u
}

func (u *unprivileged) command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(u.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	if u.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	}
	return cmd
}

func (u *unprivileged) strata(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := u.command(dir, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		return out.String(), err.Error(), -1
	}
	return out.String(), errb.String(), 0
}

// TestReadOnlyDatabase crawls a site, then takes write permission away from the database, its
// directory and the archive, and reads them as a user those modes apply to: status, history, show
// and serve must work and create nothing; a command that writes must fail with one clear line; and a
// database the user may not even read must say so in one line.
func TestReadOnlyDatabase(t *testing.T) {
	web := testweb.New(t)
	s := web.AddSite(t)
	s.Page("/", "<p>kept on a read-only disk</p>")
	u := newUnprivileged(t)

	root := t.TempDir()
	dir := filepath.Join(root, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "strata.toml")
	os.WriteFile(cfg, []byte("[politeness]\nloopback_delay = \"10ms\"\n[crawl]\nuser_agent = \"strata-test/1 (+https://lab.example/c)\"\n"), 0o644)
	for _, args := range [][]string{{"seed", "add", "--level", "0", s.URL("/")}, {"run"}} {
		if _, errs, code := strata(t, dir, append([]string{"--config", cfg}, args...)...); code != 0 {
			t.Fatalf("strata %s: %s", strings.Join(args, " "), errs)
		}
	}
	// What a read-only disk looks like to the user: nothing can be created or written.
	var entries []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o444)
		if e.IsDir() {
			mode = 0o555
		}
		entries = append(entries, p)
		return os.Chmod(p, mode)
	})
	for _, d := range []string{filepath.Dir(root), root} {
		os.Chmod(d, 0o755)
	}
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	if os.Geteuid() != 0 {
		if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
			f.Close()
			t.Skip("this file system ignores file modes, so a read-only directory cannot be made here")
		}
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, "completed"},
		{[]string{"history", s.URL("/")}, "1 fetches"},
		{[]string{"show", s.URL("/")}, "kept on a read-only disk"},
	} {
		out, errs, code := u.strata(t, dir, append([]string{"--config", cfg}, tt.args...)...)
		if code != 0 || errs != "" || !strings.Contains(out, tt.want) {
			t.Errorf("strata %s on a read-only database: exit %d, stderr %q, stdout lacks %q:\n%s", tt.args[0], code, errs, tt.want, out)
		}
	}

	// serve: reads a page over HTTP.
	cmd := u.command(dir, "--config", cfg, "serve", "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var serveErr strings.Builder
	cmd.Stderr = &serveErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if m := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line); m == "" {
		t.Errorf("serve on a read-only database printed %q, stderr %q", line, serveErr.String())
	} else {
		client := &http.Client{Timeout: 10 * time.Second}
		resp, err := client.Get(m)
		if err != nil {
			t.Errorf("GET / from serve: %v", err)
		} else {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "/changes?run=1") {
				t.Errorf("serve's runs page on a read-only database: %d\n%s", resp.StatusCode, body)
			}
		}
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()

	var after []string
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil {
			after = append(after, p)
		}
		return nil
	})
	if fmt.Sprint(after) != fmt.Sprint(entries) {
		t.Errorf("reading created files:\nbefore %v\nafter  %v", entries, after)
	}

	// A command that writes: one line that says why.
	if _, errs, code := u.strata(t, dir, "--config", cfg, "seed", "remove", s.URL("/")); code == 0 || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, "read-only") && !strings.Contains(errs, "permission denied") {
		t.Errorf("seed remove on a read-only database: exit %d, stderr %q; want one line saying it is read-only", code, errs)
	}
	// A database the user may not read at all.
	db := filepath.Join(dir, "strata.db")
	os.Chmod(db, 0)
	if _, errs, code := u.strata(t, dir, "--config", cfg, "status"); code == 0 || strings.Count(errs, "\n") != 1 ||
		!strings.Contains(errs, db) || !strings.Contains(errs, "permission denied") {
		t.Errorf("status on an unreadable database: exit %d, stderr %q; want one line naming it and the permission", code, errs)
	}
}
