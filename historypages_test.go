package agentchat

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// pagedStore returns a SQLite store holding page 0 (messages m0 and m1) of chat "c",
// lineage "L", written through Sealed with ring when it is not nil, and its ref.
func pagedStore(t *testing.T, ring *keyring.Ring) (*sqlite.Store, wire.PageRef) {
	t.Helper()
	ctx := context.Background()
	raw, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	var st msgstore.PageStore = raw
	if ring != nil {
		st = msgstore.Sealed(raw, ring).(msgstore.PageStore)
	}
	msgs := []chat.Message{chat.TextMessage("m0", chat.RoleUser, "alice", "a"), chat.TextMessage("m1", chat.RoleUser, "alice", "b")}
	body, err := msgstore.EncodePageBody(msgstore.PageBody{ChatID: "c", Lineage: "L", Messages: msgs})
	require.NoError(t, err)
	digest, err := st.PutPage(ctx, "c", msgstore.Page{Lineage: "L", Count: 2, Body: body})
	require.NoError(t, err)
	return raw, wire.PageRef{Count: 2, Bytes: len(body), Digest: digest, Lineage: "L"}
}

func TestHistoryFollowsPages(t *testing.T) {
	ctx := context.Background()
	st, ref := pagedStore(t, nil)
	answer := HistoryResult{Offset: 1, Total: 5, Store: "sqlite", Pages: []wire.PageRef{ref}}

	c := &Client{stores: map[string]msgstore.Store{"sqlite": st}}
	h, err := c.followPages(ctx, "c", answer, 0)
	require.NoError(t, err)
	assert.Len(t, h.Messages, 1)
	assert.Equal(t, "b", h.Messages[0].Text(), "from the offset asked")
	assert.Empty(t, h.Pages)

	_, err = (&Client{}).followPages(ctx, "c", answer, 0)
	require.ErrorIs(t, err, ErrStoredMessages)
	assert.Contains(t, err.Error(), `agentchat: history of chat "c": chat "c": history page 0 (messages 0 to 1, lineage L) is in message store "sqlite"`)
}

func TestExportPagesGoesThroughTheWorkerForWhatTheClientCannotRead(t *testing.T) {
	ctx := context.Background()
	f, err := keyring.Generate("k1")
	require.NoError(t, err)
	ring, err := keyring.New(f)
	require.NoError(t, err)
	st, ref := pagedStore(t, ring)

	c := &Client{stores: map[string]msgstore.Store{"sqlite": st}} // no ring
	_, err = c.exportPages(ctx, "c", "sqlite", []wire.PageRef{ref}, 0, 0)
	require.ErrorIs(t, err, ErrStoredMessages, "sealed pages and no ring: the worker exports")
	assert.ErrorContains(t, err, "encrypted at rest")

	c = &Client{stores: map[string]msgstore.Store{"sqlite": msgstore.Sealed(st, ring)}}
	got, err := c.exportPages(ctx, "c", "sqlite", []wire.PageRef{ref}, 0, 0)
	require.NoError(t, err)
	assert.Len(t, got, 2)

	ref.Digest = msgstore.PageDigest([]byte("another row"))
	_, err = c.exportPages(ctx, "c", "sqlite", []wire.PageRef{ref}, 0, 0)
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app, "a page that does not match its index fails the export")
	assert.Equal(t, wire.ErrTypeHistoryPageUnreadable, app.Type())
	assert.False(t, errors.Is(err, ErrStoredMessages))
}
