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

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
	"github.com/agentchat/agentchat/workflows"
)

// fakeModel stands in for the InvokeAgent activity: it answers
// "<agent>#<n> saw <k> messages, last user: <text>" and records every input, with
// History set to the history the call sees (rebuilt from the delta and what it cached at
// its previous call, as the activity does). A scripted reply or error for (agent, call
// number) overrides that.
type fakeModel struct {
	mu       sync.Mutex
	calls    []wire.InvokeInput
	inputs   []wire.InvokeInput        // as sent
	runs     map[string][]chat.Message // committed history by chat and run, as cached
	replies  map[string]string         // "agent#n" → text
	contents map[string][]chat.Content // "agent#n" → contents (tool calls)
	errs     map[string]error          // "agent#n" → error
	usages   map[string]chat.Usage     // "agent#n" → the usage the reply reports
}

func newFakeModel() *fakeModel {
	return &fakeModel{replies: map[string]string{}, errs: map[string]error{}, contents: map[string][]chat.Content{},
		runs: map[string][]chat.Message{}, usages: map[string]chat.Usage{}}
}

// seen is the history a call sees: its inline history, or the run's messages rebuilt
// from this fake's cache and the delta, then reduced (or, for a service thread, cut at
// HistoryFrom). The fake cannot query the run: with the cache short of DeltaFrom it
// returns nil, which the tests' assertions on what the model saw then catch.
func (f *fakeModel) seen(in wire.InvokeInput) []chat.Message {
	if in.HistoryLength == 0 {
		return in.History
	}
	key := in.ChatID + "/" + in.RunID
	cached := f.runs[key]
	if len(cached) < in.DeltaFrom || in.DeltaFrom+len(in.Delta) != in.HistoryLength {
		return nil
	}
	msgs := append(slices.Clone(cached[:in.DeltaFrom]), in.Delta...)
	f.runs[key] = msgs[:min(in.Committed, len(msgs))]
	if in.HistoryFrom > 0 {
		return msgs[min(in.HistoryFrom, len(msgs)):]
	}
	return in.Reducer.ReduceWith(msgs, in.ChannelState)
}

func (f *fakeModel) invoke(_ context.Context, in wire.InvokeInput) (wire.InvokeResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	in.History = f.seen(in)
	f.calls = append(f.calls, in)
	n := 0
	for _, c := range f.calls {
		if c.AgentID == in.AgentID {
			n++
		}
	}
	key := fmt.Sprintf("%s#%d", in.AgentID, n)
	if err, ok := f.errs[key]; ok {
		return wire.InvokeResult{}, err
	}
	if c, ok := f.contents[key]; ok {
		return wire.InvokeResult{Contents: c}, nil
	}
	var state json.RawMessage
	if in.AgentID == "responder" { // a service thread: it answers with its new watermark
		state = json.RawMessage(fmt.Sprintf(`{"previousResponseId":"resp_%d","syncedThrough":%q}`, n, in.ReplyID))
	}
	text, ok := f.replies[key]
	if !ok {
		text = fmt.Sprintf("%s saw %d messages, last user: %s", key, len(in.History), lastUser(in.History))
	}
	res := wire.InvokeResult{Contents: []chat.Content{chat.Text(text)}, ChannelState: state}
	if u, ok := f.usages[key]; ok {
		res.Usage, res.Cost = &u, float64(u.InputTokens)/1000
	}
	return res, nil
}

func (f *fakeModel) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func lastUser(h []chat.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == chat.RoleUser {
			return h[i].Text()
		}
	}
	return ""
}

// registry is the agents the fake resolver knows; trimmer truncates its history to 4
// messages, so it has a channel of its own.
var registry = map[string]string{"helper": "Helper", "writer": "Writer", "reviewer": "Reviewer", "trimmer": "Trimmer", "clerk": "Clerk",
	"summer": "Summer", "responder": "Responder"}

// clerkTools are the tools of the clerk: lookup runs at once, refund needs approval.
var clerkTools = []wire.ToolSpec{
	{Name: "lookup", Tool: wire.Tool{Timeout: wire.Duration(time.Second), MaxAttempts: 1}},
	{Name: "refund", Tool: wire.Tool{Timeout: wire.Duration(time.Second), MaxAttempts: 1, Approval: true}},
}

var (
	plainKey   = chat.ChannelKey(chat.ChannelChatHistory, "reducer=none")
	trimmerKey = chat.ChannelKey(chat.ChannelChatHistory, "reducer=truncate:4")
)

