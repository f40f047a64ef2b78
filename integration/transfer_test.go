package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// assertRemembers sends "What did we talk about?" to chatID and checks that the model
// received the whole earlier conversation.
func assertRemembers(t *testing.T, h *testenv.Harness, chatID string, earlierMessages int, earlierUser ...string) {
	t.Helper()
	res := send(t, h, chatID, "recap", "What did we talk about?")
	text := res.Messages[0].Text()
	// system + the earlier messages + this one
	assert.Contains(t, text, fmt.Sprintf("received %d messages", earlierMessages+2), text)
	for _, u := range earlierUser {
		assert.Contains(t, text, fmt.Sprintf("%q", u), text)
	}
}

func TestExportThenImportIntoANewChat(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	src := testenv.ChatID(t)
	seedThread(t, h, src)

	doc, digest, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)
	parsed, _, err := chatstate.Decode(doc)
	require.NoError(t, err)
	assert.Equal(t, digest, parsed.Digest)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1"}, messageIDs(parsed.History))
	assert.Equal(t, []chatstate.Participant{{ID: "helper", Name: "Helper", Type: "chat_completion"}}, parsed.Participants)
	require.Len(t, parsed.Channels, 1)
	assert.Equal(t, chat.ChannelKey("chat_history", "reducer=none"), parsed.Channels[0].ChannelKey)
	assert.Equal(t, "default", parsed.Source.Namespace)
	assert.NotContains(t, string(doc), "You are a helpful assistant", "agent instructions never leave the worker")

	dst := testenv.ChatID(t) + "-restored"
	st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: dst, Document: doc})
	require.NoError(t, err)
	assert.Equal(t, digest, st.RestoredDigest)
	assert.Equal(t, 4, st.MessageCount)
	assert.Equal(t, 2, st.TurnCount)
	assertRemembers(t, h, dst, 4, "Hello, how are you?", "My name is Alice")

	// The restored chat dedupes the source's messageIds: a retried m2 calls no model.
	before := h.Model.Requests("helper")
	again := send(t, h, dst, "m2", "My name is Alice")
	assert.Equal(t, "m2/1", again.Messages[0].MessageID)
	assert.Equal(t, before, h.Model.Requests("helper"))
	// The source is untouched.
	srcState, err := h.Client.State(ctxFor(t), src)
	require.NoError(t, err)
	assert.Equal(t, 4, srcState.MessageCount)
}

func TestExportUpdateWritesToTheWorkersSinks(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedThread(t, h, id)
	inline, err := h.Client.ExportTo(ctxFor(t), id, wire.ExportInput{Sink: wire.SinkInline})
	require.NoError(t, err)
	doc, _, err := chatstate.Decode(inline.Document)
	require.NoError(t, err)
	assert.Equal(t, inline.Digest, doc.Digest)
	assert.Equal(t, 4, inline.MessageCount)

	path := filepath.Join(t.TempDir(), "sub", "chat.json")
	file, err := h.Client.ExportTo(ctxFor(t), id, wire.ExportInput{Sink: wire.SinkFile, Path: path})
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	fromFile, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, doc.History, fromFile.History, "both sinks hold the same chat")
	assert.Equal(t, file.Digest, fromFile.Digest)
	assert.Equal(t, "file://"+path, file.URI)
	assert.Zero(t, len(file.Document))
}

// Whichever way a chat is exported (the client's queries, or the worker's Export
// update), the document's source names the chat's run it was read from.
func TestEveryExportNamesTheRunItReadFrom(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedThread(t, h, id)
	desc, err := h.Temporal.DescribeWorkflowExecution(ctxFor(t), id, "")
	require.NoError(t, err)
	run := desc.WorkflowExecutionInfo.Execution.RunId
	require.NotEmpty(t, run)

	plain, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	inline, err := h.Client.ExportTo(ctxFor(t), id, wire.ExportInput{Sink: wire.SinkInline})
	require.NoError(t, err)
	for name, b := range map[string][]byte{"client": plain, "worker": inline.Document} {
		doc, _, err := chatstate.Decode(b)
		require.NoError(t, err, name)
		assert.Equal(t, chatstate.Source{Namespace: "default", WorkflowID: id, RunID: run, Cluster: doc.Source.Cluster}, doc.Source, name)
	}
}

