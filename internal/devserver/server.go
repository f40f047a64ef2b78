package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

const (
	// StopTimeout is how long Stop waits after SIGINT before SIGKILL.
	StopTimeout = 15 * time.Second
	// logTailLines is how many server log lines a failed start quotes.
	logTailLines = 30
	// readyPollEvery is the pause between readiness probes.
	readyPollEvery = 250 * time.Millisecond
	// probeTimeout bounds one readiness probe (dial, health, describes).
	probeTimeout = 3 * time.Second
)

// Server is a running dev server process started by Start.
type Server struct {
	// Address is the frontend's gRPC host:port, for client.Options.HostPort.
	Address string
	// UIURL is the web UI's address, "" when headless.
	UIURL string
	// HTTPAddress is the frontend's HTTP API host:port.
	HTTPAddress string
	// MetricsURL is the Prometheus endpoint.
	MetricsURL string
	// PID is the server's process id.
	PID int
	// Namespaces are the namespaces registered at start, "default" first.
	Namespaces []string
	// DBFile is the SQLite file, "" when in memory.
	DBFile string
	// LogFile receives the server's output, "" when discarded.
	LogFile string
	// PIDFile holds PID when the server is detached, else "".
	PIDFile string

	detached bool
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // set before exited is closed
	logFrom  int64         // size of LogFile before the start
	tail     *tailBuffer   // output when there is no LogFile and no Detach
	stopOnce sync.Once
	stopErr  error
}

// Start builds the CLI if needed (EnsureCLI), starts `temporal server
// start-dev` with opts, and waits until a Temporal client connects, the
// frontend answers CheckHealth and every namespace in opts.Namespaces (and
// "default") can be described. On failure, or when ctx ends first, it stops
// the process and returns an error wrapping ErrNotReady that quotes the last
// lines of the server's log. Canceling ctx after Start returns does not stop
// the server; call Stop.
func Start(ctx context.Context, opts Options) (*Server, error) {
	p, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	cli, err := EnsureCLI(ctx, p.progress)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(p.progress, "agentchat: starting Temporal dev server on %s (%s, %s)\n",
		p.address(), uiDescription(p), p.dataDescription())
	s, err := launch(cli, p)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	if err := s.waitReady(ctx, p.readyTimeout); err != nil {
		_ = s.Stop()
		return nil, err
	}
	fmt.Fprintf(p.progress, "agentchat: Temporal dev server ready on %s after %s\n",
		s.Address, time.Since(started).Round(100*time.Millisecond))
	return s, nil
}

func uiDescription(p *plan) string {
	if u := p.uiURL(); u != "" {
		return "UI " + u
	}
	return "no UI"
}

// launch starts the process without waiting for it to be ready.
func launch(cli string, p *plan) (*Server, error) {
	if p.dbFile != "" {
		if err := os.MkdirAll(filepath.Dir(p.dbFile), 0o755); err != nil {
			return nil, fmt.Errorf("devserver: data folder: %w", err)
		}
	}
	s := &Server{
		Address:     p.address(),
		UIURL:       p.uiURL(),
		HTTPAddress: fmt.Sprintf("%s:%d", p.host, p.httpPort),
		MetricsURL:  fmt.Sprintf("http://%s:%d/metrics", p.host, p.metricsPort),
		Namespaces:  p.namespaces,
		DBFile:      p.dbFile,
		LogFile:     p.logFile,
		detached:    p.detach,
		exited:      make(chan struct{}),
	}
	cmd := exec.Command(cli, p.args()...)
	cmd.SysProcAttr = sysProcAttr(p.detach)
	out, closeOut, err := s.output(p)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	err = s.startAndWatch(cmd)
	closeOut() // the child holds its own copy of a log file descriptor
	if err != nil {
		return nil, fmt.Errorf("devserver: start %s: %w", cli, err)
	}
	if p.detach {
		if err := writePIDFile(p.pidFile, s.PID); err != nil {
			_ = s.Stop()
			return nil, err
		}
		s.PIDFile = p.pidFile
	}
	return s, nil
}

// startAndWatch starts cmd and closes s.exited when it ends. Start and Wait
// run on one goroutine locked to its OS thread: Linux sends the parent-death
// signal when the thread that forked the child exits, so that thread must
// live exactly as long as the child.
func (s *Server) startAndWatch(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		s.PID = cmd.Process.Pid
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return <-started
}

// output opens where the server's stdout and stderr go. A detached server
// never writes into a pipe of this process, which would break when it exits.
func (s *Server) output(p *plan) (io.Writer, func(), error) {
	if p.logFile == "" {
		if p.detach {
			return nil, func() {}, nil // exec connects /dev/null
		}
		s.tail = &tailBuffer{max: 64 << 10}
		return s.tail, func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(p.logFile), 0o755); err != nil {
		return nil, nil, fmt.Errorf("devserver: log folder: %w", err)
	}
	f, err := os.OpenFile(p.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("devserver: log file: %w", err)
	}
	if fi, err := f.Stat(); err == nil {
		s.logFrom = fi.Size()
	}
	return f, func() { _ = f.Close() }, nil
}

// waitReady polls until the server is ready, it exits, ctx ends or timeout
// passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		lastErr = s.probe(ctx)
		if lastErr == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%w: server on %s exited during start (%v)%s",
				ErrNotReady, s.Address, s.waitErr, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%w: server on %s not ready after %s: %v%s",
				ErrNotReady, s.Address, timeout, lastErr, s.logTail())
		case <-time.After(readyPollEvery):
		}
	}
}

// probe runs one readiness probe, cut short when the process exits.
func (s *Server) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	go func() {
		select {
		case <-s.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	return probeReady(ctx, s.Address, s.Namespaces)
}

// logTail returns the last server log lines for an error message.
func (s *Server) logTail() string {
	var t string
	switch {
	case s.LogFile != "":
		t = fileTail(s.LogFile, s.logFrom, logTailLines)
	case s.tail != nil:
		t = s.tail.lastLines(logTailLines)
	default:
		return "\n(server output discarded: set Options.LogFile to keep it)"
	}
	if t == "" {
		return "\n(server wrote no output)"
	}
	return "\nlast server output:\n" + t
}

// Exited is closed when the server process has ended.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Stop sends SIGINT, waits up to StopTimeout for the process to exit, then
// sends SIGKILL, and removes the PID file. Stopping a server that already
// exited is not an error; calling Stop again returns the first result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	defer func() {
		if s.PIDFile != "" {
			_ = os.Remove(s.PIDFile)
		}
	}()
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := signalServer(s.PID, s.detached, interruptSignal); err != nil {
		select {
		case <-s.exited:
			return nil
		default:
		}
		return fmt.Errorf("devserver: interrupt server pid %d: %w", s.PID, err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(StopTimeout):
	}
	if err := signalServer(s.PID, s.detached, killSignal); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("devserver: kill server pid %d: %w", s.PID, err)
	}
	<-s.exited
	return nil
}
