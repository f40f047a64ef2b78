package workflows_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/msgstore/sqlite"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// pageStore opens an embedded SQLite message store for the test.
func pageStore(t *testing.T) *sqlite.Store {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "messages.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// withPages registers the real WritePages, LookupIDs (local) and StoreMessages
// activities over st, and returns them.
func (e *env) withPages(t *testing.T, st *sqlite.Store) *activities.Activities {
	reg := agents.NewRegistry(agents.Config{Agents: []agents.Definition{{ID: "helper", Model: "m", Endpoint: "default"}},
		Endpoints: map[string]agents.Endpoint{"default": {BaseURL: "http://127.0.0.1:1/v1"}}})
	acts, err := activities.New(activities.Config{Registry: reg,
		Stores: activities.StoreConfig{MessageStores: map[string]msgstore.Store{"sqlite": st}}})
	require.NoError(t, err)
	e.env.RegisterActivityWithOptions(acts.WritePages, activity.RegisterOptions{Name: wire.WritePagesActivity})
	e.env.RegisterActivityWithOptions(acts.StoreMessages, activity.RegisterOptions{Name: wire.StoreMessagesActivity})
	e.env.RegisterActivityWithOptions(acts.LookupIDs, activity.RegisterOptions{Name: wire.LookupIDsActivity})
	e.env.RegisterActivityWithOptions(acts.ReadTurn, activity.RegisterOptions{Name: wire.ReadTurnActivity})
	e.env.RegisterActivityWithOptions(acts.ImportChat, activity.RegisterOptions{Name: wire.ImportChatActivity})
	return acts
}

// pagedThread is a thread with a window of 8 messages and pages of 4.
func pagedThread() wire.AgentChatInput {
	in := thread()
	in.History = &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4}
	return in
}

// At continue-as-new the oldest messages go to pages of the message store, whole
// pages only, the window keeping at least its size; the carry holds the pages' index,
// and every page in the store matches its reference (digest, first, count, messages).
func TestContinueAsNewWritesPages(t *testing.T) {
	e := newEnv(t)
	st := pageStore(t)
	e.withPages(t, st)
	for i := range 11 {
		e.send(time.Duration(i+1)*time.Second, msg(fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i)))
	}
	e.at(12*time.Second, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(pagedThread(), 0)
	next, _ := canInput(t, e)
	c := next.Carry
	require.NotNil(t, c.Paged, "22 messages with a window of 8 write pages")
	assert.Equal(t, 14, c.Paged.Base, "pages up to turn m7, the latest that leaves a window of 8: 22 - 14 = 8 messages stay")
	assert.Len(t, c.History, 8)
	assert.Equal(t, "m7", c.History[0].MessageID, "the window starts at message 14, turn m7")
	require.Len(t, c.Paged.Pages, 4, "pages of 4, the last of 2")
	var paged []chat.Message
	for k, ref := range c.Paged.Pages {
		assert.Equal(t, int64(k), ref.Seq)
		assert.Equal(t, int64(4*k), ref.First)
		row, err := st.GetPage(context.Background(), "default-test-workflow-id", msgstore.PageKey{Lineage: c.Paged.Lineage, Seq: ref.Seq})
		require.NoError(t, err)
		assert.Equal(t, ref.Digest, msgstore.PageDigest(row))
		body, err := msgstore.DecodePageBody(row)
		require.NoError(t, err)
		require.Len(t, body.Messages, int(ref.Count))
		paged = append(paged, body.Messages...)
	}
	assert.Equal(t, []string{"m0", "m0/1", "m1", "m1/1", "m2", "m2/1", "m3", "m3/1", "m4", "m4/1", "m5", "m5/1", "m6", "m6/1"}, ids(paged))
	assert.Equal(t, "turn 5", paged[10].Text(), "pages hold the messages whole")
}

