package activities

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/internal/pollers"
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
func (a *Activities) WorkerIdentity() string { return a.identity }

// unknownHere returns the error for names of kind (agents.KindAgent or a function
// kind) that this worker lacks; known are those of the kind it has. The error is
// UnknownAgent for agents, else UnknownFunction. It is not retried on this worker;
// its details (agents.UnknownAgentDetails) let the workflow run the call again on the
// other workers of the task queue, which may have it during a rolling deploy.
// msg is the error's message; the worker's identity is added to it.
func (a *Activities) unknownHere(ctx context.Context, kind string, names, known []string, msg string) error {
	errType := agents.ErrTypeUnknownFunction
	if kind == agents.KindAgent {
		errType = agents.ErrTypeUnknownAgent
	}
	d := agents.UnknownAgentDetails{Worker: a.identity, Kind: kind, Unknown: names, Known: known,
		Pollers: a.pollers(ctx), Wait: agents.Duration(a.unknownAgentWait)}
	msg = fmt.Sprintf("%s (worker %s)", msg, a.identity)
	return temporal.NewNonRetryableApplicationError(msg, errType, nil, d)
}

// names returns the sorted keys of a function map.
func names[F any](m map[string]F) []string { return slices.Sorted(maps.Keys(m)) }

// pollers lists the workers that polled this activity's task queue within
// pollers.Window; nil when that cannot be known (no Temporal client, not an activity,
// the server did not answer).
func (a *Activities) pollers(ctx context.Context) []string {
	cl, ok := a.clients.clusters[a.clients.self]
	if !ok || cl.Client == nil || !activity.IsActivity(ctx) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	resp, err := cl.Client.DescribeTaskQueue(ctx, activity.GetInfo(ctx).TaskQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return nil
	}
	return pollers.Recent(resp.GetPollers())
}
