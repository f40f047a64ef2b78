package integration_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/wire"
)

// A chat that continues as new keeps its older messages in pages of the worker's
// message store, and nothing tells a reader so: History reads every message in order,
// the export holds them all, its import makes the same chat, and the chat migrates.
// Every page in the store matches its reference.
func TestALongChatKeepsItsOlderMessagesInPages(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { longChatInPages(t, testenv.Options{}) })
	t.Run("postgres", func(t *testing.T) { longChatInPages(t, testenv.Options{MessageStore: msgstore.NamePostgres}) })
	t.Run("encrypted", func(t *testing.T) { longChatInPages(t, testenv.Options{Keys: testRing(t, "k1")}) })
}

func longChatInPages(t *testing.T, opts testenv.Options) {
	a := testenv.New(t, opts)
	opts.Namespace, opts.TaskQueue = "agentchat-test-b", a.TaskQueue
	b := testenv.New(t, opts)
	id := testenv.ChatID(t)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		History:       &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4, IndexFanout: 2},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 60}}
	_, err := a.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: a.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	const turns = 30
	for i := range turns {
		_, err := a.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("m%d", i), Text: fmt.Sprintf("turn %d", i)})
		require.NoError(t, err, "turn %d", i)
	}
	st, err := a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 2*turns, st.MessageCount)
	assert.Positive(t, st.Runs, "the chat continued as new")

	var first wire.HistoryResult
	v, err := a.Temporal.QueryWorkflow(ctxFor(t), id, "", wire.HistoryQuery, wire.HistoryInput{})
	require.NoError(t, err)
	require.NoError(t, v.Get(&first))
	require.NotEmpty(t, first.Pages, "the oldest messages are in pages")
	assert.Positive(t, first.Pages[0].Level, "under index pages (a fanout of 2)")
	ps, ok := a.MessageStore.(msgstore.PageStore)
	require.True(t, ok)
	for _, ref := range first.Pages {
		row, err := ps.GetPage(context.Background(), id, msgstore.PageKey{Lineage: ref.Lineage, Level: ref.Level, Seq: ref.Seq}) // as stored
		require.NoError(t, err, "%s", ref)
		assert.Equal(t, ref.Digest, msgstore.PageDigest(row), "%s", ref)
		if opts.Keys != nil {
			assert.NotContains(t, string(row), "turn ", "%s is sealed", ref)
		}
	}

	_, err = a.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.ErrorIs(t, err, agentchat.ErrStoredMessages, "a client without the store cannot read the pages")
	assert.Contains(t, err.Error(), first.Pages[0].String()[:len(first.Pages[0].String())-1], "the error names the first page: a level-1 or higher index page (a fanout of 2)")
	hist, err := a.StoreClient().History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 2*turns)
	for i := range turns {
		assert.Equal(t, fmt.Sprintf("m%d", i), hist.Messages[2*i].MessageID)
		assert.Equal(t, fmt.Sprintf("turn %d", i), hist.Messages[2*i].Text())
		assert.Equal(t, fmt.Sprintf("m%d/1", i), hist.Messages[2*i+1].MessageID)
	}

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err, "a client without the store exports through the worker")
	decoded, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Equal(t, hist.Messages, decoded.History, "the export holds every message, as History reads them")
	fromStore, _, err := a.StoreClient().Export(ctxFor(t), id)
	require.NoError(t, err)
	fromStoreDoc, _, err := chatstate.Decode(fromStore)
	require.NoError(t, err)
	assert.Equal(t, decoded.History, fromStoreDoc.History, "an export read from the store holds the same history")

	copyID := id + "-copy"
	st = importBytes(t, ctxFor(t), a, copyID, doc)
	assert.Equal(t, 2*turns, st.MessageCount)
	again, _, err := a.Client.Export(ctxFor(t), copyID)
	require.NoError(t, err)
	redecoded, _, err := chatstate.Decode(again)
	require.NoError(t, err)
	assert.Equal(t, decoded.History, redecoded.History, "the import, in pages of its own, exports the same history")

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	st, err = b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 2*turns, st.MessageCount)
	_, err = b.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "after", Text: "after the move"})
	require.NoError(t, err)
	_, err = b.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m3", Text: "an old id"})
	require.Error(t, err, "a messageId in a page is taken")
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)

	for _, h := range []*testenv.Harness{a, b} {
		assertNoRunFailed(t, h, id)
	}
}
