package bench

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Wire names of the floor workflow. It lives on a task queue of its own, so its
// names never meet agentchat's.
const (
	// FloorWorkflowType is the floor workflow: it registers the three updates below and
	// waits until it is terminated.
	FloorWorkflowType = "BenchFloor"
	// FloorActivityUpdate runs FloorTurn.Activities no-op activities (zero means one)
	// in sequence, as regular activities on the workflow's task queue, and returns the
	// last one's result (FloorTurn → FloorReply). This is the floor of a chat turn.
	FloorActivityUpdate = "Activity"
	// FloorLocalUpdate runs one no-op local activity and returns (FloorTurn → FloorReply).
	FloorLocalUpdate = "LocalActivity"
	// FloorImmediateUpdate returns at once (FloorTurn → FloorReply).
	FloorImmediateUpdate = "Immediate"
	// FloorNoopActivity is the no-op activity: it returns its input's text.
	FloorNoopActivity = "BenchNoop"
)

// floorActivityTimeout is the start-to-close timeout of the no-op activity.
const floorActivityTimeout = 10 * time.Second

// FloorTurn is the input of every floor update: a text of about a user message's size,
// and how many activities to run (FloorActivityUpdate only; zero means one).
type FloorTurn struct {
	Text       string `json:"text"`
	Activities int    `json:"activities,omitempty"`
}

// FloorReply is what a floor update returns: the text back, and how many activities ran.
type FloorReply struct {
	Text       string `json:"text"`
	Activities int    `json:"activities"`
}

// NoopInput and NoopResult are the no-op activity's input and result.
type (
	NoopInput struct {
		Text string `json:"text"`
	}
	NoopResult struct {
		Text string `json:"text"`
	}
)

// Noop is the floor's activity: it does nothing but return its input's text.
func Noop(_ context.Context, in NoopInput) (NoopResult, error) {
	return NoopResult(in), nil
}

// Floor is the floor workflow (FloorWorkflowType): its updates do the least a chat turn
// could do on Temporal, and it runs until terminated.
func Floor(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: floorActivityTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: floorActivityTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	type handler func(workflow.Context, FloorTurn) (FloorReply, error)
	handlers := []struct {
		name string
		h    handler
	}{
		{FloorActivityUpdate, func(ctx workflow.Context, in FloorTurn) (FloorReply, error) {
			out := FloorReply{Text: in.Text}
			for range max(in.Activities, 1) {
				var res NoopResult
				if err := workflow.ExecuteActivity(actx, FloorNoopActivity, NoopInput{Text: in.Text}).Get(ctx, &res); err != nil {
					return FloorReply{}, err
				}
				out.Text = res.Text
				out.Activities++
			}
			return out, nil
		}},
		{FloorLocalUpdate, func(ctx workflow.Context, in FloorTurn) (FloorReply, error) {
			var res NoopResult
			err := workflow.ExecuteLocalActivity(lctx, FloorNoopActivity, NoopInput{Text: in.Text}).Get(ctx, &res)
			return FloorReply{Text: res.Text, Activities: 1}, err
		}},
		{FloorImmediateUpdate, func(_ workflow.Context, in FloorTurn) (FloorReply, error) {
			return FloorReply{Text: in.Text}, nil
		}},
	}
	for _, u := range handlers {
		if err := workflow.SetUpdateHandler(ctx, u.name, u.h); err != nil {
			return err
		}
	}
	return workflow.Await(ctx, func() bool { return false })
}

// RegisterFloor registers the floor workflow and its no-op activity on a worker.
func RegisterFloor(r worker.Registry) {
	r.RegisterWorkflowWithOptions(Floor, workflow.RegisterOptions{Name: FloorWorkflowType})
	r.RegisterActivityWithOptions(Noop, activity.RegisterOptions{Name: FloorNoopActivity})
}
