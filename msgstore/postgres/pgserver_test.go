package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// envTestPostgres names a PostgreSQL DSN the conformance tests use instead of starting
// a server of their own (scripts/test exports what scripts/postgres.sh start prints).
const envTestPostgres = "AGENTCHAT_TEST_POSTGRES"

// installHint ends every failure to find or start PostgreSQL: these tests never skip.
const installHint = "PostgreSQL is needed by these tests and they never skip. Install the server " +
	"(`apt-get install -y postgresql`, with sudo if not root) so that initdb and postgres are in PATH or " +
	"/usr/lib/postgresql/*/bin, or run `scripts/postgres.sh start DIR PORT` and set " + envTestPostgres +
	" to the DSN it prints."

// pgServer is a throwaway PostgreSQL server in a temporary folder, listening on
// 127.0.0.1 only, with trust authentication for user postgres.
type pgServer struct {
	bin  string // folder holding initdb and postgres
	dir  string // temporary folder: data/ and server.log
	data string
	port int
	cred *syscall.Credential // who runs the server when this process is root; nil otherwise

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// findPostgresBin returns the folder of initdb and postgres: the one of initdb in PATH
// (symlinks followed), else the newest /usr/lib/postgresql/*/bin.
func findPostgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { // newest major version first
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no initdb found in PATH or /usr/lib/postgresql/*/bin")
}

// serverCredential returns whom to run PostgreSQL as: nil when this process is not root,
// else user postgres if it exists, else nobody (PostgreSQL refuses to run as root).
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, errors.New("running as root and there is no user postgres or nobody to run PostgreSQL as")
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

// newPGServer initializes a data folder and starts a server on a free port.
func newPGServer() (*pgServer, error) {
	bin, err := findPostgresBin()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "msgstore-pg-")
	if err != nil {
		return nil, err
	}
	srv := &pgServer{bin: bin, dir: dir, data: filepath.Join(dir, "data"), cred: cred}
	if err := srv.init(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if srv.port, err = freePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := srv.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return srv, nil
}

func (s *pgServer) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

func (s *pgServer) init() error {
	if err := os.Chmod(s.dir, 0o755); err != nil { // the server's user must reach data/
		return err
	}
	if err := os.Mkdir(s.data, 0o700); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(s.data, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	out, err := s.command("initdb", "-D", s.data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// start runs postgres on s.port and waits until it accepts connections.
func (s *pgServer) start() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command("postgres", "-D", s.data, "-p", strconv.Itoa(s.port), "-k", s.data,
		"-c", "listen_addresses=127.0.0.1")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Fast shutdown if this test binary dies without stopping the server.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn("postgres"))
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("postgres exited at start: %v\n%s", cmd.ProcessState, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			_ = s.stop()
			return fmt.Errorf("postgres not ready after 60s: %w\n%s", err, s.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop shuts the server down fast (SIGINT: clients cut off, data checkpointed) and
// waits for it to exit.
func (s *pgServer) stop() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("postgres did not stop within 30s; killed\n%s", s.logTail())
	}
}

// destroy stops the server and removes its folder.
func (s *pgServer) destroy() error {
	err := s.stop()
	return errors.Join(err, os.RemoveAll(s.dir))
}

func (s *pgServer) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// createDB creates a database and returns its DSN.
func (s *pgServer) createDB(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return s.dsn(name), nil
}

func (s *pgServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return "server log (" + filepath.Join(s.dir, "server.log") + "):\n" + string(bytes.TrimSpace(b))
}

// startPostgresT starts a server of the test's own, destroyed when the test ends, or
// fails the test saying how to install PostgreSQL.
func startPostgresT(t *testing.T) *pgServer {
	t.Helper()
	start := time.Now()
	srv, err := newPGServer()
	if err != nil {
		t.Fatalf("start a throwaway PostgreSQL server: %v\n%s", err, installHint)
	}
	t.Logf("PostgreSQL started in %v on port %d (bin %s)", time.Since(start).Round(time.Millisecond), srv.port, srv.bin)
	t.Cleanup(func() {
		if err := srv.destroy(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

// shared is the server the conformance tests share when envTestPostgres is not set,
// started on first use and stopped by TestMain.
var shared struct {
	once sync.Once
	srv  *pgServer
	dsn  string
	err  error
}

// sharedPostgresDSN returns the DSN of envTestPostgres, else of a database on a shared
// throwaway server; it fails the test when there is neither.
func sharedPostgresDSN(t *testing.T) string {
	t.Helper()
	if dsn := strings.TrimSpace(os.Getenv(envTestPostgres)); dsn != "" {
		return dsn
	}
	shared.once.Do(func() {
		start := time.Now()
		shared.srv, shared.err = newPGServer()
		if shared.err == nil {
			shared.dsn, shared.err = shared.srv.createDB("agentchat_test")
			t.Logf("shared PostgreSQL started in %v on port %d", time.Since(start).Round(time.Millisecond), shared.srv.port)
		}
	})
	if shared.err != nil {
		t.Fatalf("start a throwaway PostgreSQL server (or set %s): %v\n%s", envTestPostgres, shared.err, installHint)
	}
	return shared.dsn
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedPostgres()
	os.Exit(code)
}

func stopSharedPostgres() {
	if shared.srv != nil {
		if err := shared.srv.destroy(); err != nil {
			fmt.Fprintln(os.Stderr, "msgstore/postgres tests: stop shared PostgreSQL:", err)
		}
	}
}
