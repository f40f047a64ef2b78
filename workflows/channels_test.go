package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// A service-thread agent is sent only what its service has not seen: after its first
// call, the messages after its watermark; the new state goes to its channel.
func TestServiceThreadGetsOnlyUnseenMessages(t *testing.T) {
	e := newEnv(t)
	in := wire.AgentChatInput{Participants: []string{"writer", "responder"}}
	e.send(time.Second, msg("m1", "first"))
	e.send(2*time.Second, msg("m2", "second"))
	var snap wire.Snapshot
	e.at(3*time.Second, func() { snap = e.snapshot() })
	e.run(in, 4*time.Second)

	var responder []wire.InvokeInput
	for _, c := range e.model.calls {
		if c.AgentID == "responder" {
			responder = append(responder, c)
		}
	}
	require.Len(t, responder, 2)
	assert.Equal(t, []string{"m1", "m1/1"}, ids(responder[0].History), "a new thread gets everything")
	assert.Equal(t, []string{"m2", "m2/1"}, ids(responder[1].History), "then only what it has not seen: never twice, never skipped")
	assert.JSONEq(t, `{"previousResponseId":"resp_1","syncedThrough":"m1/2"}`, string(responder[1].ChannelState))
	assert.JSONEq(t, `{"previousResponseId":"resp_2","syncedThrough":"m2/2"}`, string(channelState(t, snap, wire.ChannelResponsesThread)))
}

// channelState returns the state of the snapshot's one channel of type typ, failing
// the test when there is none, so an assertion on it cannot pass vacuously.
func channelState(t *testing.T, snap wire.Snapshot, typ string) json.RawMessage {
	t.Helper()
	for _, c := range snap.Channels {
		if c.ChannelType == typ {
			return c.ChannelState
		}
	}
	require.Failf(t, "no channel", "the snapshot has no %s channel: %+v", typ, snap.Channels)
	return nil
}

// A failed turn takes a service thread's watermark back too.
func TestFailedTurnRestoresTheServiceThreadState(t *testing.T) {
	e := newEnv(t)
	e.model.errs["writer#2"] = temporal.NewNonRetryableApplicationError("boom", wire.ErrTypeModelRejected, nil)
	in := wire.AgentChatInput{Participants: []string{"responder", "writer"}}
	e.send(time.Second, msg("m1", "first"))
	bad := e.send(2*time.Second, msg("m2", "second"))
	var snap wire.Snapshot
	e.at(3*time.Second, func() { snap = e.snapshot() })
	e.run(in, 4*time.Second)
	require.Error(t, bad.err)
	assert.JSONEq(t, `{"previousResponseId":"resp_1","syncedThrough":"m1/1"}`, string(channelState(t, snap, wire.ChannelResponsesThread)),
		"the rolled-back turn's response is an unused branch")
}

// A summarizing reducer folds older messages into a summary, kept in the channel's
// state; the model then gets the summary and the recent messages.
func TestSummarizingReducerKeepsItsSummaryInTheChannel(t *testing.T) {
	e := newEnv(t)
	var summarized []wire.SummarizeInput
	e.env.RegisterActivityWithOptions(func(_ context.Context, in wire.SummarizeInput) (wire.SummarizeResult, error) {
		summarized = append(summarized, in)
		return wire.SummarizeResult{Summary: fmt.Sprintf("summary %d of %d messages", len(summarized), len(in.History.History))}, nil
	}, activity.RegisterOptions{Name: wire.SummarizeActivity})
	for i := 1; i <= 4; i++ {
		e.send(time.Duration(i)*time.Second, msg(fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i)))
	}
	var snap wire.Snapshot
	e.at(5*time.Second, func() { snap = e.snapshot() })
	e.run(wire.AgentChatInput{Participants: []string{"summer"}}, 6*time.Second)

	require.NotEmpty(t, summarized)
	last := e.model.calls[len(e.model.calls)-1].History
	require.NotEmpty(t, last)
	assert.Equal(t, chat.RoleSystem, last[0].Role)
	assert.Contains(t, last[0].Text(), strategies.SummaryPrefix+"summary")
	assert.LessOrEqual(t, len(last), 5, "the summary and at most maxMessages recent messages")
	var st strategies.SummaryState
	require.NoError(t, json.Unmarshal(snap.Channels[0].ChannelState, &st))
	assert.Contains(t, st.Summary, "summary")
	assert.NotEmpty(t, st.SummarizedThrough)
}
