// Package pgtest starts a throwaway PostgreSQL server for a test package: initdb into a
// new temporary directory, then postgres listening on a unix socket in that directory and
// on 127.0.0.1 at a free port. Only tests import it.
//
// The binaries are looked up on PATH, then under /usr/lib/postgresql/*/bin (where the
// Debian postgresql package puts them), newest version first. When they are missing, a
// test that needs the server fails when the environment variable CI is set (CI installs
// the package, so it must run these tests) and skips, saying how to install it, otherwise.
//
// initdb and postgres refuse to run as root. When the tests run as root, the helper runs
// both as the unprivileged user nobody (the Credential of their exec.Cmd, so no su or
// sudo is involved) and gives that user the temporary directory, which it creates directly
// under the system's temporary directory (or /tmp, when nobody could not reach that one)
// so that nobody can reach it. root, the test process, can still connect through the
// socket.
//
// One server serves a whole test package: TestMain starts it and stops it; each test gets
// its own schema in it (Server.Schema), which is much cheaper than a database.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// User and Password are the server's superuser. Through the socket it needs no password
// (trust); over TCP it needs Password (scram-sha-256), so tests can check wrong
// credentials.
const (
	User     = "dsh"
	Password = "dsh-test-password"
)

// ErrNoPostgres is the error of Start when the PostgreSQL binaries are not installed.
var ErrNoPostgres = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found on PATH or under /usr/lib/postgresql/*/bin; install them (Debian: apt-get install postgresql)")

// Server is a running throwaway server.
type Server struct {
	dir  string // the temporary directory: data/, the socket, the log
	bin  string // the directory holding initdb and postgres
	port int
	cred *credential // nil unless running as root

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	next   atomic.Int64
}

// FindBin returns the directory holding initdb and postgres, or "" when there is none.
func FindBin() string {
	if p, err := exec.LookPath("postgres"); err == nil {
		dir := filepath.Dir(p)
		if _, err := exec.LookPath("initdb"); err == nil {
			return dir
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "postgres")) && isExec(filepath.Join(d, "initdb")) {
			return d
		}
	}
	return ""
}

// version is the major version in a /usr/lib/postgresql/NN/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start runs initdb into a new temporary directory and starts the server. settings are
// extra server settings ("name=value").
func Start(settings ...string) (*Server, error) {
	bin := FindBin()
	if bin == "" {
		return nil, ErrNoPostgres
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root, initdb and postgres need an unprivileged user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &credential{uid: uid, gid: gid}
	}
	dir, err := os.MkdirTemp(baseDir(s.cred != nil), "dsh-pgtest-")
	if err != nil {
		return nil, err
	}
	s.dir = dir
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(dir, s.cred.uid, s.cred.gid); err != nil {
			return fail(fmt.Errorf("pgtest: give %s to nobody: %w", dir, err))
		}
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if s.cred != nil {
		if err := os.Chown(pw, s.cred.uid, s.cred.gid); err != nil {
			return fail(err)
		}
	}
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", User, "--pwfile", pw,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %v\n%s", err, out))
	}
	os.Remove(pw)
	if s.port, err = freePort(); err != nil {
		return fail(err)
	}
	conf := []string{"listen_addresses='127.0.0.1'", "port=" + strconv.Itoa(s.port),
		"unix_socket_directories='" + dir + "'", "max_connections=300", "shared_buffers=32MB",
		"logging_collector=off", "log_min_messages=warning"}
	f, err := os.OpenFile(filepath.Join(dir, "data", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fail(err)
	}
	_, err = f.WriteString("\n# pgtest\n" + strings.Join(append(conf, settings...), "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := s.Restart(); err != nil {
		s.Stop()
		return fail(err)
	}
	return s, nil
}

// baseDir is where the server's directory goes: the system's temporary directory, unless
// the server's user (nobody, when the tests run as root) could not reach it, or the
// socket's path in it would be longer than a unix socket allows; then /tmp.
func baseDir(asNobody bool) string {
	dir := os.TempDir()
	if len(dir)+len("/dsh-pgtest-0123456789/.s.PGSQL.65535") > 100 {
		return "/tmp"
	}
	if asNobody {
		for d := dir; ; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
				return "/tmp"
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return dir
}

// command returns a command running as the server's user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	s.cred.apply(cmd.SysProcAttr)
	setPdeathsig(cmd.SysProcAttr)
	return cmd
}

// Restart starts the server after Stop (or for the first time) and waits until it accepts
// connections.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgtest: server already running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.URL())
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			s.cmd = nil
			return fmt.Errorf("pgtest: postgres exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not ready after 60 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the server down (fast shutdown: connections are closed, nothing committed is
// lost) and waits for it to exit. Restart starts it again on the same data.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.dir)
}

// URL is the superuser's URL of database postgres through the unix socket.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://%s@/postgres?host=%s&port=%d&sslmode=disable", User, url.QueryEscape(s.dir), s.port)
}

// TCPURL is a URL of database postgres over TCP on 127.0.0.1 with user and password
// (omitted when empty).
func (s *Server) TCPURL(user, password string) string {
	u := url.URL{Scheme: "postgres", Host: "127.0.0.1:" + strconv.Itoa(s.port), Path: "/postgres", RawQuery: "sslmode=disable"}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	return u.String()
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// Dir is the server's temporary directory (holding the socket).
func (s *Server) Dir() string { return s.dir }

// Schema creates a new empty schema and returns a socket URL whose search_path is it, so
// that each test has tables of its own.
func (s *Server) Schema(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.next.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		tb.Fatal(err)
	}
	return s.URL() + "&search_path=" + name
}

// Need returns srv for a test that needs the server, which TestMain started with err:
// when the binaries are missing the test skips, or fails under CI; any other start error
// fails it.
func Need(tb testing.TB, srv *Server, err error) *Server {
	tb.Helper()
	switch {
	case errors.Is(err, ErrNoPostgres) && os.Getenv("CI") == "":
		tb.Skip(err.Error())
	case err != nil:
		tb.Fatal(err)
	case srv == nil:
		tb.Fatal("pgtest: no server (TestMain did not start one)")
	}
	return srv
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CPUTime returns the CPU time the server has used so far (user and system, the
// postmaster's, its live children's and its reaped children's), read from /proc; 0 where
// there is no /proc. Benchmarks report it next to the client's, since a loaded machine
// inflates wall times but not CPU times.
func (s *Server) CPUTime() time.Duration {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return 0
	}
	root := cmd.Process.Pid
	var ticks int64
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name (which may hold spaces) in parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		if pid != root && ppid != root {
			continue
		}
		last := 13 // utime, stime: fields 14 and 15 of stat, f[11] and f[12]
		if pid == root {
			last = 15 // and the reaped children's cutime, cstime
		}
		for _, v := range f[11:last] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ is 100 on Linux
}
