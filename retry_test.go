package agentchat

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

// An update that the server aborts because the workflow task that carried it failed
// (WorkflowNotReady: the task's completion was refused, as with UnhandledCommand when a
// signal arrived as the run continued as new) is sent again: it was not applied, and
// the chat's messageId idempotency makes a second send safe. One that keeps failing so
// is given up after notReadyPatience, with the server's error.
func TestRetryBusyResendsAnUpdateAbortedByAFailedWorkflowTask(t *testing.T) {
	aborted := serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to unexpected workflow task failure.")
	calls := 0
	err := retryBusy(context.Background(), func() error {
		if calls++; calls < 3 {
			return aborted
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, calls)

	defer func(p time.Duration) { notReadyPatience = p }(notReadyPatience)
	notReadyPatience = 200 * time.Millisecond
	began, calls := time.Now(), 0
	err = retryBusy(context.Background(), func() error { calls++; return aborted })
	var nr *serviceerror.WorkflowNotReady
	require.ErrorAs(t, err, &nr)
	assert.Greater(t, calls, 1)
	assert.Less(t, time.Since(began), 5*time.Second)
}
