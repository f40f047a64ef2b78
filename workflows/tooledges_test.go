package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// Edges of tool rounds (issue "Hold the durability promise at every edge", faults 8-11):
// every loop is bounded, a tool call runs at most once per call id, and a turn that
// fails after its tools ran keeps what they did.

var clerkP = chatstate.Participant{ID: "clerk", Name: "Clerk", Type: "chat_completion"}

// openCallDocument is a document whose history ends with the clerk's open calls: a user
// turn "m1" and the clerk's reply "m1/1" asking for them, no results yet.
func openCallDocument(t *testing.T, calls []chat.Content, pending ...chat.Message) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	user := chat.TextMessage("m1", chat.RoleUser, "", "Refund order 1001, and look it up")
	user.CreatedAt = at
	reply := chat.Message{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Clerk", AgentID: "clerk",
		CreatedAt: at, Contents: calls}
	b, _, err := chatstate.Encode(chatstate.Document{
		SchemaVersion: 1, ChatID: "src", ExportedAt: at,
		Source:       chatstate.Source{Namespace: "default", WorkflowID: "src"},
		History:      []chat.Message{user, reply},
		Participants: []chatstate.Participant{clerkP},
		Channels:     []chatstate.Channel{{ChannelKey: plainKey, ChannelType: chat.ChannelChatHistory, ChannelState: json.RawMessage(`{}`)}},
		Strategies: chatstate.Strategies{
			Selection:   chatstate.Strategy{Type: "sequential", State: json.RawMessage(`{"nextIndex":0}`)},
			Termination: chatstate.Strategy{Type: "maxIterations", State: json.RawMessage(`{"iterations":0}`)},
		},
		PendingTurns: pending,
	})
	require.NoError(t, err)
	return b
}

func rejected400() error {
	return temporal.NewNonRetryableApplicationError("answered 400 Bad Request: invalid request", wire.ErrTypeModelRejected, nil)
}

// Fault 8: a restored history ends with an open call that needs no approval, and the
// model call after it fails non-retryably. The resumed turn fails once (TurnFailed,
// lastError), the tool's result stays, and the queued turn runs: no resumption loop.
func TestResumedTurnThatFailsFailsOnceAndTheQueueMovesOn(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	for _, k := range []string{"clerk#1", "clerk#3", "clerk#4", "clerk#5"} { // #2 answers the queued turn
		e.model.errs[k] = rejected400()
	}
	queued := chat.TextMessage("later", chat.RoleUser, "", "Are you there?")
	doc := openCallDocument(t, []chat.Content{call("c1", "lookup", `{"order":"1001"}`)}, queued)
	var st wire.StateResult
	var hist []chat.Message
	var evs []wire.StreamEvent
	e.at(time.Minute, func() { st, hist, evs = e.state(), e.history(), e.streamFrom(0) })
	e.run(restoring(doc, "clerk"), 2*time.Minute)

	assert.Equal(t, []string{"c1"}, ft.ran, "the open call ran once")
	assert.Equal(t, 2, e.model.count(), "the failed resumption, then the queued turn")
	var failures []wire.TurnError
	for _, ev := range evs {
		if ev.Type == wire.EventTurnFailed {
			failures = append(failures, *ev.Error)
		}
	}
	require.Len(t, failures, 1, "the resumed turn failed once")
	assert.Equal(t, "m1", failures[0].MessageID)
	assert.Equal(t, wire.ErrTypeModelRejected, failures[0].Type)
	assert.True(t, failures[0].Kept, "the tool's result stays")
	assert.Nil(t, st.LastError, "the queued turn, answered after the failure, cleared it")
	assert.Empty(t, st.PendingApprovals)
	assert.Empty(t, st.PendingTurns)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "later", "later/1"}, ids(hist),
		"the tool's result stays; the queued turn was answered")
	assert.Equal(t, `lookup of {"order":"1001"}`, resultsOf(hist[2])["c1"].Result)
	assert.Empty(t, openCallsOf(hist))
}

