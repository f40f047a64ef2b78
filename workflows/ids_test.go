package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// requireUniqueIDs fails the test when two messages of msgs share a messageId.
func requireUniqueIDs(t *testing.T, msgs []chat.Message) {
	t.Helper()
	seen := map[string]int{}
	for i, m := range msgs {
		if j, dup := seen[m.MessageID]; dup {
			t.Fatalf("history[%d].messageId %q is also history[%d]'s: %q", i, m.MessageID, j, ids(msgs))
		}
		seen[m.MessageID] = i
	}
}

// requireRefused fails the test unless err is an application error of type typ whose
// message names id.
func requireRefused(t *testing.T, err error, typ, id string) {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want a %s error, got %v", typ, err)
	assert.Equal(t, typ, app.Type(), app.Message())
	assert.Contains(t, app.Message(), `"`+id+`"`)
}

// A user turn may not take the id of a reply: sent after the reply (update or signal),
// it is refused, naming the id; the chat goes on with unique ids.
func TestUserTurnWithAReplysIDIsRefused(t *testing.T) {
	e := newEnv(t)
	first := e.send(time.Second, msg("y", "plain id y"))
	taken := e.send(2*time.Second, msg("y/1", "the id of y's reply"))
	var st wire.StateResult
	e.at(3*time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("y/1", "again, by signal")) })
	after := e.send(4*time.Second, msg("z", "next"))
	var hist []chat.Message
	e.at(5*time.Second, func() { hist = e.history() })
	e.at(3500*time.Millisecond, func() { st = e.state() })
	e.run(thread(), 6*time.Second)

	require.NoError(t, first.err)
	require.Equal(t, "y/1", first.result.Messages[0].MessageID)
	requireRefused(t, taken.rejected, wire.ErrTypeInvalidMessage, "y/1")
	require.NotNil(t, st.LastError, "the refused signal shows in State")
	assert.Equal(t, wire.ErrTypeInvalidMessage, st.LastError.Type)
	assert.Contains(t, st.LastError.Message, `"y/1"`)
	require.NoError(t, after.err)
	assert.Equal(t, []string{"y", "y/1", "z", "z/1"}, ids(hist))
}

// A reply never takes the id of a user turn sent before it: "y/1" first, then "y",
// whose reply skips to the next free id, which a later turn may not take.
func TestReplyIDsSkipTheIDsOfUserTurns(t *testing.T) {
	e := newEnv(t)
	a := e.send(time.Second, msg("y/1", "a turn id with a slash"))
	b := e.send(2*time.Second, msg("y", "plain id y"))
	c := e.send(3*time.Second, msg("y/2", "the id y's reply took"))
	d := e.send(3*time.Second, msg("y/3", "a free id"))
	var hist []chat.Message
	e.at(4*time.Second, func() { hist = e.history() })
	e.run(thread(), 5*time.Second)

	for _, o := range []*outcome{a, b, d} {
		require.NoError(t, o.rejected)
		require.NoError(t, o.err)
	}
	requireRefused(t, c.rejected, wire.ErrTypeInvalidMessage, "y/2")
	assert.Contains(t, c.rejected.Error(), `agent "helper"'s reply`)
	requireUniqueIDs(t, hist)
	assert.Equal(t, []string{"y/1", "y/1/1", "y", "y/2", "y/3", "y/3/1"}, ids(hist))
	assert.Equal(t, "y/2", b.result.Messages[0].MessageID, "y's reply skips the id of turn y/1")
}

// In a group chat, a user turn that arrives while a turn runs may not take the id of
// the reply in flight, and a later reply of that turn skips an id a queued turn took.
func TestQueuedTurnsAndRepliesInFlightKeepIDsApart(t *testing.T) {
	e := newEnv(t)
	e.slowModel(time.Second)
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"}}
	z := e.send(time.Second, msg("z", "write"))
	inFlight := e.send(1500*time.Millisecond, msg("z/1", "the id of the reply in flight"))
	ahead := e.send(1600*time.Millisecond, msg("z/2", "the id of the reply to come"))
	var hist []chat.Message
	e.at(10*time.Second, func() { hist = e.history() })
	e.run(in, 11*time.Second)

	requireRefused(t, inFlight.rejected, wire.ErrTypeInvalidMessage, "z/1")
	require.NoError(t, z.err)
	require.NoError(t, ahead.rejected)
	require.NoError(t, ahead.err)
	requireUniqueIDs(t, hist)
	require.Len(t, z.result.Messages, 2)
	assert.Equal(t, "z/1", z.result.Messages[0].MessageID)
	assert.NotEqual(t, "z/2", z.result.Messages[1].MessageID, "the reviewer's reply skips the queued turn's id")
}