// An export whose chat continues as new between its Snapshot query and its History
// queries reads the history from the run that answered the snapshot (its id pinned):
// the document is that run's chat, whole and named as such, and the turn the next run
// took meanwhile is not in it, nor is any message missing or doubled.
func TestAnExportRacingContinueAsNewReadsTheSnapshotsRun(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedThread(t, h, id)
	before, _, err := h.Client.Export(ctxFor(t), id)
	require.NoError(t, err)
	want, _, err := chatstate.Decode(before)
	require.NoError(t, err)
	first := runID(t, h.Temporal, id)

	doc, history, err := transfer.StreamDocument(ctxFor(t), h.Temporal, id, "", transfer.Source{Namespace: "default"}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, first, doc.Source.RunID, "the snapshot names the run it came from")
	// Between the snapshot and the history: the chat hands over to a new run, which
	// takes a turn.
	require.NoError(t, h.Client.Reencrypt(ctxFor(t), id))
	require.Eventually(t, func() bool { return runID(t, h.Temporal, id) != first }, 30*time.Second, 100*time.Millisecond,
		"the chat continues as new")
	send(t, h, id, "m3", "Still there?")

	var got []chat.Message
	require.NoError(t, history(func(m chat.Message) error { got = append(got, m); return nil }))
	assert.Equal(t, want.History, got, "the history of the snapshot's run, as an export before the hand-over read it")
	doc.History = got
	b, _, err := chatstate.Encode(doc)
	require.NoError(t, err)
	again, _, err := chatstate.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, first, again.Source.RunID)
	assert.Equal(t, want.Participants, again.Participants)
	assert.Equal(t, want.Channels, again.Channels)
}

func TestImportRefusalsLeaveNothingBehind(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	src := testenv.ChatID(t)
	seedThread(t, h, src)
	doc, _, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)

	for name, c := range map[string]struct {
		doc   []byte
		field string
	}{
		"bad digest":  {[]byte(replaceOnce(string(doc), "My name is Alice", "My name is Mallory")), "digest"},
		"bad version": {[]byte(replaceOnce(string(doc), `"schemaVersion":1`, `"schemaVersion":9`)), "schemaVersion"},
		"malformed":   {[]byte(`{"schemaVersion":1,"history":[}`), ""},
	} {
		t.Run(name, func(t *testing.T) {
			id := testenv.ChatID(t)
			_, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: id, Document: c.doc})
			require.Error(t, err)
			require.ErrorIs(t, err, chatstate.ErrInvalidDocument)
			if c.field != "" {
				var fe *chatstate.FieldError
				require.True(t, errors.As(err, &fe), "%v", err)
				assert.Equal(t, c.field, fe.Field)
			}
			_, err = h.Temporal.DescribeWorkflowExecution(ctxFor(t), id, "")
			require.Error(t, err, "nothing was created")
		})
	}

	t.Run("empty participants", func(t *testing.T) {
		empty := []byte(`{"schemaVersion":1}`)
		_, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: testenv.ChatID(t), Document: empty})
		require.Error(t, err)
	})

	t.Run("target with history", func(t *testing.T) {
		busy := testenv.ChatID(t)
		seedThread(t, h, busy)
		_, err := h.Client.ImportInto(ctxFor(t), busy, doc, "")
		var app *temporal.ApplicationError
		require.True(t, errors.As(err, &app), "%v", err)
		assert.Equal(t, wire.ErrTypeNotEmpty, app.Type())
		assert.Contains(t, err.Error(), "already has 4 messages")
		// The target keeps working.
		res := send(t, h, busy, "m3", "still here?")
		assert.Contains(t, res.Messages[0].Text(), "received 6 messages")
	})

	t.Run("into an empty chat", func(t *testing.T) {
		empty := testenv.ChatID(t)
		_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: empty, Participants: []string{"helper"}})
		require.NoError(t, err)
		st, err := h.Client.ImportInto(ctxFor(t), empty, doc, "")
		require.NoError(t, err)
		assert.Equal(t, 4, st.MessageCount)
		assertRemembers(t, h, empty, 4, "My name is Alice")
	})
}

