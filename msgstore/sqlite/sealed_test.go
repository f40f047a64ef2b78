package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/msgstoretest"
)

func sealRing(t *testing.T, f keyring.File) *keyring.Ring {
	t.Helper()
	r, err := keyring.New(f)
	require.NoError(t, err)
	return r
}

func ringFile(t *testing.T, ids ...string) keyring.File {
	t.Helper()
	f, err := keyring.Generate(ids...)
	require.NoError(t, err)
	return f
}

func TestSealedConformance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sealed.db")
	ring := sealRing(t, ringFile(t, "k1"))
	msgstoretest.Run(t, func(t *testing.T) msgstore.Store { return msgstore.Sealed(openT(t, path), ring) })
}

func TestSealedRowsHoldNoTextAndRotationKeepsThemReadable(t *testing.T) {
	ctx := context.Background()
	raw := openT(t, filepath.Join(t.TempDir(), "rows.db"))
	f1 := ringFile(t, "k1")
	old := msgstore.Sealed(raw, sealRing(t, f1))
	m := chat.TextMessage("m1", chat.RoleUser, "Alice", "My name is Alice Quimby")
	require.NoError(t, old.Put(ctx, "c", []chat.Message{m}))

	var body string
	require.NoError(t, raw.db.QueryRow("SELECT body FROM chat_messages WHERE chat_id = 'c' AND message_id = 'm1'").Scan(&body))
	assert.NotContains(t, body, "Quimby")
	assert.NotContains(t, body, "Alice", "the author's name is sealed too")
	assert.True(t, strings.HasPrefix(body, msgstore.BinaryRowPrefix+"\x02k1"), "the binary form, key k1: %q", body[:min(len(body), 12)])

	f2 := ringFile(t, "k2")
	f2.Keys["k1"] = f1.Keys["k1"]
	rotated := msgstore.Sealed(raw, sealRing(t, f2))
	got, err := rotated.Get(ctx, "c", []string{"m1"})
	require.NoError(t, err)
	assert.Equal(t, m, got[0], "a k1 body reads after rotation")
	require.NoError(t, rotated.Put(ctx, "c", []chat.Message{m}), "a retried put of the same message under the new key is a no-op")
	other := m
	other.Contents = []chat.Content{chat.Text("something else")}
	require.ErrorIs(t, rotated.Put(ctx, "c", []chat.Message{other}), msgstore.ErrConflict)

	_, err = msgstore.Sealed(raw, sealRing(t, ringFile(t, "k9"))).Get(ctx, "c", []string{"m1"})
	var unknown *keyring.UnknownKeyError
	require.ErrorAs(t, err, &unknown)
	assert.Contains(t, err.Error(), `"k1"`)

	// A row altered, or moved to another message, does not open.
	_, err = raw.db.Exec("UPDATE chat_messages SET message_id = 'm2' WHERE chat_id = 'c' AND message_id = 'm1'")
	require.NoError(t, err)
	_, err = rotated.Get(ctx, "c", []string{"m2"})
	assert.ErrorIs(t, err, keyring.ErrNotAuthentic)
	assert.Contains(t, err.Error(), `"m2"`)

	plain := chat.TextMessage("p1", chat.RoleUser, "", "stored before encryption")
	require.NoError(t, raw.Put(ctx, "c", []chat.Message{plain}))
	got, err = rotated.Get(ctx, "c", []string{"p1"})
	require.NoError(t, err)
	assert.Equal(t, plain, got[0], "plain rows still read")
}

// messagesOnly hides the RowStore methods, as a store of your own without them would.
type messagesOnly struct{ msgstore.Store }

// A store without rows gets the JSON form, a RowStore the binary form
// (msgstore.BinaryRowPrefix): Sealed over the RowStore reads both, and a retried put
// of a message stored in the other form is a no-op.
func TestSealedOverAStoreWithoutRowsWritesTheJSONForm(t *testing.T) {
	ctx := context.Background()
	ring := sealRing(t, ringFile(t, "k1"))
	path := filepath.Join(t.TempDir(), "generic.db")
	msgstoretest.Run(t, func(t *testing.T) msgstore.Store { return msgstore.Sealed(messagesOnly{openT(t, path)}, ring) })

	a := openT(t, filepath.Join(t.TempDir(), "a.db"))
	asJSON := chat.TextMessage("m&<1>", chat.RoleUser, "Alice", "written as JSON")
	asBinary := chat.TextMessage("m2", chat.RoleUser, "Alice", "written as bytes")
	require.NoError(t, msgstore.Sealed(messagesOnly{a}, ring).Put(ctx, "c", []chat.Message{asJSON}))
	require.NoError(t, msgstore.Sealed(a, ring).Put(ctx, "c", []chat.Message{asBinary}))
	rows, err := a.GetRows(ctx, "c", []string{asJSON.MessageID, asBinary.MessageID})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(rows[asJSON.MessageID]), `{"messageId":"m\u0026\u003c1\u003e"`) ||
		strings.HasPrefix(string(rows[asJSON.MessageID]), `{"messageId":"m&<1>"`), "%s", rows[asJSON.MessageID])
	assert.Contains(t, string(rows[asJSON.MessageID]), `"type":"encrypted","keyId":"k1"`)
	assert.True(t, strings.HasPrefix(string(rows[asBinary.MessageID]), msgstore.BinaryRowPrefix))
	for id, row := range rows {
		assert.NotContains(t, string(row), "written", id)
	}
	sealed := msgstore.Sealed(a, ring)
	got, err := sealed.Get(ctx, "c", []string{asBinary.MessageID, asJSON.MessageID, asBinary.MessageID})
	require.NoError(t, err)
	assert.Equal(t, []chat.Message{asBinary, asJSON, asBinary}, got)
	require.NoError(t, sealed.Put(ctx, "c", []chat.Message{asJSON, asBinary}), "either form: a retried put is a no-op")
	require.NoError(t, msgstore.Sealed(messagesOnly{a}, ring).Put(ctx, "c", []chat.Message{asJSON}))
	other := asJSON
	other.Contents = []chat.Content{chat.Text("something else")}
	assert.ErrorIs(t, sealed.Put(ctx, "c", []chat.Message{other}), msgstore.ErrConflict)
}

// The store read without the ring refuses a sealed row with ErrEncrypted, naming the
// key id, and never passes the row off as a message.
func TestSealedRowReadWithoutTheRingIsErrEncrypted(t *testing.T) {
	ctx := context.Background()
	raw := openT(t, filepath.Join(t.TempDir(), "rows.db"))
	m := chat.TextMessage("m1", chat.RoleUser, "Alice", "secret plans")
	require.NoError(t, msgstore.Sealed(raw, sealRing(t, ringFile(t, "k9"))).Put(ctx, "c", []chat.Message{m}))
	require.NoError(t, raw.Put(ctx, "c", []chat.Message{chat.TextMessage("m2", chat.RoleUser, "Bob", "plain")}))

	got, err := raw.Get(ctx, "c", []string{"m2"})
	require.NoError(t, err, "a plain row still reads")
	assert.Equal(t, "plain", got[0].Text())
	_, err = raw.Get(ctx, "c", []string{"m2", "m1"})
	require.ErrorIs(t, err, msgstore.ErrEncrypted)
	assert.Contains(t, err.Error(), `message "m1"`)
	assert.Contains(t, err.Error(), `key id "k9"`)
	assert.NotContains(t, err.Error(), "secret")
}

func TestSealedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sealed-pages.db")
	msgstoretest.RunSealedPages(t, func(t *testing.T) msgstore.PageStore { return openT(t, path) })
}
