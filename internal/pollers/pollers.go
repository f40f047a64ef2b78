// Package pollers tells which workers poll a Temporal task queue. It imports only the
// Temporal client and the standard library, so the client package and the activities
// share one rule for "a worker is there" without the client taking on worker-side
// dependencies.
package pollers

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/sdk/client"
)

// Window is how recently a worker must have polled to count as present. A live worker
// always has a long poll outstanding, which the server ends after about a minute, and
// polls again at once; a busy one (all its slots taken) polls later. Two minutes leave
// room for that: a worker falsely missing fails a command or a migration, one falsely
// listed only costs a wait.
const Window = 2 * time.Minute

// Every is the pause between two looks of Await.
const Every = 200 * time.Millisecond

// Recent returns the identities of the pollers that polled within Window, in the
// server's order; nil when none did.
func Recent(ps []*taskqueuepb.PollerInfo) []string {
	var out []string
	for _, p := range ps {
		if time.Since(p.GetLastAccessTime().AsTime()) < Window {
			out = append(out, p.GetIdentity())
		}
	}
	return out
}

// Await looks at the pollers of taskQueue (tasks of type typ) until one polled within
// Window, and reports whether one did within wait. It looks at least once, then every
// Every: a server that has just restarted lists no pollers until the workers' next
// polls reach it. An error of DescribeTaskQueue is returned at once, wrapped as
// "describe task queue %q: %w" (errors.As finds the serviceerror); ctx ending, as
// "wait for a worker to poll task queue %q: %w".
func Await(ctx context.Context, tc client.Client, taskQueue string, typ enumspb.TaskQueueType, wait time.Duration) (bool, error) {
	for deadline := time.Now().Add(wait); ; {
		resp, err := tc.DescribeTaskQueue(ctx, taskQueue, typ)
		if err != nil {
			return false, fmt.Errorf("describe task queue %q: %w", taskQueue, err)
		}
		if len(Recent(resp.GetPollers())) > 0 {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("wait for a worker to poll task queue %q: %w", taskQueue, ctx.Err())
		case <-time.After(Every):
		}
	}
}
