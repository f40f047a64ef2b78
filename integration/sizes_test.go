package integration_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/keyring"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// The limits under test, as the README's table names them.
const (
	messageLimit = wire.MaxMessageBytesLimit
	defaultLimit = wire.DefaultMaxMessageBytes
)

// ofBytes returns a user turn whose message encodes to exactly n bytes.
func ofBytes(id string, n int) agentchat.SendMessageInput {
	b, _ := json.Marshal(chat.Message{MessageID: id, Role: chat.RoleUser, Contents: []chat.Content{chat.Text("x")}})
	return agentchat.SendMessageInput{MessageID: id, Text: strings.Repeat("x", n-len(b)+1)}
}

// Fault 3: a user message over about 2 MB got "unexpected workflow task failure" instead
// of the size refusal, and Post checked 256 KiB whatever the chat's own limit. Send and
// Post take a message at the chat's limit, refuse one byte more, and refuse what no chat
// accepts before sending it; nothing is written and the chat goes on.
func TestSendAndPostAtTheLimitAndJustOver(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: messageLimit})
	require.NoError(t, err)

	res, err := h.Client.Send(ctxFor(t), id, ofBytes("at", messageLimit))
	require.NoError(t, err, "a message at the limit")
	require.Len(t, res.Messages, 1)

	_, err = h.Client.Send(ctxFor(t), id, ofBytes("over", messageLimit+1))
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.MaxMessageBytesLimit))

	_, err = h.Client.Send(ctxFor(t), id, ofBytes("huge", 2_500_000))
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.MaxMessageBytesLimit))

	_, err = h.Client.Post(ctxFor(t), id, ofBytes("post-over", messageLimit+1))
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)

	// Post takes what this chat takes, past the default 256 KiB.
	_, err = h.Client.Post(ctxFor(t), id, ofBytes("post-at", messageLimit))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && st.MessageCount == 4
	}, time.Minute, 100*time.Millisecond)

	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Nil(t, st.LastError)
	assert.Equal(t, 2, st.TurnCount)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, workflowStatus(t, h, id))
	send(t, h, id, "after", "still here?")
}

// Post of a message over the chat's own limit (but under what any chat takes) is refused
// by the client, which asks the chat its limit (State's maxMessageBytes) first, as Send's
// update is refused: nothing is sent. A raw signal so large cannot be refused to its
// sender: the chat records the refusal, naming its limit, in State's lastError.
func TestPostOverTheChatsOwnLimitIsRecorded(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = h.Client.Post(ctxFor(t), id, ofBytes("p0", defaultLimit+1))
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprint("at most ", wire.DefaultMaxMessageBytes))
	_, err = h.Client.Post(ctxFor(t), id, ofBytes("p-at", defaultLimit))
	require.NoError(t, err, "at the limit it is sent")
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && st.TurnCount == 1
	}, time.Minute, 100*time.Millisecond)

	err = h.Temporal.SignalWorkflow(ctxFor(t), id, "", wire.UserMessageSignal, ofBytes("p1", defaultLimit+1))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := h.Client.State(ctxFor(t), id)
		return err == nil && st.LastError != nil
	}, time.Minute, 100*time.Millisecond)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, wire.ErrTypeInvalidMessage, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, fmt.Sprint("at most ", wire.DefaultMaxMessageBytes))
	assert.Equal(t, wire.DefaultMaxMessageBytes, st.MaxMessageBytes, "State says the chat's limit")
	assert.Equal(t, 2, st.MessageCount, "the turn at the limit and its reply; nothing of the others")
}

// Fault 2: maxMessageBytes had no upper bound; a chat started with 8 MiB was terminated by
// Temporal when a 3 MB message arrived. Start refuses it, naming the limit, before anything
// is created; a raw start fails the workflow at once with InvalidInput.
func TestMaxMessageBytesOverTheLimitIsRefused(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: 8 << 20})
	require.ErrorIs(t, err, agentchat.ErrInvalidOptions)
	assert.Contains(t, err.Error(), fmt.Sprint(wire.MaxMessageBytesLimit))
	_, err = h.Temporal.DescribeWorkflowExecution(ctxFor(t), id, "")
	require.Error(t, err, "nothing was started")

	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: messageLimit})
	require.NoError(t, err, "at the limit")
}

