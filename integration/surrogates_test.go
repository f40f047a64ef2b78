package integration_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// JSON from a raw client may hold lone UTF-16 surrogates (\ud800 without its pair),
// which no UTF-8 string can: the worker's JSON decoding turns each into U+FFFD, as the
// README's Limits table says, and the turn goes on; a pair is one character.
func TestLoneSurrogatesFromARawClientBecomeReplacementCharacters(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	for _, tc := range []struct{ messageID, raw, want string }{
		{"lone-high", `a\ud800b`, "a\uFFFDb"},
		{"lone-low", `\udc00end`, "\uFFFDend"},
		{"reversed", `\udc00\ud800`, "\uFFFD\uFFFD"},
		{"pair", `\ud83d\ude00`, "😀"},
	} {
		body := json.RawMessage(`{"messageId":"` + tc.messageID + `","text":"` + tc.raw + `"}`)
		hd, err := h.Temporal.UpdateWorkflow(ctxFor(t), client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: wire.SendMessageUpdate,
			Args: []any{body}, WaitForStage: client.WorkflowUpdateStageCompleted})
		require.NoError(t, err, tc.messageID)
		var res agentchat.TurnResult
		require.NoError(t, hd.Get(ctxFor(t), &res), tc.messageID)
		require.NotEmpty(t, res.Messages, tc.messageID)
	}
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	texts := map[string]string{}
	for _, m := range hist.Messages {
		texts[m.MessageID] = m.Text()
	}
	assert.Equal(t, "a\uFFFDb", texts["lone-high"])
	assert.Equal(t, "\uFFFDend", texts["lone-low"])
	assert.Equal(t, "\uFFFD\uFFFD", texts["reversed"])
	assert.Equal(t, "😀", texts["pair"])
}
