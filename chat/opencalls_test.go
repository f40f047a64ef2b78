package chat_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
)

func TestCheckOpenCalls(t *testing.T) {
	user := chat.Message{MessageID: "m1", Role: chat.RoleUser, Contents: []chat.Content{chat.Text("refund it")}}
	calls := chat.Message{MessageID: "m1/1", Role: chat.RoleAssistant, AgentID: "clerk", Contents: []chat.Content{
		{Type: chat.ContentFunctionCall, CallID: "c1", Name: "refund", Arguments: `{}`},
		{Type: chat.ContentFunctionCall, CallID: "c2", Name: "lookup", Arguments: `{}`}}}
	result := func(id string) chat.Message {
		return chat.Message{MessageID: "m1/" + id, Role: chat.RoleTool, Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: id, Result: "ok"}}}
	}
	reply := chat.Message{MessageID: "m1/9", Role: chat.RoleAssistant, AgentID: "clerk", Contents: []chat.Content{chat.Text("done")}}

	open, agent := chat.OpenCallsAtEnd([]chat.Message{user, calls, result("c2")})
	require.Len(t, open, 1)
	assert.Equal(t, "c1", open[0].CallID)
	assert.Equal(t, "clerk", agent)

	err := chat.CheckOpenCalls([]chat.Message{user, calls, result("c2")}, []string{"helper"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tool call(s) ["c1" (refund)] of agent "clerk"`)
	assert.Contains(t, err.Error(), `participants ["helper"]`)

	for name, history := range map[string][]chat.Message{
		"the caller takes part": {user, calls},
		"all answered":          {user, calls, result("c1"), result("c2")},
		"a reply after them":    {user, calls, result("c1"), result("c2"), reply},
		"a user message after":  {user, calls, user},
		"empty":                 nil,
	} {
		participants := []string{"helper"}
		if name == "the caller takes part" {
			participants = append(participants, "clerk")
		}
		assert.NoError(t, chat.CheckOpenCalls(history, participants), name)
	}
}
