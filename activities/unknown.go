package activities

import (
	"context"
	"fmt"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
)

// pollerWindow is how recently a worker must have polled to count as one that may
// answer: a live worker always has a long poll (about a minute) outstanding.
const pollerWindow = 90 * time.Second

// describeTimeout bounds the task-queue look-up of an UnknownAgent answer.
const describeTimeout = 3 * time.Second

// identity is this process's worker identity as Temporal's SDK makes it by default
// ("<pid>@<host>@"), which is how the server lists the queue's pollers. A worker given
// another identity (client.Options.Identity) is not recognised among the pollers, so
// a chat then waits the whole UnknownAgentWait before it gives up.
var identity = func() string {
	host, err := os.Hostname()
	if err != nil {
		host = "Unknown"
	}
	return fmt.Sprintf("%d@%s@", os.Getpid(), host)
}()

// unknownAgents returns the UnknownAgent error for ids this worker does not know. It
// is not retried on this worker; its details (agents.UnknownAgentDetails) let the
// workflow run the call again on the other workers of the task queue, which may have
// the agent during a rolling deploy.
// msg is the error's message; the worker's identity is added to it.
func (a *Activities) unknownAgents(ctx context.Context, ids []string, msg string) error {
	d := agents.UnknownAgentDetails{Worker: identity, Unknown: ids, Known: a.registry.IDs(),
		Pollers: a.pollers(ctx), Wait: agents.Duration(a.unknownAgentWait)}
	msg = fmt.Sprintf("%s (worker %s)", msg, identity)
	return temporal.NewNonRetryableApplicationError(msg, agents.ErrTypeUnknownAgent, nil, d)
}

// pollers lists the workers that polled this activity's task queue within
// pollerWindow; nil when that cannot be known (no Temporal client, not an activity,
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
	var out []string
	for _, p := range resp.GetPollers() {
		if time.Since(p.GetLastAccessTime().AsTime()) < pollerWindow {
			out = append(out, p.GetIdentity())
		}
	}
	return out
}
