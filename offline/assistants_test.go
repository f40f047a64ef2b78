package offline_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

func ptr[T any](v T) *T { return &v }

// newAssistant creates an assistant with instructions and a thread.
func newAssistant(t *testing.T, c *openai.Client, instructions string) (openai.Assistant, openai.Thread) {
	t.Helper()
	ctx := context.Background()
	a, err := c.CreateAssistant(ctx, openai.AssistantRequest{Model: "m", Name: ptr("Helper"), Instructions: ptr(instructions)})
	require.NoError(t, err)
	th, err := c.CreateThread(ctx, openai.ThreadRequest{})
	require.NoError(t, err)
	return a, th
}

// addMessages adds user and assistant messages alternately, starting with user, each
// with metadata {"n": "<i>"}.
func addMessages(t *testing.T, c *openai.Client, threadID string, texts ...string) {
	t.Helper()
	for i, text := range texts {
		role := openai.ChatMessageRoleUser
		if i%2 == 1 {
			role = openai.ChatMessageRoleAssistant
		}
		_, err := c.CreateMessage(context.Background(), threadID, openai.MessageRequest{Role: role, Content: text,
			Metadata: map[string]any{"n": string(rune('0' + i))}})
		require.NoError(t, err)
	}
}

// waitRun polls a run until it ends or needs action.
func waitRun(t *testing.T, c *openai.Client, run openai.Run) openai.Run {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := c.RetrieveRun(context.Background(), run.ThreadID, run.ID)
		require.NoError(t, err)
		switch r.Status {
		case openai.RunStatusQueued, openai.RunStatusInProgress:
		default:
			return r
		}
		require.True(t, time.Now().Before(deadline), "run %s still %s", r.ID, r.Status)
		time.Sleep(10 * time.Millisecond)
	}
}

// newest is the text of the newest message of a thread.
func newest(t *testing.T, c *openai.Client, threadID string) openai.Message {
	t.Helper()
	list, err := c.ListMessage(context.Background(), threadID, ptr(1), nil, nil, nil, nil)
	require.NoError(t, err)
	require.Len(t, list.Messages, 1)
	return list.Messages[0]
}

func TestAssistantRunAnswersFromTheWholeThread(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	ctx := context.Background()
	a, th := newAssistant(t, c, "Be brief.")
	assert.True(t, strings.HasPrefix(a.ID, "asst_"), a.ID)
	assert.True(t, strings.HasPrefix(th.ID, "thread_"), th.ID)
	addMessages(t, c, th.ID, seed...)

	run, err := c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: a.ID, Metadata: map[string]any{"k": "v"}})
	require.NoError(t, err)
	assert.Equal(t, openai.RunStatusQueued, run.Status)
	assert.Equal(t, "Be brief.", run.Instructions, "the assistant's instructions when the run gives none")
	assert.Equal(t, "m", run.Model)
	run = waitRun(t, c, run)
	assert.Equal(t, openai.RunStatusCompleted, run.Status)
	assert.Equal(t, map[string]any{"k": "v"}, run.Metadata)

	reply := newest(t, c, th.ID)
	assert.Equal(t, "assistant", reply.Role)
	require.NotNil(t, reply.RunID)
	assert.Equal(t, run.ID, *reply.RunID)
	// the instructions as a system message, and the five messages of the thread
	assert.Equal(t, `[offline] helper received 6 messages. First user message: "Hello, how are you?". `+
		`Last user message: "What's my name?". Your name is Alice: you said "My name is Alice".`, reply.Content[0].Text.Value)
	assert.Equal(t, 1, s.Requests("helper"))

	// The next run sees the reply too, and the run's own instructions replace the assistant's.
	addMessages(t, c, th.ID, "What did we talk about?")
	run, err = c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: a.ID, Instructions: "Be very brief.", Model: "m2"})
	require.NoError(t, err)
	assert.Equal(t, "Be very brief.", run.Instructions)
	assert.Equal(t, "m2", run.Model)
	waitRun(t, c, run)
	assert.Equal(t, `[offline] helper received 8 messages. First user message: "Hello, how are you?". `+
		`Last user message: "What did we talk about?". We talked about: "Hello, how are you?", "My name is Alice", "What's my name?".`,
		newest(t, c, th.ID).Content[0].Text.Value)
	msgs, ok := s.ThreadMessages(th.ID)
	require.True(t, ok)
	assert.Len(t, msgs, 8)
	assert.Equal(t, map[string]any{"n": "0"}, msgs[0].Metadata, "metadata is kept")
}

