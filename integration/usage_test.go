package integration_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
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

// A document's usage is kept through an import and written back by the export, and a
// chat's own replies export theirs.
func TestUsageSurvivesImportAndExport(t *testing.T) {
	h := testenv.New(t, testenv.Options{Config: `
agents:
  - {id: assistant, name: Assistant, model: offline, call: {initialInterval: 50ms, maxAttempts: 4}}
`})
	golden, err := os.ReadFile(filepath.Join("..", "chatstate", "testdata", "golden", "v1-usage.json"))
	require.NoError(t, err)
	src, _, err := chatstate.Decode(golden)
	require.NoError(t, err)
	id := testenv.ChatID(t)
	importBytes(t, ctxFor(t), h, id, golden)
	send(t, h, id, "m-4", "And now?")

	b, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	require.Len(t, doc.History, len(src.History)+2)
	for i, m := range src.History {
		assert.Equal(t, m.Usage, doc.History[i].Usage, "history[%d]", i)
	}
	reply := doc.History[len(doc.History)-1]
	require.NotNil(t, reply.Usage, "the new reply's usage")
	assert.Equal(t, "offline", reply.Usage.Model)
}
