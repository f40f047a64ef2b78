package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/msgstore"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// What several files of the package share: a context per test, sending a turn,
// reading a run's status and sizes, channel states, approvals, tool-run counts.

func TestMain(m *testing.M) { testenv.Main(m) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// storeClient is a client of h's task queue that reads h's message store, so that
// History returns stored bodies whole.
func storeClient(h *testenv.Harness) *agentchat.Client {
	return agentchat.NewClient(h.Temporal, agentchat.ClientOptions{TaskQueue: h.TaskQueue, Keys: h.Keys,
		MessageStores: map[string]msgstore.Store{h.MessageStore.Name(): h.MessageStore}})
}

// appType is err's application error type, or "" when it has none.
func appType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

func send(t *testing.T, h *testenv.Harness, chatID, id, text string) agentchat.TurnResult {
	t.Helper()
	res, err := h.Client.Send(ctxFor(t), chatID, agentchat.SendMessageInput{MessageID: id, Text: text, AuthorName: "Alice"})
	require.NoError(t, err)
	return res
}

func workflowStatus(t *testing.T, h *testenv.Harness, chatID string) enumspb.WorkflowExecutionStatus {
	d, err := h.Temporal.DescribeWorkflowExecution(ctxFor(t), chatID, "")
	require.NoError(t, err)
	return d.GetWorkflowExecutionInfo().GetStatus()
}

func messageIDs(msgs []chat.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.MessageID
	}
	return out
}

// importBytes writes doc to a file (a large document is over the inline limit, so it
// goes to the worker by path) and imports it as chat id; the chat is terminated when
// the test ends.
func importBytes(tb testing.TB, ctx context.Context, h *testenv.Harness, id string, doc []byte) agentchat.StateResult {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), id+".json")
	require.NoError(tb, os.WriteFile(path, doc, 0o644))
	st, err := h.Client.Import(ctx, agentchat.ImportOptions{ChatID: id, Path: path})
	require.NoError(tb, err)
	tb.Cleanup(func() { // a 10k chat is heavy: do not leave it running on a shared server
		_ = h.Temporal.TerminateWorkflow(context.Background(), id, "", "test over")
	})
	return st
}

// channelOf returns the State channel of type typ.
func channelOf(t *testing.T, st agentchat.StateResult, typ string) wire.ChannelInfo {
	t.Helper()
	for _, c := range st.Channels {
		if c.ChannelType == typ {
			return c
		}
	}
	require.FailNow(t, "no channel of type "+typ, "channels: %+v", st.Channels)
	return wire.ChannelInfo{}
}

// docChannelOf returns the document's channel of type typ.
func docChannelOf(t *testing.T, doc chatstate.Document, typ string) chatstate.Channel {
	t.Helper()
	for _, c := range doc.Channels {
		if c.ChannelType == typ {
			return c
		}
	}
	require.FailNow(t, "no document channel of type "+typ, "channels: %+v", doc.Channels)
	return chatstate.Channel{}
}

// channelState returns the state of the chat's channel of type typ. State lists the
// channels (key, type, active) without their states; the ExportSnapshot query, the
// document without its history, holds them.
func channelState(t *testing.T, h *testenv.Harness, chatID, typ string) json.RawMessage {
	t.Helper()
	st, err := h.Client.State(ctxFor(t), chatID)
	require.NoError(t, err)
	return snapshotState(t, h, chatID, channelOf(t, st, typ).ChannelKey)
}

// snapshotState returns the state of the channel with key in the chat's ExportSnapshot.
func snapshotState(t *testing.T, h *testenv.Harness, chatID, key string) json.RawMessage {
	t.Helper()
	v, err := h.Temporal.QueryWorkflow(ctxFor(t), chatID, "", wire.SnapshotQuery)
	require.NoError(t, err)
	var snap wire.Snapshot
	require.NoError(t, v.Get(&snap))
	for _, c := range snap.Channels {
		if c.ChannelKey == key {
			return c.ChannelState
		}
	}
	require.FailNow(t, "no channel "+key+" in the snapshot", "channels: %+v", snap.Channels)
	return nil
}

func decodeState[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(raw, &v), "channel state %s", raw)
	return v
}

// counter counts calls by name.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func contentsByCall(m chat.Message) map[string]chat.Content {
	out := map[string]chat.Content{}
	for _, c := range m.Contents {
		out[c.CallID] = c
	}
	return out
}

// approve runs the Approve update and waits for its result.
func approve(t *testing.T, tc client.Client, chatID string, in wire.ApproveInput) (agentchat.TurnResult, error) {
	t.Helper()
	ctx := ctxFor(t)
	handle, err := tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: chatID, UpdateName: wire.ApproveUpdate,
		Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return agentchat.TurnResult{}, err
	}
	var res agentchat.TurnResult
	err = handle.Get(ctx, &res)
	return res, err
}