func TestAssistantRunGoesQueuedInProgressCompleted(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"helper": {{Text: "done", Delay: wire.Duration(300 * time.Millisecond)}}}})
	c := newClient(s, "helper")
	a, th := newAssistant(t, c, "")
	addMessages(t, c, th.ID, "Hi")
	run, err := c.CreateRun(context.Background(), th.ID, openai.RunRequest{AssistantID: a.ID})
	require.NoError(t, err)
	assert.Equal(t, openai.RunStatusQueued, run.Status)
	time.Sleep(100 * time.Millisecond)
	mid, err := c.RetrieveRun(context.Background(), th.ID, run.ID)
	require.NoError(t, err)
	assert.Equal(t, openai.RunStatusInProgress, mid.Status)
	require.NotNil(t, mid.StartedAt)

	// No message may be added, and no other run made, while a run is active.
	_, err = c.CreateMessage(context.Background(), th.ID, openai.MessageRequest{Role: "user", Content: "more"})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
	assert.Contains(t, apiErr.Message, "while a run "+run.ID+" is active")
	_, err = c.CreateRun(context.Background(), th.ID, openai.RunRequest{AssistantID: a.ID})
	require.ErrorAs(t, err, &apiErr)
	assert.Contains(t, apiErr.Message, "already has an active run "+run.ID)

	done := waitRun(t, c, run)
	assert.Equal(t, openai.RunStatusCompleted, done.Status)
	require.NotNil(t, done.CompletedAt)
	assert.Equal(t, "[offline] helper: done", newest(t, c, th.ID).Content[0].Text.Value)
}

func TestAssistantScriptedErrors(t *testing.T) {
	s := startServer(t, offline.Options{Scripts: map[string][]offline.Reply{"helper": {
		{Status: http.StatusTooManyRequests, Message: "Rate limit reached"},
		{Status: http.StatusInternalServerError},
		{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"},
		{ToolCalls: []offline.ToolCall{{ID: "c1", Name: "weather", Arguments: "{}"}}},
	}}})
	c := newClient(s, "helper")
	ctx := context.Background()
	a, th := newAssistant(t, c, "")
	addMessages(t, c, th.ID, "Hi")

	for _, want := range []openai.RunLastError{
		{Code: openai.RunErrorRateLimitExceeded, Message: "Rate limit reached"},
		{Code: openai.RunErrorServerError, Message: "Internal Server Error"},
	} {
		run, err := c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: a.ID})
		require.NoError(t, err)
		run = waitRun(t, c, run)
		assert.Equal(t, openai.RunStatusFailed, run.Status)
		require.NotNil(t, run.LastError)
		assert.Equal(t, want, *run.LastError)
	}

	_, err := c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: a.ID})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnauthorized, apiErr.HTTPStatusCode)
	assert.Equal(t, "Incorrect API key provided", apiErr.Message)

	run, err := c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: a.ID})
	require.NoError(t, err)
	run = waitRun(t, c, run)
	assert.Equal(t, openai.RunStatusRequiresAction, run.Status)
	require.NotNil(t, run.RequiredAction)
	assert.Equal(t, "weather", run.RequiredAction.SubmitToolOutputs.ToolCalls[0].Function.Name)
	cancelled, err := c.CancelRun(ctx, th.ID, run.ID)
	require.NoError(t, err)
	assert.Equal(t, openai.RunStatusCancelled, cancelled.Status)
	_, err = c.CancelRun(ctx, th.ID, run.ID)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)

	msgs, _ := s.ThreadMessages(th.ID)
	assert.Len(t, msgs, 1, "failed and cancelled runs add no message")
	assert.Equal(t, 4, s.Requests("helper"))
}

