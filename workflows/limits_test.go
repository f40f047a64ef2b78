package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// memStore stands in for the StoreMessages activity: it keeps the bodies it is given.
type memStore struct {
	mu     sync.Mutex
	bodies map[string]chat.Message
	fails  int // the calls still to fail, as an unreachable store does
	calls  int
}

func (e *env) withStore() *memStore {
	st := &memStore{bodies: map[string]chat.Message{}}
	e.env.RegisterActivityWithOptions(func(_ context.Context, in wire.StoreMessagesInput) (wire.StoreMessagesResult, error) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.calls++; st.fails > 0 {
			st.fails--
			return wire.StoreMessagesResult{}, errors.New("store unavailable")
		}
		for _, m := range in.Messages {
			st.bodies[m.MessageID] = m
		}
		return wire.StoreMessagesResult{Store: "mem"}, nil
	}, activity.RegisterOptions{Name: wire.StoreMessagesActivity})
	return st
}

// twoParts is a user turn of two text parts of n bytes each.
func twoParts(id string, n int) wire.SendMessageInput {
	return wire.SendMessageInput{MessageID: id, Contents: []chat.Content{
		chat.Text(strings.Repeat("a", n)), chat.Text(strings.Repeat("b", n))}}
}

// Fault 1: turns of two 125,000-byte parts (each under the default maxMessageBytes)
// with a small history budget; the carried state kept the latest 32 messages inline at
// any size, and Temporal terminated the chat at continue-as-new. What a continue-as-new
// carries is bounded by its encoded size.
func TestContinueAsNewOfLargeMessagesStaysUnderThePayloadLimit(t *testing.T) {
	e := newEnv(t)
	st := e.withStore()
	in := wire.AgentChatInput{Participants: []string{"helper"}, HistoryBudget: wire.HistoryBudget{MaxEvents: 150}}
	var outs []*outcome
	for i := range 20 {
		outs = append(outs, e.send(time.Duration(i+1)*time.Second, twoParts(fmt.Sprintf("t%d", i), 125_000)))
	}
	e.at(21*time.Second, func() { e.env.SetContinueAsNewSuggested(true) }) // the budget, as the server counts it
	e.run(in, 0)

	next, size := canInput(t, e)
	assert.LessOrEqual(t, size, wire.CarryLimit, "the continue-as-new input")
	require.NotNil(t, next.Carry)
	assert.Equal(t, "mem", next.Carry.Store)
	stubs := 0
	for _, m := range next.Carry.History {
		if m.Contents == nil {
			assert.Contains(t, st.bodies, m.MessageID, "a stub's body is in the store")
			stubs++
		}
	}
	require.Positive(t, stubs, "bodies moved to the store")
	answered := 0
	for _, o := range outs {
		if o.done && o.err == nil {
			answered++
		}
	}
	assert.Positive(t, answered)
}

// Queued turns are part of what a continue-as-new carries: a burst of large signals
// fills the queue up to QueuedTurnsLimit, the rest is refused (State's lastError says
// so), and what is carried fits CarryLimit; a queued turn whose body was stored keeps it.
func TestContinueAsNewCarriesQueuedTurnsUnderTheLimits(t *testing.T) {
	e := newEnv(t)
	// Decoding 3 MB of signals in one workflow task takes longer than the SDK's 1 s
	// deadlock detection under -race on a loaded 2-core machine; the detector is not
	// what this test is about.
	e.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 20 * time.Second})
	st := e.withStore()
	e.slowModel(2 * time.Second) // s0 is still answered when the run hands over: the rest waits
	in := wire.AgentChatInput{Participants: []string{"helper"}}
	e.at(time.Second, func() {
		for i := range 12 {
			e.env.SignalWorkflow(wire.UserMessageSignal, twoParts(fmt.Sprintf("s%d", i), 125_000))
		}
	})
	e.at(time.Second+100*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(in, 0)

	next, size := canInput(t, e)
	assert.LessOrEqual(t, size, wire.CarryLimit)
	require.NotNil(t, next.Carry)
	require.NotNil(t, next.Carry.LastError)
	assert.Equal(t, wire.ErrTypeQueueFull, next.Carry.LastError.Type)
	require.NotEmpty(t, next.Carry.Pending, "the run hands over turns still queued")
	queued := 0
	for _, m := range next.Carry.Pending {
		if m.Contents == nil {
			require.Contains(t, st.bodies, m.MessageID)
			assert.Len(t, st.bodies[m.MessageID].Contents, 2)
		}
		queued += wire.MessageBytes(m)
	}
	admitted := len(next.Carry.History)/2 + len(next.Carry.Pending)
	assert.Positive(t, admitted)
	assert.Less(t, admitted, 12, "the queue took what fits, not the whole burst")
	assert.LessOrEqual(t, queued, wire.QueuedTurnsLimit+len(next.Carry.Pending)*64)
}

