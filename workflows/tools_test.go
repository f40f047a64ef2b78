package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/wire"
)

func call(id, name, args string) chat.Content {
	return chat.Content{Type: chat.ContentFunctionCall, CallID: id, Name: name, Arguments: args}
}

// fakeTools runs "lookup" and "refund"; both lookups must be running at once before
// either returns, which proves parallel calls run in parallel.
type fakeTools struct {
	mu      sync.Mutex
	ran     []string
	both    sync.WaitGroup
	waitFor int
}

func (f *fakeTools) call(ctx context.Context, in wire.CallToolInput) (wire.CallToolResult, error) {
	f.mu.Lock()
	f.ran = append(f.ran, in.CallID)
	f.mu.Unlock()
	if in.Name == "lookup" && f.waitFor > 0 {
		f.both.Done()
		done := make(chan struct{})
		go func() { f.both.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			return wire.CallToolResult{}, errors.New("the other lookup never started: calls ran one after another")
		}
	}
	if in.Arguments == `{"fail":true}` {
		return wire.CallToolResult{}, temporal.NewNonRetryableApplicationError("database is down", wire.ErrTypeToolError, nil)
	}
	return wire.CallToolResult{Result: in.Name + " of " + in.Arguments}, nil
}

func newToolEnv(t *testing.T, parallel int) (*env, *fakeTools) {
	e := newEnv(t)
	ft := &fakeTools{waitFor: parallel}
	ft.both.Add(parallel)
	e.env.RegisterActivityWithOptions(ft.call, activity.RegisterOptions{Name: wire.CallToolActivity})
	return e, ft
}

func clerk() wire.AgentChatInput {
	return wire.AgentChatInput{Participants: []string{"clerk"}}
}

func resultsOf(m chat.Message) map[string]chat.Content {
	out := map[string]chat.Content{}
	for _, c := range m.Contents {
		out[c.CallID] = c
	}
	return out
}

