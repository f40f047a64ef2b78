package activities_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// A reply whose tool calls pass ReplyInlineLimit cannot go to the message store (the
// workflow must read its calls to run them): the call fails, not retried, naming the
// limit. Calls under it come back inline.
func TestReplyWithToolCallsOverTheInlineLimitIsRefused(t *testing.T) {
	args := func(n int) string { return `{"q":"` + strings.Repeat("a", n) + `"}` }
	srv, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup", Arguments: args(1000)}}},
		{ToolCalls: []offline.ToolCall{{ID: "c2", Name: "lookup", Arguments: args(activities.ReplyInlineLimit)}}},
	}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	cfg, err := agents.ParseConfig(fmt.Appendf(nil, `
endpoints:
  default: {baseURL: %q, apiKeyEnv: TEST_KEY, stream: false}
agents:
  - {id: helper, name: Helper, model: test-model}
`, srv.URL()))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(string) string { return "sk-test" }})
	require.NoError(t, err)

	in := wire.InvokeInput{ChatID: "c", AgentID: "helper", TurnID: "m1", ReplyID: "m1/1", History: seed[:1]}
	res, err, _ := invoke(t, acts, in)
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	assert.Equal(t, "c1", res.Contents[0].CallID)

	// Script positions follow the conversation: with one helper reply in it (seed[:3]),
	// the script's second entry answers.
	in.TurnID, in.ReplyID, in.History = "m2", "m2/1", seed[:3]
	_, err, _ = invoke(t, acts, in)
	require.Error(t, err)
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeModelRejected, app.Type())
	assert.Contains(t, app.Message(), fmt.Sprint(activities.ReplyInlineLimit))
}
