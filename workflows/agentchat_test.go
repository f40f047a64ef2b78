package workflows_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

func thread() wire.AgentChatInput {
	return wire.AgentChatInput{Version: 1, Participants: []string{"helper"}}
}

func TestThreadKeepsContextAcrossTurns(t *testing.T) {
	e := newEnv(t)
	a := e.send(time.Second, msg("m1", "Hello, how are you?"))
	b := e.send(2*time.Second, msg("m2", "My name is Alice"))
	c := e.send(3*time.Second, msg("m3", "What's my name?"))
	var st wire.StateResult
	e.at(4*time.Second, func() { st = e.state() })
	e.run(thread(), 5*time.Second)

	for _, o := range []*outcome{a, b, c} {
		require.True(t, o.done)
		require.NoError(t, o.err)
		require.NoError(t, o.rejected)
		require.Len(t, o.result.Messages, 1)
	}
	assert.Equal(t, "helper#1 saw 1 messages, last user: Hello, how are you?", a.result.Messages[0].Text())
	assert.Equal(t, "helper#3 saw 5 messages, last user: What's my name?", c.result.Messages[0].Text())
	// The third call's input held the whole thread, in order.
	third := e.model.calls[2].History
	assert.Equal(t, []string{"Hello, how are you?", a.result.Messages[0].Text(), "My name is Alice",
		b.result.Messages[0].Text(), "What's my name?"}, texts(third))

	reply := c.result.Messages[0]
	assert.Equal(t, "m3/1", reply.MessageID)
	assert.Equal(t, chat.RoleAssistant, reply.Role)
	assert.Equal(t, "Helper", reply.AuthorName)
	assert.Equal(t, "helper", reply.AgentID)
	assert.False(t, reply.CreatedAt.IsZero())

	assert.Equal(t, wire.StatusRunning, st.Status)
	assert.Equal(t, 6, st.MessageCount)
	assert.Equal(t, 3, st.TurnCount)
	assert.Equal(t, []wire.ParticipantInfo{{ID: "helper", Name: "Helper", Type: wire.KindChatCompletion}}, st.Participants)
	require.NotNil(t, st.LastMessage)
	assert.Equal(t, "m3/1", st.LastMessage.MessageID)
	assert.Empty(t, st.PendingTurns)
}

func TestGroupChatAlternatesAndStopsOnRegex(t *testing.T) {
	e := newEnv(t)
	e.model.replies["reviewer#2"] = "APPROVED, ship it"
	e.model.replies["writer#3"] = "approved by me too" // not the reviewer: must not end the chat
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Termination: strategies.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: "(?i)approved",
			Agents: []string{"reviewer"}, MaxIterations: 10}}
	o := e.send(time.Second, msg("m1", "A slogan for tea"))
	late := e.send(time.Minute, msg("m2", "another"))
	e.run(in, 0) // the chat completes by itself

	require.True(t, o.done)
	require.NoError(t, o.err)
	assert.Equal(t, []string{"assistant:writer", "assistant:reviewer", "assistant:writer", "assistant:reviewer"},
		authors(o.result.Messages))
	assert.Equal(t, "APPROVED, ship it", o.result.Messages[3].Text())
	assert.True(t, o.result.IsComplete)

	require.True(t, e.env.IsWorkflowCompleted())
	require.NoError(t, e.env.GetWorkflowError())
	var res wire.AgentChatResult
	require.NoError(t, e.env.GetWorkflowResult(&res))
	assert.Equal(t, wire.AgentChatResult{Status: wire.StatusCompleted, IsComplete: true, MessageCount: 5, TurnCount: 1}, res)
	// A turn after completion is refused by the validator, if it arrived at all.
	if late.done {
		assert.Error(t, late.rejected)
	}
}

func TestMaxIterationsEndsTurnAndSelectionCarriesOn(t *testing.T) {
	e := newEnv(t)
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Termination: strategies.TerminationStrategy{MaxIterations: 3}}
	a := e.send(time.Second, msg("m1", "first"))
	b := e.send(2*time.Second, msg("m2", "second"))
	var st wire.StateResult
	e.at(3*time.Second, func() { st = e.state() })
	e.run(in, 4*time.Second)

	require.NoError(t, a.err)
	require.NoError(t, b.err)
	assert.Equal(t, []string{"assistant:writer", "assistant:reviewer", "assistant:writer"}, authors(a.result.Messages))
	assert.Equal(t, []string{"assistant:reviewer", "assistant:writer", "assistant:reviewer"}, authors(b.result.Messages))
	assert.False(t, b.result.IsComplete)
	assert.False(t, st.IsComplete)
	assert.Equal(t, "maxIterations", st.Termination.Type)
	assert.Equal(t, map[string]any{"iterations": float64(3)}, st.Termination.State)
	assert.Equal(t, map[string]any{"nextIndex": float64(0)}, st.Selection.State)
}

