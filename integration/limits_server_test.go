package integration_test

// The README's limits (### Limits) on the real server, each at the limit and one byte
// over it: at the limit the chat works and no run is terminated or failed; over it the
// input is refused with an error naming the limit, and nothing is written.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// limitsAt is the time of the messages of this file's documents.
var limitsAt = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// helperDocument encodes a helper thread's document with history and pending turns.
func helperDocument(t *testing.T, history, pending []chat.Message) []byte {
	t.Helper()
	b, _, err := chatstate.Encode(chatstate.Document{SchemaVersion: 1, ChatID: "limits", ExportedAt: limitsAt,
		Source:       chatstate.Source{Namespace: "default", WorkflowID: "limits"},
		History:      history,
		PendingTurns: pending,
		Participants: []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}},
		Strategies: chatstate.Strategies{Selection: chatstate.Strategy{Type: "sequential", State: []byte(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: []byte(`{"iterations":1}`)}},
	})
	require.NoError(t, err)
	return b
}

// historyOfStubBytes returns a helper thread whose messages' references take exactly n
// bytes (HistoryStubBytes): one turn of a user message and replies, and a last user
// message whose author name takes up the rest.
func historyOfStubBytes(n int) []chat.Message {
	var history []chat.Message
	size := 0
	last := func(author string) chat.Message {
		m := chat.TextMessage("last", chat.RoleUser, author, "the last one")
		m.CreatedAt = limitsAt
		return m
	}
	floor := wire.StubBytes(last("A"))
	for i := 0; ; i++ {
		u := chat.TextMessage(fmt.Sprintf("m%d", i), chat.RoleUser, "Alice", fmt.Sprintf("turn %d", i))
		r := chat.TextMessage(fmt.Sprintf("m%d/1", i), chat.RoleAssistant, "Helper", fmt.Sprintf("reply %d", i))
		u.CreatedAt, r.CreatedAt, r.AgentID = limitsAt, limitsAt, "helper"
		if i > 0 { // one turn: an import writes no page of it, and the limit applies to all of it
			u.Role, u.AgentID = chat.RoleAssistant, "helper"
		}
		pair := wire.StubBytes(u) + wire.StubBytes(r)
		if size+pair+floor > n {
			break
		}
		history, size = append(history, u, r), size+pair
	}
	return append(history, last(strings.Repeat("A", n-size-floor+1)))
}

// A document whose references take exactly DocumentLengthLimit imports; it exports,
// imports again and migrates, and the chat it makes, past ChatLengthLimit, takes new
// turns: the import wrote its older messages to pages of the message store. One byte more is refused naming DocumentLengthLimit, and
// nothing is created. With encryption at rest on, the same holds of the documents as
// envelopes (the encrypted form is about 4/3 of the plain one, base64) and of payloads
// that carry ciphertext.
func TestDocumentAtTheLengthLimitAndJustOver(t *testing.T) {
	t.Run("plain", func(t *testing.T) { documentAtTheLengthLimitAndJustOver(t, nil) })
	t.Run("encrypted", func(t *testing.T) { documentAtTheLengthLimitAndJustOver(t, testRing(t, "k1")) })
}