func replaceOnce(s, old, new string) string {
	i := indexOf(s, old)
	if i < 0 {
		panic("not found: " + old)
	}
	return s[:i] + new + s[i+len(old):]
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// Two workers on one task queue in two namespaces of one server.
func TestMigrateBetweenNamespaces(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	b := testenv.New(t, testenv.Options{Namespace: "agentchat-test-b", TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	seedThread(t, a, id)

	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	assert.Equal(t, b.Namespace, res.Target.Namespace)
	assert.Equal(t, id, res.Target.ChatID)
	assert.Equal(t, 4, res.MessageCount)

	// The source closed, naming the target; a SendMessage to it says where the chat went.
	_, err = a.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{Text: "hello?"})
	var moved *agentchat.MigratedError
	require.True(t, errors.As(err, &moved), "%v", err)
	assert.Equal(t, b.Namespace, moved.Target.Namespace)
	assert.Contains(t, err.Error(), `namespace "agentchat-test-b"`)
	st, err := b.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, res.Digest, st.RestoredDigest)

	// In the target, the next reply shows the whole earlier conversation.
	assertRemembers(t, b, id, 4, "Hello, how are you?", "My name is Alice")

	// Migrating again to the same place reports the same migration.
	again, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	assert.Equal(t, res.Digest, again.Digest)
	assertOneLiveChat(t, id, a, b)
}

// Two clusters: two dev servers on two ports.
func TestMigrateBetweenClusters(t *testing.T) {
	second := testenv.SecondCluster(t)
	a := testenv.New(t, testenv.Options{Clusters: map[string]string{"east": second}})
	b := testenv.New(t, testenv.Options{Address: second, TaskQueue: a.TaskQueue})
	id := testenv.ChatID(t)
	seedThread(t, a, id)

	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToCluster: "east"})
	require.NoError(t, err)
	assert.Equal(t, "east", res.Target.Cluster)
	assertRemembers(t, b, id, 4, "Hello, how are you?", "My name is Alice")

	_, err = a.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{Text: "hello?"})
	require.ErrorIs(t, err, agentchat.ErrChatMigrated)
	assert.Contains(t, err.Error(), `cluster "east"`)
	assertOneLiveChat(t, id, a, b)
}

func TestMigrationToAnUnknownClusterFailsAndTheChatGoesOn(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedThread(t, h, id)
	_, err := h.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToCluster: "nowhere"})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeMigrationFailed, app.Type())
	assert.Contains(t, err.Error(), `unknown cluster "nowhere"`)
	res := send(t, h, id, "m3", "still here?")
	assert.Contains(t, res.Messages[0].Text(), "received 6 messages")
}

// The migrating worker dies while the migration waits for the target; a signal
// arrives meanwhile; a new worker and a re-run finish the job: one live chat, every
// turn once.
func TestMigrationFinishesAfterTheMigratingWorkerCrashes(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	ns := testenv.Namespace(t, "agentchat-test-crash")
	id := testenv.ChatID(t)
	seedThread(t, a, id)
	// The target's worker has polled, then stopped (as a crashed one would have): the
	// migration starts the target and waits for it in "starting target".
	b := testenv.New(t, testenv.Options{Namespace: ns, TaskQueue: a.TaskQueue})
	b.StopWorker()

	first := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := a.Client.Migrate(ctx, id, agentchat.MigrateOptions{ToNamespace: ns})
		first <- err
	}()
	require.Eventually(t, func() bool {
		st, err := a.Client.State(ctxFor(t), id)
		return err == nil && st.Migration != nil && st.Migration.Phase == "starting target"
	}, 20*time.Second, 50*time.Millisecond)
	_, err := a.Client.Post(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "late", Text: "sent during the migration"})
	require.NoError(t, err)
	_, err = a.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{Text: "update during the migration"})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeMigrating, app.Type(), "an update during a migration gets a clear, retryable error")

	a.StopWorker() // the crash
	require.Error(t, <-first, "the first caller gave up")

	a.StartWorker(t)
	b.StartWorker(t)
	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: ns})
	require.NoError(t, err)
	assert.Equal(t, ns, res.Target.Namespace)

	// The late signal reached the target exactly once.
	require.Eventually(t, func() bool {
		hist, err := b.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
		return err == nil && hist.Total == 6
	}, 20*time.Second, 100*time.Millisecond)
	hist, err := b.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "late", "late/1"}, messageIDs(hist.Messages))
	assertOneLiveChat(t, id, a, b)
}

// A migration to a namespace that does not exist fails at once, one where no worker
// serves the task queue after activities.TargetWorkerWait, with what to do, and the
// chat goes on where it was.
func TestMigrationToAnUnservedTargetFailsAtOnce(t *testing.T) {
	a := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	seedThread(t, a, id)
	for ns, want := range map[string]string{
		"agentchat-test-missing":                        `namespace "agentchat-test-missing" does not exist`,
		testenv.Namespace(t, "agentchat-test-unserved"): "no worker serves task queue",
	} {
		start := time.Now()
		_, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: ns})
		require.Error(t, err, ns)
		assert.Contains(t, err.Error(), want)
		assert.NotRegexp(t, `go run|temporal operator`, err.Error(), "clients in any language read it: no command-line tool named (the CLI adds its hint)")
		assert.Less(t, time.Since(start), activities.TargetWorkerWait+10*time.Second, "no long wait for nothing")
	}
	res := send(t, a, id, "m3", "still here?")
	assert.Contains(t, res.Messages[0].Text(), "received 6 messages")
}
