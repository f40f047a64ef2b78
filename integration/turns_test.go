package integration_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// The seed's thread: three turns in one chat, and the third reply used the earlier ones.
func TestSeedThreadRemembersEarlierTurns(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	st, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	assert.Equal(t, "running", st.Status)

	first := send(t, h, id, "m1", "Hello, how are you?")
	second := send(t, h, id, "m2", "My name is Alice")
	third := send(t, h, id, "m3", "What's my name?")

	assert.Equal(t, `[offline] helper received 2 messages. First user message: "Hello, how are you?". Last user message: "Hello, how are you?".`,
		first.Messages[0].Text())
	assert.Contains(t, second.Messages[0].Text(), "received 4 messages")
	reply := third.Messages[0].Text()
	assert.Contains(t, reply, "received 6 messages") // system + 5 messages of the thread
	assert.Contains(t, reply, `you said "My name is Alice"`)
	assert.Contains(t, reply, "Your name is Alice")

	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Equal(t, 6, hist.Total)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "m3", "m3/1"}, messageIDs(hist.Messages))
	assert.Equal(t, "Alice", hist.Messages[0].AuthorName)

	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 3, st.TurnCount)
	assert.Equal(t, "m3/1", st.LastMessage.MessageID)
	assert.Equal(t, 3, h.Model.Requests("helper"))
}

