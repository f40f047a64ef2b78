package workflows_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// The results of one model reply's parallel calls are one tool message: together they
// stay under ToolResultLimit. At the limit all are kept; one byte over, the largest is
// replaced by an error result that names the limit, and the turn goes on.
func TestToolResultsOfOneReplyAtTheLimitAndJustOver(t *testing.T) {
	for _, over := range []int{0, 1} {
		t.Run("over="+strconv.Itoa(over), func(t *testing.T) {
			e := newEnv(t)
			e.env.RegisterActivityWithOptions(func(_ context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
				n, err := strconv.Atoi(in.Arguments[len(`{"size":`) : len(in.Arguments)-1])
				return wire.CallToolResult{Result: strings.Repeat("x", n)}, err
			}, activity.RegisterOptions{Name: wire.CallToolActivity})
			half := wire.ToolResultLimit / 2
			sizes := []int{half, wire.ToolResultLimit - half + over}
			e.model.contents["clerk#1"] = []chat.Content{
				call("c1", "lookup", `{"size":`+strconv.Itoa(sizes[0])+`}`),
				call("c2", "lookup", `{"size":`+strconv.Itoa(sizes[1])+`}`)}
			e.model.replies["clerk#2"] = "read them"
			o := e.send(time.Second, msg("m1", "look both up"))
			var tool wire.HistoryResult // the tool message alone: it is about a History page
			e.at(time.Minute, func() {
				tool = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: 2, Limit: 1})
			})
			e.run(clerk(), 2*time.Minute)

			require.NoError(t, o.err)
			require.Len(t, o.result.Messages, 3)
			assert.Equal(t, "read them", o.result.Messages[2].Text())
			require.Len(t, tool.Messages, 1)
			assert.Equal(t, 4, tool.Total)
			res := resultsOf(tool.Messages[0])
			if over == 0 {
				assert.Len(t, res["c1"].Result, sizes[0])
				assert.Len(t, res["c2"].Result, sizes[1])
				return
			}
			assert.Len(t, res["c1"].Result, sizes[0], "the smaller result is kept")
			assert.Empty(t, res["c2"].Result)
			assert.Contains(t, res["c2"].Error, "ToolResultLimit")
			assert.Contains(t, res["c2"].Error, strconv.Itoa(wire.ToolResultLimit+1))
			assert.LessOrEqual(t, wire.MessageBytes(tool.Messages[0]), wire.ToolResultLimit+1024)
		})
	}
}
