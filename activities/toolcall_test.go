package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/wire"
)

func TestIdempotencyKeyNamesOneCall(t *testing.T) {
	assert.Equal(t, "chat-1/call_abc", activities.IdempotencyKey("chat-1", "call_abc"))
	// A slash in either part cannot make two calls share a key.
	assert.NotEqual(t, activities.IdempotencyKey("a/b", "c"), activities.IdempotencyKey("a", "b/c"))
	assert.Equal(t, "a%2Fb/m1%2F3%231", activities.IdempotencyKey("a/b", "m1/3#1"))
}

// CallTool gives the tool function the call it runs and the call's idempotency key.
func TestCallToolGivesTheFunctionItsIdempotencyKey(t *testing.T) {
	var got activities.ToolCall
	reg := agents.NewRegistry(agents.Config{Tools: map[string]wire.Tool{"record": {}},
		Agents:    []agents.Definition{{ID: "helper", Model: "m", Endpoint: "default", Tools: []string{"record"}}},
		Endpoints: map[string]agents.Endpoint{"default": {BaseURL: "http://127.0.0.1:1/v1"}}})
	acts, err := activities.New(activities.Config{Registry: reg,
		Functions: activities.FunctionConfig{Tools: map[string]activities.ToolFunc{
			"record": func(ctx context.Context, _ json.RawMessage) (string, error) {
				call, ok := activities.CallOf(ctx)
				if !ok {
					return "", errors.New("no call in the context")
				}
				got = call
				return "ok", nil
			}}},
	})
	require.NoError(t, err)
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(acts.CallTool)
	v, err := env.ExecuteActivity(acts.CallTool, wire.CallToolInput{ChatID: "chat-1", AgentID: "helper",
		CallID: "call_1", Name: "record", Arguments: `{}`})
	require.NoError(t, err)
	var res wire.CallToolResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, "ok", res.Result)
	assert.Equal(t, activities.ToolCall{ChatID: "chat-1", AgentID: "helper", CallID: "call_1", Name: "record"}, got)
	assert.Equal(t, "chat-1/call_1", got.IdempotencyKey())
	_, ok := activities.CallOf(context.Background())
	assert.False(t, ok, "no call outside a tool function")
}

// A tool result of ToolResultLimit encoded bytes is passed on; one byte more becomes a
// ToolError (not retried) that names the limit, so the model reads why and the turn
// goes on, instead of an activity result over Temporal's payload limit. The result is
// mostly '<', which encoding/json writes as six bytes, so a limit on text bytes would
// let six times the limit through.
func TestToolResultAtTheLimitAndJustOver(t *testing.T) {
	escaped := wire.ToolResultLimit / 6
	result := strings.Repeat("<", escaped) + strings.Repeat("x", wire.ToolResultLimit-6*escaped)
	reg := agents.NewRegistry(agents.Config{Tools: map[string]wire.Tool{"big": {}},
		Agents:    []agents.Definition{{ID: "helper", Model: "m", Endpoint: "default", Tools: []string{"big"}}},
		Endpoints: map[string]agents.Endpoint{"default": {BaseURL: "http://127.0.0.1:1/v1"}}})
	acts, err := activities.New(activities.Config{Registry: reg,
		Functions: activities.FunctionConfig{Tools: map[string]activities.ToolFunc{
			"big": func(context.Context, json.RawMessage) (string, error) { return result, nil }}},
	})
	require.NoError(t, err)
	call := func() (wire.CallToolResult, error) {
		var ts testsuite.WorkflowTestSuite
		env := ts.NewTestActivityEnvironment()
		env.RegisterActivity(acts.CallTool)
		v, err := env.ExecuteActivity(acts.CallTool, wire.CallToolInput{ChatID: "chat-1", AgentID: "helper",
			CallID: "call_1", Name: "big", Arguments: `{}`})
		var res wire.CallToolResult
		if err == nil {
			err = v.Get(&res)
		}
		return res, err
	}
	encoded, err := json.Marshal(result)
	require.NoError(t, err)
	require.Equal(t, wire.ToolResultLimit, len(encoded)-2, "the result is at the limit, encoded")
	res, err := call()
	require.NoError(t, err)
	assert.Equal(t, result, res.Result)

	result += "x"
	_, err = call()
	app := appError(t, err)
	assert.Equal(t, wire.ErrTypeToolError, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Error(), "ToolResultLimit")
	assert.Contains(t, app.Error(), strconv.Itoa(wire.ToolResultLimit+1))
}