func TestTemporaryThreadCompletesItsWorkflow(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	res, err := h.Client.Run(ctxFor(t), agentchat.RunOptions{ChatID: id, Agents: []string{"helper"}},
		agentchat.SendMessageInput{Text: "Hello, how are you?"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
	assert.Contains(t, res.Messages[0].Text(), `Last user message: "Hello, how are you?"`)

	require.Eventually(t, func() bool {
		return workflowStatus(t, h, id) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}, 10*time.Second, 50*time.Millisecond)
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{Text: "again"})
	require.ErrorIs(t, err, agentchat.ErrChatClosed)
	st, err := h.Client.State(ctxFor(t), id) // a finished chat still answers queries
	require.NoError(t, err)
	assert.Equal(t, "completed", st.Status)
	assert.Equal(t, 2, st.MessageCount)
}

func TestGroupChatAlternatesUntilTermination(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"writer":   {{Text: "Tea: calm in a cup."}, {Text: "Tea: five minutes of calm."}},
		"reviewer": {{Text: "Name the benefit."}, {Text: "APPROVED"}},
	}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"writer", "reviewer"},
		Termination: agentchat.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`,
			Agents: []string{"reviewer"}, MaxIterations: 10}})
	require.NoError(t, err)

	res := send(t, h, id, "brief", "Write a slogan for tea")
	var who, what []string
	for _, m := range res.Messages {
		who, what = append(who, m.AgentID), append(what, m.Text())
	}
	assert.Equal(t, []string{"writer", "reviewer", "writer", "reviewer"}, who)
	assert.Equal(t, "[offline] reviewer: APPROVED", what[3])
	assert.Contains(t, what[1], "Name the benefit.")
	assert.True(t, res.IsComplete)

	require.Eventually(t, func() bool {
		return workflowStatus(t, h, id) == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}, 10*time.Second, 50*time.Millisecond)
	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.True(t, st.IsComplete)
	assert.Equal(t, 2, h.Model.Requests("writer"))
	assert.Equal(t, 2, h.Model.Requests("reviewer"))
}

func TestConcurrentSendsAllAnsweredInOneOrder(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Latency: 20 * time.Millisecond}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)

	const n = 10
	results := make([]agentchat.TurnResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = h.Client.Send(ctxFor(t), id,
				agentchat.SendMessageInput{MessageID: fmt.Sprintf("c%d", i), Text: fmt.Sprintf("concurrent %d", i)})
		})
	}
	wg.Wait()
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	require.Equal(t, 2*n, hist.Total)

	// The history alternates user turn, reply; each user message appears once, and each
	// reply answered its own turn with exactly the messages before it as context.
	seen := map[string]int{}
	for i := 0; i < len(hist.Messages); i += 2 {
		user, reply := hist.Messages[i], hist.Messages[i+1]
		require.Equal(t, chat.RoleUser, user.Role)
		seen[user.MessageID]++
		assert.Equal(t, user.MessageID+"/1", reply.MessageID)
		assert.Contains(t, reply.Text(), fmt.Sprintf("received %d messages", i+2))
		assert.Contains(t, reply.Text(), fmt.Sprintf("Last user message: %q", user.Text()))
	}
	for i := range n {
		require.NoError(t, errs[i], "send %d", i)
		id := fmt.Sprintf("c%d", i)
		assert.Equal(t, 1, seen[id], id)
		require.Len(t, results[i].Messages, 1)
		assert.Equal(t, id+"/1", results[i].Messages[0].MessageID, "each caller got its own turn's answer")
	}
	assert.Equal(t, n, h.Model.Requests("helper"))
}

func TestRetriedMessageIDCallsTheModelOnce(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	first := send(t, h, id, "retry-me", "Hello")
	again := send(t, h, id, "retry-me", "Hello")
	assert.False(t, first.Replayed)
	assert.True(t, again.Replayed, "the answer says it is the turn's first answer again")
	again.Replayed = false
	assert.Equal(t, first, again)
	assert.Equal(t, 1, h.Model.Requests("helper"))
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, 2, hist.Total)
}

func TestUnknownAgentIsRefusedAndNothingKeepsRunning(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper", "ghost"}})
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, app.Type())
	assert.Contains(t, err.Error(), `unknown agent id(s) "ghost"`)
	assert.Contains(t, err.Error(), `"helper", "reviewer", "writer"`)
	assert.Zero(t, h.Model.TotalRequests())
}

// A start, temporary thread or streamed start refused for an unknown agent leaves no
// failed chat behind (it did nothing, so it is deleted, and the error says so), and
// its error is the chat's words: no Temporal "(type: …)" tail, no "over 0s".
func TestAChatRefusedAtStartLeavesNothing(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	gone := func(what, id string, err error) {
		t.Helper()
		require.Error(t, err, what)
		assert.Equal(t, wire.ErrTypeUnknownAgent, appType(err), "%s: %v", what, err)
		assert.Contains(t, err.Error(), `"helpr" (did you mean "helper"?)`, what)
		assert.Contains(t, err.Error(), "nothing is left", what)
		assert.NotContains(t, err.Error(), "(type:", what)
		assert.NotContains(t, err.Error(), "over 0s", what)
		assert.Equal(t, 1, strings.Count(err.Error(), "unknown agent id(s)"), "%s: %v", what, err)
	}
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helpr"}})
	gone("start", id, err)
	_, err = h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err, "the id is free at once (a start goes over a chat that failed at start)")

	runID := id + "-run"
	_, err = h.Client.Run(ctxFor(t), agentchat.RunOptions{ChatID: runID, Agents: []string{"helpr"}}, agentchat.SendMessageInput{Text: "Hi"})
	gone("run", runID, err)

	streamID := id + "-stream"
	var streamErr error
	for _, err := range h.Client.RunStream(ctxFor(t), agentchat.RunOptions{ChatID: streamID, Agents: []string{"helpr"}}, agentchat.SendMessageInput{Text: "Hi"}) {
		if err != nil {
			streamErr = err
			break
		}
	}
	gone("run streamed", streamID, streamErr)
	assert.Zero(t, h.Model.TotalRequests())
	// The server removes a deleted run in the background: a closed one within a minute
	// or two on the dev server (the jitter of its deletion tasks). One is enough to see
	// that the run was deleted, not left failed.
	require.Eventually(t, func() bool {
		_, err := h.Temporal.DescribeWorkflowExecution(context.Background(), runID, "")
		var nf *serviceerror.NotFound
		return errors.As(err, &nf)
	}, 3*time.Minute, time.Second, "chat %s was left on the server", runID)
}

func TestModelThatFailsTwiceThenAnswersCompletesTheTurn(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"helper": {{Status: 500, Message: "overloaded"}, {Status: 500, Message: "overloaded"}},
	}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	res := send(t, h, id, "m1", "Hello, how are you?")
	assert.Contains(t, res.Messages[0].Text(), "[offline] helper received 2 messages")
	assert.Equal(t, 3, h.Model.Requests("helper"))
}

func TestModelThatRefusesFailsTheTurnAndTheChatGoesOn(t *testing.T) {
	h := testenv.New(t, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"helper": {{Status: 401, Message: "Incorrect API key provided: sk-***"}},
	}}})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	_, err = h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Hello"})
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
	assert.Contains(t, err.Error(), "401 Unauthorized: Incorrect API key provided")
	assert.Equal(t, 1, h.Model.Requests("helper"), "a 401 is not retried")

	st, err := h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	require.NotNil(t, st.LastError)
	assert.Equal(t, "m1", st.LastError.MessageID)
	assert.Equal(t, wire.ErrTypeModelRejected, st.LastError.Type)

	res := send(t, h, id, "m2", "Are you there?")
	assert.Contains(t, res.Messages[0].Text(), "received 2 messages", "the failed turn left nothing in the history")
	st, err = h.Client.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Nil(t, st.LastError, "a turn answered after the failure clears lastError")
}

func TestSendToMissingChatSaysSo(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	_, err := h.Client.Send(ctxFor(t), "no-such-chat-"+testenv.ChatID(t), agentchat.SendMessageInput{Text: "hi"})
	require.ErrorIs(t, err, agentchat.ErrChatNotFound)
	_, err = h.Client.State(ctxFor(t), "no-such-chat-"+testenv.ChatID(t))
	require.ErrorIs(t, err, agentchat.ErrChatNotFound)
}

func TestPostedTurnIsAnswered(t *testing.T) {
	h := testenv.New(t, testenv.Options{})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	mid, err := h.Client.Post(ctxFor(t), id, agentchat.SendMessageInput{Text: "fire and forget"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
		return err == nil && hist.Total == 2 && hist.Messages[1].MessageID == mid+"/1"
	}, 10*time.Second, 50*time.Millisecond)
}
