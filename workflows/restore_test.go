package workflows_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// document returns a canonical v1 document of a four-message helper thread with the
// given participants, channels and strategies.
func document(t *testing.T, parts []chatstate.Participant, channels []chatstate.Channel, st chatstate.Strategies, pending ...chat.Message) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	msg := func(id string, role chat.Role, agent, text string) chat.Message {
		m := chat.TextMessage(id, role, "", text)
		m.AgentID, m.CreatedAt = agent, at
		return m
	}
	if st.Selection.Type == "" {
		st.Selection = chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)}
	}
	if st.Termination.Type == "" {
		st.Termination = chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":1}`)}
	}
	b, _, err := chatstate.Encode(chatstate.Document{
		SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source: chatstate.Source{Namespace: "default", WorkflowID: "src"},
		History: []chat.Message{
			msg("m1", chat.RoleUser, "", "Hello, how are you?"), msg("m1/1", chat.RoleAssistant, parts[0].ID, "Fine."),
			msg("m2", chat.RoleUser, "", "My name is Alice"), msg("m2/1", chat.RoleAssistant, parts[0].ID, "Hi Alice."),
		},
		Participants: parts, Channels: channels, Strategies: st, PendingTurns: pending,
	})
	require.NoError(t, err)
	return b
}

var (
	helperP  = chatstate.Participant{ID: "helper", Name: "Helper", Type: "chat_completion"}
	trimmerP = chatstate.Participant{ID: "trimmer", Name: "Trimmer", Type: "chat_completion"}
)

func restoring(doc []byte, ids ...string) wire.AgentChatInput {
	return wire.AgentChatInput{Participants: ids, Restore: &wire.DocumentSource{Document: doc}}
}

func (e *env) snapshot() wire.Snapshot {
	return query[wire.Snapshot](e, wire.SnapshotQuery)
}

// Equivalent: the same kinds; every channel keeps its state and the thread goes on.
func TestRestoreEquivalent(t *testing.T) {
	e := newEnv(t)
	doc := document(t, []chatstate.Participant{helperP},
		[]chatstate.Channel{{ChannelKey: plainKey, ChannelType: "chat_history", ChannelState: json.RawMessage(`{"note":"kept"}`)}},
		chatstate.Strategies{})
	o := e.send(time.Second, msg("m3", "What's my name?"))
	var snap wire.Snapshot
	var st wire.StateResult
	e.at(2*time.Second, func() { snap, st = e.snapshot(), e.state() })
	e.run(restoring(doc, "helper"), 3*time.Second)

	require.NoError(t, o.err)
	assert.Equal(t, "helper#1 saw 5 messages, last user: What's my name?", o.result.Messages[0].Text())
	require.Len(t, st.Channels, 1)
	assert.Equal(t, wire.ChannelInfo{ChannelKey: plainKey, ChannelType: "chat_history", Active: true,
		ChannelState: st.Channels[0].ChannelState}, st.Channels[0])
	assert.JSONEq(t, `{"note":"kept"}`, string(st.Channels[0].ChannelState), "State shows the channel's state")
	assert.JSONEq(t, `{"note":"kept"}`, string(snap.Channels[0].ChannelState))
	assert.Equal(t, 3, st.TurnCount)
	assert.NotEmpty(t, st.RestoredDigest)
}

// Enhanced: the target adds a kind; its new channel is synchronized from the primary
// history (the trimmer's first call sees the restored history, reduced to 4).
func TestRestoreEnhanced(t *testing.T) {
	e := newEnv(t)
	doc := document(t, []chatstate.Participant{helperP},
		[]chatstate.Channel{{ChannelKey: plainKey, ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)}},
		chatstate.Strategies{})
	o := e.send(time.Second, msg("m3", "Who is here?"))
	var st wire.StateResult
	e.at(2*time.Second, func() { st = e.state() })
	e.run(restoring(doc, "helper", "trimmer"), 3*time.Second)

	require.NoError(t, o.err)
	require.Len(t, o.result.Messages, 2)
	assert.Equal(t, "trimmer", o.result.Messages[1].AgentID)
	trimmerInput := e.model.calls[1].History
	assert.Equal(t, []string{"m2", "m2/1", "m3", "m3/1"}, ids(trimmerInput), "the new channel sees the primary history, reduced")
	require.Len(t, st.Channels, 2)
	assert.True(t, st.Channels[0].Active && st.Channels[1].Active)
	assert.Equal(t, trimmerKey, st.Channels[1].ChannelKey)
}

