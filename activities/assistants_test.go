package activities_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// threadOf is the thread a state names, with its messages (oldest first) as
// "<role>: <text> [<agentchat_message_id>]".
func threadOf(t *testing.T, srv *offline.Server, state json.RawMessage) (string, []string) {
	t.Helper()
	var st wire.AssistantThreadState
	require.NoError(t, json.Unmarshal(state, &st))
	msgs, ok := srv.ThreadMessages(st.ThreadID)
	require.True(t, ok, "thread %q", st.ThreadID)
	var out []string
	for _, m := range msgs {
		text := ""
		for _, c := range m.Content {
			text += c.Text.Value
		}
		if len(text) > 30 {
			text = text[:30]
		}
		id, _ := m.Metadata[activities.MetaMessageID].(string)
		out = append(out, m.Role+": "+text+" ["+id+"]")
	}
	return st.ThreadID, out
}

// runsOf is the thread's runs, newest first, through the real client.
func runsOf(t *testing.T, srv *offline.Server, threadID string) []openai.Run {
	t.Helper()
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	runs, err := openai.NewClientWithConfig(cfg).ListRuns(context.Background(), threadID, openai.Pagination{})
	require.NoError(t, err)
	return runs.Runs
}

func TestAssistantThreadGetsEveryMessageOnce(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	res, err, beats := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "asst", TurnID: "m3", ReplyID: "m3/1",
		History: conversation("asst"), ChannelState: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, []chat.Content{chat.Text("[offline] asst " + firstReply)}, res.Contents)
	assert.GreaterOrEqual(t, beats, 1, "it heartbeats while it works (the SDK throttles them)")
	assert.Equal(t, "test-model", res.Model)
	var st wire.AssistantThreadState
	require.NoError(t, json.Unmarshal(res.ChannelState, &st))
	assert.Regexp(t, `^thread_`, st.ThreadID)
	assert.Equal(t, "m3/1", st.SyncedThrough)
	_, msgs := threadOf(t, srv, res.ChannelState)
	assert.Equal(t, []string{
		"user: Hello, how are you? [m1]",
		"assistant: Fine. [m1/1]",
		"user: My name is Alice [m2]",
		"assistant: Writer: Hi Alice. [m2/1]",
		"user: What's my name? [m3]",
		"assistant: [offline] asst received 6 mess [m3/1]",
	}, msgs)

	// The next call adds only the new message to the same thread.
	in := wire.InvokeInput{ChatID: "c", AgentID: "asst", TurnID: "m4", ReplyID: "m4/1",
		History: []chat.Message{recap}, HistoryFrom: 6, ChannelState: res.ChannelState}
	res2, err, _ := invoke(t, acts, in)
	require.NoError(t, err)
	assert.Equal(t, "[offline] asst "+secondReply, res2.Contents[0].Text)
	thread2, msgs := threadOf(t, srv, res2.ChannelState)
	assert.Equal(t, st.ThreadID, thread2)
	assert.Len(t, msgs, 8)
	assert.Equal(t, 2, srv.Requests("asst"))

	// The same call again (a retry) adds nothing and makes no run: it takes the answer
	// of the run made for this reply.
	res3, err, _ := invoke(t, acts, in)
	require.NoError(t, err)
	assert.Equal(t, res2, res3)
	_, again := threadOf(t, srv, res3.ChannelState)
	assert.Equal(t, msgs, again)
	assert.Equal(t, 2, srv.Requests("asst"))

	runs := runsOf(t, srv, st.ThreadID)
	require.Len(t, runs, 2)
	assert.Equal(t, "Be brief.", runs[0].Instructions)
	assert.Equal(t, "test-model", runs[0].Model)
	assert.Equal(t, "m4/1", runs[0].Metadata[activities.MetaReplyID])
	assert.Equal(t, runs[0].AssistantID, runs[1].AssistantID, "one assistant per agent and endpoint")
}

