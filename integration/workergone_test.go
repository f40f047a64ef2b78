package integration_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
)

// A worker that stopped a moment ago stays in the server's list of the task queue's
// pollers for a while, so the list says a worker is there when none is. Every call
// that needs a worker still says within the client's WorkerWait that none took its
// task (ErrNoWorker, naming the task queue and the worker command), and what it left:
// a start, import or temporary thread leaves nothing (the chat it created is deleted,
// its id free again); a turn names its messageId, as it may still run once a worker
// is back, and sending it again with that id does not take it twice.
func TestCallsSayNoWorkerWithinTheWaitWhenTheWorkerStoppedAMomentAgo(t *testing.T) {
	const wait = 2 * time.Second
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, h, id, "m1", "Hello")
	doc, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)

	h.StopWorker()
	c := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, WorkerWait: wait})
	require.NoError(t, c.CheckWorker(ctxFor(t), ""), "the premise: the stopped worker is still listed as polling")

	noWorker := func(what string, call func(ctx context.Context) error) error {
		t.Helper()
		began := time.Now()
		err := call(ctxFor(t))
		took := time.Since(began)
		require.Error(t, err, what)
		assert.ErrorIs(t, err, agentchat.ErrNoWorker, "%s: %v", what, err)
		assert.Contains(t, err.Error(), "go run ./worker --offline --task-queue "+h.TaskQueue, what)
		assert.Less(t, took, wait+6*time.Second, "%s waited %s", what, took)
		saysWaited(t, what, err, took)
		return err
	}
	gone := func(chatID string) {
		t.Helper()
		require.Eventually(t, func() bool {
			_, err := h.Temporal.DescribeWorkflowExecution(context.Background(), chatID, "")
			var nf *serviceerror.NotFound
			return errors.As(err, &nf)
		}, 30*time.Second, 100*time.Millisecond, "chat %s was left on the server", chatID)
	}

	newID := id + "-new"
	err = noWorker("start", func(ctx context.Context) error {
		_, err := c.Start(ctx, agentchat.StartOptions{ChatID: newID, Participants: []string{"helper"}})
		return err
	})
	assert.Contains(t, err.Error(), "nothing is left")
	gone(newID)

	err = noWorker("send", func(ctx context.Context) error {
		_, err := c.Send(ctx, id, agentchat.SendMessageInput{MessageID: "m2", Text: "Are you there?"})
		return err
	})
	assert.Contains(t, err.Error(), `messageId "m2"`, "the turn may still run: the error names it")

	streamed := noWorker("send streamed", func(ctx context.Context) error {
		for _, err := range c.SendStream(ctx, id, agentchat.SendMessageInput{MessageID: "m3", Text: "Still there?"}) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	assert.Contains(t, streamed.Error(), "nothing was sent", "it asks the chat first")

	noWorker("state", func(ctx context.Context) error { _, err := c.State(ctx, id); return err })
	noWorker("history", func(ctx context.Context) error {
		_, err := c.History(ctx, id, agentchat.HistoryInput{})
		return err
	})
	noWorker("export", func(ctx context.Context) error { _, _, err := c.Export(ctx, id); return err })

	importID := id + "-import"
	err = noWorker("import", func(ctx context.Context) error {
		_, err := c.Import(ctx, agentchat.ImportOptions{ChatID: importID, Document: doc})
		return err
	})
	assert.Contains(t, err.Error(), "nothing is left")
	gone(importID)

	runID := id + "-run"
	noWorker("run", func(ctx context.Context) error {
		_, err := c.Run(ctx, agentchat.RunOptions{ChatID: runID, Agents: []string{"helper"}}, agentchat.SendMessageInput{Text: "Hi"})
		return err
	})
	gone(runID)

	streamID := id + "-stream"
	noWorker("start streamed", func(ctx context.Context) error {
		for _, err := range c.StartStream(ctx, agentchat.StartOptions{ChatID: streamID, Participants: []string{"helper"}},
			agentchat.SendMessageInput{Text: "Hi"}) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	gone(streamID)

	// The server gives up on a query no worker takes after about 10 s, before a longer
	// WorkerWait: the error says how long the call waited, not the wait configured.
	long := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, WorkerWait: 40 * time.Second})
	began := time.Now()
	_, err = long.State(ctxFor(t), id)
	took := time.Since(began)
	require.ErrorIs(t, err, agentchat.ErrNoWorker)
	assert.Contains(t, err.Error(), `chat "`+id+`"`)
	saysWaited(t, "state, long wait", err, took)

	// A worker is back: the ids are free, and the turns sent meanwhile are each taken
	// once, whether they ran when it came back or are sent again now.
	h.StartWorker(t)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: newID, Participants: []string{"helper"}})
	require.NoError(t, err, "the id of the failed start is free")
	send(t, h, id, "m2", "Are you there?")
	send(t, h, id, "m3", "Still there?")
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 6, st.MessageCount, "three turns of one reply each, none taken twice")
}

// saysWaited checks that err's "within D" names no longer a wait than the call took.
func saysWaited(t *testing.T, what string, err error, took time.Duration) {
	t.Helper()
	m := regexp.MustCompile(`within ([0-9.]+(?:ms|s|m))`).FindStringSubmatch(err.Error())
	if m == nil {
		return // the error does not state a wait
	}
	d, perr := time.ParseDuration(m[1])
	require.NoError(t, perr, what)
	assert.LessOrEqual(t, d, took+time.Second, "%s: it says it waited %s; it took %s: %v", what, d, took, err)
}

// A chat whose task queue no worker polls is refused before anything is sent, and the
// error names the chat, its task queue and that nothing was sent.
func TestCheckChatWorkerNamesTheChatAndThatNothingWasSent(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	tq := "nobody-polls-" + id
	_, err := h.Temporal.ExecuteWorkflow(ctxFor(t), client.StartWorkflowOptions{ID: id, TaskQueue: tq}, "AgentChat")
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })
	c := agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, WorkerWait: time.Second})
	began := time.Now()
	err = c.CheckChatWorker(ctxFor(t), id)
	require.ErrorIs(t, err, agentchat.ErrNoWorker)
	assert.Contains(t, err.Error(), `chat "`+id+`"`)
	assert.Contains(t, err.Error(), tq)
	assert.Contains(t, err.Error(), "nothing was sent")
	saysWaited(t, "check chat worker", err, time.Since(began))
}