// The next run answers History below its window with the pages' references, and from
// its base with messages; a turn there sees the window, and the chat counts every
// message.
func TestAPagedChatTakesTurnsAndAnswersHistory(t *testing.T) {
	st := pageStore(t)
	first := newEnv(t)
	first.withPages(t, st)
	for i := range 11 {
		first.send(time.Duration(i+1)*time.Second, msg(fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i)))
	}
	first.at(12*time.Second, func() { first.env.SetContinueAsNewSuggested(true) })
	first.run(pagedThread(), 0)
	next, _ := canInput(t, first)

	e := newEnv(t)
	e.withPages(t, st)
	turn := e.send(time.Second, msg("m11", "after the pages"))
	retried := e.send(2*time.Second, msg("m3", "turn 3"))
	taken := e.send(2*time.Second, msg("m2", "another text under a paged turn's id"))
	taken2 := e.send(2*time.Second, wire.SendMessageInput{MessageID: "m0/1", Text: "a reply's id a page holds"})
	var below, window wire.HistoryResult
	var state wire.StateResult
	turn.then = func() {
		below = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: 5})
		window = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: 14})
		state = e.state()
	}
	e.run(next, 3*time.Second)
	require.NoError(t, turn.err)
	require.NoError(t, retried.err, "a retry of a paged turn gets its first answer")
	assert.True(t, retried.result.Replayed)
	assert.Equal(t, []string{"m3/1"}, ids(retried.result.Messages))
	assert.Equal(t, "helper#4 saw 7 messages, last user: turn 3", retried.result.Messages[0].Text())
	require.Error(t, taken.err, "a paged turn's messageId with other contents")
	assert.Contains(t, taken.err.Error(), `messageId "m2" was already used for a different message (history[4])`)
	require.Error(t, taken2.err, "a reply's id in a page is taken")
	assert.Contains(t, taken2.err.Error(), `messageId "m0/1" is taken`)
	assert.Contains(t, taken2.err.Error(), "history[1]")
	assert.Equal(t, "helper#1 saw 9 messages, last user: after the pages", turn.result.Messages[0].Text(),
		"the model sees the window: 8 carried messages and the new turn")
	assert.Empty(t, below.Messages)
	assert.Equal(t, 5, below.Offset)
	assert.Equal(t, 24, below.Total)
	require.Len(t, below.Pages, 3, "the pages from the one holding message 5 on")
	assert.Equal(t, int64(4), below.Pages[0].First)
	assert.Equal(t, next.Carry.Paged.Lineage, below.Pages[0].Lineage)
	assert.Equal(t, 14, window.Offset)
	assert.Equal(t, []string{"m7", "m7/1"}, ids(window.Messages[:2]))
	assert.Len(t, window.Messages, 10)
	assert.Equal(t, 24, state.MessageCount)
	assert.Equal(t, 14, state.PagedMessages, "State says how many are in pages")
}

// A restored document's older messages are written as pages by the import itself
// (whole turns: the window begins at a user message, at least 8 messages before the
// end), the chat counts all its messages and turns, and its ids stay taken. One
// ImportChat call does it: its page returns the window whole, which ends the document.
func TestAnImportWritesPages(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var history []chat.Message
	for i := range 21 {
		u := chat.TextMessage(fmt.Sprintf("d%d", i), chat.RoleUser, "", fmt.Sprintf("turn %d", i))
		r := chat.TextMessage(fmt.Sprintf("d%d/1", i), chat.RoleAssistant, "Helper", fmt.Sprintf("reply %d", i))
		u.CreatedAt, r.CreatedAt, r.AgentID = at, at, "helper"
		history = append(history, u, r)
	}
	doc := helperDocument(t, at, history, 1)
	e := newEnv(t)
	st := pageStore(t)
	e.withPages(t, st)
	in := restoring(doc, "helper")
	in.History = &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4}
	imports := 0
	e.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == wire.ImportChatActivity {
			imports++
		}
	})
	turn := e.send(time.Second, msg("new", "after the import"))
	taken := e.send(2*time.Second, msg("d2/1", "an imported reply's id"))
	var below wire.HistoryResult
	var state wire.StateResult
	turn.then = func() {
		below = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{})
		state = e.state()
	}
	e.run(in, 3*time.Second)
	require.NoError(t, turn.err)
	require.Error(t, taken.err)
	assert.Contains(t, taken.err.Error(), "history[5]")
	assert.Equal(t, 44, state.MessageCount)
	assert.Equal(t, 22, state.TurnCount, "21 imported turns and the new one")
	assert.Equal(t, 1, imports, "ImportChat calls")
	require.NotEmpty(t, below.Pages)
	var paged []chat.Message
	for _, ref := range below.Pages {
		row, err := st.GetPage(context.Background(), "default-test-workflow-id", msgstore.PageKey{Lineage: ref.Lineage, Seq: ref.Seq})
		require.NoError(t, err)
		assert.Equal(t, ref.Digest, msgstore.PageDigest(row))
		body, err := msgstore.DecodePageBody(row)
		require.NoError(t, err)
		paged = append(paged, body.Messages...)
	}
	require.Len(t, paged, 34, "the window begins at d17, the latest user message with 8 after it")
	assert.Equal(t, history[:34], paged, "pages hold the document's messages as they were")
}