// Fault 4: a chat holding a model reply over 2 MB (kept in the message store) exported,
// but its import failed ("Complete result exceeds size limit"), leaving a failed workflow
// and an id that could never be used again, and its migration never finished. Such a chat
// now imports and migrates, and the reply arrives whole.
func TestChatWithAReplyOverThePayloadLimitImportsAndMigrates(t *testing.T) {
	big := strings.Repeat("z", 2_200_000)
	a := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Text: big}}}}})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, a, id, "m1", "Write me a book")
	send(t, a, id, "m2", "Thanks")

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	copyID := id + "-copy"
	st := importBytes(t, ctxFor(t), a, copyID, doc) // the import of an exported chat works
	assert.Equal(t, 4, st.MessageCount)
	hist, err := storeClient(a).History(ctxFor(t), copyID, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 4)
	assert.Equal(t, "[offline] helper: "+big, hist.Messages[1].Text())
	send(t, a, copyID, "m3", "And now?")

	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err, "the migration finishes")
	assert.Equal(t, 4, res.MessageCount)
	next := send(t, b, id, "m3", "Still there?")
	assert.Contains(t, next.Messages[0].Text(), "received 6 messages", "the big reply reached the model in the target")
	assertOneLiveChat(t, id, a, b)
}

// replyOfBytes is a scripted text whose reply (as the offline model prefixes it) encodes,
// as the activity measures it, to exactly n bytes.
func replyOfBytes(n int) string {
	const prefix = "[offline] helper: "
	base := wire.MessageBytes(chat.Message{Contents: []chat.Content{chat.Text(prefix + "x")}})
	return strings.Repeat("r", n-base+1)
}

// A reply at ReplyInlineLimit stays in the workflow; one byte more goes to the message
// store and the turn answers with a reference. Both export, import and migrate, and the
// imported chat holds them whole; also with encryption at rest on, where every payload
// and store row carries ciphertext.
func TestReplyAtTheInlineLimitAndJustOver(t *testing.T) {
	t.Run("plain", func(t *testing.T) { replyAtTheInlineLimitAndJustOver(t, nil) })
	t.Run("encrypted", func(t *testing.T) { replyAtTheInlineLimitAndJustOver(t, testRing(t, "k1")) })
}

func replyAtTheInlineLimitAndJustOver(t *testing.T, keys *keyring.Ring) {
	at, over := replyOfBytes(wire.ReplyInlineLimit), replyOfBytes(wire.ReplyInlineLimit+1)
	a := testenv.New(t, testenv.Options{Keys: keys, Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Text: at}, {Text: over}}}}})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue, Keys: keys})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: messageLimit})
	require.NoError(t, err)
	first := send(t, a, id, "m1", "at the limit")
	require.NotNil(t, first.Messages[0].Contents, "inline")
	second, err := a.Client.Send(ctxFor(t), id, ofBytes("m2", messageLimit))
	require.NoError(t, err)
	require.Nil(t, second.Messages[0].Contents, "stored")

	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	copyID := id + "-copy"
	importBytes(t, ctxFor(t), a, copyID, doc)
	hist, err := storeClient(a).History(ctxFor(t), copyID, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Len(t, hist.Messages, 4)
	assert.Equal(t, "[offline] helper: "+at, hist.Messages[1].Text())
	assert.Equal(t, "[offline] helper: "+over, hist.Messages[3].Text())
	assert.Equal(t, messageLimit, wire.MessageBytes(chat.Message{MessageID: "m2", Role: chat.RoleUser,
		Contents: hist.Messages[2].Contents}), "the user message at the limit arrived whole")

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	next := send(t, b, id, "m3", "Still there?")
	assert.Contains(t, next.Messages[0].Text(), "received 6 messages")
	for _, h := range []*testenv.Harness{a, b} {
		assertNoRunFailed(t, h, id)
	}
	assertNoRunFailed(t, a, copyID)
}

// Turns queued behind a running one travel in the export's snapshot and the document's
// header: however large they are, the chat exports and migrates while they wait. Past
// QueuedTurnsLimit a new turn is refused until the queue drains (the Go client retries
// a refused Send by itself; a signal's refusal is State's lastError).
func TestLargeQueuedTurnsExportAndMigrate(t *testing.T) {
	a := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Text: "slow", Delay: wire.Duration(3 * time.Second)}}}}})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	_, err := a.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}, MaxMessageBytes: messageLimit})
	require.NoError(t, err)
	_, err = a.Client.Post(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "slow", Text: "take your time"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := a.Client.State(ctxFor(t), id)
		return err == nil && st.ActiveTurn == "slow"
	}, time.Minute, 50*time.Millisecond)
	for i := range 3 {
		_, err := a.Client.Post(ctxFor(t), id, ofBytes(fmt.Sprintf("q%d", i), 700_000))
		require.NoError(t, err)
	}
	time.Sleep(200 * time.Millisecond)
	doc, _, err := a.Client.Export(ctxFor(t), id)
	require.NoError(t, err, "export while large turns wait")
	decoded, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	st, err := a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Len(t, decoded.PendingTurns, 1+len(st.PendingTurns))

	_, err = a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := b.Client.State(ctxFor(t), id)
		return err == nil && st.TurnCount >= 2 && len(st.PendingTurns) == 0 && st.ActiveTurn == ""
	}, time.Minute, 100*time.Millisecond)
	// The signals past the limit were refused, and the source's State says so.
	st, err = a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.LastError)
	assert.Equal(t, wire.ErrTypeQueueFull, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, fmt.Sprint(wire.QueuedTurnsLimit))
	assertNoRunFailed(t, a, id)
	assertNoRunFailed(t, b, id)
}

