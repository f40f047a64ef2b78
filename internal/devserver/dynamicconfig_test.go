package devserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Wire names of the small workflow these tests run.
const (
	testTaskQueue     = "devserver-test"
	testUpdateName    = "Send"
	testReleaseSignal = "Release"
)

// testTurn is the update's input: text to upper-case, optionally held until
// the Release signal.
type testTurn struct {
	Text string `json:"text"`
	Hold bool   `json:"hold"`
}

// upperActivity stands in for a model call.
func upperActivity(_ context.Context, s string) (string, error) { return strings.ToUpper(s), nil }

// turnsWorkflow answers turns updates through an activity and ends after
// turns of them.
func turnsWorkflow(ctx workflow.Context, turns int) (int, error) {
	done, released := 0, false
	release := workflow.GetSignalChannel(ctx, testReleaseSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		release.Receive(ctx, nil)
		released = true
	})
	err := workflow.SetUpdateHandler(ctx, testUpdateName, func(ctx workflow.Context, in testTurn) (string, error) {
		if in.Hold {
			if err := workflow.Await(ctx, func() bool { return released }); err != nil {
				return "", err
			}
		}
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
		var out string
		err := workflow.ExecuteActivity(ctx, upperActivity, in.Text).Get(ctx, &out)
		done++
		return out, err
	})
	if err != nil {
		return 0, err
	}
	err = workflow.Await(ctx, func() bool { return done >= turns && workflow.AllHandlersFinished(ctx) })
	return done, err
}

// startWorker runs a worker for turnsWorkflow on the server until the test ends.
func startWorker(t *testing.T, s *Server) client.Client {
	t.Helper()
	c, err := client.DialContext(testContext(t), s.ClientOptions(DefaultNamespace))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	w := worker.New(c, testTaskQueue, worker.Options{})
	w.RegisterWorkflow(turnsWorkflow)
	w.RegisterActivity(upperActivity)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return c
}

func startOptions() client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       "chat-" + uuid.NewString(),
		TaskQueue:                testTaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING, // required by Update-With-Start
		WorkflowExecutionTimeout: time.Minute,
	}
}

// TestDefaultDynamicConfigAccepted runs the features the defaults enable
// (Update-With-Start, updates waited on at the accepted stage, activities)
// and checks that the server read every value it used without complaint.
func TestDefaultDynamicConfigAccepted(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "server.log")
	s := startServer(t, Options{Address: "127.0.0.1:0", UIPort: Headless, LogFile: logFile, LogLevel: "info"})
	c := startWorker(t, s)
	ctx := testContext(t)

	opts := startOptions()
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: c.NewWithStartWorkflowOperation(opts, turnsWorkflow, 2),
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: testUpdateName, Args: []any{testTurn{Text: "hello"}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	require.NoError(t, err, "Update-With-Start")
	var got string
	require.NoError(t, h.Get(ctx, &got))
	assert.Equal(t, "HELLO", got)

	h, err = c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: opts.ID, UpdateName: testUpdateName, Args: []any{testTurn{Text: "again"}},
		WaitForStage: client.WorkflowUpdateStageAccepted,
	})
	require.NoError(t, err, "update waited on at the accepted stage")
	require.NoError(t, h.Get(ctx, &got))
	assert.Equal(t, "AGAIN", got)

	var turns int
	require.NoError(t, c.GetWorkflow(ctx, opts.ID, "").Get(ctx, &turns))
	assert.Equal(t, 2, turns)

	require.NoError(t, s.Stop())
	requireNoConversionWarnings(t, logFile)
}

// TestDynamicConfigReachesServer proves that Options.DynamicConfig values are
// in force: with at most one in-flight update per workflow, a second update
// while the first is held is refused with resource-exhausted.
func TestDynamicConfigReachesServer(t *testing.T) {
	t.Parallel()
	s := startServer(t, Options{
		Address: "127.0.0.1:0", UIPort: Headless,
		DynamicConfig: map[string]string{"history.maxInFlightUpdates": "1"},
	})
	c := startWorker(t, s)
	ctx := testContext(t)
	opts := startOptions()
	held, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: c.NewWithStartWorkflowOperation(opts, turnsWorkflow, 1),
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: testUpdateName, Args: []any{testTurn{Text: "held", Hold: true}},
			WaitForStage: client.WorkflowUpdateStageAccepted,
		},
	})
	require.NoError(t, err)

	// The SDK retries resource-exhausted until its deadline, so ask the
	// server directly, without the SDK's retries.
	err = rawUpdate(ctx, t, s.Address, opts.ID, testTurn{Text: "second"})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "second in-flight update must be refused, got %v", err)

	require.NoError(t, c.SignalWorkflow(ctx, opts.ID, "", testReleaseSignal, nil))
	var got string
	require.NoError(t, held.Get(ctx, &got))
	assert.Equal(t, "HELD", got)
}

// rawUpdate sends one UpdateWorkflowExecution over a plain gRPC connection
// (no SDK retries) and returns its error.
func rawUpdate(ctx context.Context, t *testing.T, address, workflowID string, in testTurn) error {
	t.Helper()
	conn, err := grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	args, err := converter.GetDefaultDataConverter().ToPayloads(in)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = workflowservice.NewWorkflowServiceClient(conn).UpdateWorkflowExecution(ctx, &workflowservice.UpdateWorkflowExecutionRequest{
		Namespace:         DefaultNamespace,
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: workflowID},
		WaitPolicy:        &updatepb.WaitPolicy{LifecycleStage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED},
		Request: &updatepb.Request{
			Meta:  &updatepb.Meta{UpdateId: uuid.NewString(), Identity: "devserver-test"},
			Input: &updatepb.Input{Name: testUpdateName, Args: args},
		},
	})
	return err
}