func resolve(_ context.Context, in wire.ResolveInput) (wire.ResolveResult, error) {
	var out []wire.Participant
	var unknown []string
	for _, id := range in.AgentIDs {
		name, ok := registry[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		p := wire.Participant{ID: id, Name: name, Kind: wire.KindChatCompletion,
			ChannelType: chat.ChannelChatHistory, ChannelKey: plainKey,
			Call: wire.CallSettings{MaxAttempts: 2, InitialInterval: wire.Duration(time.Millisecond)}}
		if id == "trimmer" {
			p.ChannelKey, p.Reducer = trimmerKey, strategies.Reducer{Type: strategies.ReducerTruncate, MaxMessages: 4}
		}
		if id == "clerk" {
			p.Tools, p.MaxToolRounds = clerkTools, 3
		}
		if id == "summer" {
			p.Reducer = strategies.Reducer{Type: strategies.ReducerSummarize, MaxMessages: 4, Keep: 2}
			p.ChannelKey = chat.ChannelKey(chat.ChannelChatHistory, "reducer="+p.Reducer.Key())
		}
		if id == "responder" {
			p.Kind, p.ChannelType = wire.KindResponses, wire.ChannelResponsesThread
			p.ChannelKey = chat.ChannelKey(wire.ChannelResponsesThread, "endpoint=x", "agent=responder")
		}
		out = append(out, p)
	}
	if len(unknown) > 0 {
		return wire.ResolveResult{}, temporal.NewNonRetryableApplicationError(
			"unknown agent id(s) "+strings.Join(unknown, ", "), wire.ErrTypeUnknownAgent, nil)
	}
	return wire.ResolveResult{Participants: out}, nil
}

type env struct {
	t     *testing.T
	env   *testsuite.TestWorkflowEnvironment
	model *fakeModel
}

func newEnv(t *testing.T) *env {
	var suite testsuite.WorkflowTestSuite
	e := suite.NewTestWorkflowEnvironment()
	e.RegisterWorkflowWithOptions(workflows.AgentChat, workflow.RegisterOptions{Name: wire.WorkflowType})
	m := newFakeModel()
	e.RegisterActivityWithOptions(m.invoke, activity.RegisterOptions{Name: wire.InvokeAgentActivity})
	e.RegisterActivityWithOptions(resolve, activity.RegisterOptions{Name: wire.ResolveParticipantsActivity})
	// The real import activity: it only decodes the inline document it is given.
	reg := agents.NewRegistry(agents.Config{Agents: []agents.Definition{{ID: "helper", Model: "m", Endpoint: "default"}},
		Endpoints: map[string]agents.Endpoint{"default": {BaseURL: "http://127.0.0.1:1/v1"}}})
	acts, err := activities.New(activities.Config{Registry: reg})
	require.NoError(t, err)
	e.RegisterActivityWithOptions(acts.ImportChat, activity.RegisterOptions{Name: wire.ImportChatActivity})
	return &env{t: t, env: e, model: m}
}

// outcome collects what an update returned.
type outcome struct {
	rejected error
	result   wire.TurnResult
	err      error
	done     bool
	// then, when set, runs once the update has completed (a millisecond later by the
	// workflow's clock), e.g. a query that must see what the turn wrote: a fixed time
	// (at) may come before the turn ends, as the test environment skips time whenever
	// no activity runs.
	then func()
}

// send schedules a SendMessage update at the given delay and returns where its outcome lands.
func (e *env) send(at time.Duration, in wire.SendMessageInput) *outcome {
	return e.update(at, wire.SendMessageUpdate, "u-"+in.MessageID+at.String(), in)
}

// update schedules an update that answers a TurnResult (SendMessage, Approve) at the
// given delay and returns where its outcome lands.
func (e *env) update(at time.Duration, name, id string, in any) *outcome {
	o := &outcome{}
	e.env.RegisterDelayedCallback(func() {
		e.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { o.rejected, o.done = err, true },
			OnComplete: func(v any, err error) {
				o.done, o.err = true, err
				if err == nil {
					o.result = v.(wire.TurnResult)
				}
				if o.then != nil {
					e.env.RegisterDelayedCallback(o.then, time.Millisecond)
				}
			},
		}, in)
	}, at)
	return o
}

// at schedules f, e.g. a query, at the given delay.
func (e *env) at(d time.Duration, f func()) { e.env.RegisterDelayedCallback(f, d) }

// query runs the named query with args and decodes its answer into a T.
func query[T any](e *env, name string, args ...any) T {
	v, err := e.env.QueryWorkflow(name, args...)
	require.NoError(e.t, err)
	var out T
	require.NoError(e.t, v.Get(&out))
	return out
}

func (e *env) state() wire.StateResult {
	return query[wire.StateResult](e, wire.StateQuery)
}

func (e *env) history() []chat.Message {
	return query[wire.HistoryResult](e, wire.HistoryQuery).Messages
}

// run starts the workflow and cancels it at stopAt (a chat does not end by itself).
func (e *env) run(in wire.AgentChatInput, stopAt time.Duration) {
	if stopAt > 0 {
		e.at(stopAt, e.env.CancelWorkflow)
	}
	e.env.ExecuteWorkflow(wire.WorkflowType, in)
}

func msg(id, text string) wire.SendMessageInput {
	return wire.SendMessageInput{MessageID: id, Text: text}
}

func authors(msgs []chat.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+m.AgentID)
	}
	return out
}

func texts(msgs []chat.Message) []string {
	return slices.Collect(func(yield func(string) bool) {
		for _, m := range msgs {
			if !yield(m.Text()) {
				return
			}
		}
	})
}

// slowModel makes every model call take d of workflow time (the fake answers).
func (e *env) slowModel(d time.Duration) {
	e.env.OnActivity(wire.InvokeAgentActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in wire.InvokeInput) (wire.InvokeResult, error) {
			return e.model.invoke(ctx, in)
		}).
		After(d)
}

// canInput returns the input a run continued as new with, and its encoded size.
func canInput(t *testing.T, e *env) (wire.AgentChatInput, int) {
	t.Helper()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(e.env.GetWorkflowError(), &can), "the run did not continue as new: %v", e.env.GetWorkflowError())
	size := 0
	for _, p := range can.Input.GetPayloads() {
		size += len(p.GetData())
	}
	var next wire.AgentChatInput
	require.NoError(t, converterFor().FromPayloads(can.Input, &next))
	return next, size
}

// continuedChat runs a thread that answers m1 "Hello" and then continues as new; it
// returns m1's outcome and the input of the next run.
func continuedChat(t *testing.T) (*outcome, wire.AgentChatInput) {
	t.Helper()
	e := newEnv(t)
	first := e.send(time.Second, msg("m1", "Hello"))
	e.at(2*time.Second, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(thread(), 0)
	require.NoError(t, first.err)
	next, _ := canInput(t, e)
	return first, next
}