// An attempt whose run failed left its messages in the thread; the retry adds none of
// them again, and makes a new run.
func TestAssistantRetryAfterAFailedRunAddsNothingTwice(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m3/1", History: conversation("asst")})
	require.NoError(t, err)

	srv.SetScript("asst", []offline.Reply{{Status: 500, Message: "The server had an error"}})
	in := wire.InvokeInput{AgentID: "asst", ReplyID: "m4/1", History: []chat.Message{recap}, ChannelState: res.ChannelState}
	_, err, _ = invoke(t, acts, in)
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeModelUnavailable, app.Type())
	assert.False(t, app.NonRetryable())
	assert.Regexp(t, `assistant_thread: thread "thread_offline_\d+": run "run_offline_\d+" failed \(server_error\): The server had an error`, err.Error())
	_, msgs := threadOf(t, srv, res.ChannelState)
	assert.Len(t, msgs, 7, "the new message is in the thread, the failed run added nothing")

	res2, err, _ := invoke(t, acts, in)
	require.NoError(t, err)
	assert.Equal(t, "[offline] asst "+secondReply, res2.Contents[0].Text)
	_, msgs = threadOf(t, srv, res2.ChannelState)
	assert.Equal(t, []string{"user: What did we talk about? [m4]", "assistant: [offline] asst received 8 mess [m4/1]"}, msgs[6:])
	assert.Equal(t, 2, srv.Requests("asst"), "the failed run and the new one, after SetScript")
}

func TestAssistantRateLimitedRunIsRetryable(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	srv.SetScript("asst", []offline.Reply{{Status: 429, Message: "Rate limit reached for requests"}})
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m1/1", History: conversation("asst")[:1]})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeModelUnavailable, app.Type())
	assert.False(t, app.NonRetryable())
	assert.Contains(t, err.Error(), "failed (rate_limit_exceeded): Rate limit reached for requests")
}

func TestAssistantRejectedRequestIsNotRetried(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	srv.SetScript("asst", []offline.Reply{{Status: 401, Message: "Incorrect API key provided"}})
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m1/1", History: conversation("asst")[:1]})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeModelRejected, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, err.Error(), "answered 401 Unauthorized: Incorrect API key provided")
}

// A thread the service no longer knows (404) is ServiceThreadLost, not retried as is;
// sent again as a new channel (wire.LostThreadState), the whole history goes to a
// new thread and the state keeps the record of the lost one.
func TestAssistantUnknownThreadIsAThreadLost(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	old := json.RawMessage(`{"threadId":"thread_gone","syncedThrough":"m3/1"}`)
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m4/1", History: []chat.Message{recap},
		ChannelState: old})
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeThreadLost, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, err.Error(), `assistant_thread: thread "thread_gone": the service no longer knows this thread`)
	assert.Contains(t, err.Error(), `No thread found with id 'thread_gone'.`)

	res, err, _ := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "asst", ReplyID: "m4/1",
		History: append(conversation("asst"), recap), ChannelState: wire.LostThreadState(wire.ChannelAssistantThread, old)})
	require.NoError(t, err)
	var st wire.AssistantThreadState
	require.NoError(t, json.Unmarshal(res.ChannelState, &st))
	assert.NotEqual(t, "thread_gone", st.ThreadID)
	assert.Equal(t, "thread_gone", st.LostThreadID, "the record of the lost thread stays")
	_, msgs := threadOf(t, srv, res.ChannelState)
	assert.Len(t, msgs, 7, "the whole history, then the reply")
}

func TestAssistantRunThatRequiresActionIsCancelled(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	srv.SetScript("asst", []offline.Reply{{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "lookup"}}}})
	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m1/1", History: conversation("asst")[:1]})
	assert.Empty(t, res.ChannelState)
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeModelRejected, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, err.Error(), "requires action (submit_tool_outputs)")
}

func TestAssistantWithConfiguredAssistantID(t *testing.T) {
	// The assistant must exist before the config names it: make it on a server first.
	srv, err := offline.Start(offline.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	instr := "From the assistant."
	asst, err := openai.NewClientWithConfig(cfg).CreateAssistant(context.Background(),
		openai.AssistantRequest{Model: "m", Instructions: &instr})
	require.NoError(t, err)

	reg, err := agents.ParseConfig([]byte(`
endpoints:
  default: {baseURL: "` + srv.URL() + `"}
agents:
  - {id: fixed, kind: assistant, model: test-model, assistantId: "` + asst.ID + `"}
`))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(reg)})
	require.NoError(t, err)
	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "fixed", ReplyID: "m3/1", History: conversation("fixed")})
	require.NoError(t, err)
	// No instructions of its own: the run takes the assistant's, which count as a system message.
	assert.Equal(t, "[offline] fixed "+firstReply, res.Contents[0].Text)
	var st wire.AssistantThreadState
	require.NoError(t, json.Unmarshal(res.ChannelState, &st))
	runs := runsOf(t, srv, st.ThreadID)
	require.Len(t, runs, 1)
	assert.Equal(t, asst.ID, runs[0].AssistantID)
	assert.Equal(t, instr, runs[0].Instructions)
}

