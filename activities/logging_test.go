package activities_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/wire"
)

// loggingWorkflow logs once outside a turn, once inside one, and runs an activity that
// logs, given an InvokeInput.
func loggingWorkflow(ctx workflow.Context) error {
	workflow.GetLogger(ctx).Info("outside")
	tctx := workflow.WithValue(workflow.WithValue(ctx, wire.LogTurnKey, "m7"), wire.LogAgentKey, "writer")
	workflow.GetLogger(tctx).Info("inside")
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(actx, "logs", wire.InvokeInput{ChatID: "c1", AgentID: "writer", TurnID: "m7"}).Get(ctx, nil)
}

func logsActivity(ctx context.Context, _ wire.InvokeInput) error {
	activity.GetLogger(ctx).Info("activity line")
	return nil
}

// Lines logged by the workflow and by an activity carry the chat's keys.
func TestLogInterceptorAddsTheChatKeys(t *testing.T) {
	var buf bytes.Buffer
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{activities.LogInterceptor()}})
	env.RegisterWorkflow(loggingWorkflow)
	env.RegisterActivityWithOptions(logsActivity, activity.RegisterOptions{Name: "logs"})
	env.ExecuteWorkflow(loggingWorkflow)
	require.NoError(t, env.GetWorkflowError())

	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			lines[m["msg"].(string)] = m
		}
	}
	for _, msg := range []string{"outside", "inside", "activity line"} {
		require.Contains(t, lines, msg, "%s", buf.String())
		assert.NotEmpty(t, lines[msg]["chatId"], msg)
		assert.NotEmpty(t, lines[msg]["runId"], msg)
	}
	assert.NotContains(t, lines["outside"], "messageId")
	for _, msg := range []string{"inside", "activity line"} {
		assert.Equal(t, "m7", lines[msg]["messageId"], msg)
		assert.Equal(t, "writer", lines[msg]["agentId"], msg)
	}
}
