package integration_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
)

// toolEdgeAgents has a clerk that may take one tool round per reply.
const toolEdgeAgents = `
tools:
  lookup_order: {}
  refund: {approval: true}
agents:
  - {id: clerk, name: Clerk, model: offline, tools: [lookup_order, refund], maxToolRounds: 1}
`

// captureToolEdges: the edges of tool rounds: an approved refund whose resumed turn
// then fails (it keeps the result and fails once), a reply that reaches its tool-round
// limit (one more call with tool_choice none), and a turn sent again after it failed,
// whose call id had run (the result is reused).
func captureToolEdges(t *testing.T, name string) {
	lookup := func(id, order string) offline.Reply {
		return offline.Reply{ToolCalls: []offline.ToolCall{{ID: id, Name: "lookup_order", Arguments: `{"order":"` + order + `"}`}}}
	}
	refused := offline.Reply{Status: 400, Message: "Invalid request"}
	h := replayHarness(t, name, testenv.Options{Config: toolEdgeAgents, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "refund", Arguments: `{"order":"1002"}`}}}, refused,
			lookup("c2", "1001"), lookup("c3", "1002"), {Text: "Enough lookups."},
			lookup("c4", "1003"), refused, lookup("c4", "1003"), {Text: "Found it."},
		}}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{Participants: []string{"clerk"}})
	res := send(t, h, id, "m1", "Refund my kettle")
	require.Len(t, res.AwaitingApproval, 1)
	_, err := h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "c1", Approved: true})
	require.ErrorContains(t, err, "Invalid request")
	res = send(t, h, id, "m2", "Look up my orders")
	// Past the limit the calls are answered "not run", and the offline model answers from those results.
	require.Contains(t, res.Messages[len(res.Messages)-1].Text(), "the agent reached its limit of 1 tool rounds")
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m3", Text: "And order 1003?"})
	require.ErrorContains(t, err, "Invalid request")
	res = send(t, h, id, "m3", "And order 1003?")
	require.Contains(t, res.Messages[len(res.Messages)-1].Text(), "the agent reached its limit of 1 tool rounds") // the call asked again is not run
	saveRun(t, h, id, "", name, atRest)
}