func TestParallelToolCallsRunTogetherAndPairByCallID(t *testing.T) {
	e, ft := newToolEnv(t, 2)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`), call("c2", "lookup", `{"order":2}`)}
	e.model.replies["clerk#2"] = "both orders found"
	o := e.send(time.Second, msg("m1", "where are my orders?"))
	e.run(clerk(), 2*time.Second)

	require.NoError(t, o.err)
	msgs := o.result.Messages
	require.Len(t, msgs, 3)
	assert.Equal(t, 2, len(msgs[0].FunctionCalls()))
	assert.Equal(t, chat.RoleTool, msgs[1].Role)
	res := resultsOf(msgs[1])
	assert.Equal(t, `lookup of {"order":1}`, res["c1"].Result)
	assert.Equal(t, `lookup of {"order":2}`, res["c2"].Result)
	assert.Equal(t, "both orders found", msgs[2].Text())
	assert.ElementsMatch(t, []string{"c1", "c2"}, ft.ran)
	// The second model call saw the calls and their results.
	second := e.model.calls[1].History
	assert.Equal(t, []string{"m1", "m1/1", "m1/2"}, ids(second))
}

func TestToolErrorsAndBadArgumentsGoBackToTheModel(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{
		call("c1", "lookup", `{"fail":true}`), call("c2", "lookup", `not json`), call("c3", "teleport", `{}`)}
	e.model.replies["clerk#2"] = "sorry, I could not look that up"
	o := e.send(time.Second, msg("m1", "look it up"))
	e.run(clerk(), 2*time.Second)

	require.NoError(t, o.err)
	res := resultsOf(o.result.Messages[1])
	assert.Contains(t, res["c1"].Error, "database is down")
	assert.Contains(t, res["c2"].Error, "not a JSON object")
	assert.Contains(t, res["c3"].Error, `unknown tool "teleport"`)
	assert.Equal(t, []string{"c1"}, ft.ran, "only the valid call ran")
	assert.Equal(t, "sorry, I could not look that up", o.result.Messages[2].Text())
}

func TestToolRoundLimitNeverLeavesACallUnanswered(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	for _, k := range []string{"clerk#1", "clerk#2", "clerk#3", "clerk#4"} {
		e.model.contents[k] = []chat.Content{call("c-"+k, "lookup", `{}`)}
	}
	o := e.send(time.Second, msg("m1", "loop"))
	var hist []chat.Message
	e.at(2*time.Second, func() { hist = e.history() })
	e.run(clerk(), 3*time.Second)

	require.NoError(t, o.err)
	assert.Equal(t, 5, e.model.count(), "the first call, three tool rounds, and the answer without tools")
	limited := hist[len(hist)-2]
	assert.Equal(t, chat.RoleTool, limited.Role)
	assert.Contains(t, limited.Contents[0].Error, "limit of 3 tool rounds")
	assert.Empty(t, openCallsOf(hist))
	// Fault 11: the agent still answers; its last call may not ask for tools.
	last := hist[len(hist)-1]
	assert.Equal(t, chat.RoleAssistant, last.Role)
	assert.Equal(t, "clerk#5 saw 9 messages, last user: loop", last.Text())
	assert.Equal(t, last, o.result.Messages[len(o.result.Messages)-1], "the turn ends on the agent's answer")
	for i, c := range e.model.inputs {
		want := ""
		if i == 4 {
			want = wire.ToolChoiceNone
		}
		assert.Equal(t, want, c.ToolChoice, "call %d", i+1)
	}
}

// A model that asks for tools even with tool_choice "none": its calls get an error
// result too, and the reply ends there, so no call is left open and the loop ends.
func TestToolRoundLimitHoldsAgainstAModelThatIgnoresToolChoice(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	for _, k := range []string{"clerk#1", "clerk#2", "clerk#3", "clerk#4", "clerk#5", "clerk#6"} {
		e.model.contents[k] = []chat.Content{call("c-"+k, "lookup", `{}`)}
	}
	o := e.send(time.Second, msg("m1", "loop"))
	var hist []chat.Message
	e.at(2*time.Second, func() { hist = e.history() })
	e.run(clerk(), 3*time.Second)

	require.NoError(t, o.err)
	assert.Equal(t, 5, e.model.count())
	assert.Len(t, ft.ran, 3, "three rounds ran")
	assert.Empty(t, openCallsOf(hist))
	assert.Equal(t, chat.RoleTool, hist[len(hist)-1].Role)
}

// openCallsOf lists calls without results in a history.
func openCallsOf(h []chat.Message) []string {
	answered := map[string]bool{}
	for _, m := range h {
		for _, c := range m.Contents {
			if c.Type == chat.ContentFunctionResult {
				answered[c.CallID] = true
			}
		}
	}
	var open []string
	for _, m := range h {
		for _, c := range m.FunctionCalls() {
			if !answered[c.CallID] {
				open = append(open, c.CallID)
			}
		}
	}
	return open
}

// approve schedules an Approve update at the given delay and returns where its outcome lands.
func (e *env) approve(at time.Duration, in wire.ApproveInput) *outcome {
	return e.update(at, wire.ApproveUpdate, "approve-"+in.CallID, in)
}

func TestApprovalSuspendsTheTurnUntilAPersonDecides(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":120}`), call("c2", "lookup", `{"order":7}`)}
	e.model.replies["clerk#2"] = "refund done"
	o := e.send(time.Second, msg("m1", "refund order 7"))
	blocked := e.send(2*time.Second, msg("m2", "hello?"))
	var waiting wire.StateResult
	e.at(3*time.Second, func() { waiting = e.state() })
	ok := e.approve(time.Hour, wire.ApproveInput{CallID: "c1", Approved: true, By: "manager"})
	var after wire.StateResult
	e.at(time.Hour+time.Second, func() { after = e.state() })
	e.run(clerk(), time.Hour+2*time.Second)

	require.NoError(t, o.err)
	require.Len(t, o.result.AwaitingApproval, 1)
	assert.Equal(t, "c1", o.result.AwaitingApproval[0].CallID)
	assert.Equal(t, "refund", o.result.AwaitingApproval[0].Tool)
	require.Error(t, blocked.rejected, "no new turn while a call waits for approval")
	assert.Contains(t, blocked.rejected.Error(), "waits for the approval")
	require.Len(t, waiting.PendingApprovals, 1)
	assert.Equal(t, []string{"c2"}, ft.ran[:1], "the call that needs no approval ran at once")

	require.True(t, ok.done)
	require.NoError(t, ok.err)
	assert.Equal(t, "refund done", ok.result.Messages[len(ok.result.Messages)-1].Text())
	assert.Contains(t, ft.ran, "c1")
	assert.Empty(t, after.PendingApprovals)
	assert.Equal(t, 1, after.TurnCount)
}

