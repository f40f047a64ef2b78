package devserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// namespacePoll is how often EnsureNamespace looks whether a new namespace is ready.
const namespacePoll = 200 * time.Millisecond

// EnsureNamespace registers namespace ns on the server at address, keeping closed
// workflows for retention, unless it exists. A new namespace is known to every
// frontend only once the server's namespace cache refreshes (seconds), so it then
// waits, until ctx ends, for ns to answer a task-queue call.
func EnsureNamespace(ctx context.Context, address, ns string, retention time.Duration) error {
	opts := clientOptions(address, ns, probeTimeout)
	nc, err := client.NewNamespaceClient(opts)
	if err != nil {
		return fmt.Errorf("devserver: namespace client: %w", err)
	}
	defer nc.Close()
	if _, err := nc.Describe(ctx, ns); err == nil {
		return nil
	}
	err = nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: ns,
		WorkflowExecutionRetentionPeriod: durationpb.New(retention)})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("devserver: register namespace %q: %w", ns, err)
	}
	tc, err := client.DialContext(ctx, opts)
	if err != nil {
		return fmt.Errorf("devserver: dial namespace %q: %w", ns, err)
	}
	defer tc.Close()
	for {
		_, err := tc.DescribeTaskQueue(ctx, "agentchat-namespace-probe", enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devserver: namespace %q was registered but is not ready: %w", ns, err)
		case <-time.After(namespacePoll):
		}
	}
}