// A new channel's attempt that failed after making its thread leaves the thread's id in
// its heartbeat details; the next attempt continues in that thread, adding nothing twice.
func TestAssistantRetryReusesTheThreadOfAnEarlierAttempt(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	srv.SetScript("asst", []offline.Reply{{Status: 503}})
	in := wire.InvokeInput{AgentID: "asst", ReplyID: "m3/1", History: conversation("asst")}
	_, err, _ := invoke(t, acts, in)
	require.Error(t, err)
	m := regexp.MustCompile(`thread "(thread_[^"]+)"`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, err.Error())
	earlier := m[1]

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.InvokeAgent)
	env.SetHeartbeatDetails(map[string]string{"threadId": earlier})
	v, err := env.ExecuteActivity(acts.InvokeAgent, in)
	require.NoError(t, err)
	var res wire.InvokeResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, "[offline] asst "+firstReply, res.Contents[0].Text)
	thread, msgs := threadOf(t, srv, res.ChannelState)
	assert.Equal(t, earlier, thread)
	assert.Len(t, msgs, 6)
}

// A run still going when the call starts is resumed if it is this reply's (an earlier
// attempt made it), and cancelled if it is another's (an abandoned attempt).
func TestAssistantActiveRunsOfEarlierAttempts(t *testing.T) {
	acts, srv := setupServiceAgents(t)
	res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m3/1", History: conversation("asst")})
	require.NoError(t, err)
	threadID, _ := threadOf(t, srv, res.ChannelState)
	assistantID := runsOf(t, srv, threadID)[0].AssistantID
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL()
	other := openai.NewClientWithConfig(cfg) // no agent header: the offline model answers as "assistant"
	ctx := context.Background()
	srv.SetScript(offline.DefaultAgent, []offline.Reply{{Delay: wire.Duration(200 * time.Millisecond)}})

	// An earlier attempt added m4 and made the run for m4/1, still in progress.
	_, err = other.CreateMessage(ctx, threadID, openai.MessageRequest{Role: "user", Content: recap.Text(),
		Metadata: map[string]any{activities.MetaMessageID: "m4"}})
	require.NoError(t, err)
	_, err = other.CreateRun(ctx, threadID, openai.RunRequest{AssistantID: assistantID,
		Metadata: map[string]any{activities.MetaReplyID: "m4/1"}})
	require.NoError(t, err)
	in := wire.InvokeInput{AgentID: "asst", ReplyID: "m4/1", History: []chat.Message{recap}, ChannelState: res.ChannelState}
	res2, err, _ := invoke(t, acts, in)
	require.NoError(t, err)
	assert.Equal(t, "[offline] assistant "+secondReply, res2.Contents[0].Text, "the earlier attempt's run answered")
	assert.Equal(t, 1, srv.Requests("asst"), "no new run")
	_, msgs := threadOf(t, srv, res2.ChannelState)
	assert.Len(t, msgs, 8)

	// An abandoned attempt of another reply left a run going: it is cancelled first.
	_, err = other.CreateRun(ctx, threadID, openai.RunRequest{AssistantID: assistantID,
		Metadata: map[string]any{activities.MetaReplyID: "m9/1"}})
	require.NoError(t, err)
	srv.SetScript(offline.DefaultAgent, []offline.Reply{{Delay: wire.Duration(time.Minute)}})
	next := chat.TextMessage("m5", chat.RoleUser, "Alice", "Thanks")
	res3, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "asst", ReplyID: "m5/1", History: []chat.Message{next},
		ChannelState: res2.ChannelState})
	require.NoError(t, err)
	assert.Contains(t, res3.Contents[0].Text, "[offline] asst received 10 messages.")
	runs := runsOf(t, srv, threadID)
	require.Len(t, runs, 4)
	assert.Equal(t, openai.RunStatusCompleted, runs[0].Status)
	assert.Equal(t, openai.RunStatusCancelled, runs[1].Status)
}