// The refusal of a turn while a call waits is read by clients in any language: it says
// what to do in wire terms (the Approve update and its fields) and names no
// command-line tool; the starter adds its own hint.
func TestAwaitingApprovalRefusalNamesTheUpdateAndNoCommandLineTool(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":120}`)}
	e.send(time.Second, msg("m1", "refund order 7"))
	blocked := e.send(2*time.Second, msg("m2", "hello?"))
	e.run(clerk(), time.Minute)

	var app *temporal.ApplicationError
	require.ErrorAs(t, blocked.rejected, &app)
	assert.Equal(t, wire.ErrTypeAwaitingApproval, app.Type())
	assert.Contains(t, app.Message(), "tool call(s) [c1]")
	assert.Contains(t, app.Message(), "the "+wire.ApproveUpdate+" update (callId, approved)")
	assert.NotRegexp(t, `go run|starter|\./|--chat|--call`, app.Message())
}

func TestRejectionGoesBackToTheModelWithTheReason(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":900}`)}
	e.model.replies["clerk#2"] = "I cannot refund that"
	e.send(time.Second, msg("m1", "refund please"))
	no := e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: false, Reason: "over the limit"})
	e.run(clerk(), 2*time.Minute)

	require.NoError(t, no.err)
	require.Len(t, no.result.Messages, 2)
	res := resultsOf(no.result.Messages[0])
	assert.Equal(t, "rejected by a person: over the limit", res["c1"].Error)
	assert.NotContains(t, ft.ran, "c1", "a rejected call never runs")
	assert.Equal(t, "I cannot refund that", no.result.Messages[1].Text())
}

// A chat waiting for approval continues as new and the approval still resumes it.
func TestApprovalWaitsAcrossContinueAsNew(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"amount":5}`)}
	e.send(time.Second, msg("m1", "refund"))
	e.at(2*time.Second, func() { e.env.SignalWorkflow(wire.UserMessageSignal, msg("later", "queued meanwhile")) })
	e.at(3*time.Second, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)
	next, _ := canInput(t, e)

	e2, ft := newToolEnv(t, 0)
	e2.model.replies["clerk#1"] = "refunded"
	var before wire.StateResult
	var hist []chat.Message
	e2.at(time.Second, func() { before = e2.state() })
	ok := e2.approve(2*time.Second, wire.ApproveInput{CallID: "c1", Approved: true})
	e2.at(3*time.Second, func() { hist = e2.history() })
	e2.run(next, 4*time.Second)

	require.Len(t, before.PendingApprovals, 1)
	require.NoError(t, ok.err)
	assert.Equal(t, []string{"c1"}, ft.ran)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m1/3", "later", "later/1"}, ids(hist), "the queued signal was answered after the approved turn")
	assert.Empty(t, openCallsOf(hist))
}

// A provider that reuses a call id (or gives none) cannot break the chat: the history
// holds unique callIds, each paired with its result.
func TestRepeatedCallIDsAreMadeUnique(t *testing.T) {
	e, _ := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "lookup", `{"order":1}`)}
	e.model.contents["clerk#2"] = []chat.Content{call("c1", "lookup", `{"order":2}`), call("", "lookup", `{"order":3}`)}
	e.model.replies["clerk#3"] = "found them"
	o := e.send(time.Second, msg("m1", "look twice"))
	var hist []chat.Message
	e.at(2*time.Second, func() { hist = e.history() })
	e.run(clerk(), 3*time.Second)

	require.NoError(t, o.err)
	seen := map[string]int{}
	for _, m := range hist {
		for _, c := range m.FunctionCalls() {
			seen[c.CallID]++
		}
	}
	assert.Equal(t, map[string]int{"c1": 1, "m1/3#1": 1, "m1/3#2": 1}, seen)
	assert.Empty(t, openCallsOf(hist))
	assert.Equal(t, `lookup of {"order":2}`, resultsOf(hist[4])["m1/3#1"].Result)
}
