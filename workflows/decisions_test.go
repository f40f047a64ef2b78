package workflows_test

import (
	"context"
	"errors"
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

// A decision given is never lost (issue 10: "every chat that can exist can be exported,
// imported and migrated"; a tool call runs at most once per call id): it is applied
// when given, so the history, and any document made of it, holds it.

// documentOf is the document an export of the chat would write now: its snapshot and
// the history up to the snapshot's boundary.
func documentOf(t *testing.T, snap wire.Snapshot, history []chat.Message) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b, _, err := chatstate.Encode(chatstate.Document{
		SchemaVersion: 1, ChatID: snap.ChatID, ExportedAt: at,
		Source:  chatstate.Source{Namespace: "default", WorkflowID: snap.ChatID},
		History: history[:snap.HistoryLength], Participants: snap.Participants, Channels: snap.Channels,
		Strategies: snap.Strategies, PendingTurns: snap.PendingTurns,
	})
	require.NoError(t, err)
	return b
}

func TestADecisionGivenIsAppliedAtOnceAndSurvivesAnExport(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":1}`), call("c2", "refund", `{"order":2}`)}
	e.send(time.Second, msg("m1", "refund orders 1 and 2"))
	first := e.approve(time.Minute, wire.ApproveInput{CallID: "c1", Approved: true})
	var doc []byte
	var st wire.StateResult
	e.at(2*time.Minute, func() { st, doc = e.state(), documentOf(t, e.snapshot(), e.history()) })
	e.run(clerk(), 3*time.Minute)

	require.NoError(t, first.err)
	assert.Equal(t, []string{"c1"}, ft.ran, "the approved refund ran when approved")
	require.Len(t, first.result.Messages, 1, "Approve answers the call's result")
	assert.Equal(t, `refund of {"order":1}`, resultsOf(first.result.Messages[0])["c1"].Result)
	assert.Equal(t, []string{"c2"}, pendingIDsOf(first.result.AwaitingApproval))
	assert.Equal(t, []string{"c2"}, pendingIDsOf(st.PendingApprovals))

	// The imported chat waits for c2 only; c1's refund does not run again.
	e2, ft2 := newToolEnv(t, 0)
	e2.model.replies["clerk#1"] = "both refunded"
	var st2 wire.StateResult
	e2.at(time.Second, func() { st2 = e2.state() })
	second := e2.approve(time.Minute, wire.ApproveInput{CallID: "c2", Approved: true})
	e2.run(restoring(doc, "clerk"), 2*time.Minute)
	assert.Equal(t, []string{"c2"}, pendingIDsOf(st2.PendingApprovals), "the decision on c1 was not lost")
	require.NoError(t, second.err)
	assert.Equal(t, []string{"c2"}, ft2.ran)
	assert.Equal(t, "both refunded", second.result.Messages[len(second.result.Messages)-1].Text())
}

func pendingIDsOf(ps []wire.PendingApproval) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.CallID)
	}
	return out
}

// An export asked for while a resumed turn runs (the approved refund has run, the
// agent has not answered yet) waits for the turn's answer: the document never holds the
// calls' results without it, which no importing chat could answer (issue 10, fault 4 of
// the tool-round follow-up).
func TestExportWhileAResumedTurnRunsWaitsForItsAnswer(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":1}`)}
	e.model.replies["clerk#2"] = "refunded"
	var atExport struct {
		modelCalls int
		snap       wire.Snapshot
	}
	e.env.RegisterActivityWithOptions(func(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
		atExport.modelCalls = e.model.count()
		atExport.snap = e.snapshot() // what the real activity reads
		return wire.ExportResult{Digest: "sha256:x"}, nil
	}, activity.RegisterOptions{Name: wire.ExportChatActivity})
	e.send(time.Second, msg("m1", "refund order 1"))
	approved := &outcome{}
	exported := &importOutcome{}
	e.at(time.Minute, func() {
		e.env.UpdateWorkflow(wire.ApproveUpdate, "approve", &callbacks{o: approved}, wire.ApproveInput{CallID: "c1", Approved: true})
		e.env.UpdateWorkflow(wire.ExportUpdate, "export", &importCallbacks{exported}, wire.ExportInput{})
	})
	e.run(clerk(), 3*time.Minute)

	require.NoError(t, approved.err)
	require.True(t, exported.done)
	require.NoError(t, exported.err)
	assert.Equal(t, []string{"c1"}, ft.ran)
	assert.Equal(t, 2, atExport.modelCalls, "the export read the chat after the resumed turn's answer")
	assert.Equal(t, 4, atExport.snap.HistoryLength, "the document holds the answer")
}