func TestAssistantUnknownObjectsAreNotFound(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	ctx := context.Background()
	var apiErr *openai.APIError

	_, err := c.ListMessage(ctx, "thread_nope", nil, nil, nil, nil, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
	assert.Equal(t, "No thread found with id 'thread_nope'.", apiErr.Message)
	_, err = c.CreateMessage(ctx, "thread_nope", openai.MessageRequest{Role: "user", Content: "x"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
	_, err = c.CreateRun(ctx, "thread_nope", openai.RunRequest{AssistantID: "asst_x"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
	_, err = c.RetrieveThread(ctx, "thread_nope")
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)

	_, th := newAssistant(t, c, "")
	_, err = c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: "asst_nope"})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "No assistant found with id 'asst_nope'.", apiErr.Message)
	_, err = c.RetrieveRun(ctx, th.ID, "run_nope")
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "No run found with id 'run_nope'.", apiErr.Message)
	_, err = c.RetrieveAssistant(ctx, "asst_nope")
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatusCode)
	_, ok := s.ThreadMessages("thread_nope")
	assert.False(t, ok)

	resp, e := do(t, s, http.MethodGet, "/v1/threads/"+th.ID+"/runs/run_nope", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "invalid_request_error", e.Error.Type)
	assert.Equal(t, "not_found", e.Error.Code)
	assert.Nil(t, e.Error.Param)
	resp, e = do(t, s, http.MethodPost, "/v1/threads/"+th.ID+"/runs", `{}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_value", e.Error.Code)
	assert.Nil(t, e.Error.Param)
}

func TestAssistantMessagesListAndModify(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	ctx := context.Background()
	a, th := newAssistant(t, c, "")
	addMessages(t, c, th.ID, "one", "two", "three", "four", "five")

	text := func(ms []openai.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Content[0].Text.Value)
		}
		return out
	}
	list, err := c.ListMessage(ctx, th.ID, ptr(2), nil, nil, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"five", "four"}, text(list.Messages), "newest first by default")
	assert.True(t, list.HasMore)
	list, err = c.ListMessage(ctx, th.ID, ptr(2), nil, list.LastID, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"three", "two"}, text(list.Messages))
	list, err = c.ListMessage(ctx, th.ID, ptr(10), ptr("asc"), nil, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "three", "four", "five"}, text(list.Messages))
	assert.False(t, list.HasMore)
	assert.Equal(t, map[string]any{"n": "0"}, list.Messages[0].Metadata)

	m, err := c.ModifyMessage(ctx, th.ID, list.Messages[0].ID, map[string]string{"agentchat_message_id": "m1"})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"n": "0", "agentchat_message_id": "m1"}, m.Metadata)
	got, err := c.RetrieveMessage(ctx, th.ID, m.ID)
	require.NoError(t, err)
	assert.Equal(t, m.Metadata, got.Metadata)

	run, err := c.CreateRun(ctx, th.ID, openai.RunRequest{AssistantID: a.ID})
	require.NoError(t, err)
	waitRun(t, c, run)
	list, err = c.ListMessage(ctx, th.ID, nil, nil, nil, nil, &run.ID)
	require.NoError(t, err)
	require.Len(t, list.Messages, 1, "run_id filters the run's own messages")
	assert.Equal(t, "assistant", list.Messages[0].Role)

	runs, err := c.ListRuns(ctx, th.ID, openai.Pagination{Limit: ptr(5)})
	require.NoError(t, err)
	require.Len(t, runs.Runs, 1)
	assert.Equal(t, run.ID, runs.Runs[0].ID)

	resp, e := do(t, s, http.MethodGet, "/v1/threads/"+th.ID+"/messages?limit=0", "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, e.Error.Message, "limit")
	resp, e = do(t, s, http.MethodGet, "/v1/threads/"+th.ID+"/messages?order=up", "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, e.Error.Message, "order")
	resp, _ = do(t, s, http.MethodPost, "/v1/threads/"+th.ID+"/messages", `{"role":"system","content":"x"}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = do(t, s, http.MethodPost, "/v1/threads/"+th.ID+"/messages", `{"role":"user","content":" "}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, e = do(t, s, http.MethodDelete, "/v1/threads/"+th.ID+"/messages", "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "POST, GET", resp.Header.Get("Allow"))
	assert.Contains(t, e.Error.Message, "use POST or GET.")
	resp, _ = do(t, s, http.MethodGet, "/v1/threads/"+th.ID+"/files", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestAssistantThreadCreatedWithMessages(t *testing.T) {
	s := startServer(t, offline.Options{})
	c := newClient(s, "helper")
	a, err := c.CreateAssistant(context.Background(), openai.AssistantRequest{Model: "m"})
	require.NoError(t, err)
	th, err := c.CreateThread(context.Background(), openai.ThreadRequest{Messages: []openai.ThreadMessage{
		{Role: openai.ThreadMessageRoleUser, Content: "My name is Alice"},
		{Role: openai.ThreadMessageRoleAssistant, Content: "Hi Alice"},
	}})
	require.NoError(t, err)
	run, err := c.CreateRun(context.Background(), th.ID, openai.RunRequest{AssistantID: a.ID,
		AdditionalMessages: []openai.ThreadMessage{{Role: openai.ThreadMessageRoleUser, Content: "What's my name?"}}})
	require.NoError(t, err)
	waitRun(t, c, run)
	assert.Equal(t, `[offline] helper received 3 messages. First user message: "My name is Alice". `+
		`Last user message: "What's my name?". Your name is Alice: you said "My name is Alice".`,
		newest(t, c, th.ID).Content[0].Text.Value, "no instructions: no system message")

	resp, _ := do(t, s, http.MethodPost, "/v1/assistants", `{"name":"x"}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "an assistant needs a model")
	resp, _ = do(t, s, http.MethodPost, "/v1/threads", `{"messages":[{"role":"tool","content":"x"}]}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
