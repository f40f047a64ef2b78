package integration_test

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
	"github.com/agentchat/agentchat/workflows"
)

// Replay safety (testdata/replay/README.md): histories captured from real
// runs of the AgentChat workflow must replay on the current code. Refresh them with
//
//	go test -count=1 -run TestReplay ./integration -capture
//
// (the flag after the package: go test stops reading its own flags at one it does
// not know).
var capture = flag.Bool("capture", false,
	"run the replay scenarios on a dev server and rewrite "+replayDir+"/*.json before replaying them")

// replayDir holds the committed histories, one JSON file per captured run; the path is
// relative to this folder, where go test runs the package's tests.
const replayDir = "testdata/replay"

// replayScenarios capture one or more runs each, saved as <file>.json; the files must
// all be present for TestReplayCommittedHistories.
var replayScenarios = []struct {
	name    string
	files   []string
	capture func(t *testing.T, name string)
}{
	{"thread", []string{"thread"}, captureThread},
	{"temporary", []string{"temporary"}, captureTemporary},
	{"group-chat", []string{"group-chat"}, captureGroupChat},
	{"failed-turn", []string{"failed-turn"}, captureFailedTurn},
	{"unknown-agent", []string{"unknown-agent"}, captureUnknownAgent},
	{"signals-and-updates", []string{"signals-and-updates"}, captureSignalsAndUpdates},
	{"export-import", []string{"export", "import"}, captureExportImport},
	{"migrate", []string{"migrate-source", "migrate-target"}, captureMigrate},
	{"continue-as-new", []string{"continue-as-new-1", "continue-as-new-2"}, captureContinueAsNew},
	{"add-participants", []string{"add-participants"}, captureAddParticipants},
	{"tools-approval", []string{"tools-approval"}, captureToolsApproval},
	{"llm-strategies", []string{"llm-strategies"}, captureLLMStrategies},
	{"summarize", []string{"summarize"}, captureSummarize},
	{"tool-edges", []string{"tool-edges"}, captureToolEdges},
	{"stream-stop", []string{"stream-stop"}, captureStreamStop},
	{"stream-continue-as-new", []string{"stream-continue-as-new-1", "stream-continue-as-new-2"}, captureStreamContinueAsNew},
	{"migrate-after-start", []string{"migrate-after-start"}, captureMigrateAfterStart},
	{"reencrypt", []string{"reencrypt-1", "reencrypt-2"}, captureReencrypt},
	{"import-paged", []string{"import-paged"}, captureImportPaged},
}

// TestReplayCapture runs each scenario on the dev server and saves its runs' histories;
// without -capture it is skipped. It comes first in this file so that the tests below
// replay what it has just written.
func TestReplayCapture(t *testing.T) {
	if !*capture {
		t.Skip("run with -capture to rewrite " + replayDir)
	}
	start := time.Now()
	for _, sc := range replayScenarios {
		t.Run(sc.name, func(t *testing.T) { sc.capture(t, sc.name) })
	}
	t.Logf("captured %d scenarios in %s", len(replayScenarios), time.Since(start).Round(time.Millisecond))
}

// TestReplayCommittedHistories replays every committed history with the worker's
// registration of the workflow: a change to workflows.AgentChat that would break a
// running chat fails here.
func TestReplayCommittedHistories(t *testing.T) {
	files := replayFiles(t)
	require.NotEmpty(t, files, "no histories in %s: capture them with -capture", replayDir)
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for _, sc := range replayScenarios {
		for _, want := range sc.files {
			assert.Contains(t, names, want, "scenario %q has no history; capture it with -capture", sc.name)
		}
	}
	start := time.Now()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := newReplayer(workflows.AgentChat)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(replayLogger(t), f))
		})
	}
	t.Logf("replayed %d histories in %s", len(files), time.Since(start).Round(time.Millisecond))
}

// TestReplayDetectsAChangedWorkflow proves that the replay test bites: a workflow that
// starts a timer before doing what AgentChat does (a change made without
// workflow.GetVersion) fails to replay the thread's history as non-deterministic.
func TestReplayDetectsAChangedWorkflow(t *testing.T) {
	f := filepath.Join(replayDir, "thread.json")
	require.NoError(t, newReplayer(workflows.AgentChat).ReplayWorkflowHistoryFromJSONFile(replayLogger(t), f),
		"the unchanged workflow replays %s", f)

	altered := func(ctx workflow.Context, in wire.AgentChatInput) (wire.AgentChatResult, error) {
		_ = workflow.Sleep(ctx, time.Second)
		return workflows.AgentChat(ctx, in)
	}
	quiet := tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)) // the SDK logs the expected panic with its stack
	err := newReplayer(altered).ReplayWorkflowHistoryFromJSONFile(quiet, f)
	require.Error(t, err, "a workflow with an extra timer must not replay %s", f)
	assert.True(t, isNondeterminism(err), "want a non-determinism error, got: %v", err)
	t.Logf("the altered workflow fails as expected: %v", err)
}

