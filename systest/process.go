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

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
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

// startProcess starts a worker with spec and waits until it polls both task-queue
// types under its own identity ("<pid>@…"): a killed worker still shows as a poller
// for a while, so any poller would not do.
func startProcess(ctx context.Context, tc client.Client, spec WorkerSpec, variant string) (*Process, error) {
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
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("systest: start worker: %w", err)
	}
	p := &Process{PID: cmd.Process.Pid, Namespace: spec.Namespace, Variant: variant, LogFile: log.Name(),
		cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitPolling(ctx, tc, spec.TaskQueue); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

func (p *Process) waitPolling(ctx context.Context, tc client.Client, queue string) error {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	identity := fmt.Sprintf("%d@", p.PID)
	for _, kind := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		for !polls(ctx, tc, queue, kind, identity) {
			select {
			case <-p.exited:
				return fmt.Errorf("systest: worker %d exited before it polled (%v); log:\n%s", p.PID, p.err, p.Logs())
			case <-ctx.Done():
				return fmt.Errorf("systest: worker %d never polled %s queue %q; log:\n%s", p.PID, kind, queue, p.Logs())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func polls(ctx context.Context, tc client.Client, queue string, kind enumspb.TaskQueueType, identity string) bool {
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
