package workflows_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

// Whatever State lists as pending approvals, the chat's stream announces too
// (approvalNeeded, one per call, with its turn and agent), read from offset 0, however
// the chat came to wait: a turn that ran tools, a document restored at the start or by
// Import, a run continued as new (whose carried log may have dropped the first
// announcement), a chat imported with some of its calls decided already.

// streamFrom is what a follower reads from offset from now (the StreamRead query
// answers what a poll would, at once).
func (e *env) streamFrom(from int64) []wire.StreamEvent {
	res := query[wire.StreamReadResult](e, wire.StreamReadQuery, wire.StreamPollInput{FromOffset: from})
	return decodeEvents(e.t, res.StreamPollResult)
}

// announced is the approvalNeeded events of evs as "turn/agent/callId/tool".
func announced(evs []wire.StreamEvent) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == wire.EventApprovalNeeded && ev.Call != nil {
			out = append(out, ev.TurnID+"/"+ev.AgentID+"/"+ev.Call.CallID+"/"+ev.Call.Name)
		}
	}
	return out
}

// pendingAsAnnounced is State's pending approvals in announced's form.
func pendingAsAnnounced(ps []wire.PendingApproval) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.TurnID+"/"+p.AgentID+"/"+p.CallID+"/"+p.Tool)
	}
	return out
}

// waitingView is a chat's pending approvals by State and by its stream from offset 0,
// and from the offset a follower had reached before the chat was taken over (from).
type waitingView struct {
	pending, fromZero, fromThere []string
}

func (e *env) waitingAt(at time.Duration, from int64, v *waitingView) {
	e.at(at, func() {
		v.pending = pendingAsAnnounced(e.state().PendingApprovals)
		v.fromZero = announced(e.streamFrom(0))
		v.fromThere = announced(e.streamFrom(from))
	})
}

