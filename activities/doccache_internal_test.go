package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
)

func cacheTestDoc(t *testing.T, chatID string) []byte {
	t.Helper()
	b, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: chatID,
		ExportedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Source: chatstate.Source{Namespace: "default", WorkflowID: chatID},
		Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Channels:     []chatstate.Channel{},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential"},
			Termination: chatstate.Strategy{Type: "maxIterations"}}})
	require.NoError(t, err)
	return b
}

// The cache answers for the same bytes only (another document, or the same file
// changed, is decoded anew), forgets a document by its bytes, and keeps at most max.
func TestDocCacheIsKeyedByTheBytes(t *testing.T) {
	c := &docCache{max: 2, seed: decodedDocs.seed}
	a, b := cacheTestDoc(t, "chat-a"), cacheTestDoc(t, "chat-b")
	doc, _, _, err := c.decode(a, envelope.Options{})
	require.NoError(t, err)
	assert.Equal(t, "chat-a", doc.ChatID)
	again, _, _, err := c.decode(append([]byte(nil), a...), envelope.Options{}) // equal bytes, another slice
	require.NoError(t, err)
	assert.Equal(t, doc.Digest, again.Digest)
	assert.Len(t, c.entries, 1, "equal bytes are one entry")

	doc, _, _, err = c.decode(b, envelope.Options{})
	require.NoError(t, err)
	assert.Equal(t, "chat-b", doc.ChatID)
	assert.Len(t, c.entries, 2)

	c.forget(append([]byte(nil), a...))
	require.Len(t, c.entries, 1)
	assert.Equal(t, "chat-b", c.entries[0].doc.ChatID)

	_, _, _, err = c.decode(cacheTestDoc(t, "chat-c"), envelope.Options{})
	require.NoError(t, err)
	_, _, _, err = c.decode(a, envelope.Options{})
	require.NoError(t, err)
	require.Len(t, c.entries, 2, "at most max")
	assert.Equal(t, "chat-c", c.entries[0].doc.ChatID, "the oldest went first")

	_, _, _, err = c.decode([]byte(`{"schemaVersion":1}`), envelope.Options{})
	assert.Error(t, err)
	assert.Len(t, c.entries, 2, "a document that does not decode is not kept")
}