// A chat that could not start (here: an unknown agent) does not burn its id: the next
// start under it works.
func TestFailedStartLeavesTheIDFree(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"nobody"}})
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, appType(err), "%v", err)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, h, id, "m1", "Hello")
}

// A migration whose target cannot become the chat (its worker does not know the chat's
// agent, so its restore fails) is abandoned cleanly: the caller gets MigrationFailed,
// the source takes turns again and its State says why, and no target run is left
// running or started again and again.
func TestMigrationThatCannotFinishIsAbandoned(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue,
		Config: "agents:\n  - {id: writer, name: Writer, model: offline}\n"})
	id := testenv.ChatID(t)
	seedThread(t, a, id)
	_, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeMigrationFailed, appType(err), "%v", err)

	st, err := a.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, "running", st.Status)
	require.NotNil(t, st.LastError)
	assert.Equal(t, wire.ErrTypeMigrationFailed, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, "helper")
	send(t, a, id, "m3", "still here?")
	assertOneLiveChat(t, id, a, b)
	time.Sleep(2 * time.Second)
	runs := allRuns(t, b, id)
	assert.LessOrEqual(t, len(runs), 2, "target runs do not pile up")
}

// Fault 1, on the real server: turns of two 125,000-byte text parts (each message under
// the default maxMessageBytes) with a small history budget were terminated by Temporal at
// continue-as-new after about 11 turns. The chat now hands over run after run, under the
// payload limit, and remembers every turn.
func TestLargeTurnsAcrossContinueAsNewOnTheServer(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"},
		HistoryBudget: wire.HistoryBudget{MaxEvents: 60}})
	require.NoError(t, err)
	const turns = 16
	for i := range turns {
		_, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("t%d", i), Contents: []chat.Content{
			chat.Text(strings.Repeat("a", 125_000)), chat.Text(strings.Repeat("b", 125_000))}})
		require.NoError(t, err, "turn %d", i)
	}
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, turns, st.TurnCount)
	assert.Positive(t, st.Runs, "the chat continued as new")
	assertNoRunFailed(t, h, id)
	res := send(t, h, id, "last", "how many?")
	assert.Contains(t, res.Messages[0].Text(), `Last user message: "how many?"`)
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 2*turns+2, hist.Total, "every turn is in the history across the runs")
	// About 4 MB of turns pass the agent's context budget: the model got the latest
	// that fit, and its request stayed within the offline model's window.
	req, ok := h.Model.LastRequest("helper")
	require.True(t, ok)
	assert.Less(t, len(req.Messages), 2*turns+2, "the oldest turns were left out of the request")
	assert.LessOrEqual(t, offline.ContextTokens(req.Messages), offline.ContextWindowTokens)
}

// A temporary thread's message over the limit it would have (Run, RunStream; the
// default 256 KiB) is refused before the thread is created: nothing is left running.
func TestATemporaryThreadsOversizeMessageCreatesNoChat(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Run(ctxFor(t), agentchat.RunOptions{ChatID: id, Agents: []string{"helper"}}, ofBytes("big", defaultLimit+1))
	require.Error(t, err)
	assert.Equal(t, wire.ErrTypeInvalidMessage, appType(err), "%v", err)
	var streamErr error
	for _, err := range h.Client.RunStream(ctxFor(t), agentchat.RunOptions{ChatID: id + "-s", Agents: []string{"helper"}}, ofBytes("big", defaultLimit+1)) {
		if err != nil {
			streamErr = err
			break
		}
	}
	require.Error(t, streamErr)
	assert.Contains(t, streamErr.Error(), fmt.Sprint("at most ", wire.DefaultMaxMessageBytes))
	for _, c := range []string{id, id + "-s"} {
		_, err := h.Temporal.DescribeWorkflowExecution(ctxFor(t), c, "")
		var nf *serviceerror.NotFound
		assert.True(t, errors.As(err, &nf), "chat %s was created: %v", c, err)
	}
	res, err := h.Client.Run(ctxFor(t), agentchat.RunOptions{ChatID: id + "-at", Agents: []string{"helper"}}, ofBytes("at", defaultLimit))
	require.NoError(t, err, "at the limit the thread runs")
	assert.Len(t, res.Messages, 1)
}
