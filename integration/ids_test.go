package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/cli"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/wire"
)

// starter runs the command line against h and returns its exit code and output.
func starter(t *testing.T, h *testenv.Harness, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := cli.Execute(ctxFor(t), append([]string{"--address", testenv.Address(t), "--task-queue", h.TaskQueue}, args...),
		cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// requireUniqueIDs fails the test when two messages of msgs share a messageId.
func requireUniqueIDs(t *testing.T, msgs []chat.Message) {
	t.Helper()
	seen := map[string]int{}
	for i, m := range msgs {
		j, dup := seen[m.MessageID]
		require.False(t, dup, "history[%d].messageId %q is also history[%d]'s: %q", i, m.MessageID, j, messageIDs(msgs))
		seen[m.MessageID] = i
	}
}

// The command line of a user who picks ids that look like reply ids, in either order:
// every id stays unique, a taken id is refused with an error that names it, and the
// chat exports, continues as new with large turns and exports again.
func TestUserIDsThatLookLikeReplyIDsKeepTheChatWhole(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 60}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })

	for _, turn := range [][2]string{{"y/1", "a turn id with a slash"}, {"y", "plain id y"}} {
		code, _, errOut := starter(t, h, "send", "--chat", id, "--id", turn[0], turn[1])
		require.Zero(t, code, errOut)
	}
	// y's reply skipped y/1, so it is y/2: a user turn may not take it.
	code, _, errOut := starter(t, h, "send", "--chat", id, "--id", "y/2", "the id of y's reply")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `messageId "y/2" is taken`)
	assert.Contains(t, errOut, `agent "helper"'s reply`)

	out := filepath.Join(t.TempDir(), "d.json")
	code, _, errOut = starter(t, h, "export", "--chat", id, "--out", out)
	require.Zero(t, code, errOut)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, []string{"y/1", "y/1/1", "y", "y/2"}, messageIDs(doc.History))

	// The other order, through the client: a reply's id is refused as a turn's.
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "y/1/1", Text: "the id of y/1's reply"})
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)
	assert.Contains(t, err.Error(), `"y/1/1"`)

	// Large turns make the chat continue as new; its bodies move to the store.
	big := strings.Repeat("a", 100<<10)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	runs := st.Runs
	require.Zero(t, runs)
	for _, turn := range []string{"z/1", "z", "z/2/1", "z/2", "z/3"} {
		_, err := h.Client.Post(ctxFor(t), id, agentchat.SendMessageInput{MessageID: turn, Text: turn + " " + big})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		st, err = h.Client.State(ctxFor(t), id)
		return err == nil && st.TurnCount == 7 && len(st.PendingTurns) == 0 && st.ActiveTurn == ""
	}, time.Minute, 100*time.Millisecond)
	require.Eventually(t, func() bool {
		st, err = h.Client.State(ctxFor(t), id)
		return err == nil && st.Runs > runs
	}, time.Minute, 100*time.Millisecond, "the chat continued as new")
	assert.Nil(t, st.LastError)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, id))

	b, _, err = storeClient(h).Export(ctxFor(t), id)
	require.NoError(t, err)
	doc, _, err = chatstate.Decode(b)
	require.NoError(t, err)
	requireUniqueIDs(t, doc.History)
	assert.Len(t, doc.History, 14)
}

// A chat whose message store refuses its bodies (here: the store already holds one of
// its ids with another body, as it does for a chat id used before) is not terminated
// when its carried state passes CarryLimit: it stalls with StoreRefused, stays readable
// and exportable, and its export goes on as a new chat.
func TestAChatWhoseStoreRefusesItsBodiesStallsAndCanMoveOn(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	require.NoError(t, h.MessageStore.Put(ctxFor(t), id, []chat.Message{
		{MessageID: "m1", Role: chat.RoleUser, Contents: []chat.Content{chat.Text("another body, from before")}}}))
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		MaxMessageBytes: wire.MaxMessageBytesLimit, HistoryBudget: wire.HistoryBudget{MaxBytes: 1500 << 10}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })

	big := strings.Repeat("b", 1000<<10)
	send(t, h, id, "m1", "m1 "+big)
	send(t, h, id, "m2", "m2 "+big) // the run's history passes its budget: it hands over, or tries to

	var st agentchat.StateResult
	require.Eventually(t, func() bool {
		st, err = h.Client.State(ctxFor(t), id)
		return err == nil && st.LastError != nil
	}, time.Minute, 100*time.Millisecond, "State says why the chat stopped")
	assert.Equal(t, wire.ErrTypeStoreRefused, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, "already stored with a different body", "in the store's words")
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, id), "not terminated")
	assert.Equal(t, 4, st.MessageCount)

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m3", Text: "one more"})
	assert.Equal(t, wire.ErrTypeStoreRefused, appType(err), "%v", err)
	res := send(t, h, id, "m1", "m1 "+big)
	assert.Equal(t, "m1/1", res.Messages[0].MessageID, "a retry still gets its first answer")

	b, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	require.Len(t, doc.History, 4)
	assert.Equal(t, "m1 "+big, doc.History[0].Text(), "the export has the chat's own body")

	next := id + "-next"
	path := filepath.Join(t.TempDir(), "doc.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: next, Path: path, MaxMessageBytes: wire.MaxMessageBytesLimit})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Temporal.TerminateWorkflow(context.Background(), next, "", "test over") })
	res = send(t, h, next, "m3", "one more")
	assert.Equal(t, "m3/1", res.Messages[0].MessageID, "the chat goes on where it was imported")
}
