package activities_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/offline"
	"github.com/agentchat/agentchat/wire"
)

// setup starts an offline model and activities whose "default" endpoint is that server.
func setup(t *testing.T, stream bool) (*activities.Activities, *offline.Server) {
	return setupAgents(t, stream, `
  - {id: helper, name: Helper, model: test-model, instructions: Be brief.}
  - {id: bot, name: "Dr. Who?", model: test-model}`)
}

// setupAgents is setup with the agents of agentsYAML (the YAML list under "agents:").
func setupAgents(t *testing.T, stream bool, agentsYAML string) (*activities.Activities, *offline.Server) {
	t.Helper()
	srv, err := offline.Start(offline.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	cfg, err := agents.ParseConfig(fmt.Appendf(nil, "endpoints:\n  default: {baseURL: %q, apiKeyEnv: TEST_KEY, stream: %t}\nagents:%s\n",
		srv.URL(), stream, agentsYAML))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg),
		Getenv: func(string) string { return "sk-test" }})
	require.NoError(t, err)
	return acts, srv
}

// scripted starts an offline model that answers agent id (display name) with replies,
// and activities whose one agent it is, on a non-streaming "default" endpoint.
func scripted(t *testing.T, id, name string, replies ...offline.Reply) *activities.Activities {
	t.Helper()
	srv, err := offline.Start(offline.Options{Scripts: map[string][]offline.Reply{id: replies}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	cfg, err := agents.ParseConfig(fmt.Appendf(nil, `
endpoints:
  default: {baseURL: %q, apiKeyEnv: TEST_KEY, stream: false}
agents:
  - {id: %s, name: %s, model: test-model}
`, srv.URL(), id, name))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg), Getenv: func(string) string { return "sk-test" }})
	require.NoError(t, err)
	return acts
}

func invoke(t *testing.T, acts *activities.Activities, in wire.InvokeInput) (wire.InvokeResult, error, int) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.InvokeAgent)
	var heartbeats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { heartbeats.Add(1) })
	v, err := env.ExecuteActivity(acts.InvokeAgent, in)
	if err != nil {
		return wire.InvokeResult{}, err, int(heartbeats.Load())
	}
	var res wire.InvokeResult
	require.NoError(t, v.Get(&res))
	return res, nil, int(heartbeats.Load())
}

var seed = []chat.Message{
	chat.TextMessage("m1", chat.RoleUser, "Alice", "Hello, how are you?"),
	{MessageID: "m1/1", Role: chat.RoleAssistant, AuthorName: "Helper", AgentID: "helper", Contents: []chat.Content{chat.Text("Fine.")}},
	chat.TextMessage("m2", chat.RoleUser, "Alice", "My name is Alice"),
	{MessageID: "m2/1", Role: chat.RoleAssistant, AuthorName: "Helper", AgentID: "helper", Contents: []chat.Content{chat.Text("Hi Alice.")}},
	chat.TextMessage("m3", chat.RoleUser, "Alice", "What's my name?"),
}

func TestInvokeAgentSendsHistoryAndInstructions(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) {
			acts, srv := setup(t, stream)
			res, err, beats := invoke(t, acts, wire.InvokeInput{ChatID: "c", AgentID: "helper", TurnID: "m3", History: seed})
			require.NoError(t, err)
			require.Len(t, res.Contents, 1)
			text := res.Contents[0].Text
			// system + 5 history messages reached the model
			assert.Contains(t, text, "[offline] helper received 6 messages.")
			assert.Contains(t, text, `you said "My name is Alice"`)
			req, ok := srv.LastRequest("helper")
			require.True(t, ok)
			assert.Equal(t, "test-model", req.Model)
			assert.Equal(t, stream, req.Stream)
			require.Len(t, req.Messages, 6)
			assert.Equal(t, openai.ChatMessageRoleSystem, req.Messages[0].Role)
			assert.Equal(t, "Be brief.", req.Messages[0].Content)
			assert.Equal(t, "Alice", req.Messages[1].Name)
			assert.Equal(t, "Helper", req.Messages[2].Name)
			if stream {
				assert.Zero(t, beats, "a quick answer costs no heartbeat (integration/recovery_test.go covers long ones)")
			}
		})
	}
}

func TestOpenAINameOnlyInAcceptedForm(t *testing.T) {
	assert.Equal(t, "Alice", activities.OpenAIName("Alice"))
	assert.Equal(t, "Dr__Who_", activities.OpenAIName("Dr. Who?"))
	assert.Equal(t, "", activities.OpenAIName("..."))
	assert.Equal(t, "", activities.OpenAIName(""))
	assert.Len(t, activities.OpenAIName(stringOf('a', 100)), 64)
	assert.Equal(t, "J_rg", activities.OpenAIName("Jörg"))
}

