package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// workerPackage is the worker command, built by WorkerBinary.
const workerPackage = "github.com/agentchat/agentchat/worker"

const (
	// buildTimeout bounds `go build` of the worker; a cold build cache takes a minute.
	buildTimeout = 5 * time.Minute
	// pollTimeout bounds the wait for a started worker process to poll its task queue.
	pollTimeout = 30 * time.Second
)

var (
	buildMu sync.Mutex
	builds  = map[string]*build{} // by package
)

// build is one main package built for this test binary.
type build struct {
	once sync.Once
	path string
	err  error
}

// WorkerBinary builds the worker command once per test binary and returns its path.
// It is built with -race when the test binary is, so a data race in the worker fails
// the worker (exit status 66, the report in its log). Under `go test` the binary sits
// next to the test binary, in go's work folder, which go removes at the end; a test
// binary run by hand builds it into a new temporary folder instead.
func WorkerBinary(t testing.TB) string {
	t.Helper()
	return Binary(t, workerPackage)
}

// Binary builds main package pkg (an import path of this module) once per test binary,
// as WorkerBinary builds the worker, and returns its path.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	buildMu.Lock()
	b, ok := builds[pkg]
	if !ok {
		b = &build{}
		builds[pkg] = b
	}
	buildMu.Unlock()
	b.once.Do(func() { b.path, b.err = buildMain(pkg) })
	require.NoError(t, b.err)
	return b.path
}

func buildMain(pkg string) (string, error) {
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	// Named by the whole package path: two mains of one base name (./worker and
	// ./internal/recordtool/worker) must not overwrite each other.
	out := filepath.Join(dir, "agentchat-"+strings.ReplaceAll(strings.TrimPrefix(pkg, "github.com/agentchat/agentchat/"), "/", "-"))
	args := []string{"build", "-o", out}
	if RaceEnabled() {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testenv: go %s: %w\n%s", strings.Join(args, " "), err, output)
	}
	return out, nil
}

// binDir is the folder of the test binary when it lies in go's work folder
// ($TMPDIR/go-build*/bNNN), else a new temporary folder.
func binDir() (string, error) {
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "go-build") {
			return dir, nil
		}
	}
	dir, err := os.MkdirTemp("", "agentchat-test-bin-")
	if err != nil {
		return "", fmt.Errorf("testenv: folder for the worker binary: %w", err)
	}
	return dir, nil
}

// RaceEnabled reports whether this binary was built with -race (a test that bounds its
// own time allows for the race detector's cost).
func RaceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// ProcessOptions configure StartWorkerProcess.
type ProcessOptions struct {
	// Address of the Temporal frontend; default the shared server.
	Address string
	// Namespace; default "default".
	Namespace string
	// TaskQueue to poll; required.
	TaskQueue string
	// Config is the agent registry YAML, given to the worker with --agents. Its
	// endpoints are used as written (the process does not know the harness's model).
	Config string
	// Args are more command-line flags.
	Args []string
	// Identity is the worker identity the process polls with (--identity); "" means
	// Temporal's default, "<pid>@<host>@".
	Identity string
	// Package is the main package to run instead of the worker command (an import
	// path of this module, built by Binary); it takes the worker's flags --agents,
	// --task-queue, --address, --namespace and --store (and --identity, when set).
	Package string
	// Env are more environment variables ("NAME=value"), after the test's own.
	Env []string
}

// WorkerProcess is the real worker command running in its own process, as a user
// runs it. It is killed when the test ends, and its log is printed if the test failed.
type WorkerProcess struct {
	PID int
	// LogFile holds the process's stdout and stderr.
	LogFile string

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has ended
	waitErr error         // set before exited is closed
}

// StartWorkerProcess starts the worker command (built by WorkerBinary) and waits
// until this very process polls the task queue for workflow and activity tasks. It
// looks for the process's own poller identity (ProcessOptions.Identity, else
// "<pid>@host@...", the SDK's default), not just any recent poller: a worker killed a moment ago still counts as a poller
// on the server for a while.
func StartWorkerProcess(t testing.TB, opts ProcessOptions) *WorkerProcess {
	t.Helper()
	require.NotEmpty(t, opts.TaskQueue, "ProcessOptions.TaskQueue")
	if opts.Address == "" {
		opts.Address = Address(t)
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	bin := WorkerBinary(t)
	if opts.Package != "" {
		bin = Binary(t, opts.Package)
	}
	dir := t.TempDir()
	agentsFile := filepath.Join(dir, "agents.yaml")
	require.NoError(t, os.WriteFile(agentsFile, []byte(opts.Config), 0o600))
	logFile, err := os.CreateTemp(dir, "worker-*.log")
	require.NoError(t, err)
	defer logFile.Close() // the child has its own descriptor

	args := append([]string{"--agents", agentsFile, "--task-queue", opts.TaskQueue,
		"--address", opts.Address, "--namespace", opts.Namespace,
		"--store", filepath.Join(dir, "exports")}, opts.Args...)
	if opts.Identity != "" {
		args = append(args, "--identity", opts.Identity)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if len(opts.Env) > 0 {
		cmd.Env = append(os.Environ(), opts.Env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start(), "start %s", bin)
	p := &WorkerProcess{PID: cmd.Process.Pid, LogFile: logFile.Name(), cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("worker process %d (%s):\n%s", p.PID, p.exitStatus(), p.Logs())
		}
	})
	p.waitPolling(t, opts)
	return p
}

// waitPolling waits until the process polls both task-queue types, failing the test
// at once if it exits first.
func (p *WorkerProcess) waitPolling(t testing.TB, opts ProcessOptions) {
	t.Helper()
	tc, err := client.Dial(client.Options{HostPort: opts.Address, Namespace: opts.Namespace,
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	identity := fmt.Sprintf("%d@", p.PID)
	if opts.Identity != "" {
		identity = opts.Identity
	}
	for _, kind := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		for !p.polls(ctx, tc, opts.TaskQueue, kind, identity) {
			select {
			case <-p.exited:
				require.FailNow(t, "worker process exited before it polled",
					"pid %d, %s; log:\n%s", p.PID, p.exitStatus(), p.Logs())
			case <-ctx.Done():
				require.FailNow(t, "worker process never polled",
					"pid %d, %s queue %q, after %s; log:\n%s", p.PID, kind, opts.TaskQueue, pollTimeout, p.Logs())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// polls reports whether a poller whose identity starts with identity has polled the
// task queue.
func (p *WorkerProcess) polls(ctx context.Context, tc client.Client, queue string, kind enumspb.TaskQueueType, identity string) bool {
	resp, err := tc.DescribeTaskQueue(ctx, queue, kind)
	if err != nil {
		return false
	}
	for _, poller := range resp.GetPollers() {
		if strings.HasPrefix(poller.GetIdentity(), identity) {
			return true
		}
	}
	return false
}

// Kill sends SIGKILL, as a crash or an OOM kill would end the worker: no graceful
// stop, running activities are abandoned. It waits until the process has ended.
// Killing a process that has ended does nothing.
func (p *WorkerProcess) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Logs returns what the process has written so far.
func (p *WorkerProcess) Logs() string {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

func (p *WorkerProcess) exitStatus() string {
	select {
	case <-p.exited:
		if p.waitErr == nil {
			return "exited with status 0"
		}
		return p.waitErr.Error()
	default:
		return "running"
	}
}