// activityRuns counts the activities of a type in the chat's event history: scheduled,
// completed, and the attempts the completed ones took.
func activityRuns(t *testing.T, tc client.Client, chatID, activityType string) (scheduled, completed, attempts int) {
	t.Helper()
	return activityRunsIn(t, tc, chatID, "", activityType)
}

// activityRunsIn is activityRuns over the run runID of the chat ("" the latest).
func activityRunsIn(t *testing.T, tc client.Client, chatID, runID, activityType string) (scheduled, completed, attempts int) {
	t.Helper()
	ours := map[int64]bool{}
	it := tc.GetWorkflowHistory(ctxFor(t), chatID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activityType {
				ours[ev.GetEventId()] = true
				scheduled++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if a := ev.GetActivityTaskStartedEventAttributes(); ours[a.GetScheduledEventId()] {
				attempts += int(a.GetAttempt())
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if ours[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] {
				completed++
			}
		}
	}
	return scheduled, completed, attempts
}

const refundCall = `{"order":"1001"}`

// refundScript asks for a refund, then answers with the default reply (which lists the
// tool results it received).
var refundScript = []offline.Reply{{ToolCalls: []offline.ToolCall{{ID: "r1", Name: "refund", Arguments: refundCall}}}, {}}

type runInfo struct {
	runID         string
	bytes, events int64
}

func currentRun(t *testing.T, h *testenv.Harness, id string) runInfo {
	d, err := h.Temporal.DescribeWorkflowExecution(ctxFor(t), id, "")
	require.NoError(t, err)
	i := d.GetWorkflowExecutionInfo()
	return runInfo{runID: i.GetExecution().GetRunId(), bytes: i.GetHistorySizeBytes(), events: i.GetHistoryLength()}
}

func allRuns(t *testing.T, h *testenv.Harness, id string) []runInfo {
	var out []runInfo
	var token []byte
	for {
		resp, err := h.Temporal.ListWorkflow(ctxFor(t), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: h.Namespace, Query: fmt.Sprintf("WorkflowId = %q", id), NextPageToken: token})
		require.NoError(t, err)
		for _, e := range resp.GetExecutions() {
			out = append(out, runInfo{runID: e.GetExecution().GetRunId(), bytes: e.GetHistorySizeBytes(), events: e.GetHistoryLength()})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out
		}
	}
}

// largestPayload returns the size of the largest payload in a run's events.
func largestPayload(t *testing.T, h *testenv.Harness, id, runID string) int64 {
	it := h.Temporal.GetWorkflowHistory(context.Background(), id, runID, false, 0)
	var largest int64
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		largest = max(largest, payloadsIn(ev))
	}
	return largest
}

// payloadsIn returns the size of the largest Payloads message anywhere in an event.
func payloadsIn(ev *historypb.HistoryEvent) int64 {
	var largest int64
	testenv.WalkMessages(ev.ProtoReflect(), func(m protoreflect.Message) bool {
		if p, ok := m.Interface().(*commonpb.Payloads); ok {
			largest = max(largest, int64(proto.Size(p)))
			return false
		}
		return true
	})
	return largest
}

// seedThread starts a helper thread and plays the seed's first turns.
func seedThread(t *testing.T, h *testenv.Harness, id string) {
	t.Helper()
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, h, id, "m1", "Hello, how are you?")
	send(t, h, id, "m2", "My name is Alice")
}

// assertOneLiveChat checks that exactly one running workflow has the chat's id across
// the harnesses' namespaces.
func assertOneLiveChat(t *testing.T, id string, hs ...*testenv.Harness) {
	t.Helper()
	running := 0
	for _, h := range hs {
		resp, err := h.Temporal.ListWorkflow(ctxFor(t), &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: h.Namespace, Query: fmt.Sprintf("WorkflowId = %q", id)})
		require.NoError(t, err)
		for _, e := range resp.GetExecutions() {
			if e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				running++
			}
		}
	}
	assert.Equal(t, 1, running, "exactly one live chat %q", id)
}

// recordWorker is the worker command with the record tool (internal/recordtool).
const recordWorker = "github.com/agentchat/agentchat/internal/recordtool/worker"

// deployConfig is a registry with the given agents, answered by each process's own
// offline model (--offline).
func deployConfig(ids ...string) string {
	out := "agents:\n"
	for _, id := range ids {
		out += fmt.Sprintf("  - {id: %s, name: %s, model: offline, call: {initialInterval: 50ms, maxAttempts: 3}}\n", id, id)
	}
	return out
}