// With an index fanout of 2 the carry holds index pages in place of the pages under
// them (wire.FoldIndex): fewer than 2 references a level. The next run answers History
// below its window with them, a reader reads every message through them, and a retry
// of a turn under an index page gets its first answer.
func TestAPagedChatFoldsItsIndex(t *testing.T) {
	st := pageStore(t)
	first := newEnv(t)
	first.withPages(t, st)
	for i := range 11 {
		first.send(time.Duration(i+1)*time.Second, msg(fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i)))
	}
	first.at(12*time.Second, func() { first.env.SetContinueAsNewSuggested(true) })
	in := pagedThread()
	in.History.IndexFanout = 2
	first.run(in, 0)
	next, _ := canInput(t, first)
	c := next.Carry
	require.NotNil(t, c.Paged)
	assert.Equal(t, 14, c.Paged.Base)
	require.Len(t, c.Paged.Pages, 1, "4 pages: two under each of 2 level-1 pages, both under one level-2 page")
	assert.Equal(t, wire.PageRef{Level: 2, Seq: 0, First: 0, Count: 14}, wire.PageRef{Level: c.Paged.Pages[0].Level, Seq: c.Paged.Pages[0].Seq, First: c.Paged.Pages[0].First, Count: c.Paged.Pages[0].Count})

	e := newEnv(t)
	e.withPages(t, st)
	retried := e.send(time.Second, msg("m1", "turn 1"))
	taken := e.send(time.Second, msg("m2", "another text under a paged turn's id"))
	var below wire.HistoryResult
	retried.then = func() { below = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: 3}) }
	e.run(next, 2*time.Second)
	require.NoError(t, retried.err, "a retry of a turn under an index page")
	assert.True(t, retried.result.Replayed)
	assert.Equal(t, []string{"m1/1"}, ids(retried.result.Messages))
	require.Error(t, taken.err)
	assert.Contains(t, taken.err.Error(), "history[4]")
	require.Len(t, below.Pages, 1)
	assert.Equal(t, 2, below.Pages[0].Level)
	got, err := transfer.ReadPages(context.Background(), map[string]msgstore.Store{below.Store: st}, below.Store, "default-test-workflow-id", below.Pages, 3, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"m1/1", "m2", "m2/1", "m3", "m3/1", "m4", "m4/1", "m5", "m5/1", "m6", "m6/1"}, ids(got))
}

// An import that fails after its first call wrote pages deletes them (the
// DeleteLineage activity) before it answers: no page of the failed import is left in
// the store.
func TestAFailedImportLeavesNoPages(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var history []chat.Message
	for i := range 21 {
		text := fmt.Sprintf("turn %d", i)
		reply := fmt.Sprintf("reply %d", i)
		if i >= 17 { // the window's 8 messages take more than one ImportChat answer (1 MiB)
			text, reply = strings.Repeat("x", 200<<10), strings.Repeat("y", 200<<10)
		}
		u := chat.TextMessage(fmt.Sprintf("d%d", i), chat.RoleUser, "", text)
		r := chat.TextMessage(fmt.Sprintf("d%d/1", i), chat.RoleAssistant, "Helper", reply)
		u.CreatedAt, r.CreatedAt, r.AgentID = at, at, "helper"
		history = append(history, u, r)
	}
	doc := helperDocument(t, at, history, 1)
	e := newEnv(t)
	st := pageStore(t)
	acts := e.withPages(t, st)
	var lineage string
	var written, calls int
	e.env.RegisterActivityWithOptions(func(ctx context.Context, in wire.ImportPageInput) (wire.ImportPage, error) {
		calls++
		if in.Offset > 0 {
			return wire.ImportPage{}, temporal.NewNonRetryableApplicationError("the document went away", wire.ErrTypeInvalidDocument, nil)
		}
		page, err := acts.ImportChat(ctx, in)
		lineage, written = in.Paging.Lineage, len(page.Pages)
		return page, err
	}, activity.RegisterOptions{Name: wire.ImportChatActivity})
	e.env.RegisterActivityWithOptions(acts.DeleteLineage, activity.RegisterOptions{Name: wire.DeleteLineageActivity})
	in := restoring(doc, "helper")
	in.History = &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4}
	// The failed start ends the run; the stop is only a guard. The test clock moves
	// with the wall clock while an activity runs, and the first ImportChat writes real
	// pages: a stop at 1 s cancelled it under -race on a loaded machine (CI dry run).
	e.run(in, time.Minute)
	require.Equal(t, 2, calls, "the second call failed")
	require.Positive(t, written, "the first call wrote pages")
	for seq := range written {
		_, err := st.GetPage(context.Background(), "default-test-workflow-id", msgstore.PageKey{Lineage: lineage, Seq: int64(seq)})
		require.ErrorIs(t, err, msgstore.ErrPageMissing, "page %d of the failed import", seq)
	}
}