// Reduced: the target lacks a kind; that channel's state is kept (and exported again
// unchanged), and resumed when the agent rejoins.
func TestRestoreReducedKeepsAndResumesTheMissingChannel(t *testing.T) {
	e := newEnv(t)
	dormant := json.RawMessage(`{"keepFrom":"m2","summary":"Alice said hello"}`)
	doc := document(t, []chatstate.Participant{helperP, trimmerP}, []chatstate.Channel{
		{ChannelKey: plainKey, ChannelType: "chat_history", ChannelState: json.RawMessage(`{}`)},
		{ChannelKey: trimmerKey, ChannelType: "chat_history", ChannelState: dormant},
		{ChannelKey: chat.ChannelKey("responses_thread", "endpoint=x"), ChannelType: "responses_thread",
			ChannelState: json.RawMessage(`{"previousResponseId":"resp_1","syncedThrough":"m2/1"}`)},
	}, chatstate.Strategies{})
	var before, after wire.StateResult
	var snap wire.Snapshot
	e.at(time.Second, func() { before, snap = e.state(), e.snapshot() })
	e.at(2*time.Second, func() {
		e.env.UpdateWorkflow(wire.AddParticipantsUpdate, "add", &noopCallbacks{t: t}, wire.AddParticipantsInput{AgentIDs: []string{"trimmer"}})
	})
	o := e.send(3*time.Second, msg("m3", "Back again"))
	e.at(4*time.Second, func() { after = e.state() })
	e.run(restoring(doc, "helper"), 5*time.Second)

	require.Len(t, before.Channels, 3)
	assert.Equal(t, []bool{true, false, false}, []bool{before.Channels[0].Active, before.Channels[1].Active, before.Channels[2].Active})
	require.Len(t, snap.Channels, 3, "dormant channels are exported again")
	assert.JSONEq(t, string(dormant), string(snap.Channels[1].ChannelState))
	assert.JSONEq(t, `{"previousResponseId":"resp_1","syncedThrough":"m2/1"}`, string(snap.Channels[2].ChannelState))

	require.NoError(t, o.err)
	assert.Equal(t, []string{"assistant:helper", "assistant:trimmer"}, authors(o.result.Messages))
	require.Len(t, after.Channels, 3, "the rejoining agent resumed its channel rather than opening a new one")
	assert.True(t, after.Channels[1].Active)
	assert.Equal(t, trimmerKey, after.Channels[1].ChannelKey)
}

type noopCallbacks struct{ t *testing.T }

func (n *noopCallbacks) Accept()                   {}
func (n *noopCallbacks) Reject(err error)          { n.t.Errorf("update rejected: %v", err) }
func (n *noopCallbacks) Complete(_ any, err error) { assert.NoError(n.t, err) }

// Empty: a chat with no participants fails fast and runs nothing.
func TestRestoreWithoutParticipantsFailsFast(t *testing.T) {
	e := newEnv(t)
	e.run(restoring(document(t, []chatstate.Participant{helperP}, nil, chatstate.Strategies{})), 0)
	var app *temporal.ApplicationError
	require.True(t, errors.As(e.env.GetWorkflowError(), &app))
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.Contains(t, app.Error(), "at least one participant")
	assert.Zero(t, e.model.count())
}

// Invalid target: an import into a chat with history is refused and the chat goes on.
func TestImportIntoAChatWithHistoryIsRefused(t *testing.T) {
	e := newEnv(t)
	doc := document(t, []chatstate.Participant{helperP}, nil, chatstate.Strategies{})
	first := e.send(time.Second, msg("x1", "I was here first"))
	var rejected error
	e.at(2*time.Second, func() {
		e.env.UpdateWorkflow(wire.ImportUpdate, "imp", &rejectCallbacks{err: &rejected},
			wire.ImportInput{Source: wire.DocumentSource{Document: doc}})
	})
	later := e.send(3*time.Second, msg("x2", "still working?"))
	e.run(thread(), 4*time.Second)

	require.NoError(t, first.err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(rejected, &app), "%v", rejected)
	assert.Equal(t, wire.ErrTypeNotEmpty, app.Type())
	require.NoError(t, later.err)
	assert.Contains(t, later.result.Messages[0].Text(), "saw 3 messages", "the target kept only its own history")
}

type rejectCallbacks struct{ err *error }

func (r *rejectCallbacks) Accept()             {}
func (r *rejectCallbacks) Reject(err error)    { *r.err = err }
func (r *rejectCallbacks) Complete(any, error) {}

// Bad digest, version or shape: the chat fails at once, naming the field.
func TestRestoreOfABadDocumentFailsNamingTheField(t *testing.T) {
	good := string(document(t, []chatstate.Participant{helperP}, nil, chatstate.Strategies{}))
	for field, bad := range map[string]string{
		"digest":        replaceFirst(good, "Hi Alice.", "Hi Mallory."),
		"schemaVersion": replaceFirst(good, `"schemaVersion":1`, `"schemaVersion":2`),
	} {
		e := newEnv(t)
		e.run(restoring([]byte(bad), "helper"), 0)
		var app *temporal.ApplicationError
		require.True(t, errors.As(e.env.GetWorkflowError(), &app), field)
		assert.Equal(t, wire.ErrTypeInvalidDocument, app.Type(), field)
		assert.Contains(t, app.Error(), field)
	}
}

func replaceFirst(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("not found: " + old)
}

// Strategy state survives: a restored group chat continues with the agent that was
// next, mapped by id even when the new chat lists its participants in another order;
// queued turns are answered after the restore, and a retried queued messageId gets
// that answer.
func TestRestoredGroupChatContinuesWithTheNextAgentAndItsQueuedTurns(t *testing.T) {
	e := newEnv(t)
	writer := chatstate.Participant{ID: "writer", Name: "Writer", Type: "chat_completion"}
	reviewer := chatstate.Participant{ID: "reviewer", Name: "Reviewer", Type: "chat_completion"}
	pending := chat.TextMessage("queued", chat.RoleUser, "Alice", "Was queued at export")
	doc := document(t, []chatstate.Participant{writer, reviewer}, nil, chatstate.Strategies{
		Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":1}`)},
		Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":1}`)},
	}, pending)
	retry := e.send(2*time.Second, msg("queued", "Was queued at export"))
	in := restoring(doc, "reviewer", "writer")
	in.Termination = strategies.TerminationStrategy{MaxIterations: 1}
	var hist []chat.Message
	e.at(3*time.Second, func() { hist = e.history() })
	e.run(in, 4*time.Second)

	require.NoError(t, retry.err)
	require.Len(t, retry.result.Messages, 1)
	assert.Equal(t, "reviewer", retry.result.Messages[0].AgentID, "the reviewer was next")
	assert.Equal(t, 1, e.model.count(), "the queued turn was answered once")
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "queued", "queued/1"}, ids(hist))
}