// callbacks is an update callback that records a TurnResult outcome.
type callbacks struct{ o *outcome }

func (c *callbacks) Accept()          {}
func (c *callbacks) Reject(err error) { c.o.rejected, c.o.done = err, true }
func (c *callbacks) Complete(v any, err error) {
	c.o.done, c.o.err = true, err
	if err == nil {
		c.o.result = v.(wire.TurnResult)
	}
}

// A decision given while the run continues as new (here: it drains while an export
// runs) is refused, retryably, and says where it goes: before, it was recorded, and the
// run waited for its Approve handler, which waited for the run, for ever.
func TestApproveWhileContinuingAsNewIsRefusedRetryably(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":1}`)}
	release := make(chan struct{})
	e.env.RegisterActivityWithOptions(func(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
		<-release
		return wire.ExportResult{Digest: "sha256:x"}, nil
	}, activity.RegisterOptions{Name: wire.ExportChatActivity})
	e.send(time.Second, msg("m1", "refund order 1"))
	approved := &outcome{}
	e.at(time.Minute, func() {
		e.env.UpdateWorkflow(wire.ExportUpdate, "export", &importCallbacks{&importOutcome{}}, wire.ExportInput{})
		go func() { time.Sleep(time.Second); close(release) }()
	})
	e.at(time.Minute+time.Millisecond, func() {
		e.env.UpdateWorkflow(wire.ApproveUpdate, "approve", &callbacks{o: approved}, wire.ApproveInput{CallID: "c1", Approved: true})
		e.env.SetContinueAsNewSuggested(true)
	})
	e.run(clerk(), 0)

	next, _ := canInput(t, e)
	require.True(t, approved.done)
	var app *temporal.ApplicationError
	require.True(t, errors.As(approved.rejected, &app), "%v / %v", approved.rejected, approved.err)
	assert.Equal(t, wire.ErrTypeContinuingAsNew, app.Type())
	assert.Contains(t, approved.rejected.Error(), "retry and the decision goes to the new run")
	assert.Empty(t, ft.ran)
	assert.Empty(t, next.Carry.Decisions, "the refused decision was not recorded")
}

// A decision taken just before the run begins to continue as new, while an export holds
// resumptions, is applied by the draining run once the export is done: before, the run
// waited for the Approve handler, which waited for the run, for ever.
func TestApproveTakenJustBeforeContinueAsNewIsApplied(t *testing.T) {
	e, ft := newToolEnv(t, 0)
	e.model.contents["clerk#1"] = []chat.Content{call("c1", "refund", `{"order":1}`)}
	e.model.replies["clerk#2"] = "refunded"
	release := make(chan struct{})
	e.env.RegisterActivityWithOptions(func(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
		<-release
		return wire.ExportResult{Digest: "sha256:x"}, nil
	}, activity.RegisterOptions{Name: wire.ExportChatActivity})
	e.send(time.Second, msg("m1", "refund order 1"))
	e.at(time.Minute, func() {
		e.env.UpdateWorkflow(wire.ExportUpdate, "export", &importCallbacks{&importOutcome{}}, wire.ExportInput{})
		go func() { time.Sleep(time.Second); close(release) }()
	})
	approved := e.approve(time.Minute+time.Millisecond, wire.ApproveInput{CallID: "c1", Approved: true})
	e.at(time.Minute+2*time.Millisecond, func() { e.env.SetContinueAsNewSuggested(true) })
	e.run(clerk(), 0)

	canInput(t, e) // the run continued as new
	require.True(t, approved.done)
	require.NoError(t, approved.rejected)
	require.NoError(t, approved.err)
	assert.Equal(t, "refunded", approved.result.Messages[len(approved.result.Messages)-1].Text())
	assert.Equal(t, []string{"c1"}, ft.ran)
}
