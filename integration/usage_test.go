package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// usageConfig has an agent of each way a reply is made: streamed and whole Chat
// Completions, Responses and an Assistants run, and a price for the offline model.
const usageConfig = `
endpoints:
  default: {baseURL: "http://unused/v1"}
  whole: {baseURL: "http://unused/v1", stream: false}
prices:
  offline: {input: 2, output: 8, cachedInput: 1}
agents:
  - {id: streamer, name: Streamer, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: plain, name: Plain, model: offline, endpoint: whole, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: analyst, name: Analyst, kind: responses, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
  - {id: archivist, name: Archivist, kind: assistant, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
`

// Every agent reply records its usage in its message, and State's totals per agent and
// per chat are the sums of what the offline model reported, streamed or not, for each
// kind; the cost is the estimate at the config's price.
func TestUsageTotalsAreWhatTheModelReported(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: usageConfig})
	for _, agent := range []string{"streamer", "plain", "analyst", "archivist"} {
		t.Run(agent, func(t *testing.T) {
			id := testenv.ChatID(t)
			_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{agent}})
			require.NoError(t, err)
			var want wire.UsageTotal
			for _, turn := range seedTurns {
				res := send(t, h, id, turn.id, turn.text)
				require.Len(t, res.Messages, 1)
				u := res.Messages[0].Usage
				require.NotNil(t, u, "the reply records its usage")
				assert.Equal(t, "offline", u.Model)
				assert.Positive(t, u.InputTokens)
				assert.Positive(t, u.OutputTokens)
				want = want.Add(*u, 0)
			}
			got := h.Model.ReportedUsage(agent)
			assert.Equal(t, got.PromptTokens, want.InputTokens, "input tokens: the sum the model reported")
			assert.Equal(t, got.CompletionTokens, want.OutputTokens, "output tokens: the sum the model reported")
			st, err := h.Client.State(ctxFor(t), id)
			require.NoError(t, err)
			require.NotNil(t, st.Usage)
			assert.Equal(t, len(seedTurns), st.Usage.Calls)
			assert.Equal(t, want.InputTokens, st.Usage.InputTokens)
			assert.Equal(t, want.OutputTokens, st.Usage.OutputTokens)
			assert.InDelta(t, (2*float64(want.InputTokens)+8*float64(want.OutputTokens))/1e6, st.Usage.Cost, 1e-12)
			require.Len(t, st.UsageByAgent, 1)
			assert.Equal(t, agent, st.UsageByAgent[0].AgentID)
			assert.Equal(t, st.Usage.InputTokens, st.UsageByAgent[0].InputTokens)

			hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
			require.NoError(t, err)
			for _, m := range hist.Messages {
				assert.Equal(t, m.Role == chat.RoleAssistant, m.Usage != nil, "message %s", m.MessageID)
			}
		})
	}
}
