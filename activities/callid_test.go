package activities_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// A call id longer than OpenAI's 40 bytes (from a document of another provider, or a
// renamed repeat that holds a long messageId) travels to the model under a short id of
// its own, the same in the call and its result, so the request is valid; one of 40
// travels as it is.
func TestLongCallIDsTravelUnderShortOnes(t *testing.T) {
	for _, n := range []int{offline.MaxCallIDLen, offline.MaxCallIDLen + 1} {
		acts, srv := setup(t, false)
		id := strings.Repeat("c", n)
		history := []chat.Message{
			chat.TextMessage("m1", chat.RoleUser, "", "look it up"),
			{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Helper", AgentID: "helper",
				Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: id, Name: "lookup", Arguments: `{}`}}},
			{MessageID: "m1/2", Role: chat.RoleTool, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: id, Result: "found"}}},
		}
		_, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "helper", TurnID: "m1", ReplyID: "m1/3", History: history})
		require.NoError(t, err, "a call id of %d bytes", n)
		assert.Empty(t, srv.Violations())
		req, ok := srv.LastRequest("helper")
		require.True(t, ok)
		sent := req.Messages[2].ToolCalls[0].ID
		assert.Equal(t, sent, req.Messages[3].ToolCallID, "call and result under one id")
		assert.LessOrEqual(t, len(sent), offline.MaxCallIDLen)
		if n <= offline.MaxCallIDLen {
			assert.Equal(t, id, sent)
		} else {
			assert.NotEqual(t, id, sent)
		}
	}
}
