package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
)

// A document whose history begins with the assistant's message imports as it is, on
// the default window and on a small one that pages it, and the chat takes turns after.
func TestImportTakesAHistoryThatBeginsWithTheAssistant(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "messages.db")
	h := testenv.New(t, testenv.Options{MessageStoreURL: url})
	src := testenv.ChatID(t)
	ok(t, h, "start", "--chat", src, "--agents", "helper")
	for i := 1; i <= 7; i++ {
		ok(t, h, "send", "--chat", src, "--id", fmt.Sprintf("t%d", i), fmt.Sprintf("turn %d", i))
	}
	exported := filepath.Join(t.TempDir(), "doc.json")
	ok(t, h, "export", "--chat", src, "--out", exported)
	b, err := os.ReadFile(exported)
	require.NoError(t, err)
	d, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	d.History = d.History[1:] // drop "turn 1": the history begins with its reply
	require.Equal(t, chat.RoleAssistant, d.History[0].Role)
	b, _, err = chatstate.Encode(d)
	require.NoError(t, err)
	doc := filepath.Join(t.TempDir(), "assistant-first.json")
	require.NoError(t, os.WriteFile(doc, b, 0o600))

	for _, flags := range [][]string{nil, {"--window-messages", "8", "--page-messages", "4"}} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			id := testenv.ChatID(t)
			st := decode[agentchat.StateResult](t, ok(t, h, append([]string{"import", "--chat", id, "--in", doc, "--json"}, flags...)...))
			assert.Equal(t, 13, st.MessageCount)
			assert.Empty(t, st.Repairs)
			if flags != nil {
				assert.Positive(t, st.PagedMessages, "the leading reply and the turns after it go to pages")
			}
			ok(t, h, "send", "--chat", id, "--id", "after", "after the import")
			hist := decode[agentchat.HistoryResult](t, ok(t, h, "--message-store", url, "history", "--chat", id, "--json"))
			require.Len(t, hist.Messages, 15)
			assert.Equal(t, "t1/1", hist.Messages[0].MessageID)
			assert.Equal(t, chat.RoleAssistant, hist.Messages[0].Role)
			assert.Equal(t, "after", hist.Messages[13].MessageID)
		})
	}
}
