package pollers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentchat/agentchat/internal/pollers"
)

func poller(id string, ago time.Duration) *taskqueuepb.PollerInfo {
	return &taskqueuepb.PollerInfo{Identity: id, LastAccessTime: timestamppb.New(time.Now().Add(-ago))}
}

// Only pollers seen within Window count.
func TestRecentKeepsThePollersSeenWithinTheWindow(t *testing.T) {
	got := pollers.Recent([]*taskqueuepb.PollerInfo{
		poller("a", time.Second), poller("old", pollers.Window+time.Second), poller("b", pollers.Window-5*time.Second)})
	assert.Equal(t, []string{"a", "b"}, got)
	assert.Nil(t, pollers.Recent(nil))
}

// describer answers DescribeTaskQueue from a list of answers, one a call, the last
// repeated.
type describer struct {
	client.Client
	answers []func() (*workflowservice.DescribeTaskQueueResponse, error)
	calls   int
}

func (d *describer) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	a := d.answers[min(d.calls, len(d.answers)-1)]
	d.calls++
	return a()
}

func answer(ps ...*taskqueuepb.PollerInfo) func() (*workflowservice.DescribeTaskQueueResponse, error) {
	return func() (*workflowservice.DescribeTaskQueueResponse, error) {
		return &workflowservice.DescribeTaskQueueResponse{Pollers: ps}, nil
	}
}

// A poller that shows up on a later look is found; none within wait is false, after
// at least one more look; a describe error is returned at once and keeps its type.
func TestAwaitLooksAgainUntilTheWait(t *testing.T) {
	ctx := context.Background()
	d := &describer{answers: []func() (*workflowservice.DescribeTaskQueueResponse, error){answer(), answer(), answer(poller("w", 0))}}
	ok, err := pollers.Await(ctx, d, "q", enumspb.TASK_QUEUE_TYPE_WORKFLOW, time.Minute)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 3, d.calls)

	d = &describer{answers: []func() (*workflowservice.DescribeTaskQueueResponse, error){answer(poller("old", time.Hour))}}
	ok, err = pollers.Await(ctx, d, "q", enumspb.TASK_QUEUE_TYPE_WORKFLOW, 3*pollers.Every)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.GreaterOrEqual(t, d.calls, 2)

	d = &describer{answers: []func() (*workflowservice.DescribeTaskQueueResponse, error){func() (*workflowservice.DescribeTaskQueueResponse, error) {
		return nil, serviceerror.NewNamespaceNotFound("ns")
	}}}
	_, err = pollers.Await(ctx, d, "q", enumspb.TASK_QUEUE_TYPE_WORKFLOW, time.Minute)
	var nf *serviceerror.NamespaceNotFound
	assert.True(t, errors.As(err, &nf), "%v", err)
	assert.Contains(t, err.Error(), `describe task queue "q"`)
	assert.Equal(t, 1, d.calls)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	d = &describer{answers: []func() (*workflowservice.DescribeTaskQueueResponse, error){answer()}}
	_, err = pollers.Await(cctx, d, "q", enumspb.TASK_QUEUE_TYPE_WORKFLOW, time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), `wait for a worker to poll task queue "q"`)
}
