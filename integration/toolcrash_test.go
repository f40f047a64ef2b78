package integration_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/internal/recordtool"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// A tool's side effect happens at most once per idempotency key, with real processes:
// the worker is killed with SIGKILL a few ms after the tool ran, before its completion
// reached Temporal. Temporal runs the call again on a new worker process, with the same
// key; the tool finds the key in its ledger and answers the first result without a
// second side effect. (Issue "Survive rolling deploys and crashes", item 6.)
func TestToolRunsOnceAcrossAWorkerKillAfterItsSideEffect(t *testing.T) {
	model, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{
		"recorder": {{ToolCalls: []offline.ToolCall{{ID: "rec1", Name: "record", Arguments: `{}`}}}, {}}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	const toolTimeout = 2 * time.Second
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q}
tools:
  record: {description: "Record something", timeout: %s, maxAttempts: 5}
agents:
  - {id: recorder, name: Recorder, model: offline, endpoint: local, tools: [record], call: {initialInterval: 50ms, maxAttempts: 4}}
`, model.URL(), toolTimeout)
	ledger := filepath.Join(t.TempDir(), "ledger.jsonl")
	opts := testenv.ProcessOptions{TaskQueue: testenv.TaskQueue(t), Config: config, Package: recordWorker,
		Args: []string{"--ledger", ledger, "--hold", "30s"}}
	first := testenv.StartWorkerProcess(t, opts)
	tc := testenv.Dial(t, "")
	c := agentchat.NewClient(tc, agentchat.ClientOptions{TaskQueue: opts.TaskQueue})
	id := testenv.ChatID(t)
	_, err = c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"recorder"}})
	require.NoError(t, err)
	key := activities.IdempotencyKey(id, "rec1")

	type sent struct {
		res agentchat.TurnResult
		err error
	}
	done := make(chan sent, 1)
	ctx := ctxFor(t)
	go func() {
		res, err := c.Send(ctx, id, agentchat.SendMessageInput{MessageID: "m1", Text: "Record it"})
		done <- sent{res, err}
	}()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		entries, err := recordtool.Read(ledger)
		require.NoError(c, err)
		assert.Equal(c, 1, recordtool.Count(entries, recordtool.Ran, key))
	}, 30*time.Second, 2*time.Millisecond, "the tool never ran")
	time.Sleep(5 * time.Millisecond) // the side effect is done; the completion is not
	first.Kill()
	killed := time.Now()
	testenv.StartWorkerProcess(t, opts)

	var s sent
	select {
	case s = <-done:
	case <-time.After(60 * time.Second):
		require.FailNow(t, "the turn did not finish within 60s of the kill")
	}
	t.Logf("turn done %s after the kill (tool timeout %s)", time.Since(killed).Round(time.Millisecond), toolTimeout)
	require.NoError(t, s.err)
	entries, err := recordtool.Read(ledger)
	require.NoError(t, err)
	assert.Equal(t, 1, recordtool.Count(entries, recordtool.Ran, key), "one side effect for one key")
	assert.GreaterOrEqual(t, recordtool.Count(entries, recordtool.Attempt, key), 2, "the call was run again after the kill")
	for _, e := range entries {
		assert.Equal(t, key, e.Key, "every attempt had the call's key")
	}
	_, _, attempts := activityRuns(t, tc, id, wire.CallToolActivity)
	assert.GreaterOrEqual(t, attempts, 2, "Temporal ran the activity again")

	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m1/2", "m1/3"}, messageIDs(hist.Messages))
	assert.Equal(t, "recorded "+key, contentsByCall(hist.Messages[2])["rec1"].Result, "the first attempt's result")
}