// Past CarryLimit with the older bodies stored, the latest bodies and the queued turns'
// bodies move to the store too, and the store is retried until it answers: a long chat
// (its references alone take 800 KB, more than the tail saves) hands over with a full queue while the store fails
// more often than an optional spill retries.
func TestContinueAsNewPastTheCarryLimitStoresTheTailAndTheQueue(t *testing.T) {
	first := newEnv(t)
	first.withStore()
	first.send(time.Second, msg("t1", "hi"))
	first.at(2*time.Second, func() { first.env.SetContinueAsNewSuggested(true) })
	first.run(wire.AgentChatInput{Participants: []string{"helper"}}, 0)
	in, _ := canInput(t, first)
	require.NotNil(t, in.Carry)
	var long []chat.Message
	for i := range 6000 {
		long = append(long, chat.Message{MessageID: fmt.Sprintf("old%04d", i), Role: chat.RoleUser},
			chat.Message{MessageID: fmt.Sprintf("old%04d/1", i), Role: chat.RoleAssistant, AgentID: "helper"})
	}
	in.Carry.History = append(long, in.Carry.History...)
	in.Carry.Store = "mem"
	require.Greater(t, wire.HistoryStubBytes(in.Carry.History)+wire.QueuedTurnsLimit, wire.CarryLimit,
		"the references and a full queue pass CarryLimit, the tail stored or not")

	e := newEnv(t)
	e.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 20 * time.Second})
	st := e.withStore()
	st.fails = 5
	e.slowModel(2 * time.Second)
	e.send(time.Second, twoParts("u0", 100_000)) // the tail: its turn is answered in this run
	e.at(2*time.Second, func() {
		for i := range 8 {
			e.env.SignalWorkflow(wire.UserMessageSignal, twoParts(fmt.Sprintf("s%d", i), 125_000))
		}
	})
	e.at(2*time.Second+100*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(in, 0)

	next, size := canInput(t, e)
	assert.LessOrEqual(t, size, wire.CarryLimit)
	require.NotNil(t, next.Carry)
	require.NotEmpty(t, next.Carry.Pending)
	assert.Greater(t, st.calls, 5, "the store was retried until it answered")
	stored := func(m chat.Message) {
		t.Helper()
		require.Zero(t, len(m.Contents), "%s is a reference", m.MessageID)
		require.Contains(t, st.bodies, m.MessageID)
		assert.Len(t, st.bodies[m.MessageID].Contents, 2)
	}
	u0 := slices.IndexFunc(next.Carry.History, func(m chat.Message) bool { return m.MessageID == "u0" })
	require.GreaterOrEqual(t, u0, 0)
	stored(next.Carry.History[u0])
	stubs := 0
	for _, m := range next.Carry.Pending {
		if m.Contents == nil {
			stored(m)
			stubs++
		}
	}
	assert.Positive(t, stubs, "queued bodies moved to the store")
}

// Fault 2: maxMessageBytes had no upper bound; a chat started with 8 MiB was terminated
// by Temporal when a 3 MB message arrived. It is refused at start, naming the limit.
func TestMaxMessageBytesOverTheLimitIsRefusedAtStart(t *testing.T) {
	e := newEnv(t)
	e.run(wire.AgentChatInput{Participants: []string{"helper"}, MaxMessageBytes: wire.MaxMessageBytesLimit + 1}, 0)
	err := e.env.GetWorkflowError()
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeInvalidInput, app.Type())
	assert.Contains(t, app.Message(), fmt.Sprint(wire.MaxMessageBytesLimit))
}

// At the limit, maxMessageBytes is taken, and a message of exactly that many bytes is
// answered; one byte more is refused by the validator, naming the limit.
func TestMessageAtTheLimitIsTakenAndOneByteMoreIsRefused(t *testing.T) {
	e := newEnv(t)
	limit := wire.MaxMessageBytesLimit
	at := sized("at", limit)
	require.NoError(t, at.Validate())
	require.Equal(t, limit, at.Bytes())
	over := sized("over", limit+1)
	okTurn, refused := e.send(time.Second, at), e.send(2*time.Second, over)
	e.run(wire.AgentChatInput{Participants: []string{"helper"}, MaxMessageBytes: limit}, 3*time.Second)
	require.True(t, okTurn.done)
	require.NoError(t, okTurn.rejected)
	require.NoError(t, okTurn.err)
	require.Error(t, refused.rejected)
	assert.Contains(t, refused.rejected.Error(), fmt.Sprintf("at most %d", limit))
}