func TestDefaultMaxIterationsIsOneReplyPerParticipant(t *testing.T) {
	e := newEnv(t)
	o := e.send(time.Second, msg("m1", "hi"))
	e.run(wire.AgentChatInput{Participants: []string{"writer", "reviewer", "helper"}}, 2*time.Second)
	require.NoError(t, o.err)
	assert.Equal(t, []string{"assistant:writer", "assistant:reviewer", "assistant:helper"}, authors(o.result.Messages))
}

func TestInitialAgentSpeaksFirst(t *testing.T) {
	e := newEnv(t)
	o := e.send(time.Second, msg("m1", "hi"))
	e.run(wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Selection: strategies.SelectionStrategy{InitialAgent: "reviewer"}}, 2*time.Second)
	require.NoError(t, o.err)
	assert.Equal(t, []string{"assistant:reviewer", "assistant:writer"}, authors(o.result.Messages))
}

func TestRetriedMessageIDReturnsFirstAnswerWithoutModelCall(t *testing.T) {
	e := newEnv(t)
	first := e.send(time.Second, msg("same", "Hello"))
	again := e.send(2*time.Second, msg("same", "Hello"))
	var calls int
	var hist []chat.Message
	e.at(3*time.Second, func() { calls, hist = e.model.count(), e.history() })
	e.run(thread(), 4*time.Second)

	require.NoError(t, first.err)
	require.NoError(t, again.err)
	assert.False(t, first.result.Replayed)
	assert.True(t, again.result.Replayed, "the repeat says it is the first answer again")
	again.result.Replayed = false
	assert.Equal(t, first.result, again.result)
	assert.Equal(t, 1, calls)
	assert.Len(t, hist, 2)
}

func TestConcurrentTurnsQueueInArrivalOrder(t *testing.T) {
	e := newEnv(t)
	var outs []*outcome
	ids := []string{"a", "b", "c", "d", "e"}
	for _, id := range ids {
		outs = append(outs, e.send(time.Second, msg(id, "turn "+id))) // all at the same instant
	}
	var hist []chat.Message
	e.at(2*time.Second, func() { hist = e.history() })
	e.run(thread(), 3*time.Second)

	for i, o := range outs {
		require.NoError(t, o.err, ids[i])
		// Turn i saw the 2i messages before it plus its own.
		assert.Contains(t, o.result.Messages[0].Text(), " saw "+strconv.Itoa(2*i+1)+" messages")
	}
	var users []string
	for _, m := range hist {
		if m.Role == chat.RoleUser {
			users = append(users, m.MessageID)
		}
	}
	assert.Equal(t, ids, users)
}

func TestValidatorRefusesBadInputAndWritesNothing(t *testing.T) {
	e := newEnv(t)
	in := thread()
	in.MaxMessageBytes = 100
	cases := map[string]wire.SendMessageInput{
		"no id":      {Text: "hi"},
		"empty":      {MessageID: "e1"},
		"blank":      {MessageID: "e2", Text: "   "},
		"oversize":   {MessageID: "e3", Text: strings.Repeat("x", 101)},
		"both":       {MessageID: "e4", Text: "a", Contents: []chat.Content{chat.Text("b")}},
		"tool input": {MessageID: "e5", Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c"}}},
	}
	outs := map[string]*outcome{}
	for name, c := range cases {
		outs[name] = e.send(time.Second, c)
	}
	var hist []chat.Message
	e.at(2*time.Second, func() { hist = e.history() })
	e.run(in, 3*time.Second)

	for name, o := range outs {
		require.True(t, o.done, name)
		var app *temporal.ApplicationError
		require.True(t, errors.As(o.rejected, &app), "%s: want a rejection, got %v / %v", name, o.rejected, o.err)
		assert.Equal(t, wire.ErrTypeInvalidMessage, app.Type(), name)
	}
	assert.Contains(t, outs["no id"].rejected.Error(), "messageId is required")
	assert.Contains(t, outs["oversize"].rejected.Error(), "at most 100")
	assert.Empty(t, hist)
	assert.Zero(t, e.model.count())
}

func TestUnknownAgentFailsTheChat(t *testing.T) {
	e := newEnv(t)
	o := e.send(0, msg("m1", "hi"))
	e.run(wire.AgentChatInput{Participants: []string{"helper", "ghost"}}, 0)

	require.True(t, e.env.IsWorkflowCompleted())
	err := e.env.GetWorkflowError()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, app.Type())
	assert.Contains(t, err.Error(), "ghost")
	require.True(t, o.done)
	require.Error(t, o.err)
	assert.Contains(t, o.err.Error(), "ghost")
	assert.Zero(t, e.model.count())
}