// Less than a whole page past the window waits for the next hand-over: 14 messages,
// a window of 8 and pages of 4 leave 6 sealable up to the turn at 6 (one page of 4 and
// 2 over), so one page and a short one go; 10 messages leave 2, and nothing goes.
func TestContinueAsNewWaitsForAWholePage(t *testing.T) {
	for turns, want := range map[int]int{7: 6, 5: 0} {
		e := newEnv(t)
		e.withPages(t, pageStore(t))
		for i := range turns {
			e.send(time.Duration(i+1)*time.Second, msg(fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i)))
		}
		e.at(time.Duration(turns+1)*time.Second, func() { e.env.SetContinueAsNewSuggested(true) })
		e.run(pagedThread(), 0)
		next, _ := canInput(t, e)
		if want == 0 {
			assert.Nil(t, next.Carry.Paged, "%d messages", 2*turns)
			continue
		}
		require.NotNil(t, next.Carry.Paged, "%d messages", 2*turns)
		assert.Equal(t, want, next.Carry.Paged.Base, "%d messages", 2*turns)
	}
}

// A document whose one turn is longer than the window is paged inside that turn, but
// never between a call and its result: the window begins with a call, and a retry of
// the long turn gets all its replies, read from the pages and the window.
func TestALongTurnIsPagedBetweenRounds(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	history := []chat.Message{chat.TextMessage("u0", chat.RoleUser, "", "look it all up")}
	for k := range 10 {
		call := chat.Message{MessageID: fmt.Sprintf("u0/%d", 2*k+1), Role: chat.RoleAssistant, AuthorName: "Helper", AgentID: "helper",
			Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: fmt.Sprintf("c%d", k), Name: "lookup", Arguments: "{}"}}}
		result := chat.Message{MessageID: fmt.Sprintf("u0/%d", 2*k+2), Role: chat.RoleTool,
			Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: fmt.Sprintf("c%d", k), Result: "r"}}}
		history = append(history, call, result)
	}
	history = append(history, chat.TextMessage("u0/21", chat.RoleAssistant, "Helper", "all found"))
	history[len(history)-1].AgentID = "helper"
	for i := range history {
		history[i].CreatedAt = at
	}
	doc := helperDocument(t, at, history, 0)
	e := newEnv(t)
	e.withPages(t, pageStore(t))
	in := restoring(doc, "helper")
	in.History = &wire.HistoryWindow{WindowMessages: 8, PageMessages: 4}
	retried := e.send(time.Second, msg("u0", "look it all up"))
	var state wire.StateResult
	var window wire.HistoryResult
	retried.then = func() {
		state = e.state()
		window = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: state.PagedMessages})
	}
	e.run(in, 2*time.Second)
	require.NoError(t, retried.err)
	assert.True(t, retried.result.Replayed)
	assert.Len(t, retried.result.Messages, 21, "every reply of the long turn, from the pages and the window")
	require.Positive(t, state.PagedMessages, "the long turn was paged")
	require.NotEmpty(t, window.Messages)
	assert.NotEqual(t, chat.RoleTool, window.Messages[0].Role, "the window begins with a call, not a result")
}

// helperDocument encodes the document of a helper thread holding history, exported at
// at, whose maxIterations termination has counted iterations.
func helperDocument(t *testing.T, at time.Time, history []chat.Message, iterations int) []byte {
	t.Helper()
	doc, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"}, History: history,
		Participants: []chatstate.Participant{helperP},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: []byte(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: []byte(fmt.Sprintf(`{"iterations":%d}`, iterations))}}})
	require.NoError(t, err)
	return doc
}
