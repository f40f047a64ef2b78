package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// openCalls returns a function that gives calls as the ones open at the end of the
// history, counting how often it is asked.
func openCalls(asked *int, ids ...string) func() []chat.Content {
	return func() []chat.Content {
		*asked++
		var out []chat.Content
		for _, id := range ids {
			out = append(out, chat.Content{Type: chat.ContentFunctionCall, CallID: id})
		}
		return out
	}
}

// A turn waits for its calls until each is decided, or any is while open; a decision
// stays until applied, and what is carried is the decisions not yet applied.
func TestApprovalsWaitDecideAndApply(t *testing.T) {
	var a approvals
	asked := 0
	open := openCalls(&asked, "c1", "c2")
	assert.Nil(t, a.Suspended())
	assert.False(t, a.WaitsFor("c1"))
	assert.Nil(t, a.Awaiting())
	assert.False(t, a.ResumeDue(open), "no turn waits")

	waiting := queuedTurn("m1", false)
	pending := []wire.PendingApproval{{CallID: "c1", Tool: "refund"}, {CallID: "c2", Tool: "refund"}}
	a.Suspend(waiting, wire.Participant{ID: "clerk"}, pending)
	assert.Same(t, waiting, a.Suspended())
	assert.True(t, a.WaitsFor("c2"))
	assert.False(t, a.WaitsFor("c3"))
	assert.Equal(t, pending, a.Awaiting())
	assert.False(t, a.ResumeDue(open))
	assert.Zero(t, asked, "the open calls are not looked at before a decision")

	a.Decide("c1", wire.Decision{Approved: false, Reason: "no"})
	assert.True(t, a.Decided("c1"))
	assert.False(t, a.Approved("c1"))
	d, ok := a.Decision("c1")
	assert.True(t, ok)
	assert.Equal(t, "no", d.Reason)
	assert.Equal(t, pending[1:], a.Awaiting())
	assert.True(t, a.WaitsFor("c1"), "decided or not")
	assert.True(t, a.ResumeDue(open), "c1 is open and decided: it applies at once")
	assert.Equal(t, map[string]wire.Decision{"c1": {Reason: "no"}}, a.Carry())

	turn, agent := a.Resume()
	assert.Same(t, waiting, turn)
	assert.Equal(t, "clerk", agent.ID)
	assert.Nil(t, a.Suspended(), "the turn runs again")
	a.Applied([]chat.Content{{CallID: "c1"}})
	assert.False(t, a.Decided("c1"), "its result holds the decision now")
	a.Suspend(waiting, agent, pending[1:])
	a.Resumed(wire.TurnResult{MessageID: "m1"})
	assert.Equal(t, pending[1:], a.Awaiting(), "it waits again, for c2")
	assert.Empty(t, a.Carry())
}

// Carried decisions are taken over by the next run, whose rebuilt wait counts them.
func TestApprovalsTakeTheCarriedDecisions(t *testing.T) {
	a := newApprovals(map[string]wire.Decision{"c1": {Approved: true, By: "ops"}})
	a.Suspend(queuedTurn("m1", false), wire.Participant{ID: "clerk"}, []wire.PendingApproval{{CallID: "c1"}})
	assert.Empty(t, a.Awaiting())
	asked := 0
	assert.True(t, a.ResumeDue(openCalls(&asked)), "every call it waits for is decided")
	require.True(t, a.Approved("c1"))
	a.Decide("c2", wire.Decision{Approved: true})
	assert.Len(t, a.Carry(), 2)
}