func documentAtTheLengthLimitAndJustOver(t *testing.T, keys *keyring.Ring) {
	a := testenv.New(t, testenv.Options{Keys: keys})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue, Keys: keys})
	// sealed is the document as the client writes it to a file: an envelope when keys
	// are on.
	sealed := func(doc []byte) []byte {
		if keys == nil {
			return doc
		}
		d, _, err := chatstate.Decode(doc)
		require.NoError(t, err)
		env, err := a.Client.SealDocument(doc, d.Digest)
		require.NoError(t, err)
		require.True(t, envelope.IsEnvelope(env), "sealed as an envelope")
		return env
	}
	at := historyOfStubBytes(wire.DocumentLengthLimit)
	require.Equal(t, wire.DocumentLengthLimit, wire.HistoryStubBytes(at))
	over := historyOfStubBytes(wire.DocumentLengthLimit + 1)
	require.Equal(t, wire.DocumentLengthLimit+1, wire.HistoryStubBytes(over))

	overID := testenv.ChatID(t) + "-over"
	path := filepath.Join(t.TempDir(), "over.json")
	require.NoError(t, os.WriteFile(path, sealed(helperDocument(t, over, nil)), 0o644))
	_, err := a.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: overID, Path: path})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.DocumentLengthLimit))
	assert.Contains(t, err.Error(), "DocumentLengthLimit")
	_, err = a.Temporal.DescribeWorkflowExecution(ctxFor(t), overID, "")
	require.Error(t, err, "nothing was created")

	id := testenv.ChatID(t)
	st := importBytes(t, ctxFor(t), a, id, sealed(helperDocument(t, at, nil)))
	assert.Equal(t, len(at), st.MessageCount)

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	decoded, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	require.Len(t, decoded.History, len(at))
	assert.Equal(t, wire.DocumentLengthLimit, wire.HistoryStubBytes(decoded.History), "the export is at the limit too")
	copyID := id + "-copy"
	st = importBytes(t, ctxFor(t), a, copyID, sealed(doc))
	assert.Equal(t, len(at), st.MessageCount, "the chat's own export imports")
	if keys != nil {
		ex, err := a.Client.ExportSealed(ctxFor(t), id)
		require.NoError(t, err)
		require.True(t, envelope.IsEnvelope(ex.Bytes), "ExportSealed writes an envelope")
		opened, _, err := envelope.Open(ex.Bytes, envelope.Options{Ring: keys})
		require.NoError(t, err)
		again, _, err := chatstate.Decode(opened)
		require.NoError(t, err, "the envelope holds a valid document")
		assert.True(t, reflect.DeepEqual(decoded.History, again.History), "the envelope holds the chat's history")
		st = importBytes(t, ctxFor(t), a, id+"-sealed", ex.Bytes)
		assert.Equal(t, len(at), st.MessageCount, "the sealed export imports")
	}

	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	assert.Equal(t, len(at), res.MessageCount)
	t.Cleanup(func() { _ = b.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })
	hist, err := b.StoreClient().History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, len(at))
	assert.Equal(t, at[len(at)-1].AuthorName, hist.Messages[len(at)-1].AuthorName)
	_, err = b.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "new", Text: "one more"})
	require.NoError(t, err, "a chat past ChatLengthLimit takes turns: its import wrote the older messages to pages")
	assertOneLiveChat(t, id, a, b)
	for _, h := range []*testenv.Harness{a, b} {
		assertNoRunFailed(t, h, id)
	}
	assertNoRunFailed(t, a, copyID)
}

