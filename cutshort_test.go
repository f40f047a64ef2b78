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

// A call's cancellation or timeout is the end of the caller's ctx (endedBy gives
// context.DeadlineExceeded) when it comes within deadlineSlack of ctx's deadline,
// ctx.Err() still nil: gRPC and the server give up at the deadline they were sent. Far
// from it (a server's own timeout of a long poll, ctx with an hour left), or without a
// deadline, it is not; an ended ctx gives its own error whatever the call's.
func TestEndedBy(t *testing.T) {
	soon, cancelSoon := context.WithTimeout(context.Background(), deadlineSlack/2)
	defer cancelSoon()
	later, cancelLater := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLater()
	done, stop := context.WithCancel(context.Background())
	stop()
	rst := status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL")
	updateTimeout := client.NewWorkflowUpdateServiceTimeoutOrCanceledError(rst)
	for name, tc := range map[string]struct {
		ctx  context.Context
		err  error
		want error
	}{
		"update wait cut at the deadline":     {soon, fmt.Errorf("poll: %w", updateTimeout), context.DeadlineExceeded},
		"RST_STREAM at the deadline":          {soon, rst, context.DeadlineExceeded},
		"server's own update timeout":         {later, updateTimeout, nil},
		"RST_STREAM, an hour left":            {later, rst, nil},
		"no deadline":                         {context.Background(), rst, nil},
		"another error at the deadline":       {soon, serviceerror.NewNotFound("no chat"), nil},
		"ctx cancelled, whatever the error":   {done, errors.New("boom"), context.Canceled},
		"no error, deadline near, ctx not up": {soon, nil, nil},
	} {
		assert.Equal(t, tc.want, endedBy(tc.ctx, tc.err), name)
	}
}