func TestEveryWayAChatComesToWaitIsAnnouncedOnItsStream(t *testing.T) {
	refund := []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
	want := []string{"m1/clerk/c1/refund"}

	t.Run("a turn that runs tools", func(t *testing.T) {
		e, _ := newToolEnv(t, 0)
		e.model.contents["clerk#1"] = refund
		e.send(time.Second, msg("m1", "refund order 1001"))
		var v waitingView
		e.waitingAt(time.Minute, 0, &v)
		e.run(clerk(), 2*time.Minute)
		assert.Equal(t, want, v.pending)
		assert.Equal(t, want, v.fromZero)
	})

	t.Run("a resumed turn that asks for another approval", func(t *testing.T) {
		e, _ := newToolEnv(t, 0)
		e.model.contents["clerk#1"] = refund
		e.model.contents["clerk#2"] = []chat.Content{call("c2", "refund", `{"order":"1002"}`)}
		e.send(time.Second, msg("m1", "refund orders 1001 and 1002"))
		e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
		var v waitingView
		e.waitingAt(2*time.Minute, 0, &v)
		e.run(clerk(), 3*time.Minute)
		assert.Equal(t, []string{"m1/clerk/c2/refund"}, v.pending)
		assert.Equal(t, append(slices.Clone(want), v.pending...), v.fromZero, "each call as it came to wait")
	})

	t.Run("a document restored at the start", func(t *testing.T) {
		e, _ := newToolEnv(t, 0)
		var v waitingView
		e.waitingAt(time.Minute, 0, &v)
		e.run(restoring(openCallDocument(t, refund), "clerk"), 2*time.Minute)
		assert.Equal(t, want, v.pending)
		assert.Equal(t, want, v.fromZero, "a follower of the restored chat learns that a person must act")
	})

	t.Run("a document imported into a running chat", func(t *testing.T) {
		e, _ := newToolEnv(t, 0)
		imp := e.importDoc(time.Second, openCallDocument(t, refund))
		var v waitingView
		e.waitingAt(time.Minute, 0, &v)
		e.run(clerk(), 2*time.Minute)
		require.NoError(t, imp.err)
		assert.Equal(t, want, v.pending)
		assert.Equal(t, want, v.fromZero)
	})

	t.Run("a document with one of two calls decided", func(t *testing.T) {
		e, _ := newToolEnv(t, 0)
		e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":1}`), call("c2", "refund", `{"order":2}`)}
		e.send(time.Second, msg("m1", "refund orders 1 and 2"))
		e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
		var doc []byte
		e.at(2*time.Minute, func() { doc = documentOf(t, e.snapshot(), e.history()) })
		e.run(clerk(), 3*time.Minute)

		e2, _ := newToolEnv(t, 0)
		var v waitingView
		e2.waitingAt(time.Minute, 0, &v)
		e2.run(restoring(doc, "clerk"), 2*time.Minute)
		assert.Equal(t, []string{"m1/clerk/c2/refund"}, v.pending)
		assert.Equal(t, v.pending, v.fromZero, "the decided call is not announced again")
	})

	t.Run("a run continued as new after a large result", func(t *testing.T) {
		// The reply asks for the refund and a lookup whose result takes more than the
		// carried log may hold: the first announcement is dropped from the carry.
		e := newEnv(t)
		big := strings.Repeat("x", wire.StreamCarryBytes)
		e.env.RegisterActivityWithOptions(func(_ context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
			return wire.CallToolResult{Result: big}, nil
		}, activity.RegisterOptions{Name: wire.CallToolActivity})
		e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`), call("c2", "lookup", `{"order":"1001"}`)}
		e.send(time.Second, msg("m1", "refund order 1001"))
		var end int64
		e.at(time.Minute, func() {
			end = query[int64](e, wire.StreamOffsetQuery)
			e.env.SetContinueAsNewSuggested(true)
		})
		e.run(clerk(), 0)
		next, _ := canInput(t, e)

		e2, _ := newToolEnv(t, 0)
		var v waitingView
		e2.waitingAt(time.Minute, end, &v)
		e2.run(next, 2*time.Minute)
		assert.Equal(t, want, v.pending)
		assert.Equal(t, want, v.fromZero, "read from 0, the continued run announces the call once")
		assert.Equal(t, want, v.fromThere, "a follower that goes on where the previous run's log ended learns it too")
	})

	t.Run("a run continued as new that carried the announcement", func(t *testing.T) {
		e, _ := newToolEnv(t, 0)
		e.model.contents["clerk#1"] = refund
		e.send(time.Second, msg("m1", "refund order 1001"))
		var end int64
		e.at(time.Minute, func() {
			end = query[int64](e, wire.StreamOffsetQuery)
			e.env.SetContinueAsNewSuggested(true)
		})
		e.run(clerk(), 0)
		next, _ := canInput(t, e)

		e2, _ := newToolEnv(t, 0)
		var v waitingView
		e2.waitingAt(time.Minute, end, &v)
		e2.run(next, 2*time.Minute)
		assert.Equal(t, want, v.pending)
		assert.Equal(t, want, v.fromZero, "announced once, not once per run")
		assert.Equal(t, want, v.fromThere)
	})
}

// A restored chat counts its turns as the chat it came from did: the turn that waits
// for an approval counts once it is answered, not before, and not twice.
func TestARestoredWaitingTurnCountsOnceAnswered(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
	e.model.replies["clerk#2"] = "refunded"
	e.send(time.Second, msg("m1", "refund order 1001"))
	var source wire.StateResult
	var doc []byte
	e.at(time.Minute, func() { source, doc = e.state(), documentOf(t, e.snapshot(), e.history()) })
	e.run(clerk(), 2*time.Minute)
	require.Len(t, source.PendingApprovals, 1)

	e2, _ := newToolEnv(t, 0)
	e2.model.replies["clerk#1"] = "refunded"
	var waiting, answered wire.StateResult
	e2.at(time.Second, func() { waiting = e2.state() })
	e2.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
	e2.at(2*time.Minute, func() { answered = e2.state() })
	e2.run(restoring(doc, "clerk"), 3*time.Minute)
	assert.Equal(t, source.TurnCount, waiting.TurnCount, "while it waits, as in the source")
	assert.Equal(t, source.TurnCount+1, answered.TurnCount, "answered, it counts once")
}

// A restored turn that failed after its tools ran was not answered: it does not count.
func TestARestoredTurnThatFailedAfterItsToolsDoesNotCount(t *testing.T) {
	var doc []byte
	{
		e, _ := newToolEnv(t, 0)
		e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
		e.model.errs["clerk#2"] = rejected400()
		e.send(time.Second, msg("m1", "refund order 1001"))
		e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
		var source wire.StateResult
		e.at(2*time.Minute, func() { source, doc = e.state(), documentOf(t, e.snapshot(), e.history()) })
		e.run(clerk(), 3*time.Minute)
		require.Zero(t, source.TurnCount, "the source answered no turn")
	}
	e2, _ := newToolEnv(t, 0)
	var st wire.StateResult
	e2.at(time.Second, func() { st = e2.state() })
	e2.run(restoring(doc, "clerk"), time.Minute)
	assert.Equal(t, 3, st.MessageCount)
	assert.Zero(t, st.TurnCount)
}
