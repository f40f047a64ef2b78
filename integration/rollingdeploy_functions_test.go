package integration_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/internal/recordtool"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/strategies"
	"github.com/agentchat/agentchat/wire"
)

// A rolling deploy that adds or removes Go functions (tools, selection and termination
// functions), with real worker processes: the record worker has them, the plain
// worker command does not. A call that reaches a worker without its function is tried
// on the queue's other workers; it fails, clearly and within a bound, only when none
// has the function. (Issue "Survive rolling deploys", item 1, for functions.)

// Each chat of the tool test takes toolTurns turns while a worker has the tool; each
// turn's model reply asks for toolCalls record calls.
const (
	toolTurns = 2
	toolCalls = 3
)

// Chats started on the worker with the tool (so their agent has it) keep every tool
// call answered once a worker without the function joins the queue: the calls that
// reach it are run again elsewhere, and each call's side effect happens once, on the
// worker with the function. When that worker is gone, the calls fail after the
// configured wait with an error result that names the worker asked; the turn goes on.
func TestRollingDeployToolOnOneWorker(t *testing.T) {
	var script []offline.Reply
	for turn := range toolTurns + 1 {
		var calls []offline.ToolCall
		for i := range toolCalls {
			calls = append(calls, offline.ToolCall{ID: fmt.Sprintf("t%d-%d", turn, i), Name: "record", Arguments: `{}`})
		}
		script = append(script, offline.Reply{ToolCalls: calls}, offline.Reply{Text: "recorded"})
	}
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{"recorder": script}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	withTool := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
tools:
  record: {description: "Record something", timeout: 10s, maxAttempts: 3}
agents:
  - {id: recorder, name: Recorder, model: offline, endpoint: local, tools: [record], call: {initialInterval: 50ms, maxAttempts: 3}}
`, model.URL())
	withoutTool := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
agents:
  - {id: recorder, name: Recorder, model: offline, endpoint: local, call: {initialInterval: 50ms, maxAttempts: 3}}
`, model.URL())
	const wait = 3 * time.Second
	tq := testenv.TaskQueue(t)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	// a's identity is not Temporal's "<pid>@<host>@", so that, once killed, it stands
	// for a worker of another host: one the others cannot see has ended.
	a := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: withTool, Package: recordWorker,
		Args: []string{"--ledger", ledger}, Identity: "tool-worker-" + tq})
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", testenv.ChatID(t), i)
		_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: ids[i], Participants: []string{"recorder"}})
		require.NoError(t, err, "started while only the worker with the tool runs")
	}
	b := testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: withoutTool})

	var wg sync.WaitGroup
	errs := make(chan error, len(ids)*toolTurns)
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := range toolTurns {
				unstick(t, tc, id) // the next workflow task goes to either worker
				res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("m%d", turn), Text: "Record it"})
				if err != nil {
					errs <- fmt.Errorf("send %s/m%d: %w", id, turn, err)
					return
				}
				if last := res.Messages[len(res.Messages)-1]; !strings.Contains(last.Text(), "recorded") {
					errs <- fmt.Errorf("send %s/m%d: reply %q", id, turn, last.Text())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	entries, err := recordtool.Read(ledger)
	require.NoError(t, err)
	refused := 0
	for _, id := range ids {
		results := toolResults(t, c, id)
		require.Len(t, results, toolTurns*toolCalls, "chat %s: every call of every turn answered", id)
		for _, r := range results {
			assert.Empty(t, r.Error, "chat %s call %s", id, r.CallID)
			key := activities.IdempotencyKey(id, r.CallID)
			assert.Equal(t, 1, recordtool.Count(entries, recordtool.Ran, key), "call %s ran once", key)
		}
		refused += answersOfType(t, tc, id, wire.ErrTypeUnknownFunction)
	}
	for _, e := range entries {
		assert.Equal(t, a.PID, e.PID, "only the worker with the function runs it")
	}
	assert.Positive(t, refused, "some calls reached the worker without the tool (pid %d) and were run elsewhere", b.PID)
	t.Logf("%d tool calls were answered UnknownFunction first and then by the other worker", refused)

	// The worker with the tool is gone (though the server still lists it as a poller
	// for a while), and the one without it restarted with a short wait: the calls fail
	// after that wait, and the model reads why.
	a.Kill()
	b.Kill()
	b = testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: withoutTool,
		Args: []string{"--unknown-agent-wait", wait.String()}})
	unstick(t, tc, ids[0])
	began := time.Now()
	res, err := c.Send(ctxFor(t), ids[0], agentchat.SendMessageInput{MessageID: "late", Text: "Record it"})
	took := time.Since(began)
	require.NoError(t, err, "a tool call that fails is an error result, not a failed turn")
	assert.Contains(t, res.Messages[len(res.Messages)-1].Text(), "Not done: record (", "the model answered from the errors it read")
	var failed []chat.Content
	for _, r := range toolResults(t, c, ids[0]) {
		if strings.HasPrefix(r.CallID, fmt.Sprintf("t%d-", toolTurns)) {
			failed = append(failed, r)
		}
	}
	require.Len(t, failed, 3)
	for _, r := range failed {
		assert.Contains(t, r.Error, `tool function(s) "record": no worker of the task queue has them`)
		assert.Contains(t, r.Error, fmt.Sprintf("worker %d@", b.PID))
	}
	assert.GreaterOrEqual(t, took, wait, "tried for the whole wait")
	assert.Less(t, took, wait+20*time.Second, "and then gave up")
	t.Logf("failed after %s (wait %s): %s", took.Round(time.Millisecond), wait, failed[0].Error)
}

