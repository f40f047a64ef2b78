package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/wire"
)

// A call for a Go function this worker does not register (a tool's, a selection or a
// termination function) answers UnknownFunction, not retried here, with details that
// name this worker by its configured identity and what it has: the chat then tries
// the queue's other workers.
func TestMissingFunctionsAnswerUnknownFunctionWithTheWorkersIdentity(t *testing.T) {
	reg := agents.NewRegistry(agents.Config{
		Agents:    []agents.Definition{{ID: "helper", Model: "m", Endpoint: "default"}},
		Endpoints: map[string]agents.Endpoint{"default": {BaseURL: "http://127.0.0.1:1/v1"}}})
	noop := func(context.Context, json.RawMessage) (string, error) { return "", nil }
	acts, err := activities.New(activities.Config{Registry: reg, WorkerIdentity: "blue-7",
		Functions: activities.FunctionConfig{Tools: map[string]activities.ToolFunc{"zeta": noop, "alpha": noop}},
	})
	require.NoError(t, err)
	assert.Equal(t, "blue-7", acts.WorkerIdentity())
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(acts.CallTool)
	env.RegisterActivity(acts.SelectSpeaker)
	env.RegisterActivity(acts.JudgeTermination)

	cases := []struct {
		kind, name string
		known      []string
		run        func() error
	}{
		{wire.KindTool, "record", []string{"alpha", "zeta"}, func() error {
			_, err := env.ExecuteActivity(acts.CallTool, wire.CallToolInput{ChatID: "c", CallID: "1", Name: "record", Arguments: `{}`})
			return err
		}},
		{wire.KindSelectionFunction, "pick", nil, func() error {
			_, err := env.ExecuteActivity(acts.SelectSpeaker, wire.SelectInput{Function: "pick"})
			return err
		}},
		{wire.KindTerminationFunction, "judge", nil, func() error {
			_, err := env.ExecuteActivity(acts.JudgeTermination, wire.JudgeInput{Function: "judge"})
			return err
		}},
	}
	for _, c := range cases {
		err := c.run()
		app := appError(t, err)
		assert.Equal(t, wire.ErrTypeUnknownFunction, app.Type(), c.kind)
		assert.True(t, app.NonRetryable(), c.kind)
		assert.Contains(t, app.Message(), `"`+c.name+`"`)
		assert.Contains(t, app.Message(), "(worker blue-7)")
		var d wire.UnknownAgentDetails
		require.NoError(t, app.Details(&d), c.kind)
		assert.Equal(t, wire.UnknownAgentDetails{Worker: "blue-7", Kind: c.kind, Unknown: []string{c.name}, Known: c.known,
			Wait: wire.Duration(wire.DefaultUnknownAgentWait)}, d, c.kind)
	}
}

// countingTemporal is a Temporal client that answers DescribeTaskQueue with one
// poller, counting the calls.
type countingTemporal struct {
	client.Client
	calls atomic.Int32
}

func (c *countingTemporal) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	c.calls.Add(1)
	return &workflowservice.DescribeTaskQueueResponse{Pollers: []*taskqueuepb.PollerInfo{
		{Identity: "green-1", LastAccessTime: timestamppb.Now()}}}, nil
}

// The UnknownAgent answers of many blocked calls (a rolling deploy) name the queue's
// pollers from one look at the task queue a second, not one look each.
func TestUnknownAnswersShareOneLookAtThePollers(t *testing.T) {
	reg := agents.NewRegistry(agents.Config{})
	tc := &countingTemporal{}
	acts, err := activities.New(activities.Config{Registry: reg, WorkerIdentity: "blue-7",
		Transfer: activities.TransferConfig{Temporal: tc, Namespace: "default-test-namespace"},
	}) // the test environment's
	require.NoError(t, err)
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(acts.SelectSpeaker)
	for range 3 {
		_, err := env.ExecuteActivity(acts.SelectSpeaker, wire.SelectInput{Function: "pick"})
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%v", err)
		var d wire.UnknownAgentDetails
		require.NoError(t, app.Details(&d))
		assert.Equal(t, []string{"green-1"}, d.Pollers)
	}
	assert.Equal(t, int32(1), tc.calls.Load())
}
