// Package pgtest gives tests a fresh, empty PostgreSQL database: on the server that
// STRATA_TEST_POSTGRES_URL names, or else on a throwaway cluster it starts itself, once per test
// binary, bound to 127.0.0.1 with its sockets in a temporary directory, and removes afterwards.
//
// Where neither is possible (no server binaries, or running as root, which initdb refuses) the test
// is skipped with a one-line reason; with STRATA_REQUIRE_POSTGRES=1 (as CI sets it) it fails
// instead, so a suite that should have run against PostgreSQL never passes by skipping.
//
// A package that calls URL must run its tests through Run from TestMain, which stops the cluster
// when the tests are done:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the harness reads.
const (
	EnvURL     = "STRATA_TEST_POSTGRES_URL" // a server to use instead of a cluster of our own
	EnvRequire = "STRATA_REQUIRE_POSTGRES"  // "1": fail, not skip, when no server can be had
	EnvBinDir  = "STRATA_TEST_POSTGRES_BIN" // the directory of initdb and postgres, if not found otherwise
)

var (
	mainRan bool // Run was called: someone will stop the cluster

	once   sync.Once
	server *cluster // nil when an outside server (EnvURL) is used or none could be had
	admin  string   // URL of a database on the server from which test databases are created
	noPG   string   // why there is no server: the skip message
)

// Run runs the tests of m and then stops the cluster that URL may have started. Call it from
// TestMain and pass its result to os.Exit.
func Run(m *testing.M) int {
	mainRan = true
	code := m.Run()
	if server != nil {
		if err := server.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL returns the connection URL of a new, empty database for t, dropped when t ends. It skips t
// (or fails it, with STRATA_REQUIRE_POSTGRES=1) when no PostgreSQL server can be had.
func URL(t testing.TB) string {
	t.Helper()
	if !mainRan {
		t.Fatal("pgtest.URL: the package's TestMain must call pgtest.Run, which stops the cluster afterwards")
	}
	once.Do(setup)
	if admin == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%s=1 but no PostgreSQL: %s", EnvRequire, noPG)
		}
		t.Skipf("no PostgreSQL: %s (set %s, or %s=1 to make this a failure)", noPG, EnvURL, EnvRequire)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := "strata_test_" + randomHex(8)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", redact(admin), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0 ENCODING 'UTF8'"); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		// FORCE ends the sessions a failed test left open, which would otherwise block the drop.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// StartTime is how long this binary took to create and start its own cluster; 0 when it uses an
// outside server or has not started one.
func StartTime() time.Duration {
	if server == nil {
		return 0
	}
	return server.startTook
}

// setup finds the server that URL creates databases on, once.
func setup() {
	if u := os.Getenv(EnvURL); u != "" {
		admin = u
		return
	}
	bin, err := binDir()
	if err != nil {
		noPG = err.Error()
		return
	}
	if runtime.GOOS != "windows" && os.Getuid() == 0 {
		noPG = "running as root, which initdb refuses"
		return
	}
	c, err := start(bin)
	if err != nil {
		noPG = err.Error()
		return
	}
	server, admin = c, c.url("postgres")
}

// binDir finds the directory of initdb and postgres: EnvBinDir, else PATH, else Debian's
// /usr/lib/postgresql/<version>/bin (newest version first), which Debian keeps off PATH.
func binDir() (string, error) {
	if d := os.Getenv(EnvBinDir); d != "" {
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no initdb on PATH or in /usr/lib/postgresql/*/bin (apt-get install postgresql)")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// cluster is a PostgreSQL server of our own, in a temporary directory.
type cluster struct {
	dir       string // data directory and socket directory below it
	port      int
	cmd       *exec.Cmd
	exited    chan struct{}
	startTook time.Duration
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://strata@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// start creates a cluster and starts its server, trying a few ports: the free port found may be
// taken by another process before the server binds it.
func start(bin string) (*cluster, error) {
	began := time.Now()
	removeStale()
	dir, err := os.MkdirTemp("", "strata-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	data := filepath.Join(dir, "data")
	// No fsync, a trust login for the one local user, and the C locale: a throwaway cluster for
	// tests, whose speed matters and whose durability does not.
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "strata", "--auth=trust",
		"--no-sync", "-E", "UTF8", "--locale=C", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v: %s", err, firstLine(string(out)))
	}
	var lastErr error
	for range 5 {
		c := &cluster{dir: dir, exited: make(chan struct{})}
		if c.port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		if lastErr = c.run(bin, data); lastErr == nil {
			c.startTook = time.Since(began)
			return c, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

// run starts the server on c.port and waits until it accepts connections.
func (c *cluster) run(bin, data string) error {
	logFile, err := os.Create(filepath.Join(c.dir, "server.log"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close()
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+c.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	dieWithParent(c.cmd)
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	go func() { c.cmd.Wait(); close(c.exited) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.url("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-c.exited:
			log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			return fmt.Errorf("pgtest: postgres exited at start: %s", lastLine(string(log)))
		case <-ctx.Done():
			c.cmd.Process.Kill()
			<-c.exited
			return fmt.Errorf("pgtest: postgres on port %d not ready after 30s: %w", c.port, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop shuts the server down (fast shutdown: sessions are ended) and removes the cluster.
func (c *cluster) stop() error {
	select {
	case <-c.exited:
	default:
		c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-c.exited
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("remove cluster %s: %w", c.dir, err)
	}
	return nil
}

// removeStale removes the clusters that test binaries killed before Run's cleanup left behind
// (their servers die with them: dieWithParent): those without a running server's postmaster.pid,
// and old enough not to be another binary's cluster that initdb is still creating.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "strata-pg-*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "data", "postmaster.pid")); errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(d)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// redact hides a URL's password for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the server URL"
	}
	return u.Redacted()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