// Group chats whose selection and termination functions only one worker registers
// take every turn as if both had them; a function no worker registers fails the turn
// as soon as every poller has answered. The workers run under custom identities
// (--identity), which the "every poller has answered" shortcut must recognise: without
// it, the turn would fail only after the whole wait (2m), and so would a chat with an
// unknown agent.
func TestRollingDeployStrategyFunctionOnOneWorker(t *testing.T) {
	model, err := offline.Start(offline.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
agents:
  - {id: writer, name: Writer, model: offline, endpoint: local, call: {initialInterval: 50ms, maxAttempts: 3}}
  - {id: reviewer, name: Reviewer, model: offline, endpoint: local, call: {initialInterval: 50ms, maxAttempts: 3}}
`, model.URL())
	tq := testenv.TaskQueue(t)
	idA, idB := "deploy-with-functions-"+tq, "deploy-without-functions-"+tq
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: config, Package: recordWorker, Identity: idA,
		Args: []string{"--ledger", filepath.Join(t.TempDir(), "ledger.jsonl"), "--strategy-functions"}})
	testenv.StartWorkerProcess(t, testenv.ProcessOptions{TaskQueue: tq, Config: config, Identity: idB})
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: tq})
	group := func(id, selector string) error {
		_, err := c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"writer", "reviewer"},
			Selection:   agentchat.SelectionStrategy{Type: strategies.SelectionFunction, Function: selector, Fallback: strategies.FallbackError},
			Termination: agentchat.TerminationStrategy{Type: strategies.TerminationFunction, Function: "never-done", MaxIterations: 2}})
		return err
	}

	ids := make([]string, 4)
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(ids))
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", testenv.ChatID(t), i)
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			if err := group(id, "last-candidate"); err != nil {
				errs <- fmt.Errorf("start %s: %w", id, err)
				return
			}
			for turn := range 2 {
				unstick(t, tc, id)
				res, err := c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: fmt.Sprintf("m%d", turn), Text: "A slogan for tea"})
				if err != nil {
					errs <- fmt.Errorf("send %s/m%d: %w", id, turn, err)
					continue
				}
				var speakers []string
				for _, m := range res.Messages {
					speakers = append(speakers, m.AgentID)
				}
				if fmt.Sprint(speakers) != "[reviewer reviewer]" {
					errs <- fmt.Errorf("send %s/m%d: speakers %v, want the function's pick twice", id, turn, speakers)
				}
			}
		}(ids[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	refused := 0
	for _, id := range ids {
		refused += answersOfType(t, tc, id, wire.ErrTypeUnknownFunction)
	}
	assert.Positive(t, refused, "some strategy calls reached the worker without the functions and were run elsewhere")
	t.Logf("%d strategy calls were answered UnknownFunction first and then by the other worker", refused)

	id := testenv.ChatID(t) + "-ghost"
	require.NoError(t, group(id, "ghost-selector"))
	began := time.Now()
	_, err = c.Send(ctxFor(t), id, agentchat.SendMessageInput{MessageID: "m0", Text: "A slogan for tea"})
	took := time.Since(began)
	require.Equal(t, wire.ErrTypeTurnFailed, appType(err), "%v", err)
	assert.Contains(t, err.Error(), `selection function(s) "ghost-selector": no worker of the task queue has them`)
	assert.Contains(t, err.Error(), "worker "+idA+` has "last-candidate"`)
	assert.Contains(t, err.Error(), "worker "+idB+" has none")
	assert.Less(t, took, wire.DefaultUnknownAgentWait/4, "failed once both workers (custom identities) had answered")
	t.Logf("failed after %s: %v", took.Round(time.Millisecond), err)

	began = time.Now()
	_, err = c.Start(ctxFor(t), agentchat.StartOptions{ChatID: testenv.ChatID(t) + "-agent", Participants: []string{"ghost"}})
	took = time.Since(began)
	require.Equal(t, wire.ErrTypeUnknownAgent, appType(err), "%v", err)
	assert.Contains(t, err.Error(), "worker "+idA+" knows")
	assert.Contains(t, err.Error(), "worker "+idB+" knows")
	assert.Less(t, took, wire.DefaultUnknownAgentWait/4, "an unknown agent too")
}

// unstick makes the chat's next workflow task go to the task queue (any worker)
// rather than to the worker that ran its last one.
func unstick(t *testing.T, tc client.Client, chatID string) {
	t.Helper()
	_, err := tc.WorkflowService().ResetStickyTaskQueue(ctxFor(t), &workflowservice.ResetStickyTaskQueueRequest{
		Namespace: "default", Execution: &commonpb.WorkflowExecution{WorkflowId: chatID}})
	assert.NoError(t, err)
}

// toolResults returns the function results in the chat's history.
func toolResults(t *testing.T, c *agentchat.Client, chatID string) []chat.Content {
	t.Helper()
	h, err := c.History(ctxFor(t), chatID, agentchat.HistoryInput{})
	require.NoError(t, err)
	var out []chat.Content
	for _, m := range h.Messages {
		for _, ct := range m.Contents {
			if ct.Type == chat.ContentFunctionResult {
				out = append(out, ct)
			}
		}
	}
	return out
}

// answersOfType counts the activity attempts of a chat that failed with errType.
func answersOfType(t *testing.T, tc client.Client, chatID, errType string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	it := tc.GetWorkflowHistory(ctx, chatID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED &&
			e.GetActivityTaskFailedEventAttributes().GetFailure().GetApplicationFailureInfo().GetType() == errType {
			n++
		}
	}
	return n
}