// The turns waiting behind a slow one fill QueuedTurnsLimit exactly: the chat exports
// and migrates while full, and the target answers every carried turn. A message one byte larger than the room
// left is refused QueueFull, naming the limit, and nothing of it is written.
func TestQueueAtItsLimitExportsAndMigrates(t *testing.T) {
	a := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		{Text: "slow", Delay: wire.Duration(6 * time.Second)}}}}})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: messageLimit})
	require.NoError(t, err)
	slow := ofBytes("slow", 100)
	_, err = a.Client.Post(ctxFor(t), id, slow)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := a.Client.State(ctxFor(t), id)
		return err == nil && st.ActiveTurn == "slow"
	}, time.Minute, 50*time.Millisecond)
	accept(t, a, id, ofBytes("q1", 700_000))
	rest := wire.QueuedTurnsLimit - 100 - 700_000

	// One byte over: the update's validator refuses it (a raw update: the Go client
	// would retry QueueFull until the queue drains).
	hd, err := a.Temporal.UpdateWorkflow(ctxFor(t), client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: wire.SendMessageUpdate,
		Args: []any{ofBytes("q2-over", rest+1)}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = hd.Get(ctxFor(t), nil)
	}
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeQueueFull, appType(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.QueuedTurnsLimit))
	assert.Contains(t, err.Error(), "QueuedTurnsLimit")

	accept(t, a, id, ofBytes("q2", rest))
	st, err := a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Nil(t, st.LastError)
	require.Equal(t, "slow", st.ActiveTurn, "the slow turn outlasts the filling")
	assert.Equal(t, []string{"q1", "q2"}, st.PendingTurns)

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err, "export while the queue is full")
	decoded, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	require.Equal(t, []string{"slow", "q1", "q2"}, messageIDs(decoded.PendingTurns))
	queued := 0
	for _, m := range decoded.PendingTurns {
		m.CreatedAt = time.Time{}
		queued += wire.MessageBytes(m)
	}
	assert.Equal(t, wire.QueuedTurnsLimit, queued, "the document carries the full queue")

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err, "migrate while the queue is full")
	require.Eventually(t, func() bool {
		st, err := b.Client.State(ctxFor(t), id)
		return err == nil && st.TurnCount == 3 && len(st.PendingTurns) == 0 && st.ActiveTurn == ""
	}, time.Minute, 100*time.Millisecond, "the carried turns are answered in the target")
	withStore := agentchat.NewClient(b.Temporal, agentchat.ClientOptions{TaskQueue: b.TaskQueue, Namespace: b.Namespace,
		MessageStores: map[string]msgstore.Store{b.MessageStore.Name(): b.MessageStore}})
	hist, err := withStore.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"slow", "slow/1", "q1", "q1/1", "q2", "q2/1"}, messageIDs(hist.Messages))
	assert.Equal(t, 700_000, wire.MessageBytes(chat.Message{MessageID: "q1", Role: chat.RoleUser, Contents: hist.Messages[2].Contents}),
		"the queued turn arrived whole")
	assertOneLiveChat(t, id, a, b)
	for _, h := range []*testenv.Harness{a, b} {
		assertNoRunFailed(t, h, id)
	}
}

// accept sends msg to the chat as a SendMessage update and returns once the chat has
// accepted it (queued behind the active turn), not answered.
func accept(t *testing.T, h *testenv.Harness, chatID string, msg agentchat.SendMessageInput) {
	t.Helper()
	_, err := h.Temporal.UpdateWorkflow(ctxFor(t), client.UpdateWorkflowOptions{WorkflowID: chatID, UpdateName: wire.SendMessageUpdate,
		Args: []any{msg}, WaitForStage: client.WorkflowUpdateStageAccepted})
	require.NoError(t, err, "turn %q accepted", msg.MessageID)
}

// pageHistory is a thread whose first two messages fill a History page exactly (as
// the page counts: each message's encoded bytes and a comma), plus extra bytes, and a
// third small message.
func pageHistory(extra int) []chat.Message {
	u := chat.TextMessage("m1", chat.RoleUser, "Alice", "x")
	r := chat.TextMessage("m1/1", chat.RoleAssistant, "Helper", "x")
	next := chat.TextMessage("m2", chat.RoleUser, "Alice", "and then?")
	u.CreatedAt, r.CreatedAt, next.CreatedAt, r.AgentID = limitsAt, limitsAt, limitsAt, "helper"
	u.Contents = []chat.Content{chat.Text(strings.Repeat("u", 600_000))}
	room := wire.HistoryPageBytes - (wire.MessageBytes(u) + 1) - (wire.MessageBytes(r) + 1)
	r.Contents = []chat.Content{chat.Text(strings.Repeat("r", 1+room+extra))}
	return []chat.Message{u, r, next}
}