// newReplayer registers wf as the worker does (hosting.Register) the AgentChat workflow.
func newReplayer(wf any) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: wire.WorkflowType})
	return r
}

// replayLogger sends the replayer's warnings to the test's output.
func replayLogger(t *testing.T) tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// isNondeterminism reports whether err is the SDK's non-determinism error: the SDK
// exports no type for it, only the code TMPRL1100 in its message.
func isNondeterminism(err error) bool {
	return err != nil && strings.Contains(err.Error(), "[TMPRL1100]")
}

func replayFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(replayDir, "*.json"))
	require.NoError(t, err)
	slices.Sort(files)
	return files
}

// replayHarness starts a harness on a fixed task queue, so that captures differ from
// one refresh to the next as little as possible.
func replayHarness(t *testing.T, name string, opts testenv.Options) *testenv.Harness {
	if opts.TaskQueue == "" {
		opts.TaskQueue = "replay-" + name
	}
	return testenv.New(t, opts)
}

// replayChat returns the chat id of a scenario, free in the namespace of each harness
// (a migration's target keeps the id): the fixed "replay-<scenario>", deleting the runs
// an earlier capture left under it (the client does not start a chat under the id of a
// closed one), or, when a busy server has not deleted them within deleteWait, that id
// with a suffix of this capture. The run captured now is terminated when the test ends.
func replayChat(t *testing.T, name string, hs ...*testenv.Harness) string {
	id := "replay-" + name
	for _, h := range hs {
		if !testenv.DeleteIfExists(t, h.Temporal, h.Namespace, id, deleteWait) {
			id = fmt.Sprintf("%s-%d", id, time.Now().UnixNano())
			t.Logf("capturing %s as chat %s", name, id)
			break
		}
	}
	for _, h := range hs {
		t.Cleanup(func() { testenv.TerminateIfRunning(t, h.Temporal, id) })
	}
	return id
}

// deleteWait bounds the wait for the server to delete an earlier capture's runs: it
// takes a second or so when idle, and may put it off for minutes when busy.
const deleteWait = 2 * time.Second

// saveRun waits until the chat's latest run is at rest and saves the history of run
// runID ("" = latest) as <file>.json; it checks the run's last event unless last is
// EVENT_TYPE_UNSPECIFIED.
func saveRun(t *testing.T, h *testenv.Harness, chatID, runID, file string, last enumspb.EventType) *historypb.History {
	t.Helper()
	testenv.WaitIdle(t, h.Temporal, chatID)
	path := filepath.Join(replayDir, file+".json")
	hist := testenv.SaveHistory(t, h.Temporal, chatID, runID, path)
	if last != enumspb.EVENT_TYPE_UNSPECIFIED {
		require.Equal(t, last, hist.Events[len(hist.Events)-1].GetEventType(), "last event of %s", file)
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	t.Logf("%s: %d events, %d bytes", path, len(hist.Events), fi.Size())
	return hist
}

// A running chat's last event, once it rests after a turn.
const atRest = enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED

func startReplayChat(t *testing.T, h *testenv.Harness, id string, opts agentchat.StartOptions) {
	t.Helper()
	opts.ChatID = id
	if opts.Participants == nil {
		opts.Participants = []string{"helper"}
	}
	_, err := h.Client.Start(ctxFor(t), opts)
	require.NoError(t, err)
}

func waitStatus(t *testing.T, h *testenv.Harness, id string, want enumspb.WorkflowExecutionStatus) {
	t.Helper()
	require.Eventually(t, func() bool { return workflowStatus(t, h, id) == want },
		20*time.Second, 50*time.Millisecond, "%s never became %s", id, want)
}

// The seed's thread: three turns.
func captureThread(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{})
	send(t, h, id, "m1", "Hello, how are you?")
	send(t, h, id, "m2", "My name is Alice")
	send(t, h, id, "m3", "What's my name?")
	saveRun(t, h, id, "", name, atRest)
}

