package activities_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// A reply whose tool calls pass ReplyInlineLimit cannot go to the message store (the
// workflow must read its calls to run them): the call fails, not retried, naming the
// limit. Calls under it come back inline.
func TestReplyWithToolCallsOverTheInlineLimitIsRefused(t *testing.T) {
	args := func(n int) string { return `{"q":"` + strings.Repeat("a", n) + `"}` }
	acts := scripted(t, "helper", "Helper",
		offline.Reply{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup", Arguments: args(1000)}}},
		offline.Reply{ToolCalls: []offline.ToolCall{{ID: "c2", Name: "lookup", Arguments: args(activities.ReplyInlineLimit)}}})

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