// A reply whose body its model call put in the message store keeps its id when its turn
// is taken back: the store holds that id's body for good. The turn sent again gets
// other reply ids, and no user turn may take that id.
func TestIDsOfStoredRepliesOfTakenBackTurnsStayTaken(t *testing.T) {
	e := newEnv(t)
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"}}
	e.model.errs["reviewer#1"] = temporal.NewNonRetryableApplicationError("down", wire.ErrTypeModelRejected, nil)
	e.env.OnActivity(wire.InvokeAgentActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in wire.InvokeInput) (wire.InvokeResult, error) {
			res, err := e.model.invoke(ctx, in)
			if err == nil && in.AgentID == "writer" { // a large reply: its body went to the store
				res.Contents, res.Stored = nil, "sqlite"
			}
			return res, err
		})
	failed := e.send(time.Second, msg("y", "write"))
	taken := e.send(2*time.Second, msg("y/1", "the id of the stored reply taken back"))
	again := e.send(3*time.Second, msg("y", "write"))
	var hist []chat.Message
	e.at(4*time.Second, func() { hist = e.history() })
	e.run(in, 5*time.Second)

	require.Error(t, failed.err)
	requireRefused(t, taken.rejected, wire.ErrTypeInvalidMessage, "y/1")
	require.NoError(t, again.err)
	requireUniqueIDs(t, hist)
	require.Len(t, again.result.Messages, 2)
	assert.NotEqual(t, "y/1", again.result.Messages[0].MessageID, "a stored body's id is never given to another message")
}

// A document from another framework may use any ids, "/" included. Restored, its ids
// stay taken: a user turn may not take one, and replies skip them.
func TestImportedIDsOfAnyShapeStayUnique(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	doc, _, err := chatstate.Encode(chatstate.Document{
		SchemaVersion: 1, ChatID: "src", ExportedAt: at, Source: chatstate.Source{Namespace: "default", WorkflowID: "src"},
		History: []chat.Message{
			docMsg("a/1", chat.RoleUser, "", "first", at), docMsg("b/1", chat.RoleAssistant, "helper", "one", at),
			docMsg("b", chat.RoleUser, "", "second", at), docMsg("x", chat.RoleAssistant, "helper", "two", at),
		},
		Participants: []chatstate.Participant{helperP},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":1}`)},
		},
	})
	require.NoError(t, err)
	e := newEnv(t)
	taken := e.send(time.Second, msg("b/1", "the id of an imported reply"))
	retry := e.send(2*time.Second, msg("b", "second"))
	a := e.send(3*time.Second, msg("a", "its reply would be a/1"))
	var hist []chat.Message
	e.at(4*time.Second, func() { hist = e.history() })
	e.run(restoring(doc, "helper"), 5*time.Second)

	requireRefused(t, taken.rejected, wire.ErrTypeInvalidMessage, "b/1")
	require.NoError(t, retry.err)
	assert.Equal(t, []string{"x"}, ids(retry.result.Messages), "a retry of an imported turn gets its answer")
	require.NoError(t, a.err)
	assert.Equal(t, "a/2", a.result.Messages[0].MessageID)
	requireUniqueIDs(t, hist)
	assert.Equal(t, []string{"a/1", "b/1", "b", "x", "a", "a/2"}, ids(hist))
}

// docMsg is a message of a document.
func docMsg(id string, role chat.Role, agent, text string, at time.Time) chat.Message {
	m := chat.TextMessage(id, role, "", text)
	m.AgentID, m.CreatedAt = agent, at
	return m
}

// A model call whose reply the message store refuses because it holds the reply's id
// with another body (an earlier attempt stored its reply, then the call was made again)
// fails the turn, and the chat gives that id up: the turn sent again gets another.
func TestReplyIDTheStoreHoldsIsGivenUp(t *testing.T) {
	e := newEnv(t)
	e.model.errs["helper#1"] = temporal.NewNonRetryableApplicationError(
		`msgstore: sqlite put chat "c": message "y/1": message id already stored with a different body`,
		wire.ErrTypeStoreConflict, nil)
	failed := e.send(time.Second, msg("y", "hello"))
	taken := e.send(2*time.Second, msg("y/1", "the id the store holds"))
	again := e.send(3*time.Second, msg("y", "hello"))
	e.run(thread(), 4*time.Second)

	var app *temporal.ApplicationError
	require.True(t, errors.As(failed.err, &app), "%v", failed.err)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
	requireRefused(t, taken.rejected, wire.ErrTypeInvalidMessage, "y/1")
	require.NoError(t, again.err)
	assert.Equal(t, "y/2", again.result.Messages[0].MessageID)
}