// Fault 10: an approved refund runs, then the model answers 400. The turn fails (the
// Approve caller gets TurnFailed), the refund's result stays in the history, the chat
// waits for nothing, and approving again runs nothing again.
func TestApprovedToolRunsOnceWhenTheResumedTurnFails(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":"1001"}`)}
	e.model.errs["clerk#2"] = rejected400()
	e.model.replies["clerk#3"] = "done"
	e.send(time.Second, msg("m1", "refund order 1001"))
	first := e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
	var st wire.StateResult
	e.at(2*time.Minute, func() { st = e.state() })
	again := e.update(3*time.Minute, wire.ApproveUpdate, "approve-again", wire.ApproveInput{CallID: "c1", Approved: true})
	resent := e.send(210*time.Second, msg("m1", "refund order 1001"))
	next := e.send(4*time.Minute, msg("m2", "did it work?"))
	var hist []chat.Message
	e.at(5*time.Minute, func() { hist = e.history() })
	e.run(clerk(), 6*time.Minute)

	require.True(t, first.done)
	var app *temporal.ApplicationError
	require.True(t, errors.As(first.err, &app), "the Approve caller learns the turn failed: %v", first.err)
	assert.Equal(t, wire.ErrTypeTurnFailed, app.Type())
	assert.Empty(t, st.PendingApprovals, "the call ran: nothing to approve again")
	require.NotNil(t, st.LastError)
	assert.Equal(t, "m1", st.LastError.MessageID)
	require.NoError(t, again.rejected)
	require.NoError(t, again.err, "a repeated approval answers what the call did")
	require.Error(t, resent.rejected, "the failed turn's message is in the history: it is not run again")
	assert.Contains(t, resent.rejected.Error(), "send a new message to go on")
	require.NoError(t, next.err, "the chat takes the next turn")
	assert.Equal(t, "done", next.result.Messages[len(next.result.Messages)-1].Text())
	assert.Equal(t, []string{"c1"}, ft.ran, "the refund ran once")
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m2", "m2/1"}, ids(hist))
	assert.Equal(t, `refund of {"order":"1001"}`, resultsOf(hist[2])["c1"].Result)
}

// A turn that failed after its tools ran is taken back; when it is sent again and the
// model asks for the same call (same id, name and arguments), the result already
// obtained is reused, never re-executed. The same id with other arguments is another
// call: it gets a new id and runs.
func TestRetriedTurnReusesTheResultOfACallIDThatRan(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.model.errs["clerk#2"] = rejected400()
	e.model.contents["clerk#3"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.model.contents["clerk#4"] = []chat.Content{call("c1", "lookup", `{"order":2}`)}
	e.model.replies["clerk#5"] = "found both"
	failed := e.send(time.Second, msg("m1", "look up order 1"))
	retried := e.send(time.Minute, msg("m1", "look up order 1"))
	var hist []chat.Message
	e.at(2*time.Minute, func() { hist = e.history() })
	e.run(clerk(), 3*time.Minute)

	require.Error(t, failed.err)
	require.NoError(t, retried.err)
	assert.Equal(t, []string{"c1", "m1/3#1"}, ft.ran, "c1 ran once; the other call under a new id")
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m1/3", "m1/4", "m1/5"}, ids(hist))
	assert.Equal(t, `lookup of {"order":1}`, resultsOf(hist[2])["c1"].Result)
	assert.Equal(t, `lookup of {"order":2}`, resultsOf(hist[4])["m1/3#1"].Result)
	assert.Empty(t, openCallsOf(hist))
}

// The result of a call that ran in a turn taken back is carried across continue-as-new:
// the retried turn in the next run reuses it.
func TestToolRunsAreCarriedAcrossContinueAsNew(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.model.errs["clerk#2"] = rejected400()
	failed := e.send(time.Second, msg("m1", "look up order 1"))
	e.at(time.Minute, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)
	require.Error(t, failed.err)
	next, _ := canInput(t, e)
	require.Len(t, next.Carry.ToolRuns, 1)

	e2, ft := newToolEnv(t, 0)
	e2.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e2.model.replies["clerk#2"] = "found it"
	retried := e2.send(time.Second, msg("m1", "look up order 1"))
	e2.run(next, time.Minute)
	require.NoError(t, retried.err)
	assert.Empty(t, ft.ran, "c1 ran in the previous run: its result is reused")
	assert.Equal(t, `lookup of {"order":1}`, resultsOf(retried.result.Messages[1])["c1"].Result)
	assert.Equal(t, "found it", retried.result.Messages[2].Text())
}

// Fault 9: a document that waits for the approval of a call by an agent the importing
// chat does not have is refused, naming the call and the agent; nothing is written.
func TestImportOfAnApprovalOfAMissingAgentIsRefused(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	doc := openCallDocument(t, []chat.Content{call("c1", "refund", `{"order":"1001"}`)})
	imp := e.importDoc(time.Second, doc)
	var st wire.StateResult
	e.at(time.Minute, func() { st = e.state() })
	e.run(wire.AgentChatInput{Participants: []string{"helper"}}, 2*time.Minute)

	require.Error(t, imp.err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(imp.err, &app), "%v", imp.err)
	assert.Equal(t, wire.ErrTypeInvalidDocument, app.Type())
	assert.Contains(t, imp.err.Error(), `"c1"`)
	assert.Contains(t, imp.err.Error(), `agent "clerk"`)
	assert.Contains(t, imp.err.Error(), "not a participant")
	assert.Zero(t, st.MessageCount, "nothing was written")
	assert.Empty(t, st.RestoredDigest)
	assert.Empty(t, ft.ran)
	assert.Zero(t, e.model.count(), "no agent was invoked")
}

// importOutcome is where an Import update's outcome lands.
type importOutcome struct {
	err  error
	done bool
}

// importDoc schedules an Import update of doc at the given delay.
func (e *env) importDoc(at time.Duration, doc []byte) *importOutcome {
	o := &importOutcome{}
	e.at(at, func() {
		e.env.UpdateWorkflow(wire.ImportUpdate, "import", &importCallbacks{o}, wire.ImportInput{
			Source: wire.DocumentSource{Document: doc}})
	})
	return o
}

type importCallbacks struct{ o *importOutcome }

func (c *importCallbacks) Accept()                   {}
func (c *importCallbacks) Reject(err error)          { c.o.err, c.o.done = err, true }
func (c *importCallbacks) Complete(_ any, err error) { c.o.err, c.o.done = err, true }

// The tool runs kept for taken-back turns are bounded by their bytes (ToolRunsLimit),
// not only their number: turns that fail after large tool results, then a
// continue-as-new, hand over an input under CarryLimit, with the latest run kept.
func TestLargeToolRunsOfTakenBackTurnsKeepTheCarryUnderCarryLimit(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("<", 200<<10/6) // 200 KiB encoded
	var ran []string
	e.env.RegisterActivityWithOptions(func(_ context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
		ran = append(ran, in.CallID)
		return wire.CallToolResult{Result: in.CallID + big}, nil
	}, activity.RegisterOptions{Name: wire.CallToolActivity})
	const turns = 12
	var outs []*outcome
	for i := range turns {
		id := fmt.Sprintf("m%d", i)
		e.model.contents[fmt.Sprintf("clerk#%d", 2*i+1)] = []chat.Content{call("c"+id, "lookup", `{"order":1}`)}
		e.model.errs[fmt.Sprintf("clerk#%d", 2*i+2)] = rejected400()
		outs = append(outs, e.send(time.Duration(i+1)*time.Second, msg(id, "look it up")))
	}
	e.at(time.Minute, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)
	for _, o := range outs {
		require.Error(t, o.err, "every turn failed after its tool ran")
	}
	require.Len(t, ran, turns)
	next, size := canInput(t, e)
	assert.Less(t, size, wire.CarryLimit, "the continue-as-new input")
	require.NotEmpty(t, next.Carry.ToolRuns)
	b, err := json.Marshal(next.Carry.ToolRuns)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), wire.ToolRunsLimit)
	assert.Equal(t, fmt.Sprintf("cm%d", turns-1), next.Carry.ToolRuns[len(next.Carry.ToolRuns)-1].CallID, "the latest run is kept")
}

