package agents

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat/wire"
)

func TestLostThreadStateIsANewChannelThatRecordsTheLoss(t *testing.T) {
	assert.JSONEq(t, `{"lostResponseId":"resp_1"}`, string(wire.LostThreadState(wire.ChannelResponsesThread,
		json.RawMessage(`{"previousResponseId":"resp_1","syncedThrough":"m1/1","lostResponseId":"resp_0"}`))))
	assert.JSONEq(t, `{"lostThreadId":"thread_1"}`, string(wire.LostThreadState(wire.ChannelAssistantThread,
		json.RawMessage(`{"threadId":"thread_1","syncedThrough":"m1/1"}`))))
	assert.JSONEq(t, `{}`, string(wire.LostThreadState("chat_history", json.RawMessage(`{"summary":"x"}`))))
	w, err := wire.SyncedThrough(wire.LostThreadState(wire.ChannelResponsesThread, json.RawMessage(`{"syncedThrough":"m1/1"}`)))
	assert.NoError(t, err)
	assert.Empty(t, w, "the next call sends the whole history")
}
