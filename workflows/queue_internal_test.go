package workflows

import (
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// queuedTurn is a turn of messageId id, by signal when signal is set.
func queuedTurn(id string, signal bool) *turn {
	return &turn{msg: chat.TextMessage(id, chat.RoleUser, "", "text of "+id), signal: signal}
}

// turnIDs returns the messageIds of ts, in order.
func turnIDs(ts []*turn) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.msg.MessageID)
	}
	return out
}

// Turns are taken in arrival order, one active at a time, and each stays in the record
// under its messageId: the live turn a retry finds, until it fails.
func TestTurnQueueTakesTurnsInOrderAndRecordsThem(t *testing.T) {
	q := newTurnQueue()
	a, b := queuedTurn("a", false), queuedTurn("b", true)
	q.Enqueue(a)
	q.Enqueue(b)
	assert.Equal(t, 2, q.Len())
	assert.Equal(t, []string{"a", "b"}, turnIDs(slices.Collect(q.Queued())))
	assert.True(t, q.IsQueued("b"))
	assert.True(t, q.HasUpdateTurn(), "a is an update's turn")

	require.Same(t, a, q.Next())
	q.Begin(a)
	assert.Same(t, a, q.Active())
	assert.False(t, q.IsQueued("a"), "the active turn is not queued")
	assert.False(t, q.HasUpdateTurn(), "b is a signal's turn")
	live, ok := q.Live("a")
	assert.True(t, ok)
	assert.Same(t, a, live, "a retry of a finds the turn running")
	q.End()
	assert.Nil(t, q.Active())

	a.done, a.err = true, errors.New("failed")
	_, ok = q.Live("a")
	assert.False(t, ok, "a failed turn is not live: its messageId may be sent again")
	recorded, ok := q.Lookup("a")
	assert.True(t, ok)
	assert.Same(t, a, recorded, "but it stays recorded")
	again := queuedTurn("a", false)
	q.Enqueue(again)
	live, _ = q.Live("a")
	assert.Same(t, again, live, "a new turn replaces the failed one's record")
	assert.Equal(t, 2, q.Accepted())

	assert.Same(t, b, q.Next())
	assert.Same(t, again, q.Next())
	assert.Nil(t, q.Next(), "an empty queue has no next turn")
}

// A withdrawn turn leaves the queue and the record (its messageId may be sent again);
// a refused or taken one leaves the queue and stays recorded.
func TestTurnQueueWithdrawsRefusesAndTakes(t *testing.T) {
	q := newTurnQueue()
	for _, tt := range []*turn{queuedTurn("u1", false), queuedTurn("s1", true), queuedTurn("u2", false), queuedTurn("s2", true)} {
		q.Enqueue(tt)
	}
	cancelled := q.Withdraw("u1")
	require.NotNil(t, cancelled)
	assert.Equal(t, "u1", cancelled.msg.MessageID)
	assert.Nil(t, q.Withdraw("u1"), "withdrawn once")
	_, ok := q.Lookup("u1")
	assert.False(t, ok, "out of the record")

	refused := errors.New("refused")
	q.WithdrawUpdates(func(*turn) error { return refused })
	assert.Equal(t, []string{"s1", "s2"}, turnIDs(slices.Collect(q.Queued())), "signal turns stay queued")
	_, ok = q.Lookup("u2")
	assert.False(t, ok, "an update's turn withdrawn leaves the record")

	pending := q.PendingMessages()
	require.Len(t, pending, 2)
	assert.Equal(t, []string{"s1", "s2"}, []string{pending[0].MessageID, pending[1].MessageID})
	q.Refuse(func(*turn) error { return refused })
	assert.Zero(t, q.Len())
	assert.Nil(t, q.PendingMessages(), "nothing to carry")
	s1, ok := q.Lookup("s1")
	require.True(t, ok, "a refused turn stays recorded")
	assert.True(t, s1.done)
	assert.Equal(t, refused, s1.err)

	q.Enqueue(queuedTurn("s3", true))
	taken := q.TakeQueued()
	assert.Equal(t, []string{"s3"}, turnIDs(taken))
	assert.Zero(t, q.Len())
	_, ok = q.Lookup("s3")
	assert.True(t, ok, "a taken turn stays recorded")
}

// What the turns waiting weigh: their bytes as sent (the active one's too) for
// QueuedTurnsLimit, their references (the queued ones') for ChatLengthLimit.
func TestTurnQueueSizes(t *testing.T) {
	q := newTurnQueue()
	a, b := queuedTurn("a", false), queuedTurn("b", false)
	a.bytes, b.bytes = 10, 20
	q.Enqueue(a)
	q.Enqueue(b)
	q.Begin(q.Next())
	assert.Equal(t, 30, q.Bytes())
	assert.Equal(t, wire.StubBytes(b.msg), q.StubBytes())
}

// The record rebuilt from a history has each user turn answered, a turn that failed
// after its tools ran as failed; answered turns all in pages leave it.
func TestTurnQueueRebuildsAndForgetsPagedTurns(t *testing.T) {
	call := chat.Message{MessageID: "t2/1", Role: chat.RoleAssistant, AgentID: "a",
		Contents: []chat.Content{{Type: chat.ContentFunctionCall, CallID: "c1", Name: "refund", Arguments: "{}"}}}
	result := chat.Message{MessageID: "t2/2", Role: chat.RoleTool, AgentID: "a",
		Contents: []chat.Content{{Type: chat.ContentFunctionResult, CallID: "c1", Result: "done"}}}
	msgs := []chat.Message{
		chat.TextMessage("t1", chat.RoleUser, "", "hi"), chat.TextMessage("t1/1", chat.RoleAssistant, "", "hello"),
		chat.TextMessage("t2", chat.RoleUser, "", "refund"), call, result,
		chat.TextMessage("t3", chat.RoleUser, "", "thanks"), chat.TextMessage("t3/1", chat.RoleAssistant, "", "welcome"),
	}
	h := newHistory(msgs, nil)
	q := newTurnQueue()
	q.Enqueue(queuedTurn("old", false))
	q.Rebuild(&h)
	_, ok := q.Lookup("old")
	assert.False(t, ok, "the record is rebuilt, not added to")
	assert.Equal(t, 3, q.Accepted())
	assert.Equal(t, 2, q.Answered(), "t2 ends on its tools' results: failed after they ran")
	t2, _ := q.Lookup("t2")
	require.Error(t, t2.err)
	t1, _ := q.Lookup("t1")
	assert.Equal(t, [2]int{1, 2}, [2]int{t1.start, t1.end})

	q.ForgetPaged(5)
	_, ok = q.Lookup("t1")
	assert.False(t, ok, "t1 is all in pages")
	_, ok = q.Lookup("t2")
	assert.True(t, ok, "a failed turn stays")
	_, ok = q.Lookup("t3")
	assert.True(t, ok, "t3 goes on past the pages")
}
