package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Fault 10.S4 of the system test, as it still showed after the drain-in-order fix: a
// UserMessage signal and then a SendMessage that reach a continued run with its first
// workflow task. The SDK runs the update at handler registration, before the run has
// started; the signals waiting in their channel were then left for the main loop, so
// the later Send was answered first. Turns run in arrival order.
func TestSignalThenSendInTheFirstTaskOfAContinuedRunKeepTheirOrder(t *testing.T) {
	_, next := continuedChat(t)

	e2 := newEnv(t)
	e2.at(0, func() { e2.env.SignalWorkflow(wire.UserMessageSignal, msg("s2", "posted first")) })
	later := e2.send(0, msg("u3", "sent second"))
	var hist []chat.Message
	e2.at(time.Minute, func() { hist = e2.history() })
	e2.run(next, 2*time.Minute)
	require.NoError(t, later.rejected)
	require.NoError(t, later.err)
	var users []string
	for _, m := range hist {
		if m.Role == chat.RoleUser {
			users = append(users, m.MessageID)
		}
	}
	assert.Equal(t, []string{"m1", "s2", "u3"}, users, "arrival order")
}

// An Export that reaches a continued run with its first workflow task (a client's
// update admitted while the run it was sent to continued as new is delivered to the
// next) runs: the carry is taken over before the handlers are registered, so the
// chat is there to export. It was refused as "has not started" (found by the
// integration test of a chat with a small run budget).
func TestExportInTheFirstTaskOfAContinuedRun(t *testing.T) {
	_, next := continuedChat(t)

	e2 := newEnv(t)
	var snap wire.Snapshot
	e2.env.RegisterActivityWithOptions(func(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
		snap = e2.snapshot()
		return wire.ExportResult{Digest: "sha256:x"}, nil
	}, activity.RegisterOptions{Name: wire.ExportChatActivity})
	exported := &importOutcome{}
	e2.at(0, func() {
		e2.env.UpdateWorkflow(wire.ExportUpdate, "export", &importCallbacks{exported}, wire.ExportInput{})
	})
	e2.run(next, time.Minute)
	require.True(t, exported.done)
	require.NoError(t, exported.err)
	assert.Equal(t, 2, snap.HistoryLength, "the export read the carried chat")
}

// AddParticipants delivered with a continued run's first task, likewise: it was
// refused as "chat is starting".
func TestAddParticipantsInTheFirstTaskOfAContinuedRun(t *testing.T) {
	_, next := continuedChat(t)

	e2 := newEnv(t)
	added := &importOutcome{}
	e2.at(0, func() {
		e2.env.UpdateWorkflow(wire.AddParticipantsUpdate, "add", &importCallbacks{added}, wire.AddParticipantsInput{AgentIDs: []string{"trimmer"}})
	})
	var after wire.StateResult
	e2.at(time.Second, func() { after = e2.state() })
	e2.run(next, time.Minute)
	require.True(t, added.done)
	require.NoError(t, added.err)
	var ids []string
	for _, p := range after.Participants {
		ids = append(ids, p.ID)
	}
	assert.Equal(t, []string{"helper", "trimmer"}, ids)
}
