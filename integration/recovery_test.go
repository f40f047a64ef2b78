package integration_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat"
	"github.com/agentchat/agentchat/internal/testenv"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// Crash recovery, with real processes: a worker killed mid-call, a dev server
// restarted between turns, and model calls slower than the heartbeat timeout (a long
// stream, which must not be cut, and a hang, which must be retried).

// words returns n distinct words, for a scripted reply that streams one chunk a word.
func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("word%d", i+1)
	}
	return strings.Join(w, " ")
}

// A worker process killed with SIGKILL while its model call streams: the call's
// heartbeats stop, the server times the attempt out and retries it on a new worker
// process, and the turn's reply appears once.
func TestWorkerKilledMidModelCall(t *testing.T) {
	text := words(15)
	model, err := offline.Start(offline.Options{ChunkDelay: 300 * time.Millisecond,
		Scripts: map[string][]offline.Reply{"helper": {{Text: text}, {Text: text}}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = model.Close() })
	config := fmt.Sprintf(`
endpoints:
  local: {baseURL: %q, stream: true}
agents:
  - id: helper
    name: Helper
    model: offline
    endpoint: local
    call: {heartbeatTimeout: 2s, initialInterval: 200ms, maxAttempts: 5}
`, model.URL())
	tq := testenv.TaskQueue(t)
	opts := testenv.ProcessOptions{TaskQueue: tq, Config: config}
	first := testenv.StartWorkerProcess(t, opts)
	c := agentchat.NewClient(testenv.Dial(t, ""), agentchat.ClientOptions{TaskQueue: tq})
	id := testenv.ChatID(t)
	_, err = c.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)

	type sent struct {
		res agentchat.TurnResult
		err error
	}
	done := make(chan sent, 1)
	ctx := ctxFor(t)
	began := time.Now()
	go func() {
		res, err := c.Send(ctx, id, agentchat.SendMessageInput{MessageID: "t1", Text: "Tell me a story"})
		done <- sent{res, err}
	}()
	require.Eventually(t, func() bool { return model.Requests("helper") == 1 }, 20*time.Second, 10*time.Millisecond,
		"the model was never called")
	time.Sleep(time.Second) // a few chunks in: the call has heartbeated, then goes silent
	first.Kill()
	killedAt := time.Since(began)
	select {
	case s := <-done:
		require.FailNow(t, "Send returned while no worker ran", "result %+v, error %v", s.res, s.err)
	default:
	}
	testenv.StartWorkerProcess(t, opts)

	var s sent
	select {
	case s = <-done:
	case <-time.After(45 * time.Second):
		require.FailNow(t, "the turn did not finish within 45s of the kill")
	}
	t.Logf("killed %s after Send; turn done %s after Send", killedAt.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	require.NoError(t, s.err)
	reply := "[offline] helper: " + text
	require.Len(t, s.res.Messages, 1)
	assert.Equal(t, reply, s.res.Messages[0].Text())
	assert.Equal(t, "t1/1", s.res.Messages[0].MessageID)

	hist, err := c.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"t1", "t1/1"}, messageIDs(hist.Messages), "the user message once and one reply")
	require.Len(t, hist.Messages, 2)
	assert.Equal(t, "Tell me a story", hist.Messages[0].Text())
	assert.Equal(t, reply, hist.Messages[1].Text())
	assert.Equal(t, 2, model.Requests("helper"), "the first attempt died with the worker; the second answered")
	st, err := c.State(ctxFor(t), id)
	require.NoError(t, err)
	assert.Equal(t, 1, st.TurnCount)
	assert.Nil(t, st.LastError)
}

