package chatmcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/chatmcp"
	"github.com/agentchat/agentchat/wire"
)

// approve_call's text says when the decision repeated the call's earlier one.
func TestTurnTextSaysARepeatedDecisionChangedNothing(t *testing.T) {
	text := chatmcp.TurnText(agentchat.TurnResult{AlreadyDecided: &wire.Decision{Approved: false, Reason: "too old", By: "Bob"},
		AwaitingApproval: []wire.PendingApproval{{CallID: "c2", Tool: "refund", Arguments: `{}`}}})
	assert.Equal(t, "(the call was already rejected by Bob: too old; nothing changed)\nawaiting approval: call c2: refund({})", text)
	assert.NotContains(t, chatmcp.TurnText(agentchat.TurnResult{}), "already")
}
