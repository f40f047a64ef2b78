package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// pollTimeout bounds the wait for a new worker process to poll its task queue.
const pollTimeout = 60 * time.Second

// stopTimeout bounds a graceful stop (SIGTERM) before the process is killed.
const stopTimeout = 40 * time.Second

// Process is one worker process: this test binary, re-executed as a worker (see
// RunWorkerIfChild), so that it has the recording tools and can be killed for real.
type Process struct {
	PID       int
	Namespace string
	Variant   string // the agent config it runs (agents.go)
	LogFile   string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// startProcess starts a worker with spec and waits until its pollers run.
func startProcess(ctx context.Context, spec WorkerSpec, variant string) (*Process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	log, err := os.CreateTemp(spec.Dir, "worker-*.log")
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	cmd.Stdout, cmd.Stderr = log, log
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("systest: start worker: %w", err)
	}
	p := &Process{PID: cmd.Process.Pid, Namespace: spec.Namespace, Variant: variant, LogFile: log.Name(),
		cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitPolling(ctx); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

// waitPolling waits until the process says its pollers run (readyLine), failing if it
// exits first. The server's view (DescribeTaskQueue) is not used: a new poller may poll
// a partition other than the root one, which DescribeTaskQueue shows, for up to a
// minute.
func (p *Process) waitPolling(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	for !strings.Contains(p.Logs(), readyLine) {
		select {
		case <-p.exited:
			return fmt.Errorf("systest: worker %d exited before it polled (%v); log:\n%s", p.PID, p.err, p.Logs())
		case <-ctx.Done():
			return fmt.Errorf("systest: worker %d did not start polling within %s; log:\n%s", p.PID, pollTimeout, p.Logs())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Kill sends SIGKILL, as a crash would, and waits for the process to end.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Stop sends SIGTERM, as a rolling deploy would, and waits for the graceful stop
// (killing the process after stopTimeout).
func (p *Process) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		p.Kill()
	}
}

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.exited:
		return true, p.err
	default:
		return false, nil
	}
}

// Logs returns what the process wrote.
func (p *Process) Logs() string {
	b, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// String names the process for the action log.
func (p *Process) String() string {
	return fmt.Sprintf("worker %d (%s, config %s, log %s)", p.PID, p.Namespace, p.Variant, filepath.Base(p.LogFile))
}
