package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// startTarget runs the StartMigrationTarget activity of a worker of h's cluster against
// the dev server, as a migration of document doc (exported with digest) to chat to
// in h's namespace would, expecting the target to hold expected.
func startTarget(t *testing.T, h *testenv.Harness, doc []byte, to, expected string) error {
	t.Helper()
	acts, err := activities.New(activities.Config{Registry: h.Registry,
		Models:   activities.ModelConfig{BaseURLOverride: h.Model.URL()},
		Transfer: activities.TransferConfig{Temporal: h.Temporal, Namespace: h.Namespace},
	})
	require.NoError(t, err)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.StartMigrationTarget, activity.RegisterOptions{Name: wire.StartTargetActivity})
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore: &wire.DocumentSource{Document: doc}}
	_, err = env.ExecuteActivity(wire.StartTargetActivity, wire.StartTargetInput{
		Target:    wire.ChatLocation{Namespace: h.Namespace, ChatID: to},
		TaskQueue: h.TaskQueue, Input: in, ExpectedDigest: expected})
	return err
}

// A target the migration started that does not hold the exported chat (the class of
// 10.S1: the target resumed a stale carry instead of restoring the document) is not
// left running: the migration is abandoned with MigrationFailed and the chat lives only
// at its source. A target id that another chat already holds is that chat's: it is
// refused (ChatNotEmpty) and keeps running.
func TestAbandonedMigrationLeavesNoTargetRunning(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	src := testenv.ChatID(t)
	seedThread(t, h, src)
	doc, digest, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)

	t.Run("started by the migration", func(t *testing.T) {
		to := testenv.ChatID(t)
		err := startTarget(t, h, doc, to, digest+"-not-what-the-target-holds")
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app)
		assert.Equal(t, wire.ErrTypeMigrationFailed, app.Type(), "%v", err)
		assert.True(t, app.NonRetryable(), "abandoned, not retried")
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, workflowStatus(t, h, to), "the target it started is not left running")
	})

	t.Run("another chat at the target id", func(t *testing.T) {
		other := testenv.ChatID(t)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: other, Participants: []string{"helper"}})
		require.NoError(t, err)
		err = startTarget(t, h, doc, other, digest)
		require.Equal(t, wire.ErrTypeNotEmpty, appType(err), "%v", err)
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, other), "the other chat is left alone")
		send(t, h, other, "m1", "still here?")
	})
}
