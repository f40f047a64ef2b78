package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/msgstoretest"
)

func sealRing(t *testing.T) *keyring.Ring {
	t.Helper()
	f, err := keyring.Generate("k1")
	require.NoError(t, err)
	r, err := keyring.New(f)
	require.NoError(t, err)
	return r
}

// storeOnly hides the RowStore methods: msgstore.Sealed then writes its rows as
// messages, as it did before PostgreSQL had them.
type storeOnly struct{ msgstore.Store }

func TestSealedConformance(t *testing.T) {
	dsn := sharedPostgresDSN(t)
	ring := sealRing(t)
	msgstoretest.Run(t, func(t *testing.T) msgstore.Store { return msgstore.Sealed(openT(t, dsn), ring) })
}

// Sealed bodies go to PostgreSQL as rows (RowStore), in the binary form: no text in
// them; rows that Sealed wrote as messages before (the JSON form) read the same, and a
// retried put of them is a no-op.
func TestSealedRowsAndRowsWrittenAsMessages(t *testing.T) {
	ctx := context.Background()
	pg := openT(t, sharedPostgresDSN(t))
	ring := sealRing(t)
	chatID := msgstoretest.NewChatID(t)
	m1 := chat.TextMessage("m1", chat.RoleUser, "Alice", "My name is Alice Quimby")
	m2 := chat.TextMessage("m2", chat.RoleAssistant, "Helper", "Hello, Alice Quimby")

	require.NoError(t, msgstore.Sealed(storeOnly{pg}, ring).Put(ctx, chatID, []chat.Message{m1}))
	rows := msgstore.Sealed(pg, ring)
	require.NoError(t, rows.Put(ctx, chatID, []chat.Message{m2}))
	for id, form := range map[string]string{"m1": `"type":"encrypted","keyId":"k1"`, "m2": msgstore.BinaryRowPrefix + "\x02k1"} {
		var body []byte
		require.NoError(t, pg.pool.QueryRow(ctx, "SELECT body FROM chat_messages WHERE chat_id = $1 AND message_id = $2", chatID, id).Scan(&body))
		assert.NotContains(t, string(body), "Quimby", id)
		assert.Contains(t, string(body), form, id)
	}
	got, err := rows.Get(ctx, chatID, []string{"m2", "m1"})
	require.NoError(t, err)
	assert.Equal(t, []chat.Message{m2, m1}, got)
	require.NoError(t, rows.Put(ctx, chatID, []chat.Message{m1, m2}), "both kinds of rows: a retried put is a no-op")
	other := m1
	other.Contents = []chat.Content{chat.Text("something else")}
	assert.ErrorIs(t, rows.Put(ctx, chatID, []chat.Message{other}), msgstore.ErrConflict)
}

func TestSealedPages(t *testing.T) {
	dsn := sharedPostgresDSN(t)
	msgstoretest.RunSealedPages(t, func(t *testing.T) msgstore.PageStore { return openT(t, dsn) })
}
