package integration_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// Stopping a turn while its reply streams, on the dev server: the model call is
// cancelled, the partial reply stays
// marked incomplete with the text streamed so far, the stream ends with
// turnCancelled, and the chat answers its next turn.
func TestStopWhileStreaming(t *testing.T) {
	h, id, long := longReplyChat(t)
	var events []agentchat.Event
	deltas := 0
	stopped := make(chan error, 1)
	for ev, err := range h.Client.SendStream(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "t1", Text: "Tell me a long story"}) {
		require.NoError(t, err)
		events = append(events, ev)
		if ev.Type == wire.EventTextDelta {
			if deltas++; deltas == 3 {
				go func() {
					_, err := h.Client.CancelTurn(ctxFor(t), id, agentchat.CancelTurnInput{})
					stopped <- err
				}()
			}
		}
	}
	require.NoError(t, <-stopped)
	types := eventTypes(events)
	assert.Equal(t, wire.EventTurnCancelled, types[len(types)-1], "%v", types)
	texts, done := streamedTexts(events)
	require.Len(t, done, 1)
	assert.True(t, done[0].Incomplete)
	assert.Equal(t, texts["t1/1"], done[0].Text(), "the partial reply is the text streamed")
	assert.Less(t, len(done[0].Text()), len(long))
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 2)
	assert.True(t, hist.Messages[1].Incomplete)

	res := send(t, h, id, "t2", "Hello again")
	require.Len(t, res.Messages, 1, "the chat takes the next turn")
	assert.False(t, res.Cancelled)
}

// Stopping a turn while a tool runs: the tool's activity is cancelled (its context
// ends), the call gets a result that says so, no model call follows.
func TestStopWhileAToolRuns(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan error, 1)
	h := testenv.New(t, testenv.Options{Config: `
tools:
  wait: {description: "Wait", heartbeatTimeout: 1s}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [wait]}
`, Tools: map[string]activities.ToolFunc{"wait": func(ctx context.Context, _ json.RawMessage) (string, error) {
		close(started)
		select {
		case <-ctx.Done():
			ended <- ctx.Err()
			return "", ctx.Err()
		case <-time.After(time.Minute):
			ended <- nil
			return "waited", nil
		}
	}}, Model: offline.Options{Scripts: map[string][]offline.Reply{"clerk": {
		{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "wait", Arguments: `{}`}}}, {},
	}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"clerk"}})
	require.NoError(t, err)
	done := sendAsync(t, h.Client, id, "t1", "Wait for it")
	<-started
	_, err = h.Client.CancelTurn(ctxFor(t), id, agentchat.CancelTurnInput{MessageID: "t1"})
	require.NoError(t, err)
	require.NoError(t, <-done)
	select {
	case err := <-ended:
		assert.Error(t, err, "the tool's context was cancelled")
	case <-time.After(30 * time.Second):
		t.Fatal("the tool was not cancelled")
	}
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 3, "the user turn, the call, its result")
	assert.Equal(t, "not run: the turn was stopped", hist.Messages[2].Contents[0].Error)
	assert.Equal(t, 1, h.Model.Requests("clerk"), "no model call after the stop")
}

// A queued turn cancelled by its messageId never runs: its sender gets TurnCancelled,
// the turn ahead of it is answered, and the same messageId may be sent again.
func TestStopAQueuedTurn(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		{Text: "slow", Delay: wire.Duration(3 * time.Second)}, {}, {}}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	first := sendAsync(t, h.Client, id, "t1", "First")
	require.Eventually(t, func() bool { return h.Model.Requests("helper") == 1 }, 30*time.Second, 10*time.Millisecond)
	second := sendAsync(t, h.Client, id, "t2", "Second")
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && len(st.PendingTurns) == 1
	}, 30*time.Second, 10*time.Millisecond)
	res, err := h.Client.CancelTurn(ctxFor(t), id, agentchat.CancelTurnInput{MessageID: "t2"})
	require.NoError(t, err)
	assert.Equal(t, agentchat.CancelTurnResult{MessageID: "t2", Queued: true}, res)
	err = <-second
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeTurnCancelled, appType(err))
	require.NoError(t, <-first)
	assert.Equal(t, 1, h.Model.Requests("helper"), "the cancelled turn never ran")
	again := send(t, h, id, "t2", "Second")
	require.Len(t, again.Messages, 1)
}

// longReplyChat starts a chat whose helper streams a 400-word reply, a word every
// 20 ms, with a 1 s heartbeat timeout so that a stop reaches its model call soon.
func longReplyChat(t *testing.T) (h *testenv.Harness, id, long string) {
	t.Helper()
	long = strings.TrimSpace(strings.Repeat("word ", 400))
	h = testenv.New(t, testenv.Options{Config: `
agents:
  - {id: helper, name: Helper, model: offline, call: {heartbeatTimeout: 1s}}
`, Model: offline.Options{ChunkDelay: 20 * time.Millisecond, Scripts: map[string][]offline.Reply{"helper": {{Text: long}}}}})
	id = testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	return h, id, long
}
