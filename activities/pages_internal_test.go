package activities

import (
	"context"
	"encoding/json"
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
	s := &stores{byName: map[string]msgstore.Store{"sqlite": st}, defaultStore: "sqlite"}

	got, err := s.readPages(ctx, "c", "", []wire.PageRef{ref}, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "b", got[1].Text())

	var app *temporal.ApplicationError
	_, err = s.readPages(ctx, "c", "sqlite", []wire.PageRef{ref, {Seq: 1, First: 2, Count: 2, Digest: digest, Lineage: "L"}}, 0, 0)
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeHistoryPageUnreadable, app.Type())
	assert.True(t, app.NonRetryable())

	_, err = s.readPages(ctx, "c", "postgres", []wire.PageRef{ref}, 0, 0)
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Message(), `history page 0 (messages 0 to 1, lineage L) is in message store "postgres"`)
}

// WritePages folds the chat's index as it writes (wire.FoldIndex): pages written a few
// at a time under a fanout of 2 leave an index of fewer than 2 references a level,
// whose pages read back every message in order; a call retried (a worker killed after
// it wrote) writes the same rows and returns the same index; ReadTurn finds a turn under
// the index pages.
func TestWritePagesFoldsTheIndex(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
	require.NoError(t, err)
	defer st.Close()
	s := &stores{byName: map[string]msgstore.Store{"sqlite": st}, defaultStore: "sqlite"}
	var (
		all   []chat.Message
		index []wire.PageRef
		seq   int64
	)
	for call := range 9 {
		var msgs []chat.Message
		for range 6 {
			i := len(all) + len(msgs)
			role := chat.RoleAssistant
			if i%2 == 0 {
				role = chat.RoleUser
			}
			msgs = append(msgs, chat.TextMessage(fmt.Sprintf("m%d", i), role, "alice", fmt.Sprintf("message %d", i)))
		}
		in := wire.WritePagesInput{ChatID: "c", Lineage: "L", Seq: seq, First: int64(len(all)), Cuts: []int{3, 3}, Messages: msgs, Index: index, Fanout: 2}
		res, err := s.WritePages(ctx, in)
		require.NoError(t, err, "call %d", call)
		again, err := s.WritePages(ctx, in)
		require.NoError(t, err, "call %d retried", call)
		require.Equal(t, res, again, "call %d retried", call)
		require.Len(t, res.Pages, 2)
		levels := map[int]int{}
		for _, r := range res.Index {
			levels[r.Level]++
		}
		for level, n := range levels {
			require.Less(t, n, 2, "call %d, level %d", call, level)
		}
		all, index, seq = append(all, msgs...), res.Index, seq+2
	}
	require.Equal(t, []int{4, 1}, []int{index[0].Level, index[1].Level}, "18 pages: 16 under a level-4 page, 2 under a level-1 page")
	for i := range index {
		index[i].Lineage = "L"
	}
	got, err := s.readPages(ctx, "c", "", index, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, len(all))
	for i := range all {
		require.Equal(t, all[i].MessageID, got[i].MessageID)
	}
	turn, err := s.ReadTurn(ctx, wire.ReadTurnInput{ChatID: "c", User: 40, Pages: index})
	require.NoError(t, err)
	assert.Equal(t, "m40", turn.User.MessageID)
	assert.Equal(t, "m41", turn.Replies[0].MessageID)
	assert.True(t, turn.Ended)
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
		a := &stores{byName: map[string]msgstore.Store{"sqlite": wrap(st)}, defaultStore: "sqlite"}
		res, err := a.WritePages(ctx, in)
		require.NoError(t, err)
		again, err := a.WritePages(ctx, in)
		require.NoError(t, err)
		assert.Equal(t, res, again)
		read := slices.Clone(res.Pages)
		for i := range read {
			read[i].Lineage = "L" // the workflow names the lineage of the pages it keeps
		}
		got, err := a.readPages(ctx, "c", "sqlite", read, 0, 0)
		require.NoError(t, err)
		assert.Equal(t, msgs, got)
		refs = append(refs, res.Pages)
	}
	require.Len(t, refs[0], 4)
	assert.Equal(t, refs[0], refs[1])
}

// At the default fanout, IndexFanout pages fold into one index page (its body lists all
// of them, about 64 KiB) and read back whole; one page more stays beside it, level 0.
func TestWritePagesAtTheIndexFanoutAndOneOver(t *testing.T) {
	ctx := context.Background()
	for _, pages := range []int{wire.IndexFanout, wire.IndexFanout + 1} {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
		require.NoError(t, err)
		defer st.Close()
		s := &stores{byName: map[string]msgstore.Store{"sqlite": st}, defaultStore: "sqlite"}
		msgs := make([]chat.Message, pages)
		cuts := make([]int, pages)
		for i := range msgs {
			msgs[i] = chat.TextMessage(fmt.Sprintf("m%d", i), chat.RoleUser, "alice", "x")
			cuts[i] = 1
		}
		res, err := s.WritePages(ctx, wire.WritePagesInput{ChatID: "c", Lineage: "L", Cuts: cuts, Messages: msgs})
		require.NoError(t, err, "%d pages", pages)
		require.Equal(t, 1, res.Index[0].Level, "%d pages", pages)
		require.EqualValues(t, wire.IndexFanout, res.Index[0].Count)
		assert.Greater(t, res.Index[0].Bytes, 60<<10, "an index page of IndexFanout references")
		require.Len(t, res.Index, 1+pages-wire.IndexFanout, "%d pages", pages)
		for i := range res.Index {
			res.Index[i].Lineage = "L"
		}
		got, err := s.readPages(ctx, "c", "", res.Index, 0, 0)
		require.NoError(t, err)
		require.Len(t, got, pages)
		assert.Equal(t, fmt.Sprintf("m%d", pages-1), got[pages-1].MessageID)
	}
}

// A page that does not encode fails WritePages with InvalidInput, not retried, after
// the batches before it were written (a retry writes them again as no-ops).
func TestWritePagesRefusesAPageThatDoesNotEncode(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
	require.NoError(t, err)
	defer st.Close()
	defer func(n int) { pageBatchBytes = n }(pageBatchBytes)
	pageBatchBytes = 1
	bad := chat.Message{MessageID: "m2", Role: chat.RoleUser, Contents: []chat.Content{{Type: "custom", Raw: json.RawMessage(`{"type":`)}}}
	msgs := []chat.Message{chat.TextMessage("m0", chat.RoleUser, "alice", "a"), chat.TextMessage("m1", chat.RoleUser, "alice", "b"), bad}
	s := &stores{byName: map[string]msgstore.Store{"sqlite": st}, defaultStore: "sqlite"}
	_, err = s.WritePages(ctx, wire.WritePagesInput{ChatID: "c", Store: "sqlite", Lineage: "L", Cuts: []int{1, 1, 1}, Messages: msgs})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Message(), "message 2")
	for seq := range int64(2) {
		_, err := st.GetPage(ctx, "c", msgstore.PageKey{Lineage: "L", Seq: seq})
		assert.NoError(t, err, "page %d, of a batch before the bad page, is written", seq)
	}
	_, err = st.GetPage(ctx, "c", msgstore.PageKey{Lineage: "L", Seq: 2})
	assert.Error(t, err, "the bad page is not")
}