func TestInvalidStrategyFailsTheChat(t *testing.T) {
	e := newEnv(t)
	e.run(wire.AgentChatInput{Participants: []string{"helper"},
		Termination: strategies.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: "("}}, 0)
	err := e.env.GetWorkflowError()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.Contains(t, err.Error(), "termination pattern")
}

func TestFailedTurnLeavesNoTraceAndChatGoesOn(t *testing.T) {
	e := newEnv(t)
	e.model.errs["helper#2"] = temporal.NewNonRetryableApplicationError(
		`agent "helper": model endpoint answered 401 Unauthorized: Incorrect API key provided`, wire.ErrTypeModelRejected, nil)
	a := e.send(time.Second, msg("m1", "one"))
	b := e.send(2*time.Second, msg("m2", "two"))
	c := e.send(3*time.Second, msg("m3", "three"))
	retry := e.send(4*time.Second, msg("m2", "two"))
	var failed, st wire.StateResult
	var hist []chat.Message
	e.at(2500*time.Millisecond, func() { failed = e.state() })
	e.at(5*time.Second, func() { st, hist = e.state(), e.history() })
	e.run(thread(), 6*time.Second)

	require.NoError(t, a.err)
	require.Error(t, b.err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(b.err, &app))
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
	assert.Contains(t, b.err.Error(), "Incorrect API key provided")
	require.NoError(t, c.err)
	assert.Contains(t, c.result.Messages[0].Text(), "saw 3 messages") // m2 is not in the history
	require.NoError(t, retry.err, "a failed messageId may be sent again")
	assert.Equal(t, []string{"m1", "m1/1", "m3", "m3/1", "m2", "m2/1"}, ids(hist))
	require.NotNil(t, failed.LastError)
	assert.Equal(t, "m2", failed.LastError.MessageID)
	assert.Equal(t, wire.ErrTypeModelRejected, failed.LastError.Type)
	assert.Nil(t, st.LastError, "m2 has been answered since")
}

func ids(msgs []chat.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.MessageID)
	}
	return out
}

func TestTemporaryThreadTakesOneTurnThenCompletes(t *testing.T) {
	e := newEnv(t)
	in := thread()
	in.Temporary = true
	o := e.send(time.Second, msg("m1", "Hello, how are you?"))
	second := e.send(time.Second, msg("m2", "again"))
	e.run(in, 0)

	require.NoError(t, o.err)
	assert.Contains(t, o.result.Messages[0].Text(), "Hello, how are you?")
	require.Error(t, second.rejected)
	assert.Contains(t, second.rejected.Error(), "temporary thread")
	require.True(t, e.env.IsWorkflowCompleted())
	var res wire.AgentChatResult
	require.NoError(t, e.env.GetWorkflowResult(&res))
	assert.Equal(t, 1, res.TurnCount)
	assert.Equal(t, wire.StatusCompleted, res.Status)
}

func TestSignalTurnsAreAnsweredAndBadOnesReported(t *testing.T) {
	e := newEnv(t)
	e.at(time.Second, func() {
		e.env.SignalWorkflow(wire.UserMessageSignal, msg("s1", "by signal"))
		e.env.SignalWorkflow(wire.UserMessageSignal, wire.SendMessageInput{MessageID: "bad"})
		e.env.SignalWorkflow(wire.UserMessageSignal, msg("s1", "by signal")) // duplicate: once only
	})
	var st wire.StateResult
	var hist []chat.Message
	e.at(2*time.Second, func() { st, hist = e.state(), e.history() })
	e.run(thread(), 3*time.Second)

	assert.Equal(t, []string{"s1", "s1/1"}, ids(hist))
	require.NotNil(t, st.LastError)
	assert.Equal(t, "bad", st.LastError.MessageID)
	assert.Equal(t, wire.ErrTypeInvalidMessage, st.LastError.Type)
}