func stringOf(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

func TestProviderErrorsAreClassifiedByStatus(t *testing.T) {
	cases := []struct {
		reply      offline.Reply
		typ        string
		retryable  bool
		retryDelay time.Duration
		text       string
	}{
		{offline.Reply{Status: 500, Message: "boom"}, wire.ErrTypeModelUnavailable, true, 0, "answered 500 Internal Server Error: boom"},
		{offline.Reply{Status: 429, Message: "slow down", RetryAfter: 7}, wire.ErrTypeModelUnavailable, true, 7 * time.Second, "slow down"},
		{offline.Reply{Status: 408}, wire.ErrTypeModelUnavailable, true, 0, "408"},
		{offline.Reply{Status: 409}, wire.ErrTypeModelUnavailable, true, 0, "409"},
		{offline.Reply{Status: 401, Message: "Incorrect API key provided"}, wire.ErrTypeModelRejected, false, 0, "answered 401 Unauthorized: Incorrect API key provided"},
		{offline.Reply{Status: 400, Message: "bad request"}, wire.ErrTypeModelRejected, false, 0, "bad request"},
	}
	for _, stream := range []bool{true, false} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%d/stream=%t", c.reply.Status, stream), func(t *testing.T) {
				acts, srv := setup(t, stream)
				srv.SetScript("helper", []offline.Reply{c.reply})
				_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "helper", History: seed[:1]})
				var app *temporal.ApplicationError
				require.True(t, errors.As(err, &app), "%v", err)
				assert.Equal(t, c.typ, app.Type())
				assert.Equal(t, !c.retryable, app.NonRetryable())
				assert.Equal(t, c.retryDelay, app.NextRetryDelay())
				assert.Contains(t, err.Error(), c.text)
			})
		}
	}
}

func TestUnreachableEndpointIsRetryable(t *testing.T) {
	acts, srv := setup(t, true)
	require.NoError(t, srv.Close())
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "helper", History: seed[:1]})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeModelUnavailable, app.Type())
	assert.False(t, app.NonRetryable())
	assert.Contains(t, err.Error(), "unreachable")
}

func TestToolCallsComeBackAsFunctionCalls(t *testing.T) {
	for _, stream := range []bool{true, false} {
		acts, srv := setup(t, stream)
		srv.SetScript("helper", []offline.Reply{{ToolCalls: []offline.ToolCall{
			{ID: "c1", Name: "lookup", Arguments: `{"q":"weather in Oslo"}`},
			{ID: "c2", Name: "time", Arguments: `{}`}}}})
		res, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "helper", History: seed[:1]})
		require.NoError(t, err)
		assert.Equal(t, []chat.Content{
			{Type: chat.ContentFunctionCall, CallID: "c1", Name: "lookup", Arguments: `{"q":"weather in Oslo"}`},
			{Type: chat.ContentFunctionCall, CallID: "c2", Name: "time", Arguments: `{}`},
		}, res.Contents, "stream=%t", stream)
	}
}

func TestUnknownAgentIsNotRetried(t *testing.T) {
	acts, _ := setup(t, true)
	_, err, _ := invoke(t, acts, wire.InvokeInput{AgentID: "ghost", History: seed[:1]})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, app.Type())
	assert.True(t, app.NonRetryable())
}

// The strategies' agents are looked up as InvokeAgent's are.
func TestUnknownStrategyAgentIsNotRetried(t *testing.T) {
	acts, _ := setup(t, true)
	_, err := acts.JudgeTermination(context.Background(), wire.JudgeInput{Agent: "ghost",
		History: wire.InvokeInput{History: seed[:1]}})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, err.Error(), `agent "ghost" is not in this worker's registry`)
}

func TestResolveParticipantsNamesUnknownIDs(t *testing.T) {
	acts, _ := setup(t, true)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.ResolveParticipants)
	_, err := env.ExecuteActivity(acts.ResolveParticipants, wire.ResolveInput{AgentIDs: []string{"helper", "ghost", "nobody"}})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, wire.ErrTypeUnknownAgent, app.Type())
	assert.Contains(t, err.Error(), `unknown agent id(s) "ghost", "nobody"; this worker knows "bot", "helper"`)

	v, err := env.ExecuteActivity(acts.ResolveParticipants, wire.ResolveInput{AgentIDs: []string{"bot", "helper"}})
	require.NoError(t, err)
	var res wire.ResolveResult
	require.NoError(t, v.Get(&res))
	require.Len(t, res.Participants, 2)
	assert.Equal(t, "Dr. Who?", res.Participants[0].Name)
	assert.Equal(t, chat.ChannelChatHistory, res.Participants[1].ChannelType)
	assert.Equal(t, 5, res.Participants[1].Call.MaxAttempts)
}

func TestNewRefusesOpenAIEndpointWithoutKey(t *testing.T) {
	cfg, err := agents.ParseConfig([]byte(`
endpoints:
  default: {baseURL: "https://api.openai.com/v1", apiKeyEnv: SOME_UNSET_KEY}
  local: {baseURL: "http://localhost:11434/v1"}
agents: [{id: a, model: m}, {id: b, model: m, endpoint: local}]
`))
	require.NoError(t, err)
	reg := agents.NewRegistry(cfg)
	_, err = activities.New(activities.Config{Registry: reg, Getenv: func(string) string { return "" }})
	require.ErrorIs(t, err, activities.ErrMissingAPIKey)
	assert.Contains(t, err.Error(), "SOME_UNSET_KEY")
	// With the offline model the key is not needed.
	_, err = activities.New(activities.Config{Registry: reg, Getenv: func(string) string { return "" },
		Models: activities.ModelConfig{BaseURLOverride: "http://127.0.0.1:1/v1"},
	})
	require.NoError(t, err)
}

func TestJudgeVerdicts(t *testing.T) {
	for text, want := range map[string]bool{
		"yes": true, "Yes.": true, "[offline] judge: yes": true, "done": true, "TRUE, it is finished": true,
		"no": false, "No, not yet - yes later": false, "maybe": false, "": false, "eyes open": false, "Not done yet.": false,
	} {
		assert.Equal(t, want, activities.SaysYes(text), "%q", text)
	}
}