// A file-backed dev server stopped and started again between turns: the chat goes on
// from its stored history, with the same worker and client (their gRPC connections
// reconnect by themselves).
func TestDevServerRestartBetweenTurns(t *testing.T) {
	srv := testenv.NewRestartableServer(t) // stops after the harnesses' workers
	addr := srv.Address

	h := testenv.New(t, testenv.Options{Address: addr})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)
	send(t, h, id, "m1", "Hello, how are you?")
	send(t, h, id, "m2", "My name is Alice")

	stopping := time.Now()
	srv.Stop()
	stopped := time.Since(stopping)
	srv.Start()
	restarted := time.Since(stopping)

	sending := time.Now()
	third := send(t, h, id, "m3", "What's my name?")
	t.Logf("server stopped in %s, up again after %s; third turn took %s",
		stopped.Round(time.Millisecond), restarted.Round(time.Millisecond), time.Since(sending).Round(time.Millisecond))
	reply := third.Messages[0].Text()
	assert.Contains(t, reply, "received 6 messages", "system + the 5 messages before it, from before the restart")
	assert.Contains(t, reply, `First user message: "Hello, how are you?"`)
	assert.Contains(t, reply, "Your name is Alice")

	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"m1", "m1/1", "m2", "m2/1", "m3", "m3/1"}, messageIDs(hist.Messages))
	assert.Equal(t, 3, h.Model.Requests("helper"))
}

// A streamed answer that takes six times the heartbeat timeout: every chunk
// heartbeats, so the call is never timed out and the model is asked once.
func TestSlowStreamLongerThanHeartbeatTimeout(t *testing.T) {
	const heartbeat, chunkDelay = time.Second, 300 * time.Millisecond
	text := words(20)
	h := testenv.New(t, testenv.Options{
		Config: `
agents:
  - {id: helper, name: Helper, model: offline, call: {heartbeatTimeout: 1s, initialInterval: 50ms, maxAttempts: 2}}
`,
		Model: offline.Options{ChunkDelay: chunkDelay, Scripts: map[string][]offline.Reply{"helper": {{Text: text}}}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)

	began := time.Now()
	res := send(t, h, id, "slow", "Tell me a long story")
	took := time.Since(began)
	t.Logf("turn took %s (heartbeat timeout %s)", took.Round(time.Millisecond), heartbeat)

	require.Len(t, res.Messages, 1)
	assert.Equal(t, "[offline] helper: "+text, res.Messages[0].Text(), "the whole stream, not cut")
	assert.Equal(t, 1, h.Model.Requests("helper"), "one attempt")
	// 2 (prefix) + 20 words, the role, finish and [DONE] events: 24 pauses.
	assert.Greater(t, took, 5*heartbeat, "the call really outlasted the heartbeat timeout")
}

// A model that accepts the request and then sends nothing: the call stops
// heartbeating, the server times the attempt out after the heartbeat timeout, and the
// retry gets the answer long before the hung request would have.
func TestHungModelIsRetried(t *testing.T) {
	const heartbeat, hang = time.Second, 30 * time.Second
	h := testenv.New(t, testenv.Options{
		Config: `
agents:
  - {id: helper, name: Helper, model: offline, call: {heartbeatTimeout: 1s, initialInterval: 50ms, maxAttempts: 3}}
`,
		Model: offline.Options{Scripts: map[string][]offline.Reply{
			// A hung attempt: an error entry, answered once for its place in the
			// conversation, after a delay the client does not wait out.
			"helper": {{Status: http.StatusServiceUnavailable, Message: "too late", Delay: wire.Duration(hang)}, {Text: "here I am"}},
		}},
	})
	id := testenv.ChatID(t)
	_, err := h.Client.Start(ctxFor(t), agentchat.StartOptions{ChatID: id, Participants: []string{"helper"}})
	require.NoError(t, err)

	began := time.Now()
	res := send(t, h, id, "hung", "Are you there?")
	took := time.Since(began)
	t.Logf("turn took %s (heartbeat timeout %s, hang %s)", took.Round(time.Millisecond), heartbeat, hang)

	require.Len(t, res.Messages, 1)
	assert.Equal(t, "[offline] helper: here I am", res.Messages[0].Text())
	assert.Equal(t, 2, h.Model.Requests("helper"), "the hung attempt and its retry")
	assert.GreaterOrEqual(t, took, heartbeat, "the retry waited for the heartbeat timeout")
	assert.Less(t, took, hang/3, "retried after the heartbeat timeout, not after the hang")
	hist, err := h.Client.History(ctxFor(t), id, agentchat.HistoryInput{})
	require.NoError(t, err)
	assert.Equal(t, []string{"hung", "hung/1"}, messageIDs(hist.Messages))
}