func TestHistoryPages(t *testing.T) {
	e := newEnv(t)
	for i, id := range []string{"a", "b", "c"} {
		e.send(time.Duration(i+1)*time.Second, msg(id, id))
	}
	var page wire.HistoryResult
	e.at(5*time.Second, func() {
		v, err := e.env.QueryWorkflow(wire.HistoryQuery, wire.HistoryInput{Offset: 2, Limit: 3})
		require.NoError(t, err)
		require.NoError(t, v.Get(&page))
	})
	e.run(thread(), 6*time.Second)
	assert.Equal(t, 6, page.Total)
	assert.Equal(t, 2, page.Offset)
	assert.Equal(t, []string{"b", "b/1", "c"}, ids(page.Messages))
}

// TestModelCallsCarryOnlyWhatIsNew pins how the history reaches the model calls of a
// run: the first whole (a short history, as a delta from the start), then only the
// messages added since the previous call, which that call's worker has cached.
func TestModelCallsCarryOnlyWhatIsNew(t *testing.T) {
	e, c := threadTurns(t, "Hello", "My name is Alice", "What's my name?")
	in := e.model.inputs
	require.Len(t, in, 3)
	for i, want := range []struct {
		from, length, committed int
		delta                   []string
	}{
		{0, 1, 0, []string{"m1"}},
		{0, 3, 2, []string{"m1", "m1/1", "m2"}}, // the first call's turn was not yet committed
		{2, 5, 4, []string{"m2", "m2/1", "m3"}},
	} {
		assert.Empty(t, in[i].History, "call %d", i)
		assert.Equal(t, want.from, in[i].DeltaFrom, "call %d", i)
		assert.Equal(t, want.length, in[i].HistoryLength, "call %d", i)
		assert.Equal(t, want.committed, in[i].Committed, "call %d", i)
		assert.Equal(t, want.delta, ids(in[i].Delta), "call %d", i)
	}
	assert.Equal(t, "helper#3 saw 5 messages, last user: What's my name?", c.result.Messages[0].Text())
}

// TestLongHistoryIsReadByReferenceThenByDelta shows a history over 16 KB is not sent
// whole: the first call of the run reads it from the run, later ones get the delta.
func TestLongHistoryIsReadByReferenceThenByDelta(t *testing.T) {
	e, _ := threadTurns(t, strings.Repeat("long ", 4<<10), "And now?", "And then?")
	in := e.model.inputs
	require.Len(t, in, 3)
	for i := range 2 {
		assert.Empty(t, in[i].History, "call %d", i)
		assert.Empty(t, in[i].Delta, "call %d: by reference", i)
		assert.Equal(t, 1+2*i, in[i].HistoryLength, "call %d", i)
	}
	assert.Equal(t, 2, in[2].DeltaFrom)
	assert.Equal(t, []string{"m2", "m2/1", "m3"}, ids(in[2].Delta))
}

// threadTurns sends texts as turns m1, m2, … of a helper thread, a second apart, and
// returns the environment and the last turn's outcome, which must have succeeded.
func threadTurns(t *testing.T, texts ...string) (*env, *outcome) {
	e := newEnv(t)
	var last *outcome
	for i, text := range texts {
		last = e.send(time.Duration(i+1)*time.Second, msg("m"+strconv.Itoa(i+1), text))
	}
	e.run(thread(), time.Duration(len(texts)+1)*time.Second)
	require.True(t, last.done)
	require.NoError(t, last.err)
	return e, last
}

// TestLargeDeltaIsReadByReference: a delta over 256 KiB (two large user messages) is not
// put in the input; the activity reads the run instead, and the next delta is small.
func TestLargeDeltaIsReadByReference(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	e, _ := threadTurns(t, "hi", big, big+"y", "small")
	in := e.model.inputs
	require.Len(t, in, 4)
	require.Empty(t, in[1].Delta, "the second call, on a history over 16 KiB, goes by reference")
	assert.Empty(t, in[2].Delta, "m2, its reply and m3: over 256 KiB")
	assert.Equal(t, 5, in[2].HistoryLength)
	assert.Equal(t, 4, in[3].DeltaFrom, "the call by reference still counts as sent")
	assert.Equal(t, []string{"m3", "m3/1", "m4"}, ids(in[3].Delta))
}