// A History page holds messages up to HistoryPageBytes exactly; the message that takes
// it over starts the next page, and Client.History reads on and returns them all.
func TestHistoryPageAtTheLimitAndJustOver(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	for _, c := range []struct {
		name  string
		extra int
		page  int
	}{{"at", 0, 2}, {"over", 1, 1}} {
		history := pageHistory(c.extra)
		id := testenv.ChatID(t) + "-" + c.name
		importBytes(t, ctxFor(t), h, id, helperDocument(t, history, nil))

		v, err := h.Temporal.QueryWorkflow(ctxFor(t), id, "", wire.HistoryQuery, wire.HistoryInput{})
		require.NoError(t, err)
		var page wire.HistoryResult
		require.NoError(t, v.Get(&page))
		require.Len(t, page.Messages, c.page, c.name)
		assert.Equal(t, 3, page.Total)
		size := 0
		for i, m := range page.Messages {
			require.NotNil(t, m.Contents, "message %d is inline", i)
			size += wire.MessageBytes(m) + 1
		}
		if c.page == 2 {
			assert.Equal(t, wire.HistoryPageBytes, size, "the page is at the limit")
		}

		all, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
		require.NoError(t, err)
		require.Equal(t, []string{"m1", "m1/1", "m2"}, messageIDs(all.Messages), c.name)
		assert.Equal(t, history[1].Text(), all.Messages[1].Text())
		res := send(t, h, id, "m3", "still there?")
		assert.Contains(t, res.Messages[0].Text(), "received 5 messages")
		assertNoRunFailed(t, h, id)
	}
}

// toolArgs returns `{"q":"a…"}` such that a reply of one call of lookup with these
// arguments encodes, as InvokeAgent measures it, to exactly n bytes.
func toolArgs(callID string, n int) string {
	args := func(k int) string { return `{"q":"` + strings.Repeat("a", k) + `"}` }
	base := wire.MessageBytes(chat.Message{Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: callID, Name: "lookup", Arguments: args(0)}}})
	return args(n - base)
}

// A model reply with a tool call that encodes to exactly ReplyInlineLimit is taken and
// its call runs; one byte more fails the turn (ModelRequestRejected, naming the limit),
// the tool is not called, and the chat goes on. The endpoint does not stream.
func TestReplyWithToolCallsAtTheInlineLimitAndJustOver(t *testing.T) {
	config := `
endpoints:
  plain: {baseURL: "http://offline.invalid/v1", stream: false}
tools:
  lookup: {description: "Look something up"}
agents:
  - {id: helper, name: Helper, model: offline, endpoint: plain, tools: [lookup], contextTokens: 1000000, call: {initialInterval: 50ms, maxAttempts: 2}}
`
	var calls atomic.Int32
	var argBytes atomic.Int64
	lookup := func(_ context.Context, args json.RawMessage) (string, error) {
		calls.Add(1)
		argBytes.Store(int64(len(args)))
		return "found", nil
	}
	at, over := toolArgs("c1", wire.ReplyInlineLimit), toolArgs("c2", wire.ReplyInlineLimit+1)
	h := testenv.New(t, testenv.Options{Config: config, Tools: map[string]activities.ToolFunc{"lookup": lookup},
		Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup", Arguments: at}}},
			{Text: "done"},
			{ToolCalls: []offline.ToolCall{{ID: "c2", Name: "lookup", Arguments: over}}},
		}}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)

	res := send(t, h, id, "m1", "look it up")
	require.Len(t, res.Messages, 3, "the call, its result and the answer")
	require.NotNil(t, res.Messages[0].Contents, "the reply with the call is inline")
	assert.Equal(t, wire.ReplyInlineLimit, wire.MessageBytes(chat.Message{Contents: res.Messages[0].Contents}))
	assert.Equal(t, int32(1), calls.Load(), "the call ran")
	assert.Equal(t, int64(len(at)), argBytes.Load(), "with its arguments whole")
	assert.Nil(t, res.Messages[1].Contents, "past HistoryPageBytes, the turn's later messages are references")
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Equal(t, []string{"m1", "m1/1", "m1/2", "m1/3"}, messageIDs(hist.Messages))
	assert.Equal(t, "found", hist.Messages[2].Contents[0].Result)
	assert.Equal(t, "[offline] helper: done", hist.Messages[3].Text())

	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m2", Text: "again"})
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeTurnFailed, appType(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.ReplyInlineLimit))
	assert.Contains(t, err.Error(), "ReplyInlineLimit")
	assert.Equal(t, int32(1), calls.Load(), "the call over the limit did not run")
	hist, err = h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	for _, m := range hist.Messages {
		for _, c := range m.Contents {
			assert.NotEqual(t, "c2", c.CallID, "nothing of the refused reply is written")
		}
	}
	assertNoRunFailed(t, h, id)
}

