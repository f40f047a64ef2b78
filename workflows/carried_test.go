package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// roundTrip takes c over as a continued run does and returns what that run would carry.
func roundTrip(ctx workflow.Context, c wire.Carried) (wire.Carried, error) {
	s := newChatState(ctx, wire.AgentChatInput{Participants: []string{"helper"}, Carry: &c})
	s.resume(ctx, s.in.Carry)
	return *s.carry(), nil
}

// TestACarryTakenOverIsCarriedOnWhole: every field a run carries reaches the next run
// as it came (Runs one more), in the same JSON; nothing is dropped on the way through
// chatState.
func TestACarryTakenOverIsCarriedOnWhole(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	text := func(id string, role chat.Role, s string) chat.Message {
		return chat.Message{MessageID: id, Role: role, CreatedAt: at, Contents: []chat.Content{{Type: chat.ContentText, Text: s}}}
	}
	stub := text("m0", chat.RoleUser, "")
	stub.Contents = nil
	in := wire.Carried{
		Participants: []wire.Participant{{ID: "helper", Name: "Helper", Kind: wire.KindChatCompletion}},
		History:      []chat.Message{stub, text("m0/1", chat.RoleAssistant, "a"), text("m1", chat.RoleUser, "q"), text("m1/1", chat.RoleAssistant, "b")},
		Channels:     []chatstate.Channel{{ChannelKey: "chat_completion", ChannelType: "chat_completion", ChannelState: json.RawMessage(`{"x":1}`)}},
		Selection:    strategies.SelectionState{NextIndex: 1},
		Termination:  strategies.TerminationState{Iterations: 2},
		IsComplete:   true,
		TurnCount:    7, // more than the history shows: the carried count stands
		Attempted:    9,
		Pending:      []chat.Message{text("m2", chat.RoleUser, "next")},
		LastError:    &wire.TurnError{MessageID: "mx", Type: wire.ErrTypeTurnFailed, Message: "no"},
		Restored:     &wire.CarriedRestore{Digest: "sha256:ab", Repairs: []string{"r1"}},
		Store:        "sqlite",
		Runs:         3,
		Decisions:    map[string]wire.Decision{"c1": {Approved: true, By: "ops"}},
		ToolRuns:     []wire.ToolRun{{CallID: "c0", Name: "lookup", Arguments: "{}", Result: chat.Content{Type: chat.ContentFunctionResult, CallID: "c0", Result: "ok"}}},
		CallIDs:      wire.CallIDFilter(nil).Add("c9"),
		Usage:        []wire.UsageTotal{{AgentID: "helper", Calls: 2, InputTokens: 30, OutputTokens: 9, CachedTokens: 4, Cost: 0.5}},
		Stream: &wire.StreamCarry{NextOffset: 8, Items: []wire.StreamItem{{Topic: wire.StreamTopic, Offset: 7,
			Data: wire.EncodedStreamEvent(wire.StreamEvent{Type: wire.EventTurnDone, TurnID: "m1"})}}},
	}
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(roundTrip)
	env.ExecuteWorkflow(roundTrip, in)
	require.NoError(t, env.GetWorkflowError())
	var out wire.Carried
	require.NoError(t, env.GetWorkflowResult(&out))

	want := in
	want.Runs++
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	gotJSON, err := json.Marshal(out)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(gotJSON))
	assert.Equal(t, string(wantJSON), string(gotJSON), "byte for byte")
}