// A reply that asks for an approval and a plain call ends, while it waits, on the plain
// call's result. A continued run rebuilds that turn as suspended, not failed: a retried
// Send of it gets its pending result (the calls awaited), not an error, and the
// approval still resumes it.
func TestSuspendedTurnEndingOnAToolResultIsRebuiltAsSuspended(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":5}`), call("c2", "lookup", `{"order":1}`)}
	first := e.send(time.Second, msg("m1", "refund and look up"))
	e.at(2*time.Second, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)
	require.NoError(t, first.err)
	require.Len(t, first.result.AwaitingApproval, 1)
	next, _ := canInput(t, e)

	e2, ft := newToolEnv(t, 0)
	e2.model.replies["clerk#1"] = "refunded and found"
	retry := e2.send(time.Second, msg("m1", "refund and look up"))
	ok := e2.approve(2*time.Second, wire.ApproveInput{CallID: "c1", Approved: true})
	e2.run(next, time.Minute)
	require.NoError(t, retry.rejected)
	require.NoError(t, retry.err, "the turn waits for an approval; it did not fail")
	require.Len(t, retry.result.AwaitingApproval, 1)
	assert.Equal(t, "c1", retry.result.AwaitingApproval[0].CallID)
	assert.Equal(t, []string{"m1/1", "m1/2"}, ids(retry.result.Messages))
	require.NoError(t, ok.err)
	assert.Equal(t, []string{"c1"}, ft.ran, "only the approved call ran in the continued run")
}

// A call id renamed for being repeated ("<replyId>#<n>") is itself checked: a retried
// turn's reply has the same replyId, and a renamed id under which another call ran in
// the turn taken back is renamed again, so that no two calls share an idempotency key.
func TestARenamedCallIDIsCheckedAgainstTheRunsOfTakenBackTurns(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`), call("c1", "lookup", `{"order":2}`)}
	e.model.errs["clerk#2"] = rejected400()
	e.model.contents["clerk#3"] = []chat.Content{call("c1", "lookup", `{"order":1}`), call("c1", "lookup", `{"order":3}`)}
	e.model.replies["clerk#4"] = "found them"
	failed := e.send(time.Second, msg("m1", "look up"))
	retried := e.send(time.Minute, msg("m1", "look up"))
	e.run(clerk(), 2*time.Minute)

	require.Error(t, failed.err)
	require.NoError(t, retried.err)
	// The calls of one reply run in parallel: their order is not the test's.
	assert.ElementsMatch(t, []string{"c1", "m1/1#2", "m1/1#3"}, ft.ran, "each call under its own id, each id run once")
	res := resultsOf(retried.result.Messages[1])
	assert.Equal(t, `lookup of {"order":1}`, res["c1"].Result, "reused")
	assert.Equal(t, `lookup of {"order":3}`, res["m1/1#3"].Result)
}
