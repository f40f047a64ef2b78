package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/agentchat/agentchat/activities"
	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/wire"
)

// mcpServer serves a Go SDK MCP server over streamable HTTP with tools of every kind
// of result; closing it leaves the worker's session dead.
func mcpServer(t *testing.T) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "kinds", Version: "1"}, nil)
	result := func(r *mcp.CallToolResult) mcp.ToolHandlerFor[struct{}, any] {
		return func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return r, nil, nil
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "mixed", Description: "contents of each kind"}, result(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "line one"},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte("12345")},
		&mcp.ResourceLink{URI: "file:///a.txt", Name: "a"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.txt", Text: "embedded text"}},
	}}))
	mcp.AddTool(s, &mcp.Tool{Name: "structured"}, result(&mcp.CallToolResult{Content: []mcp.Content{},
		StructuredContent: map[string]any{"n": 1}}))
	mcp.AddTool(s, &mcp.Tool{Name: "key"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(req.Params.Meta[activities.IdempotencyKeyMeta])}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "bad.name"}, result(&mcp.CallToolResult{}))
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

func mcpActivities(t *testing.T, url string) *activities.Activities {
	return mcpActivitiesWith(t, url, "")
}

// mcpActivitiesWith configures server kinds at url with more settings (YAML, ", a: b").
func mcpActivitiesWith(t *testing.T, url, more string) *activities.Activities {
	cfg, err := agents.ParseConfig([]byte(fmt.Sprintf(`
endpoints: {local: {baseURL: "http://127.0.0.1:1/v1"}}
mcpServers: {kinds: {url: %q%s}}
agents: [{id: helper, model: m, endpoint: local, tools: [kinds/*]}, {id: careful, model: m, endpoint: local, tools: [kinds/*], approval: [kinds/key]}]
`, url, more)))
	require.NoError(t, err)
	acts, err := activities.New(activities.Config{Registry: agents.NewRegistry(cfg)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = acts.Close() })
	return acts
}

func callTool(t *testing.T, acts *activities.Activities, name string) (string, error) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestActivityEnvironment()
	env.RegisterActivity(acts.CallTool)
	v, err := env.ExecuteActivity(acts.CallTool, wire.CallToolInput{ChatID: "chat/1", AgentID: "helper",
		CallID: "c1", Name: name, Arguments: `{}`})
	if err != nil {
		return "", err
	}
	var res wire.CallToolResult
	require.NoError(t, v.Get(&res))
	return res.Result, nil
}

// ResolveParticipants gives a participant its MCP tools as the server lists them, with
// their schemas; a tool whose function name OpenAI refuses is left out.
func TestResolveParticipantsListsMCPTools(t *testing.T) {
	acts := mcpActivities(t, mcpServer(t).URL)
	res, err := acts.ResolveParticipants(context.Background(), wire.ResolveInput{AgentIDs: []string{"helper"}})
	require.NoError(t, err)
	var names []string
	for _, spec := range res.Participants[0].Tools {
		names = append(names, spec.Name)
		assert.Equal(t, wire.Duration(30e9), spec.Timeout, "defaults filled")
		var schema map[string]any
		require.NoError(t, json.Unmarshal(spec.Parameters, &schema), spec.Name)
		assert.Equal(t, "object", schema["type"])
	}
	assert.Equal(t, []string{"kinds__key", "kinds__mixed", "kinds__structured"}, names, "bad.name left out")
}

// Approval: an agent's approval list covers the tools it names, for that agent; a
// server's approval: true covers all of its tools; timeouts come from the server entry.
func TestResolveParticipantsGivesMCPToolsTheirApproval(t *testing.T) {
	approval := func(acts *activities.Activities) map[string]map[string]bool {
		res, err := acts.ResolveParticipants(context.Background(), wire.ResolveInput{AgentIDs: []string{"helper", "careful"}})
		require.NoError(t, err)
		out := map[string]map[string]bool{}
		for _, p := range res.Participants {
			out[p.ID] = map[string]bool{}
			for _, spec := range p.Tools {
				out[p.ID][spec.Name] = spec.Approval
			}
		}
		return out
	}
	srv := mcpServer(t)
	assert.Equal(t, map[string]map[string]bool{
		"helper":  {"kinds__key": false, "kinds__mixed": false, "kinds__structured": false},
		"careful": {"kinds__key": true, "kinds__mixed": false, "kinds__structured": false},
	}, approval(mcpActivities(t, srv.URL)))
	acts := mcpActivitiesWith(t, srv.URL, ", approval: true, timeout: 2m")
	assert.Equal(t, map[string]map[string]bool{
		"helper":  {"kinds__key": true, "kinds__mixed": true, "kinds__structured": true},
		"careful": {"kinds__key": true, "kinds__mixed": true, "kinds__structured": true},
	}, approval(acts))
	res, err := acts.ResolveParticipants(context.Background(), wire.ResolveInput{AgentIDs: []string{"helper"}})
	require.NoError(t, err)
	assert.Equal(t, wire.Duration(2*time.Minute), res.Participants[0].Tools[0].Timeout)
}

// An MCP result reaches the model as text: text contents, other contents named, a
// structured-only result as its JSON; the idempotency key travels in _meta.
func TestCallToolOfAnMCPServer(t *testing.T) {
	acts := mcpActivities(t, mcpServer(t).URL)
	got, err := callTool(t, acts, "kinds__mixed")
	require.NoError(t, err)
	assert.Equal(t, "line one\n[image image/png, 5 bytes]\n[resource file:///a.txt]\nembedded text", got)
	got, err = callTool(t, acts, "kinds__structured")
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":1}`, got)
	got, err = callTool(t, acts, "kinds__key")
	require.NoError(t, err)
	assert.Equal(t, activities.IdempotencyKey("chat/1", "c1"), got)

	_, err = callTool(t, acts, "kinds__no_such_tool")
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.Equal(t, wire.ErrTypeToolError, app.Type(), "the server's refusal is not retried: %v", err)
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Error(), `MCP server "kinds" refused the call of tool "no_such_tool"`)
}

// A server that is gone is a retryable ToolUnavailable failure, call after call.
func TestCallToolOfADeadMCPServerIsRetryable(t *testing.T) {
	srv := mcpServer(t)
	acts := mcpActivities(t, srv.URL)
	srv.CloseClientConnections()
	srv.Close()
	for range 2 {
		_, err := callTool(t, acts, "kinds__key")
		var app *temporal.ApplicationError
		require.ErrorAs(t, err, &app)
		assert.Equal(t, wire.ErrTypeToolUnavailable, app.Type(), "%v", err)
		assert.False(t, app.NonRetryable())
		assert.Contains(t, app.Error(), `MCP server "kinds"`)
	}
}
