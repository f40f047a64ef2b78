package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/internal/pollers"
	"github.com/agentchat/agentchat/wire"
)

// describeTimeout bounds the task-queue look-up of an UnknownAgent answer.
const describeTimeout = 3 * time.Second

// defaultIdentity is this process's worker identity as Temporal's SDK makes it by
// default ("<pid>@<host>@"), which is how the server lists the queue's pollers when
// neither the client nor the worker was given another.
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "Unknown"
	}
	return fmt.Sprintf("%d@%s@", os.Getpid(), host)
}

// WorkerIdentity is the identity the activities name their worker by
// (Config.WorkerIdentity, defaulted); the worker should poll with it.
func (a *Activities) WorkerIdentity() string { return a.unknowns.identity }

// here returns the error for names of kind (wire.KindAgent or a function
// kind) that this worker lacks; known are those of the kind it has. The error is
// UnknownAgent for agents, else UnknownFunction. It is not retried on this worker;
// its details (wire.UnknownAgentDetails) let the workflow run the call again on the
// other workers of the task queue, which may have it during a rolling deploy.
// msg is the error's message; the worker's identity is added to it.
func (u *unknowns) here(ctx context.Context, kind string, names, known []string, msg string) error {
	errType := wire.ErrTypeUnknownFunction
	if kind == wire.KindAgent {
		errType = wire.ErrTypeUnknownAgent
	}
	d := wire.UnknownAgentDetails{Worker: u.identity, Kind: kind, Unknown: names, Known: known,
		Pollers: u.pollers(ctx), Wait: wire.Duration(u.wait)}
	msg = fmt.Sprintf("%s (worker %s)", msg, u.identity)
	return temporal.NewNonRetryableApplicationError(msg, errType, nil, d)
}

// unknowns answers for this worker when it lacks an agent or a function: the
// UnknownAgent and UnknownFunction errors that let a chat try the task queue's other
// workers. It owns the worker's identity, how long a chat tries the others
// (Config.UnknownAgentWait) and the last answers of the task queues' pollers; it
// reaches the server through clients.
type unknowns struct {
	identity string
	wait     time.Duration
	answers  pollerAnswers
	clients  *clients
}

// names returns the sorted keys of a function map.
func names[F any](m map[string]F) []string { return slices.Sorted(maps.Keys(m)) }

// pollersFresh is how long an answer of pollers serves: the calls a rolling deploy
// blocks each answer UnknownAgent within a few seconds, and need not each ask the
// server.
const pollersFresh = time.Second

// pollers lists the workers that polled this activity's task queue within
// pollers.Window; nil when that cannot be known (no Temporal client, not an activity,
// the server did not answer). An answer is kept for pollersFresh.
func (u *unknowns) pollers(ctx context.Context) []string {
	if !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	key := [2]string{info.WorkflowNamespace, info.TaskQueue}
	if ps, ok := u.answers.get(key); ok {
		return ps
	}
	tc, err := u.clients.temporal(info.WorkflowNamespace)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	resp, err := tc.DescribeTaskQueue(ctx, info.TaskQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return nil
	}
	ps := slices.DeleteFunc(pollers.Recent(resp.GetPollers()), goneFromThisHost)
	u.answers.put(key, ps)
	return ps
}

// goneFromThisHost reports whether identity, in Temporal's default form
// "<pid>@<host>@...", names a process of this host that no longer runs. The server
// lists a worker that has just stopped among the pollers for a minute or two, and a
// chat would wait that long for its answer; a worker of another host, or with an
// identity of another form, cannot be checked and counts as there.
func goneFromThisHost(identity string) bool {
	pidText, rest, ok := strings.Cut(identity, "@")
	host, _, _ := strings.Cut(rest, "@")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 || pid == os.Getpid() || host != thisHost() {
		return false
	}
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Signal(syscall.Signal(0))
	}
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}

// thisHost is os.Hostname, as Temporal's default identity names it.
func thisHost() string {
	host, err := os.Hostname()
	if err != nil {
		return "Unknown"
	}
	return host
}

// pollerAnswers keeps the last answer of pollers by namespace and task queue, for
// pollersFresh.
type pollerAnswers struct {
	mu      sync.Mutex
	answers map[[2]string]pollerAnswer
}

type pollerAnswer struct {
	at      time.Time
	pollers []string
}

func (c *pollerAnswers) get(key [2]string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ans, ok := c.answers[key]
	if !ok || time.Since(ans.at) >= pollersFresh {
		return nil, false
	}
	return slices.Clone(ans.pollers), true
}

func (c *pollerAnswers) put(key [2]string, ps []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil {
		c.answers = map[[2]string]pollerAnswer{}
	}
	c.answers[key] = pollerAnswer{at: time.Now(), pollers: slices.Clone(ps)}
}
