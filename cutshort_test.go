package agentchat

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A call ended by the caller's deadline or cancellation is "cut short" however the
// error reaches us, even when it wins the race with ctx.Err() (the SDK's update wait
// answered "Timeout or cancellation waiting for update" while ctx.Err() was still nil:
// the start then said nothing of the chat it may have created). Other errors are not.
func TestCutShort(t *testing.T) {
	live := context.Background()
	withDeadline, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	done, stop := context.WithCancel(context.Background())
	stop()
	updateTimeout := client.NewWorkflowUpdateServiceTimeoutOrCanceledError(errors.New("the server gave up"))
	for name, tc := range map[string]struct {
		ctx  context.Context
		err  error
		want bool
	}{
		"ctx done":                            {done, errors.New("anything"), true},
		"deadline, wrapped":                   {live, fmt.Errorf("poll: %w", context.DeadlineExceeded), true},
		"cancelled":                           {live, context.Canceled, true},
		"update wait timed out, ctx deadline": {withDeadline, fmt.Errorf("x: %w", updateTimeout), true},
		"update wait timed out, no deadline":  {live, updateTimeout, false},
		"gRPC deadline":                       {live, status.Error(codes.DeadlineExceeded, "deadline"), true},
		"service deadline":                    {live, serviceerror.NewDeadlineExceeded("deadline"), true},
		"not found":                           {withDeadline, serviceerror.NewNotFound("no chat"), false},
		"plain error":                         {withDeadline, errors.New("boom"), false},
	} {
		assert.Equal(t, tc.want, cutShort(tc.ctx, tc.err), name)
	}
}