// sized returns a one-text user turn whose message encodes to exactly n bytes.
func sized(id string, n int) wire.SendMessageInput {
	in := wire.SendMessageInput{MessageID: id, Text: "x"}
	in.Text = strings.Repeat("x", n-in.Bytes()+1)
	return in
}

// Fault 5: History pages were sized by content bytes while a stub's JSON is several
// times larger, so a page of a long chat passed the payload limit. Every History answer,
// with or without maxBytes, stays under HistoryPageBytes encoded (a single message over
// it is returned alone).
func TestHistoryPagesAreBoundedByTheirEncodedSize(t *testing.T) {
	e := newEnv(t)
	var page, all wire.HistoryResult
	for i := range 40 {
		e.send(time.Duration(i+1)*time.Second, sized(fmt.Sprintf("t%d", i), 100_000))
	}
	e.at(45*time.Second, func() {
		page = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{MaxBytes: 300_000})
		all = query[wire.HistoryResult](e, wire.HistoryQuery)
	})
	e.run(wire.AgentChatInput{Participants: []string{"helper"}}, 46*time.Second)

	require.Equal(t, 80, all.Total)
	enc := func(r wire.HistoryResult) int { b, _ := json.Marshal(r); return len(b) }
	assert.LessOrEqual(t, enc(page), 300_000+1024)
	assert.Less(t, len(all.Messages), all.Total, "a page with no limit stops at HistoryPageBytes")
	assert.LessOrEqual(t, enc(all), wire.HistoryPageBytes+1024)
}

// A turn's answer is an update result, under the payload limit like any: a group turn of
// large replies returns those past HistoryPageBytes as references, which History returns
// whole.
func TestTurnResultOfLargeRepliesStaysUnderThePageLimit(t *testing.T) {
	e := newEnv(t)
	for _, agent := range []string{"writer", "reviewer"} {
		for n := 1; n <= 2; n++ {
			e.model.replies[fmt.Sprintf("%s#%d", agent, n)] = strings.Repeat(agent[:1], 600_000)
		}
	}
	in := wire.AgentChatInput{Participants: []string{"writer", "reviewer"},
		Termination: strategies.TerminationStrategy{Type: strategies.TerminationMaxIterations, MaxIterations: 4}}
	o := e.send(time.Second, msg("t1", "write a lot"))
	var last wire.HistoryResult
	o.then = func() {
		last = query[wire.HistoryResult](e, wire.HistoryQuery, wire.HistoryInput{Offset: 4})
	}
	e.run(in, 10*time.Second)

	require.True(t, o.done)
	require.NoError(t, o.err)
	require.Len(t, o.result.Messages, 4)
	b, err := json.Marshal(o.result)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), wire.HistoryPageBytes+4096)
	assert.NotNil(t, o.result.Messages[0].Contents, "the first reply is whole")
	assert.Nil(t, o.result.Messages[3].Contents, "the last is a reference")
	require.NotEmpty(t, last.Messages)
	assert.Equal(t, o.result.Messages[3].MessageID, last.Messages[0].MessageID)
	assert.Len(t, last.Messages[0].Text(), 600_000, "History has it whole")
}

// The turns waiting in a chat are bounded by QueuedTurnsLimit: an update that brings
// them to the limit is taken, one a byte past it is refused with the retryable
// QueueFull, naming the limit, and nothing is written.
func TestQueuedTurnsAtTheLimitAndJustOver(t *testing.T) {
	for _, over := range []int{0, 1} {
		e := newEnv(t)
		in := wire.AgentChatInput{Participants: []string{"helper"}, MaxMessageBytes: wire.MaxMessageBytesLimit}
		first, second := e.send(time.Second, sized("q1", 600_000)), e.send(time.Second, sized("q2", 600_000))
		third := e.send(time.Second, sized("q3", wire.QueuedTurnsLimit-1_200_000+over))
		e.run(in, 3*time.Second)
		for _, o := range []*outcome{first, second} {
			require.True(t, o.done)
			require.NoError(t, o.rejected)
			require.NoError(t, o.err)
		}
		require.True(t, third.done)
		if over == 0 {
			require.NoError(t, third.rejected, "at the limit")
			require.NoError(t, third.err)
			continue
		}
		require.Error(t, third.rejected)
		var app *temporal.ApplicationError
		require.True(t, errors.As(third.rejected, &app))
		assert.Equal(t, wire.ErrTypeQueueFull, app.Type())
		assert.False(t, app.NonRetryable())
		assert.Contains(t, app.Message(), fmt.Sprint(wire.QueuedTurnsLimit))
	}
}