// A temporary thread: one turn (Update-With-Start), then the workflow completes.
func captureTemporary(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	_, err := h.Client.Run(ctxFor(t), agentchat.RunOptions{ChatID: id, Agents: []string{"helper"}},
		agentchat.SendMessageInput{MessageID: "m1", Text: "Hello"})
	require.NoError(t, err)
	waitStatus(t, h, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	saveRun(t, h, id, "", name, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
}

// A group chat whose reviewer approves on its second reply: complete.
func captureGroupChat(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"writer":   {{Text: "Tea: calm."}, {Text: "Tea: calm in a cup."}},
		"reviewer": {{Text: "Shorter."}, {Text: "APPROVED"}},
	}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{Participants: []string{"writer", "reviewer"},
		Termination: agentchat.TerminationStrategy{Type: strategies.TerminationRegex, Pattern: `\bAPPROVED\b`,
			Agents: []string{"reviewer"}, MaxIterations: 6}})
	res := send(t, h, id, "brief", "A slogan for tea")
	require.True(t, res.IsComplete)
	waitStatus(t, h, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	saveRun(t, h, id, "", name, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
}

// A turn the model refuses (401, not retried), then a good turn.
func captureFailedTurn(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Model: offline.Options{Scripts: map[string][]offline.Reply{
		"helper": {{Status: 401, Message: "Incorrect API key"}},
	}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{})
	_, err := h.Client.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m1", Text: "Hello"})
	require.Error(t, err)
	send(t, h, id, "m2", "Are you there?")
	saveRun(t, h, id, "", name, atRest)
}

// A start naming an agent the worker does not know: the workflow fails.
func captureUnknownAgent(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper", "ghost"}})
	require.ErrorContains(t, err, `unknown agent id(s) "ghost"`)
	waitStatus(t, h, id, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED)
	saveRun(t, h, id, "", name, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED)
}

// Turns by UserMessage signal and by SendMessage update, alternating, and a signal the
// chat refuses (an empty message). Each step waits for the one before, so that the
// history has the same events at every capture.
func captureSignalsAndUpdates(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{})
	post := func(mid, text string, answered func(agentchat.StateResult) bool) {
		require.NoError(t, h.Temporal.SignalWorkflow(ctxFor(t), id, "", wire.UserMessageSignal,
			agentchat.SendMessageInput{MessageID: mid, Text: text}))
		require.Eventually(t, func() bool {
			st, err := h.Client.State(ctxFor(t), id)
			return err == nil && answered(st)
		}, 20*time.Second, 50*time.Millisecond, "signal %q never taken", mid)
		testenv.WaitIdle(t, h.Temporal, id)
	}
	replied := func(n int) func(agentchat.StateResult) bool {
		return func(st agentchat.StateResult) bool { return st.MessageCount == n }
	}
	post("s1", "first, by signal", replied(2))
	send(t, h, id, "u1", "second, by update")
	post("s2", "third, by signal", replied(6))
	post("bad", "", func(st agentchat.StateResult) bool { return st.LastError != nil && st.LastError.MessageID == "bad" })
	send(t, h, id, "u2", "fourth, by update")
	saveRun(t, h, id, "", name, atRest)
}

// A thread exported by the worker (the Export update) and by the client, and the
// client's document imported into a new chat that then takes a turn.
func captureExportImport(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	src := replayChat(t, "export", h)
	seedThread(t, h, src)
	res, err := h.Client.ExportTo(ctxFor(t), src, wire.ExportInput{Sink: wire.SinkInline})
	require.NoError(t, err)
	require.Equal(t, 4, res.MessageCount)
	doc, _, err := h.Client.Export(ctxFor(t), src)
	require.NoError(t, err)
	saveRun(t, h, src, "", "export", atRest)

	dst := replayChat(t, "import", h)
	st, err := h.Client.Import(ctxFor(t), agentchat.ImportOptions{ChatID: dst, Document: doc})
	require.NoError(t, err)
	require.Equal(t, 4, st.MessageCount)
	send(t, h, dst, "m3", "What did we talk about?")
	saveRun(t, h, dst, "", "import", atRest)
}

// A chat migrated to another namespace: the source run closes with a migrated result;
// the target, restored from the document, takes a turn.
func captureMigrate(t *testing.T, name string) {
	a := replayHarness(t, name, testenv.Options{})
	b := replayHarness(t, name, testenv.Options{Namespace: "agentchat-replay-b"})
	id := replayChat(t, name, a, b)
	seedThread(t, a, id)
	res, err := a.Client.Migrate(ctxFor(t), id, agentchat.MigrateOptions{ToNamespace: b.Namespace})
	require.NoError(t, err)
	require.Equal(t, b.Namespace, res.Target.Namespace)
	waitStatus(t, a, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	saveRun(t, a, id, "", "migrate-source", enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)

	send(t, b, id, "m3", "What did we talk about?")
	saveRun(t, b, id, "", "migrate-target", atRest)
}

// A chat whose history budget (60 events) makes it continue as new after a few turns:
// the first run ends ContinuedAsNew, the second takes over its state and a turn.
func captureContinueAsNew(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{HistoryBudget: wire.HistoryBudget{MaxEvents: 60}})
	for i := 1; ; i++ {
		require.Less(t, i, 30, "the chat never continued as new")
		send(t, h, id, fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i))
		st, err := h.Client.State(ctxFor(t), id)
		require.NoError(t, err)
		if st.Runs >= 1 {
			send(t, h, id, "after", "the first turn of the second run")
			break
		}
	}
	second := saveRun(t, h, id, "", "continue-as-new-2", atRest)
	first := second.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	require.NotEmpty(t, first, "the second run names the first")
	saveRun(t, h, id, first, "continue-as-new-1", enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
}

// A writer joins a helper's chat after a turn; the next turn has both reply.
func captureAddParticipants(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{})
	send(t, h, id, "m1", "Hello")
	st, err := h.Client.AddParticipants(ctxFor(t), id, "writer")
	require.NoError(t, err)
	require.Len(t, st.Participants, 2)
	res := send(t, h, id, "m2", "Both of you, please")
	require.Len(t, res.Messages, 2)
	saveRun(t, h, id, "", name, atRest)
}

