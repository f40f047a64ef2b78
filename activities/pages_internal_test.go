package activities

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/wire"
)

// The worker reads a History answer's pages from its stores, the default one for "",
// and types what fails: a page missing is HistoryPageUnreadable, a store it lacks
// InvalidInput, neither retried.
func TestReadPagesOfTheWorker(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
	require.NoError(t, err)
	defer st.Close()
	msgs := []chat.Message{chat.TextMessage("m0", chat.RoleUser, "alice", "a"), chat.TextMessage("m1", chat.RoleUser, "alice", "b")}
	body, err := msgstore.EncodePageBody(msgstore.PageBody{ChatID: "c", Lineage: "L", Messages: msgs})
	require.NoError(t, err)
	digest, err := st.PutPage(ctx, "c", msgstore.Page{Lineage: "L", Count: 2, Body: body})
	require.NoError(t, err)
	ref := wire.PageRef{Count: 2, Bytes: len(body), Digest: digest, Lineage: "L"}
	a := &Activities{stores: map[string]msgstore.Store{"sqlite": st}, defaultStore: "sqlite"}

	got, err := a.readPages(ctx, "c", "", []wire.PageRef{ref})
	require.NoError(t, err)
	assert.Equal(t, "b", got[1].Text())

	var app *temporal.ApplicationError
	_, err = a.readPages(ctx, "c", "sqlite", []wire.PageRef{ref, {Seq: 1, First: 2, Count: 2, Digest: digest, Lineage: "L"}})
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeHistoryPageUnreadable, app.Type())
	assert.True(t, app.NonRetryable())

	_, err = a.readPages(ctx, "c", "postgres", []wire.PageRef{ref})
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Message(), `history page 0 (messages 0 to 1, lineage L) is in message store "postgres"`)
}

// pagesOneByOne hides a store's PutPages: WritePages then writes one page at a time.
type pagesOneByOne struct{ msgstore.PageStore }

// WritePages writes the same pages, with the same references, whether the store takes
// them in transactions of several (here of about 2 pages) or one at a time; written
// again, they are no-ops with the same digests.
func TestWritePagesInBatches(t *testing.T) {
	ctx := context.Background()
	var msgs []chat.Message
	for i := range 10 {
		msgs = append(msgs, chat.TextMessage(fmt.Sprintf("m%d", i), chat.RoleUser, "alice", strings.Repeat("x", 100)))
	}
	in := wire.WritePagesInput{ChatID: "c", Store: "sqlite", Lineage: "L", Cuts: []int{3, 3, 3, 1}, Messages: msgs}
	body, err := msgstore.EncodePageBody(msgstore.PageBody{ChatID: "c", Lineage: "L", Messages: msgs[:3]})
	require.NoError(t, err)
	defer func(n int) { pageBatchBytes = n }(pageBatchBytes)
	pageBatchBytes = 2 * len(body)
	var refs [][]wire.PageRef
	for _, wrap := range []func(*sqlite.Store) msgstore.Store{
		func(st *sqlite.Store) msgstore.Store { return st },
		func(st *sqlite.Store) msgstore.Store { return pagesOneByOne{st} },
	} {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
		require.NoError(t, err)
		defer st.Close()
		a := &Activities{stores: map[string]msgstore.Store{"sqlite": wrap(st)}, defaultStore: "sqlite"}
		res, err := a.WritePages(ctx, in)
		require.NoError(t, err)
		again, err := a.WritePages(ctx, in)
		require.NoError(t, err)
		assert.Equal(t, res, again)
		read := slices.Clone(res.Pages)
		for i := range read {
			read[i].Lineage = "L" // the workflow names the lineage of the pages it keeps
		}
		got, err := a.readPages(ctx, "c", "sqlite", read)
		require.NoError(t, err)
		assert.Equal(t, msgs, got)
		refs = append(refs, res.Pages)
	}
	require.Len(t, refs[0], 4)
	assert.Equal(t, refs[0], refs[1])
}
