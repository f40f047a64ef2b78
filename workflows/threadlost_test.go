package workflows_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/wire"
)

// Fault 12: the Responses API no longer knows the chain (404 for previous_response_id).
// The call is made again, once, as a new chain with the whole primary history, the lost
// response recorded in the channel state; the turn and the later ones go on.
func TestLostResponseChainIsResentFromThePrimaryHistory(t *testing.T) {
	e := newEnv(t)
	e.model.errs["responder#2"] = temporal.NewNonRetryableApplicationError(
		`responses_thread: previous response "resp_1": the service no longer knows this response`, wire.ErrTypeThreadLost, nil)
	first := e.send(time.Second, msg("m1", "Hello"))
	second := e.send(2*time.Second, msg("m2", "Still there?"))
	third := e.send(3*time.Second, msg("m3", "And now?"))
	e.run(wire.AgentChatInput{Participants: []string{"responder"}}, 4*time.Second)

	require.NoError(t, first.err)
	require.NoError(t, second.err, "the lost chain does not fail the turn")
	require.NoError(t, third.err)
	require.Equal(t, 4, e.model.count(), "m1, m2 refused, m2 again as a new chain, m3")
	resent := e.model.calls[2]
	var st wire.ResponsesThreadState
	require.NoError(t, json.Unmarshal(resent.ChannelState, &st))
	assert.Equal(t, wire.ResponsesThreadState{LostResponseID: "resp_1"}, st, "a new chain that records the lost one")
	assert.Equal(t, []string{"m1", "m1/1", "m2"}, ids(resent.History), "the whole primary history")
	assert.Equal(t, "m2/1", e.model.calls[1].ReplyID)
	assert.Equal(t, "m2/1", resent.ReplyID, "the call made again keeps its reply's id")
	assert.Equal(t, "m2/1", second.result.Messages[0].MessageID)
	assert.Equal(t, []string{"m3"}, ids(e.model.calls[3].History), "then only what is new again")
	assert.Contains(t, string(e.model.calls[3].ChannelState), `"previousResponseId":"resp_3"`)
}

// A chain lost again right after it was dropped is not retried a second time: the
// turn fails (bounded, once per call) and the chat goes on.
func TestLostResponseChainIsResentOncePerCall(t *testing.T) {
	e := newEnv(t)
	lost := temporal.NewNonRetryableApplicationError("lost", wire.ErrTypeThreadLost, nil)
	e.model.errs["responder#2"], e.model.errs["responder#3"] = lost, lost
	e.send(time.Second, msg("m1", "Hello"))
	second := e.send(2*time.Second, msg("m2", "Still there?"))
	third := e.send(3*time.Second, msg("m3", "And now?"))
	e.run(wire.AgentChatInput{Participants: []string{"responder"}}, 4*time.Second)

	require.Error(t, second.err)
	assert.Contains(t, second.err.Error(), "lost")
	require.NoError(t, third.err)
	assert.Equal(t, 4, e.model.count(), "m1; m2 twice, then it failed; m3")
}