// replayAgents adds a tool-using clerk, a selector, a judge and a summarizing agent.
const replayAgents = `
tools:
  lookup_order: {}
  refund: {approval: true}
agents:
  - {id: helper, name: Helper, model: offline}
  - {id: writer, name: Writer, model: offline}
  - {id: reviewer, name: Reviewer, model: offline}
  - {id: clerk, name: Clerk, model: offline, tools: [lookup_order, refund]}
  - {id: moderator, name: Moderator, model: offline}
  - {id: editor, name: Editor, model: offline}
  - {id: summer, name: Summer, model: offline, reducer: {type: summarize, maxMessages: 4, keep: 2}}
`

// captureToolsApproval: parallel tool calls, then a call that waits for approval, approved.
func captureToolsApproval(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Config: replayAgents, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"clerk": {
			{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup_order", Arguments: `{"order":"1001"}`}, {ID: "c2", Name: "lookup_order", Arguments: `{"order":"1002"}`}}},
			{ToolCalls: []offline.ToolCall{{ID: "c3", Name: "refund", Arguments: `{"order":"1002"}`}}},
			{Text: "Refunded."},
		}}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{Participants: []string{"clerk"}})
	res := send(t, h, id, "m1", "Refund my kettle")
	require.Len(t, res.AwaitingApproval, 1)
	done, err := h.Client.Approve(ctxFor(t), id, agentchat.ApproveInput{CallID: "c3", Approved: true})
	require.NoError(t, err)
	require.Equal(t, "[offline] clerk: Refunded.", done.Messages[len(done.Messages)-1].Text())
	saveRun(t, h, id, "", name, atRest)
}

// captureLLMStrategies: an llm selector and an llm judge that ends the chat.
func captureLLMStrategies(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Config: replayAgents, Model: offline.Options{Scripts: map[string][]offline.Reply{
		"moderator": {{Text: "reviewer"}, {Text: "writer"}},
		"editor":    {{Text: "no"}, {Text: "yes"}},
	}}})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{Participants: []string{"writer", "reviewer"},
		Selection:   agentchat.SelectionStrategy{Type: strategies.SelectionLLM, Agent: "moderator"},
		Termination: agentchat.TerminationStrategy{Type: strategies.TerminationLLM, Agent: "editor", MaxIterations: 4}})
	res := send(t, h, id, "m1", "A slogan, please")
	require.True(t, res.IsComplete)
	waitStatus(t, h, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	saveRun(t, h, id, "", name, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
}

// captureSummarize: a summarizing reducer writes its summary.
func captureSummarize(t *testing.T, name string) {
	h := replayHarness(t, name, testenv.Options{Config: replayAgents})
	id := replayChat(t, name, h)
	startReplayChat(t, h, id, agentchat.StartOptions{Participants: []string{"summer"}})
	for i := 1; i <= 4; i++ {
		send(t, h, id, fmt.Sprintf("m%d", i), fmt.Sprintf("turn %d", i))
	}
	saveRun(t, h, id, "", name, atRest)
}
