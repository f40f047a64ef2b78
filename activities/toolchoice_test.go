package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// The last call of a reply past its maxToolRounds asks for an answer without tools:
// tool_choice "none", with the tools still listed (the history holds their calls); a
// request without tools carries no tool_choice (OpenAI refuses one).
func TestToolChoiceNoneReachesTheModel(t *testing.T) {
	srv, err := offline.Start(offline.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	cfg, err := agents.ParseConfig(fmt.Appendf(nil, `
endpoints:
  default: {baseURL: %q, apiKeyEnv: TEST_KEY}
tools:
  lookup: {description: Look up}
agents:
  - {id: clerk, name: Clerk, model: m, tools: [lookup]}
  - {id: rclerk, name: RClerk, kind: responses, model: m, tools: [lookup]}
  - {id: helper, name: Helper, model: m}
`, srv.URL()))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(string) string { return "sk-test" },
		Functions: activities.FunctionConfig{Tools: map[string]activities.ToolFunc{"lookup": func(context.Context, json.RawMessage) (string, error) {
			return "", nil
		}}},
	})
	require.NoError(t, err)
	history := []chat.Message{
		chat.TextMessage("m1", chat.RoleUser, "", "look it up"),
		{MessageID: "m1/1", Role: chat.RoleAssistant, Contents: []chat.Content{
			{Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{}`}}},
		{MessageID: "m1/2", Role: chat.RoleTool, Contents: []chat.Content{
			{Type: chat.ContentFunctionResult, CallID: "c1", Error: "not run: the agent reached its limit of 1 tool rounds in one reply"}}},
	}
	for _, agent := range []string{"clerk", "helper"} {
		_, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: agent, History: history, ReplyID: "m1/3",
			ToolChoice: wire.ToolChoiceNone})
		require.NoError(t, err, agent)
	}
	req, ok := srv.LastRequest("clerk")
	require.True(t, ok)
	assert.Equal(t, "none", req.ToolChoice)
	assert.Len(t, req.Tools, 1)
	req, ok = srv.LastRequest("helper")
	require.True(t, ok)
	assert.Nil(t, req.ToolChoice, "no tools, no tool_choice")

	_, err, _ = invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "rclerk", History: history, ReplyID: "m1/3",
		ToolChoice: wire.ToolChoiceNone})
	require.NoError(t, err)
	rreq, ok := srv.LastResponseRequest("rclerk")
	require.True(t, ok)
	assert.Equal(t, "none", rreq.ToolChoice)
}