// taskBytes is what one workflow task's completion sent the server, as the events its
// commands and messages became: the size of those events, and of the largest update
// result and continue-as-new input among them.
type taskBytes struct {
	events, update, carry int
}

// completions returns, per workflow task of a run, the events that followed its
// WorkflowTaskCompleted event, measured.
func completions(t *testing.T, h *testenv.Harness, id, runID string) []taskBytes {
	t.Helper()
	it := h.Temporal.GetWorkflowHistory(ctxFor(t), id, runID, false, 0)
	var out []taskBytes
	in := false
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			out, in = append(out, taskBytes{}), true
			continue
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			in = false
		}
		if !in {
			continue
		}
		last := &out[len(out)-1]
		last.events += proto.Size(ev)
		if a := ev.GetWorkflowExecutionUpdateCompletedEventAttributes(); a != nil {
			last.update = max(last.update, proto.Size(a.GetOutcome()))
		}
		if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
			last.carry = max(last.carry, proto.Size(a.GetInput()))
		}
	}
	return out
}

// The most one workflow task sends: a chat at its length limit (its continue-as-new
// input near CarryLimit) answers turns with replies at ReplyInlineLimit (the update's
// result near HistoryPageBytes) and continues as new. Every task's completion stays
// under temporalGRPCLimit, and no run fails.
// temporalGRPCLimit is the Temporal server's gRPC message limit (4 MiB): a workflow
// task's completion, commands and all, must fit one.
const temporalGRPCLimit = 4 << 20

func TestLargestWorkflowTaskStaysUnderTheGRPCLimit(t *testing.T) {
	// Room for the 8 turns' references: a reply's reference holds its usage too.
	path, n := longDocument(t, wire.ChatLengthLimit-4000)
	big := replyOfBytes(wire.ReplyInlineLimit)
	script := make([]offline.Reply, n/2+20) // every reply, at whatever place, is at the limit
	for i := range script {
		script[i] = offline.Reply{Text: big}
	}
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": script}}})
	id := testenv.ChatID(t)
	in := wire.AgentChatInput{Version: wire.InputVersion, Participants: []string{"helper"},
		Restore:       &wire.DocumentSource{URI: transfer.FileURI(path)},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 30}}
	_, err := h.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: h.TaskQueue}, wire.WorkflowType, in)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && st.MessageCount == n
	}, time.Minute, 200*time.Millisecond)

	largest, results, continued := 0, 0, 0
	for i := 0; i < 8; i++ {
		before := currentRun(t, h, id)
		res, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("big%d", i), Text: "a long answer, please"})
		require.NoError(t, err, "turn %d", i)
		require.NotNil(t, res.Messages[0].Contents, "the reply is inline")
		require.Eventually(t, func() bool { // a run ends at the end of a task: look once it has
			d, err := h.Temporal.DescribeWorkflowExecution(ctxFor(t), id, before.runID)
			return err == nil && (d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING ||
				d.GetPendingWorkflowTask() == nil)
		}, 10*time.Second, 50*time.Millisecond)
		for _, task := range completions(t, h, id, before.runID) {
			largest = max(largest, task.events)
			if task.update > wire.ReplyInlineLimit {
				results++
			}
		}
		if currentRun(t, h, id).runID != before.runID {
			continued++
		}
	}
	t.Logf("%d results over ReplyInlineLimit, %d continues-as-new; the largest task %d bytes", results, continued, largest)
	require.Positive(t, results, "a task returned a turn's result with a reply at the limit")
	require.Positive(t, continued, "the chat at its length limit continued as new")
	assert.Less(t, largest, temporalGRPCLimit, "every task's completion fits a gRPC message")
	assertNoRunFailed(t, h, id)
}
