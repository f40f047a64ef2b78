package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// longDocument writes a helper thread of turns (a user message and a reply each) whose
// references take at least stubBytes, and returns its path and message count.
func longDocument(t *testing.T, stubBytes int) (string, int) {
	return writeLongDocument(t, stubBytes, false)
}

// longTurnDocument is longDocument of one turn: a user message, then replies only, so
// that an import cannot write any of it to pages before the chat exists (pages begin
// at a turn), and the document length limit applies to all of it.
func longTurnDocument(t *testing.T, stubBytes int) (string, int) {
	return writeLongDocument(t, stubBytes, true)
}

func writeLongDocument(t *testing.T, stubBytes int, oneTurn bool) (string, int) {
	t.Helper()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var history []chat.Message
	for i, size := 0, 0; size < stubBytes; i++ {
		u := chat.TextMessage(fmt.Sprintf("m%d", i), chat.RoleUser, "Alice", fmt.Sprintf("turn %d", i))
		if oneTurn && i > 0 {
			u.Role, u.AgentID = chat.RoleAssistant, "helper"
		}
		r := chat.TextMessage(fmt.Sprintf("m%d/1", i), chat.RoleAssistant, "Helper", fmt.Sprintf("reply %d", i))
		u.CreatedAt, r.CreatedAt, r.AgentID = at, at, "helper"
		history = append(history, u, r)
		size += wire.StubBytes(u) + wire.StubBytes(r)
	}
	b, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "long", ExportedAt: at,
		Source:       chatstate.Source{Namespace: "default", WorkflowID: "long"},
		History:      history,
		Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: []byte(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: []byte(`{"iterations":1}`)}},
	})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "long.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path, len(history)
}

// Fault 5: a chat restored from a document of 24,000 messages took no turn, and its
// Export and History failed ("Blob data size exceeds limit"). Such a document now
// imports (all but its last turns go to pages) and works. One whose last turn alone
// (what the chat holds in its workflow) passes the length limit is refused before
// anything is created, naming the limit; the Import update refuses it too and the chat
// stays empty and working.
func TestDocumentOverTheLengthLimitIsRefused(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	long, n := longDocument(t, 2_900_000) // about 24,000 messages
	imported := testenv.ChatID(t) + "-paged"
	st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: imported, Path: long})
	require.NoError(t, err)
	assert.Equal(t, n, st.MessageCount)
	send(t, h, imported, "after", "one more")
	hist, err := h.StoreClient().History(ctxFor(t), imported, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Len(t, hist.Messages, n+2)
	doc, _, err := h.Client.Export(ctxFor(t), imported)
	require.NoError(t, err)
	decoded, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Len(t, decoded.History, n+2)

	id := testenv.ChatID(t)
	for _, stubBytes := range []int{2_900_000, wire.DocumentLengthLimit + 1} { // about 24,000 messages; just over
		path, n := longTurnDocument(t, stubBytes)
		t.Logf("%d messages", n)
		_, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Path: path})
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprint(wire.DocumentLengthLimit))
		_, err = h.Temporal.DescribeWorkflowExecution(ctxFor(t), id, "")
		require.Error(t, err, "nothing was created")
	}
	path, _ := longTurnDocument(t, wire.DocumentLengthLimit+1)

	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = h.Client.ImportInto(ctxFor(t), id, nil, path)
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeInvalidDocument, appType(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.DocumentLengthLimit))
	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Zero(t, st.MessageCount)
	send(t, h, id, "m1", "Hello")
}

// A chat restored just under ChatLengthLimit takes turns past it (its older messages
// go to pages of the message store); at every step it continues as new under the
// payload limit, and History, Export, Import and Migrate work on it. The document it
// exports (past the chat limit, under the document limit) imports again.
func TestChatAtItsLengthLimitStillWorksEverywhere(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue})
	path, n := longDocument(t, wire.ChatLengthLimit-1200)
	id := testenv.ChatID(t)
	// A raw start: the restore by URI, and a budget that makes every run hand over.
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore:       &wire.DocumentSource{URI: transfer.FileURI(path)},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 40}}
	_, err := a.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: a.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := a.Client.State(ctxFor(t), id)
		return err == nil && st.MessageCount == n
	}, time.Minute, 200*time.Millisecond)

	const answered = 20
	for i := range answered {
		_, err := a.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("new%d", i), Text: "one more"})
		require.NoError(t, err, "turn %d: a chat past ChatLengthLimit takes turns", i)
	}

	st, err := a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Positive(t, st.Runs, "the chat continued as new on the way")

	hist, err := a.StoreClient().History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Len(t, hist.Messages, n+2*answered)
	assert.Equal(t, n+2*answered, hist.Total)

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	decoded, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Len(t, decoded.History, n+2*answered)
	copyID := id + "-copy"
	st = importBytes(t, ctxFor(t), a, copyID, doc) // the chat's own export imports
	assert.Equal(t, n+2*answered, st.MessageCount)

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	st, err = b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, n+2*answered, st.MessageCount)

	for _, h := range []*testenv.Harness{a, b} {
		for _, chatID := range []string{id, copyID} {
			assertNoRunFailed(t, h, chatID)
		}
	}
}

// assertNoRunFailed checks that no run of chatID in h's namespace was terminated or
// failed by Temporal, and that no event carried a payload near the 2 MiB limit.
func assertNoRunFailed(t *testing.T, h *testenv.Harness, chatID string) {
	t.Helper()
	resp, err := h.Temporal.ListWorkflow(ctxFor(t), &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: h.Namespace, Query: fmt.Sprintf("WorkflowId = %q", chatID)})
	require.NoError(t, err)
	for _, e := range resp.GetExecutions() {
		switch e.GetStatus() {
		case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
			t.Errorf("run %s of %q: %s", e.GetExecution().GetRunId(), chatID, e.GetStatus())
		}
		assert.Less(t, largestPayload(t, h, chatID, e.GetExecution().GetRunId()), int64(wire.CarryLimit+64<<10))
	}
}

// A raw Temporal client (not this package's) that sends a message over the payload
// limit is refused by Temporal itself; the chat is unharmed and takes the next turn.
func TestRawOversizeUpdateAndSignalLeaveTheChatWorking(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: messageLimit})
	require.NoError(t, err)
	huge := ofBytes("huge", 2_500_000)
	hd, err := h.Temporal.UpdateWorkflow(ctxFor(t), client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: wire.SendMessageUpdate,
		Args: []any{huge}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		var r agentchat.TurnResult
		err = hd.Get(ctxFor(t), &r)
	}
	require.Error(t, err)
	require.Error(t, h.Temporal.SignalWorkflow(ctxFor(t), id, "", wire.UserMessageSignal, ofBytes("huge2", 2_500_000)))

	res := send(t, h, id, "m1", "still here?")
	assert.Len(t, res.Messages, 1)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 2, st.MessageCount)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, id))
}
